/*
 * libFuzzer target for pmbot_capability_run_output(): what a model answers
 * is untrusted (prompt injection can steer it), and every capability
 * parses and validates it against its schema, and mutation proposals also
 * against the ChangesetBundle rules.
 *
 * Input: the model output, passed with its exact length and no terminator,
 * to every capability in the registry in turn.
 * Properties checked (abort on failure), per capability:
 *  - the result is OK or EINVALID with a result object, or ERROR without;
 *  - OK gives an object that pmbot_capability_validate() also accepts;
 *  - EINVALID gives the spec's error payload: "error" is
 *    "capability_output_validation_failed:<id>", "capability_id" the id,
 *    "validation" an object whose "errors" is a non-empty array of
 *    {path, code, message} strings, paths starting with "$";
 *  - a second run gives the same canonical JSON.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "pmbot/buf.h"
#include "pmbot/llm.h"
#include "pmbot/json.h"

#include "fuzz_util.h"
#include "pmbot/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int str_is(const json_t *v, const char *s)
{
	return json_is_string(v) && !strcmp(json_string_value(v), s);
}

static void check_error_payload(const json_t *res, const pmbot_capability *cap)
{
	pmbot_buf want = PMBOT_BUF_INIT;
	const json_t *validation, *errors, *rec;
	size_t i;

	CHECK(pmbot_buf_printf(&want, "capability_output_validation_failed:%s", cap->id) == 0);
	CHECK(str_is(json_object_get(res, "error"), want.buf));
	CHECK(str_is(json_object_get(res, "capability_id"), cap->id));
	validation = json_object_get(res, "validation");
	CHECK(json_is_object(validation));
	CHECK(json_is_array(json_object_get(validation, "warnings")));
	errors = json_object_get(validation, "errors");
	CHECK(json_is_array(errors) && json_array_size(errors) > 0);
	json_array_foreach(errors, i, rec) {
		const json_t *path = json_object_get(rec, "path");

		CHECK(json_is_string(path) && json_string_value(path)[0] == '$');
		CHECK(json_is_string(json_object_get(rec, "code")));
		CHECK(json_is_string(json_object_get(rec, "message")));
	}
	pmbot_buf_free(&want);
}

static int run_once(pmbot_buf *out, const pmbot_capability *cap, const char *text, size_t len)
{
	json_t *res = (json_t *)(uintptr_t)1, *validation = NULL;
	int rc;

	rc = pmbot_capability_run_output(&res, cap, text, len);
	CHECK(rc == PMBOT_OK || rc == PMBOT_EINVALID || rc == PMBOT_ERROR);
	if (rc == PMBOT_ERROR) {
		CHECK(res == NULL);
		return rc;
	}
	CHECK(json_is_object(res));
	if (rc == PMBOT_OK) {
		int vrc = pmbot_capability_validate(&validation, cap, res);

		CHECK(vrc == PMBOT_OK || vrc == PMBOT_ERROR);
		if (vrc == PMBOT_OK) {
			CHECK(json_is_array(json_object_get(validation, "errors")));
			CHECK(json_array_size(json_object_get(validation, "errors")) == 0);
		}
	} else {
		check_error_payload(res, cap);
	}
	CHECK(pmbot_buf_printf(out, "%s %d\n", cap->id, rc) == 0);
	fuzz_put_json(out, res);
	json_decref(validation);
	json_decref(res);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_exact_copy(data, size);
	size_t i, n = pmbot_capability_count();

	CHECK(n > 0);
	for (i = 0; i < n; i++) {
		const pmbot_capability *cap = pmbot_capability_at(i);
		pmbot_buf one = PMBOT_BUF_INIT, two = PMBOT_BUF_INIT;

		CHECK(cap != NULL);
		if (run_once(&one, cap, text, size) != PMBOT_ERROR) {
			CHECK(run_once(&two, cap, text, size) != PMBOT_ERROR);
			CHECK(fuzz_same(&one, &two));
		}
		pmbot_buf_free(&one);
		pmbot_buf_free(&two);
	}
	free(text);
	return 0;
}
