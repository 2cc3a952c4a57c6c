/*
 * libFuzzer target for the plan loader (pmbot_bundle_parse): the plan file
 * `pm-bot apply --plan FILE` and the Action's kept approved plan are read
 * through it, and every reader after it (apply, the staleness check, the
 * Action) relies on what it accepted having the documented types.
 *
 * Input: the file's bytes.
 * Properties checked (abort on failure):
 *  - the answer is OK, EINVALID or ERROR; OK gives a bundle and no
 *    diagnostic; EINVALID gives no bundle and 1 to 21 errors, each
 *    PLAN_INVALID with a JSON Pointer path;
 *  - an accepted bundle has every member its readers read with the type
 *    they read it as (checked here member by member, independently of the
 *    loader): plan_hash 64 lower-case hex, target OWNER/NAME, the typed
 *    accessors non-NULL where required, each changeset's strings, boolean,
 *    target and payload, each fingerprint entry's three strings;
 *  - an accepted bundle written out and read again is accepted again;
 *  - everything is the same bytes a second time.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pmbot/buf.h"
#include "pmbot/plan.h"
#include "pmbot/source.h"
#include "pmbot/diag.h"

#include "fuzz_util.h"
#include "pmbot/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int is_str(const json_t *o, const char *key)
{
	return json_is_string(json_object_get(o, key));
}

static void check_accepted(const json_t *b)
{
	const json_t *cs, *e;
	const char *h = pmbot_bundle_plan_hash(b), *t = pmbot_bundle_target(b);
	pmbot_operation op;
	size_t i;

	CHECK(h && strlen(h) == 64 && strspn(h, "0123456789abcdef") == 64);
	CHECK(t && strchr(t, '/'));
	CHECK(json_is_object(json_object_get(b, "source")));
	for (i = 0; i < pmbot_bundle_report_count(b); i++)
		CHECK(pmbot_bundle_report_path(b, i) && pmbot_bundle_report_path(b, i)[0]);
	if (json_object_get(json_object_get(b, "source"), "backend"))
		CHECK(pmbot_bundle_backend_kind(b) != NULL);
	CHECK(json_is_array(json_object_get(b, "changesets")));
	json_array_foreach(json_object_get(b, "changesets"), i, cs) {
		const json_t *tg = json_object_get(cs, "target");

		CHECK(is_str(cs, "changeset_id") && is_str(cs, "idempotency_key") && is_str(cs, "status"));
		CHECK(is_str(cs, "operation") &&
		      pmbot_operation_parse(&op, json_string_value(json_object_get(cs, "operation"))) == 0);
		CHECK(json_is_boolean(json_object_get(cs, "requires_approval")));
		CHECK(json_is_object(json_object_get(cs, "payload")));
		CHECK(json_is_object(tg) && is_str(tg, "repo"));
		CHECK(is_str(tg, "stable_id") || json_is_integer(json_object_get(tg, "number")));
	}
	CHECK(json_is_array(json_object_get(b, "fingerprint")));
	json_array_foreach(json_object_get(b, "fingerprint"), i, e)
		CHECK(is_str(e, "ref") && is_str(e, "node_id") && is_str(e, "updated_at"));
	json_array_foreach(json_object_get(b, "conflicts"), i, e)
		CHECK(is_str(e, "stable_id"));
}

static void one_run(pmbot_buf *out, const char *text, size_t size)
{
	pmbot_diag_list d = PMBOT_DIAG_LIST_INIT;
	json_t *b = (json_t *)1;
	int rc = pmbot_bundle_parse(&b, text, size, &d);
	size_t i;

	CHECK(rc == 0 || rc == PMBOT_EINVALID || rc == PMBOT_ERROR);
	CHECK(pmbot_buf_printf(out, "rc=%d\n", rc) == 0);
	fuzz_check_diags(&d, out);
	if (rc == 0) {
		char *again;
		json_t *b2 = NULL;
		pmbot_diag_list d2 = PMBOT_DIAG_LIST_INIT;

		CHECK(b != NULL && d.count == 0);
		check_accepted(b);
		again = json_dumps(b, JSON_COMPACT);
		CHECK(again != NULL);
		CHECK(pmbot_bundle_parse(&b2, again, strlen(again), &d2) == 0 && d2.count == 0);
		fuzz_put_json(out, b2);
		json_decref(b2);
		free(again);
		json_decref(b);
	} else {
		CHECK(b == NULL);
		if (rc == PMBOT_EINVALID) {
			CHECK(d.errors >= 1 && d.count <= 21);
			for (i = 0; i < d.count; i++)
				CHECK(!strcmp(d.items[i].code, "PLAN_INVALID"));
		}
	}
	pmbot_diag_list_free(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pmbot_buf a = PMBOT_BUF_INIT, b = PMBOT_BUF_INIT;
	char *text = fuzz_exact_copy(data, size);

	one_run(&a, text ? text : "", size);
	one_run(&b, text ? text : "", size);
	CHECK(a.len == b.len && (!a.len || !memcmp(a.buf, b.buf, a.len)));
	pmbot_buf_free(&a);
	pmbot_buf_free(&b);
	free(text);
	return 0;
}
