
#include <errno.h>
#include <string.h>

#include "pmbot/buf.h"
#include "pmbot/source.h"
#include "pmbot/fs.h"
#include "pmbot/json.h"
#include "pmbot/plan.h"
#include "pmbot/banned.h"

#define CODE "PLAN_INVALID"
/* Enough to see what is wrong; a plan with a thousand faults is one fault. */
#define FAULTS_LISTED 20

struct ck {
	pmbot_diag_list *diags;
	pmbot_buf ptr;       /* the JSON Pointer of the member looked at */
	size_t faults;
	int oom;
};

/* One fault at the current pointer (+ `member` when not NULL). Always 0: "not valid". */
static int fault(struct ck *k, const char *member, const json_t *have, const char *want)
{
	size_t len = k->ptr.len;

	k->faults++;
	if (k->faults > FAULTS_LISTED || k->oom)
		return 0;
	if (member && pmbot_buf_printf(&k->ptr, "/%s", member) < 0) {
		k->oom = 1;
		return 0;
	}
	/* The pointer is the diagnostic's path: the message says only what is wrong. */
	if (pmbot_diag_add(k->diags, PMBOT_SEV_ERROR, CODE, NULL, k->ptr.len ? k->ptr.buf : "", 0, 0,
		    "%s %s%s%s", k->ptr.len ? "must be" : "the plan must be", want,
		    have ? ", not " : " (it is missing)", have ? pmbot_json_type_name(have) : "") < 0)
		k->oom = 1;
	pmbot_buf_truncate(&k->ptr, len);
	return 0;
}

/* A fault whose value has the right type but not the right form. */
static int fault_form(struct ck *k, const char *member, const char *want)
{
	size_t len = k->ptr.len;

	k->faults++;
	if (k->faults > FAULTS_LISTED || k->oom)
		return 0;
	if (member && pmbot_buf_printf(&k->ptr, "/%s", member) < 0) {
		k->oom = 1;
		return 0;
	}
	if (pmbot_diag_add(k->diags, PMBOT_SEV_ERROR, CODE, NULL, k->ptr.len ? k->ptr.buf : "", 0, 0,
		    "%s %s", k->ptr.len ? "must be" : "the plan must be", want) < 0)
		k->oom = 1;
	pmbot_buf_truncate(&k->ptr, len);
	return 0;
}

/* Members' keys here are pm-bot's own (no '~' or '/' to escape). */
static int push_key(struct ck *k, const char *key)
{
	if (pmbot_buf_printf(&k->ptr, "/%s", key) < 0)
		k->oom = 1;
	return !k->oom;
}

static int push_index(struct ck *k, size_t i)
{
	if (pmbot_buf_printf(&k->ptr, "/%zu", i) < 0)
		k->oom = 1;
	return !k->oom;
}

/* 1 when o[key] is a string (non-empty when `nonempty`), else a fault and 0. */
static int need_string(struct ck *k, const json_t *o, const char *key, int nonempty)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_string(v))
		return fault(k, key, v, nonempty ? "a non-empty string" : "a string");
	if (nonempty && !json_string_length(v))
		return fault_form(k, key, "a non-empty string");
	return 1;
}

/* Optional members: absent is fine, present must have the type. */
static int may_string(struct ck *k, const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return !v || json_is_string(v) || fault(k, key, v, "a string");
}

static int may_type(struct ck *k, const json_t *o, const char *key, json_type t, const char *want)
{
	const json_t *v = json_object_get(o, key);

	return !v || json_typeof(v) == t || fault(k, key, v, want);
}

static int is_hex64(const char *s)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[64] == '\0';
}

/* OWNER/NAME: one '/', neither part empty, no whitespace or control character. */
static int is_repo(const char *s)
{
	const char *slash = strchr(s, '/');
	const char *p;

	if (!slash || slash == s || !slash[1] || strchr(slash + 1, '/'))
		return 0;
	for (p = s; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return 0;
	return 1;
}

static int check_source(struct ck *k, const json_t *source)
{
	const json_t *backend, *reports, *r, *commit;
	size_t i, len = k->ptr.len;
	int ok = 1;

	if (!json_is_object(source))
		return fault(k, "source", source, "an object");
	if (!push_key(k, "source"))
		return 0;
	ok &= may_string(k, source, "kind");
	ok &= may_string(k, source, "config_blob");
	commit = json_object_get(source, "commit");
	if (commit && !json_is_string(commit) && !json_is_null(commit))
		ok = fault(k, "commit", commit, "a string or null");
	backend = json_object_get(source, "backend");
	if (backend && !json_is_object(backend)) {
		ok = fault(k, "backend", backend, "an object");
	} else if (backend) {
		size_t at = k->ptr.len;

		if (!push_key(k, "backend"))
			return 0;
		if (!need_string(k, backend, "kind", 1))
			ok = 0;
		else if (strcmp(json_string_value(json_object_get(backend, "kind")), "file") &&
			 strcmp(json_string_value(json_object_get(backend, "kind")), "github"))
			ok = fault_form(k, "kind", "\"file\" or \"github\"");
		ok &= may_string(k, backend, "state");
		pmbot_buf_truncate(&k->ptr, at);
	}
	reports = json_object_get(source, "reports");
	if (reports && !json_is_array(reports)) {
		ok = fault(k, "reports", reports, "an array");
	} else if (reports && push_key(k, "reports")) {
		size_t at = k->ptr.len;

		json_array_foreach(reports, i, r) {
			if (!push_index(k, i))
				break;
			if (!json_is_object(r))
				ok = fault(k, NULL, r, "an object");
			else
				ok &= need_string(k, r, "path", 1) & may_string(k, r, "blob");
			pmbot_buf_truncate(&k->ptr, at);
		}
	}
	pmbot_buf_truncate(&k->ptr, len);
	return ok;
}

static int check_binding(struct ck *k, const json_t *b)
{
	const json_t *sid, *num;
	size_t len = k->ptr.len;
	int ok;

	if (!json_is_object(b))
		return fault(k, "target", b, "an object");
	if (!push_key(k, "target"))
		return 0;
	ok = need_string(k, b, "repo", 1);
	sid = json_object_get(b, "stable_id");
	num = json_object_get(b, "number");
	if (sid && (!json_is_string(sid) || !json_string_length(sid)))
		ok = fault(k, "stable_id", sid, "a non-empty string");
	if (num && (!json_is_integer(num) || json_integer_value(num) < 1))
		ok = json_is_integer(num) ? fault_form(k, "number", "an integer of at least 1") :
			fault(k, "number", num, "an integer");
	if (!sid && !num)
		ok = fault_form(k, NULL, "an object with stable_id or number");
	pmbot_buf_truncate(&k->ptr, len);
	return ok;
}

static int check_changeset(struct ck *k, const json_t *cs)
{
	pmbot_operation op;
	const json_t *v;
	int ok;

	if (!json_is_object(cs))
		return fault(k, NULL, cs, "an object");
	ok = need_string(k, cs, "changeset_id", 1) & need_string(k, cs, "idempotency_key", 1) &
		need_string(k, cs, "status", 1);
	if (need_string(k, cs, "operation", 1)) {
		if (pmbot_operation_parse(&op, json_string_value(json_object_get(cs, "operation"))) < 0)
			ok = fault_form(k, "operation", "one of pm-bot's operations (create_issue, ...)");
	} else {
		ok = 0;
	}
	v = json_object_get(cs, "requires_approval");
	if (!json_is_boolean(v))
		ok = fault(k, "requires_approval", v, "a boolean");
	ok &= check_binding(k, json_object_get(cs, "target"));
	v = json_object_get(cs, "payload");
	if (!json_is_object(v))
		ok = fault(k, "payload", v, "an object");
	ok &= may_type(k, cs, "before", JSON_OBJECT, "an object") &
		may_type(k, cs, "after", JSON_OBJECT, "an object");
	return ok;
}

/* Each item of the array o[key] (required or not) through `fn`. */
static int check_array(struct ck *k, const json_t *o, const char *key, int required,
	int (*fn)(struct ck *, const json_t *))
{
	const json_t *a = json_object_get(o, key), *item;
	size_t i, len = k->ptr.len, at;
	int ok = 1;

	if (!a && !required)
		return 1;
	if (!json_is_array(a))
		return fault(k, key, a, "an array");
	if (!fn || !push_key(k, key))
		return 1;
	at = k->ptr.len;
	json_array_foreach(a, i, item) {
		if (!push_index(k, i))
			break;
		ok &= fn(k, item);
		pmbot_buf_truncate(&k->ptr, at);
	}
	pmbot_buf_truncate(&k->ptr, len);
	return ok;
}

static int check_fingerprint(struct ck *k, const json_t *e)
{
	if (!json_is_object(e))
		return fault(k, NULL, e, "an object");
	return need_string(k, e, "ref", 1) & need_string(k, e, "node_id", 0) &
		need_string(k, e, "updated_at", 0);
}

static int check_conflict(struct ck *k, const json_t *c)
{
	if (!json_is_object(c))
		return fault(k, NULL, c, "an object");
	return need_string(k, c, "stable_id", 0);
}

int pmbot_bundle_check(const json_t *bundle, pmbot_diag_list *diags)
{
	struct ck k;
	const char *s;
	int rc;

	memset(&k, 0, sizeof(k));
	k.diags = diags;
	pmbot_buf_init(&k.ptr, 0);
	if (!json_is_object(bundle)) {
		fault(&k, NULL, bundle, "a JSON object (a changeset_bundle/v1 plan)");
		goto done;
	}
	/* Another schema's file is told as such, not as a list of faults. */
	s = json_string_value(json_object_get(bundle, "schema_version"));
	if (!s || strcmp(s, "changeset_bundle/v1")) {
		fault_form(&k, "schema_version", "\"changeset_bundle/v1\": this is not a pm-bot plan "
			"of this version");
		goto done;
	}
	if (need_string(&k, bundle, "plan_hash", 1) &&
	    !is_hex64(json_string_value(json_object_get(bundle, "plan_hash"))))
		fault_form(&k, "plan_hash", "64 lower-case hex digits");
	if (need_string(&k, bundle, "target", 1) &&
	    !is_repo(json_string_value(json_object_get(bundle, "target"))))
		fault_form(&k, "target", "OWNER/NAME");
	check_source(&k, json_object_get(bundle, "source"));
	check_array(&k, bundle, "changesets", 1, check_changeset);
	check_array(&k, bundle, "fingerprint", 1, check_fingerprint);
	check_array(&k, bundle, "conflicts", 0, check_conflict);
	check_array(&k, bundle, "orphaned", 0, NULL);
	check_array(&k, bundle, "diagnostics", 0, NULL);
	may_type(&k, bundle, "summary", JSON_OBJECT, "an object");
done:
	if (!k.oom && k.faults > FAULTS_LISTED &&
	    pmbot_diag_add(diags, PMBOT_SEV_ERROR, CODE, NULL, "", 0, 0,
		    "... and %zu more faults in the plan", k.faults - FAULTS_LISTED) < 0)
		k.oom = 1;
	rc = k.oom ? PMBOT_ERROR : k.faults ? PMBOT_EINVALID : PMBOT_OK;
	pmbot_buf_free(&k.ptr);
	return rc;
}

int pmbot_bundle_parse(json_t **out, const char *text, size_t len, pmbot_diag_list *diags)
{
	json_error_t jerr;
	json_t *b;
	int rc;

	*out = NULL;
	b = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!b) {
		pmbot_buf shown = PMBOT_BUF_INIT;

		/* jansson quotes the file ("near '…'"): escaped like any outside text. */
		rc = pmbot_diag_add(diags, PMBOT_SEV_ERROR, CODE, NULL, "", jerr.line, jerr.column,
			"the plan is not JSON: %s", pmbot_diag_show(&shown, jerr.text, 120)) < 0 ?
			PMBOT_ERROR : PMBOT_EINVALID;
		pmbot_buf_free(&shown);
		return rc;
	}
	rc = pmbot_bundle_check(b, diags);
	if (rc != PMBOT_OK) {
		json_decref(b);
		return rc;
	}
	*out = b;
	return PMBOT_OK;
}

int pmbot_bundle_load(json_t **out, const char *path, pmbot_diag_list *diags)
{
	pmbot_buf text = PMBOT_BUF_INIT;
	int rc = pmbot_bundle_load_text(out, &text, path, diags);

	pmbot_buf_free(&text);
	return rc;
}

int pmbot_bundle_load_text(json_t **out, pmbot_buf *text, const char *path,
	pmbot_diag_list *diags)
{
	pmbot_diag_list mine = PMBOT_DIAG_LIST_INIT;
	int rc, e;

	*out = NULL;
	pmbot_buf_free(text);
	pmbot_buf_init(text, PMBOT_BUNDLE_MAX_BYTES);
	if (pmbot_fs_read(text, path) < 0) {
		e = errno;
		rc = e == ENOENT ? PMBOT_ENOTFOUND : PMBOT_ERROR;
		if (pmbot_diag_add(&mine, PMBOT_SEV_ERROR, "PLAN_READ", NULL, "", 0, 0,
			    "cannot read the plan: %s", e == ENOENT ? "no such file" :
			    text->len >= PMBOT_BUNDLE_MAX_BYTES ? "larger than 256 MiB" : strerror(e)) < 0)
			rc = PMBOT_ERROR;
	} else {
		rc = pmbot_bundle_parse(out, text->buf, text->len, &mine);
	}
	/* This call's diagnostics name the file; the caller's earlier ones stay as they were. */
	if ((pmbot_diag_list_set_file(&mine, path) < 0 || pmbot_diag_list_move(diags, &mine) < 0) &&
	    rc != PMBOT_ERROR) {
		json_decref(*out);
		*out = NULL;
		rc = PMBOT_ERROR;
	}
	pmbot_diag_list_free(&mine);
	return rc;
}

static const json_t *member(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_object_get(o, a);

	return b ? json_object_get(v, b) : v;
}

int pmbot_bundle_has_drift(const json_t *bundle)
{
	return pmbot_plan_count(bundle) > 0 ||
		json_array_size(json_object_get(bundle, "conflicts")) > 0;
}

const char *pmbot_bundle_plan_hash(const json_t *bundle)
{
	return json_string_value(member(bundle, "plan_hash", NULL));
}

const char *pmbot_bundle_target(const json_t *bundle)
{
	return json_string_value(member(bundle, "target", NULL));
}

const char *pmbot_bundle_source_kind(const json_t *bundle)
{
	return json_string_value(member(bundle, "source", "kind"));
}

const char *pmbot_bundle_source_commit(const json_t *bundle)
{
	return json_string_value(member(bundle, "source", "commit"));
}

const char *pmbot_bundle_backend_kind(const json_t *bundle)
{
	return json_string_value(json_object_get(member(bundle, "source", "backend"), "kind"));
}

const char *pmbot_bundle_backend_state(const json_t *bundle)
{
	return json_string_value(json_object_get(member(bundle, "source", "backend"), "state"));
}

size_t pmbot_bundle_report_count(const json_t *bundle)
{
	return json_array_size(member(bundle, "source", "reports"));
}

const char *pmbot_bundle_report_path(const json_t *bundle, size_t i)
{
	return json_string_value(json_object_get(json_array_get(member(bundle, "source", "reports"), i),
		"path"));
}
