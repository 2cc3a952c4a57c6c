#include "pmbot/source.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pmbot/buf.h"
#include "pmbot/glob.h"
#include "pmbot/json.h"
#include "pmbot/doc.h"
#include "pmbot/array.h"
#include "pmbot/banned.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static const char *const permission_names[] = {
	"read", "triage", "write", "maintain", "admin"
};

static const char *const top_keys[] = {
	"reports", "repos", "project", "labels", "trusted_authors", "approval",
	"deny_operations", "auto_approve", "templates", "llm", "limits", "issue_types",
	"github"
};
static const char *const project_keys[] = { "owner", "number" };
/* Same order as the members of pmbot_label_scheme (see label_slot). */
static const char *const label_keys[] = { "type", "area", "prio", "size", "status" };
static const char *const approval_keys[] = { "min_permission", "users" };
static const char *const llm_keys[] = { "policies", "digest_threshold" };
static const char *const limits_keys[] = { "max_report_bytes", "max_total_bytes", "max_items" };
static const char *const github_keys[] = { "write_budget" };

#define DEFAULT_REPORTS "plans/**/*.md"
#define DEFAULT_TRUSTED "github-actions[bot]"
#define DEFAULT_TEMPLATES ".github/ISSUE_TEMPLATE"

/* GitHub: logins up to 39 characters, repository names up to 100, labels up to 50. */
#define LOGIN_MAX 39
#define REPO_NAME_MAX 100
#define LABEL_MAX 50
#define PROJECT_NUMBER_MAX 2147483647L /* GraphQL Int */
#define SHOW_MAX 64
#define SUGGEST_MAX 64

const char *pmbot_permission_name(pmbot_permission perm)
{
	return (size_t)perm < N_OF(permission_names) ? permission_names[perm] : NULL;
}

int pmbot_permission_parse(pmbot_permission *out, const char *name)
{
	size_t i;

	for (i = 0; i < N_OF(permission_names); i++) {
		if (!strcmp(permission_names[i], name)) {
			*out = (pmbot_permission)i;
			return PMBOT_OK;
		}
	}
	return PMBOT_ENOTFOUND;
}

/* ASCII only: GitHub folds the case of logins and repository names this way. */
static int fold(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static int ieq(const char *a, const char *b)
{
	for (; *a && fold((unsigned char)*a) == fold((unsigned char)*b); a++, b++)
		;
	return *a == *b;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !memcmp(s + n - m, suffix, m);
}

static int is_alnum(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* `[A-Za-z0-9_-]{1,39}` not starting with '-', optionally "[bot]" when allowed. */
static int valid_login(const char *s, int allow_bot)
{
	size_t n = strlen(s), i;

	if (allow_bot && ends_with(s, "[bot]"))
		n -= 5;
	if (!n || n > LOGIN_MAX || s[0] == '-')
		return 0;
	for (i = 0; i < n; i++)
		if (!is_alnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_')
			return 0;
	return 1;
}

static int valid_repo(const char *s)
{
	const char *slash = strchr(s, '/'), *name;
	size_t owner_len, i;
	char owner[LOGIN_MAX + 1];

	if (!slash || strchr(slash + 1, '/'))
		return 0;
	owner_len = (size_t)(slash - s);
	if (!owner_len || owner_len > LOGIN_MAX)
		return 0;
	memcpy(owner, s, owner_len);
	owner[owner_len] = '\0';
	if (!valid_login(owner, 0))
		return 0;
	name = slash + 1;
	if (!*name || strlen(name) > REPO_NAME_MAX || !strcmp(name, ".") || !strcmp(name, ".."))
		return 0;
	for (i = 0; name[i]; i++)
		if (!is_alnum((unsigned char)name[i]) && !strchr("._-", name[i]))
			return 0;
	return 1;
}

static size_t utf8_chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void list_free(pmbot_config_list *l)
{
	size_t i;

	for (i = 0; i < l->count; i++)
		free(l->items[i]);
	free(l->items);
	l->items = NULL;
	l->count = 0;
}

static const char *label_get(const pmbot_label_scheme *s, size_t i)
{
	switch (i) {
	case 0: return s->type;
	case 1: return s->area;
	case 2: return s->prio;
	case 3: return s->size;
	default: return s->status;
	}
}

static const char **label_slot(pmbot_label_scheme *s, size_t i)
{
	switch (i) {
	case 0: return &s->type;
	case 1: return &s->area;
	case 2: return &s->prio;
	case 3: return &s->size;
	default: return &s->status;
	}
}

void pmbot_config_free(pmbot_config *cfg)
{
	size_t i;

	if (!cfg)
		return;
	list_free(&cfg->reports);
	list_free(&cfg->repos);
	list_free(&cfg->trusted_authors);
	list_free(&cfg->approvers);
	free(cfg->project_owner);
	free(cfg->write_budget);
	for (i = 0; i < N_OF(label_keys); i++)
		free((char *)label_get(&cfg->labels, i));
	free(cfg->templates);
	json_decref(cfg->llm_policies);
	free(cfg);
}

static int list_set_one(pmbot_config_list *l, const char *s)
{
	list_free(l);
	if (!s)
		return PMBOT_OK;
	if (!(l->items = calloc(1, sizeof(*l->items))) || !(l->items[0] = strdup(s)))
		return PMBOT_ERROR;
	l->count = 1;
	return PMBOT_OK;
}

int pmbot_config_default(pmbot_config **out, const char *default_repo)
{
	static const pmbot_label_scheme defaults = PMBOT_LABEL_SCHEME_DEFAULT;
	pmbot_config *cfg = NULL;
	size_t i;
	int err = PMBOT_ERROR;

	*out = NULL;
	if (default_repo && !valid_repo(default_repo)) {
		err = PMBOT_EINVALID;
		goto done;
	}
	if (!(cfg = calloc(1, sizeof(*cfg))))
		goto done;
	cfg->min_permission = PMBOT_PERM_WRITE;
	cfg->issue_types = 1;
	cfg->max_report_bytes = PMBOT_CONFIG_DEFAULT_MAX_REPORT_BYTES;
	cfg->max_total_bytes = PMBOT_CONFIG_DEFAULT_MAX_TOTAL_BYTES;
	cfg->max_items = PMBOT_CONFIG_DEFAULT_MAX_ITEMS;
	for (i = 0; i < N_OF(label_keys); i++) {
		const char **slot = label_slot(&cfg->labels, i);

		if (!(*slot = xstrdup(label_get(&defaults, i))))
			goto done;
	}
	if (list_set_one(&cfg->reports, DEFAULT_REPORTS) < 0 ||
	    list_set_one(&cfg->repos, default_repo) < 0 ||
	    list_set_one(&cfg->trusted_authors, DEFAULT_TRUSTED) < 0 ||
	    !(cfg->templates = strdup(DEFAULT_TEMPLATES)))
		goto done;
	*out = cfg;
	cfg = NULL;
	err = PMBOT_OK;
done:
	pmbot_config_free(cfg);
	return err;
}

/* ---- validation ---- */

typedef struct {
	const char *file;
	const pmbot_srcmap *map;
	pmbot_diag_list diags;
	pmbot_buf path;       /* JSON Pointer of the value being checked */
	pmbot_buf show[2];    /* scratch for user text quoted in messages */
	/* First index of each operation in auto_approve, for the conflict check. */
	size_t auto_index[PMBOT_OP_COUNT];
} parse_ctx;

/* User text goes into messages through pmbot_diag_show(). */
static const char *show(parse_ctx *c, int slot, const char *s)
{
	return pmbot_diag_show(&c->show[slot], s, SHOW_MAX);
}

static int report(parse_ctx *c, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int report(parse_ctx *c, const char *code, const char *fmt, ...)
{
	pmbot_buf msg = PMBOT_BUF_INIT;
	int line = 0, column = 0, err;
	va_list ap;

	va_start(ap, fmt);
	err = pmbot_buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	if (err < 0)
		goto done;
	pmbot_srcmap_find(c->map, c->path.buf, &line, &column);
	err = pmbot_diag_add(&c->diags, PMBOT_SEV_ERROR, code, c->file,
		c->path.buf, line, column, "%s", msg.buf);
done:
	pmbot_buf_free(&msg);
	return err < 0 ? PMBOT_ERROR : PMBOT_OK;
}

static int push_key(parse_ctx *c, const char *key, size_t *mark)
{
	*mark = c->path.len;
	return pmbot_json_pointer_push(&c->path, key) < 0 ? PMBOT_ERROR : PMBOT_OK;
}

static int push_index(parse_ctx *c, size_t index, size_t *mark)
{
	*mark = c->path.len;
	return pmbot_json_pointer_push_index(&c->path, index) < 0 ? PMBOT_ERROR : PMBOT_OK;
}

static void pop(parse_ctx *c, size_t mark)
{
	pmbot_buf_truncate(&c->path, mark);
}

static int type_error(parse_ctx *c, const json_t *v, const char *expected)
{
	return report(c, "CONFIG_TYPE", "`%s` must be %s, not %s",
		c->path.len ? show(c, 1, c->path.buf) : "/", expected, pmbot_json_type_name(v));
}

/* Optimal string alignment distance, ASCII case folded; both at most SUGGEST_MAX bytes. */
static size_t edit_distance(const char *a, const char *b)
{
	unsigned char d[SUGGEST_MAX + 1][SUGGEST_MAX + 1];
	size_t la = strlen(a), lb = strlen(b), i, j;

	for (i = 0; i <= la; i++)
		d[i][0] = (unsigned char)i;
	for (j = 0; j <= lb; j++)
		d[0][j] = (unsigned char)j;
	for (i = 1; i <= la; i++) {
		for (j = 1; j <= lb; j++) {
			int ca = fold((unsigned char)a[i - 1]), cb = fold((unsigned char)b[j - 1]);
			unsigned best = d[i - 1][j - 1] + (ca != cb);

			if (d[i - 1][j] + 1u < best)
				best = d[i - 1][j] + 1u;
			if (d[i][j - 1] + 1u < best)
				best = d[i][j - 1] + 1u;
			if (i > 1 && j > 1 && ca == fold((unsigned char)b[j - 2]) &&
			    fold((unsigned char)a[i - 2]) == cb && d[i - 2][j - 2] + 1u < best)
				best = d[i - 2][j - 2] + 1u;
			d[i][j] = (unsigned char)best;
		}
	}
	return d[la][lb];
}

/*
 * The known word closest to `word`, if close enough to be a likely typo: at
 * most two edits and at most a third of the known word's length, so short
 * words only get one. Ties go to the earlier word, keeping messages deterministic.
 */
static const char *suggest(const char *word, const char *const *known, size_t n)
{
	const char *best = NULL;
	size_t best_d = 3, i;

	if (strlen(word) > SUGGEST_MAX)
		return NULL;
	for (i = 0; i < n; i++) {
		size_t d = edit_distance(word, known[i]);

		if (d < best_d && d * 3 <= strlen(known[i])) {
			best = known[i];
			best_d = d;
		}
	}
	return best;
}

/* Report `word` as unknown, with a suggestion or else the list of known words. */
static int unknown(parse_ctx *c, const char *code, const char *what,
	const char *word, const char *const *known, size_t n)
{
	pmbot_buf all = PMBOT_BUF_INIT;
	const char *hint = suggest(word, known, n);
	size_t i;
	int err = PMBOT_ERROR;

	if (hint) {
		err = report(c, code, "unknown %s `%s`; did you mean `%s`?", what,
			show(c, 0, word), hint);
		goto done;
	}
	for (i = 0; i < n; i++)
		if (pmbot_buf_printf(&all, "%s`%s`", i ? ", " : "", known[i]) < 0)
			goto done;
	err = report(c, code, "unknown %s `%s`; expected one of %s", what,
		show(c, 0, word), all.buf);
done:
	pmbot_buf_free(&all);
	return err;
}

static int check_keys(parse_ctx *c, const json_t *obj, const char *const *known, size_t n)
{
	const char *key;
	json_t *v;
	size_t i, mark;

	json_object_foreach((json_t *)obj, key, v) {
		for (i = 0; i < n && strcmp(key, known[i]); i++)
			;
		if (i < n)
			continue;
		if (push_key(c, key, &mark) < 0 ||
		    unknown(c, "CONFIG_UNKNOWN_KEY", "key", key, known, n) < 0)
			return PMBOT_ERROR;
		pop(c, mark);
	}
	return PMBOT_OK;
}

/*
 * `*s` is the string value of `v`, or NULL after a CONFIG_TYPE (or, for an
 * embedded NUL that JSON input can smuggle in, a CONFIG_VALUE) was reported.
 */
static int get_string(parse_ctx *c, const json_t *v, const char **s)
{
	*s = NULL;
	if (!json_is_string(v))
		return type_error(c, v, "a string");
	if (strlen(json_string_value(v)) != json_string_length(v))
		return report(c, "CONFIG_VALUE", "`%s` must not contain a NUL character",
			show(c, 1, c->path.buf));
	*s = json_string_value(v);
	return PMBOT_OK;
}

/* Validators: report CONFIG_VALUE for a bad `s` and return PMBOT_OK, or PMBOT_ERROR. */
typedef int (*check_fn)(parse_ctx *c, const char *s);

/* The git layer's own check, so a glob accepted here is one it can walk. */
static int check_glob(parse_ctx *c, const char *s)
{
	const char *reason = NULL;
	size_t offset = 0;

	if (pmbot_glob_check(s, &offset, &reason) == 0)
		return PMBOT_OK;
	if (!*s)
		return report(c, "CONFIG_VALUE", "a report glob must not be empty");
	return report(c, "CONFIG_VALUE", "report glob `%s` is invalid at byte %zu: %s",
		show(c, 0, s), offset, reason ? reason : "malformed");
}

static int check_repo(parse_ctx *c, const char *s)
{
	if (valid_repo(s))
		return PMBOT_OK;
	return report(c, "CONFIG_VALUE",
		"`%s` is not a repository name: expected OWNER/NAME", show(c, 0, s));
}

static int check_login(parse_ctx *c, const char *s)
{
	if (valid_login(s, 1))
		return PMBOT_OK;
	return report(c, "CONFIG_VALUE", "`%s` is not a GitHub login", show(c, 0, s));
}

/* Replace `*out` by the strings of array `v`, each passed through `check`. */
static int read_list(parse_ctx *c, const json_t *v, check_fn check, pmbot_config_list *out)
{
	pmbot_config_list l = { NULL, 0, 0 };
	size_t i, mark;
	int err = PMBOT_ERROR;

	if (json_is_null(v))
		return PMBOT_OK;
	if (!json_is_array(v))
		return type_error(c, v, "an array of strings");
	if (json_array_size(v) && !(l.items = calloc(json_array_size(v), sizeof(*l.items))))
		goto done;
	for (i = 0; i < json_array_size(v); i++) {
		const char *s;

		if (push_index(c, i, &mark) < 0 ||
		    get_string(c, json_array_get(v, i), &s) < 0)
			goto done;
		if (s) {
			if (check(c, s) < 0 || !(l.items[l.count++] = strdup(s)))
				goto done;
		}
		pop(c, mark);
	}
	list_free(out);
	*out = l;
	l.items = NULL;
	l.count = 0;
	err = PMBOT_OK;
done:
	list_free(&l);
	return err;
}

/* Set `set[op]` for every operation listed in `v`; `first[op]` is its first index. */
static int read_operations(parse_ctx *c, const json_t *v, unsigned char *set, size_t *first)
{
	size_t i, mark;

	if (json_is_null(v))
		return PMBOT_OK;
	if (!json_is_array(v))
		return type_error(c, v, "an array of operation names");
	for (i = 0; i < json_array_size(v); i++) {
		pmbot_operation op = PMBOT_OP_CREATE_ISSUE;
		const char *s;

		if (push_index(c, i, &mark) < 0 || get_string(c, json_array_get(v, i), &s) < 0)
			return PMBOT_ERROR;
		if (s && pmbot_operation_parse(&op, s) < 0) {
			const char *names[PMBOT_OP_COUNT];
			size_t k;

			for (k = 0; k < PMBOT_OP_COUNT; k++)
				names[k] = pmbot_operation_name((pmbot_operation)k);
			if (unknown(c, "CONFIG_VALUE", "operation", s, names, PMBOT_OP_COUNT) < 0)
				return PMBOT_ERROR;
		} else if (s && !set[op]) {
			set[op] = 1;
			if (first)
				first[op] = i;
		}
		pop(c, mark);
	}
	return PMBOT_OK;
}

static int read_project_owner(parse_ctx *c, const json_t *v, pmbot_config *cfg)
{
	const char *s;

	if (get_string(c, v, &s) < 0)
		return PMBOT_ERROR;
	if (!s)
		return PMBOT_OK;
	if (!valid_login(s, 0))
		return report(c, "CONFIG_VALUE", "`%s` is not a GitHub login", show(c, 0, s));
	return (cfg->project_owner = strdup(s)) ? PMBOT_OK : PMBOT_ERROR;
}

static int read_project_number(parse_ctx *c, const json_t *v, pmbot_config *cfg)
{
	json_int_t n;

	if (!json_is_integer(v))
		return type_error(c, v, "an integer");
	n = json_integer_value(v);
	if (n < 1 || n > PROJECT_NUMBER_MAX)
		return report(c, "CONFIG_VALUE",
			"project number must be between 1 and %ld, not %" JSON_INTEGER_FORMAT,
			PROJECT_NUMBER_MAX, n);
	cfg->project_number = (long)n;
	return PMBOT_OK;
}

static int read_project(parse_ctx *c, const json_t *v, pmbot_config *cfg)
{
	const json_t *owner, *number;
	size_t mark;

	if (json_is_null(v))
		return PMBOT_OK;
	if (!json_is_object(v))
		return type_error(c, v, "an object with `owner` and `number`");
	if (check_keys(c, v, project_keys, N_OF(project_keys)) < 0)
		return PMBOT_ERROR;
	if ((owner = json_object_get(v, "owner")) && json_is_null(owner))
		owner = NULL;
	if ((number = json_object_get(v, "number")) && json_is_null(number))
		number = NULL;
	if (!owner &&
	    report(c, "CONFIG_VALUE", "a project needs an `owner` (organization or user login)") < 0)
		return PMBOT_ERROR;
	if (!number && report(c, "CONFIG_VALUE", "a project needs a `number`") < 0)
		return PMBOT_ERROR;
	if (owner) {
		if (push_key(c, "owner", &mark) < 0 || read_project_owner(c, owner, cfg) < 0)
			return PMBOT_ERROR;
		pop(c, mark);
	}
	if (number) {
		if (push_key(c, "number", &mark) < 0 || read_project_number(c, number, cfg) < 0)
			return PMBOT_ERROR;
		pop(c, mark);
	}
	return PMBOT_OK;
}

static int prefixes_overlap(const char *a, const char *b)
{
	for (; *a && *b && fold((unsigned char)*a) == fold((unsigned char)*b); a++, b++)
		;
	return !*a || !*b;
}

/* Store a copy of a good prefix in `*slot` and set `*set`; report a bad one. */
static int read_label(parse_ctx *c, const json_t *v, const char **slot, int *set)
{
	const char *s;
	char *copy;

	if (get_string(c, v, &s) < 0)
		return PMBOT_ERROR;
	if (!s)
		return PMBOT_OK;
	if (!*s) /* it would claim every label, people's too */
		return report(c, "CONFIG_VALUE", "a label prefix must not be empty");
	if (utf8_chars(s) >= LABEL_MAX)
		return report(c, "CONFIG_VALUE",
			"label prefix `%s` leaves no room for a value: GitHub labels have at most %d characters",
			show(c, 0, s), LABEL_MAX);
	if (!(copy = strdup(s)))
		return PMBOT_ERROR;
	free((char *)*slot);
	*slot = copy;
	*set = 1;
	return PMBOT_OK;
}

static int read_labels(parse_ctx *c, const json_t *v, pmbot_config *cfg)
{
	int set[N_OF(label_keys)] = { 0 };
	size_t i, j, mark;

	if (json_is_null(v))
		return PMBOT_OK;
	if (!json_is_object(v))
		return type_error(c, v, "an object of label prefixes");
	if (check_keys(c, v, label_keys, N_OF(label_keys)) < 0)
		return PMBOT_ERROR;
	for (i = 0; i < N_OF(label_keys); i++) {
		const json_t *p = json_object_get(v, label_keys[i]);

		if (!p || json_is_null(p))
			continue;
		if (push_key(c, label_keys[i], &mark) < 0 ||
		    read_label(c, p, label_slot(&cfg->labels, i), &set[i]) < 0)
			return PMBOT_ERROR;
		pop(c, mark);
	}
	/* Ownership of a label must be decidable from its name alone. */
	for (j = 1; j < N_OF(label_keys); j++) {
		for (i = 0; i < j; i++) {
			const char *a = label_get(&cfg->labels, i), *b = label_get(&cfg->labels, j);
			size_t at = set[j] ? j : i;

			if (!(set[i] || set[j]) || !prefixes_overlap(a, b))
				continue;
			if (push_key(c, label_keys[at], &mark) < 0 ||
			    report(c, "CONFIG_VALUE",
				    "label prefixes `%s` (%s) and `%s` (%s) overlap: a label would match both",
				    show(c, 0, a), label_keys[i], show(c, 1, b), label_keys[j]) < 0)
				return PMBOT_ERROR;
			pop(c, mark);
		}
	}
	return PMBOT_OK;
}

static int read_approval(parse_ctx *c, const json_t *v, pmbot_config *cfg)
{
	const json_t *perm, *users;
	const char *s;
	size_t mark;

	if (json_is_null(v))
		return PMBOT_OK;
	if (!json_is_object(v))
		return type_error(c, v, "an object with `min_permission` and `users`");
	if (check_keys(c, v, approval_keys, N_OF(approval_keys)) < 0)
		return PMBOT_ERROR;
	if ((perm = json_object_get(v, "min_permission")) && !json_is_null(perm)) {
		if (push_key(c, "min_permission", &mark) < 0 || get_string(c, perm, &s) < 0)
			return PMBOT_ERROR;
		if (s && pmbot_permission_parse(&cfg->min_permission, s) < 0 &&
		    unknown(c, "CONFIG_VALUE", "permission", s, permission_names,
			    N_OF(permission_names)) < 0)
			return PMBOT_ERROR;
		pop(c, mark);
	}
	if ((users = json_object_get(v, "users"))) {
		if (push_key(c, "users", &mark) < 0 ||
		    read_list(c, users, check_login, &cfg->approvers) < 0)
			return PMBOT_ERROR;
		pop(c, mark);
	}
	return PMBOT_OK;
}

/* A clean repository-relative directory; trailing slashes are dropped. */
static int read_templates(parse_ctx *c, const json_t *v, pmbot_config *cfg)
{
	const char *s, *seg;
	size_t len;
	char *copy;

	if (json_is_null(v))
		return PMBOT_OK;
	if (get_string(c, v, &s) < 0)
		return PMBOT_ERROR;
	if (!s)
		return PMBOT_OK;
	len = strlen(s);
	while (len && s[len - 1] == '/')
		len--;
	if (!len || *s == '/')
		return report(c, "CONFIG_VALUE",
			"templates must be a directory relative to the repository root, not `%s`",
			show(c, 0, s));
	for (seg = s; seg < s + len;) {
		const char *end = memchr(seg, '/', (size_t)(s + len - seg));
		size_t n = end ? (size_t)(end - seg) : (size_t)(s + len - seg);

		if (!n || (n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
			return report(c, "CONFIG_VALUE",
				"templates path `%s` must not have empty, `.` or `..` segments",
				show(c, 0, s));
		seg += n + 1;
	}
	if (!(copy = malloc(len + 1)))
		return PMBOT_ERROR;
	memcpy(copy, s, len);
	copy[len] = '\0';
	free(cfg->templates);
	cfg->templates = copy;
	return PMBOT_OK;
}

static int read_reports(parse_ctx *c, const json_t *v, pmbot_config *cfg)
{
	return read_list(c, v, check_glob, &cfg->reports);
}

static int read_repos(parse_ctx *c, const json_t *v, pmbot_config *cfg)
{
	return read_list(c, v, check_repo, &cfg->repos);
}

static int read_trusted(parse_ctx *c, const json_t *v, pmbot_config *cfg)
{
	return read_list(c, v, check_login, &cfg->trusted_authors);
}

static int read_deny(parse_ctx *c, const json_t *v, pmbot_config *cfg)
{
	return read_operations(c, v, cfg->denied, NULL);
}

static int read_auto(parse_ctx *c, const json_t *v, pmbot_config *cfg)
{
	return read_operations(c, v, cfg->auto_approved, c->auto_index);
}

typedef int (*key_fn)(parse_ctx *c, const json_t *v, pmbot_config *cfg);

/*
 * github: how pm-bot talks to GitHub. write_budget is the client's window
 * list (pmbot_github_budget_parse), kept as text: $PMBOT_GITHUB_WRITE_BUDGET
 * overrides it, and the client parses it again when it takes it.
 */
static int read_github(parse_ctx *c, const json_t *v, pmbot_config *cfg)
{
	const json_t *t;
	pmbot_github_budget b;
	pmbot_buf why = PMBOT_BUF_INIT;
	size_t mark;
	int err = PMBOT_OK;

	if (json_is_null(v))
		return PMBOT_OK;
	if (!json_is_object(v))
		return type_error(c, v, "an object with `write_budget`");
	if (check_keys(c, v, github_keys, N_OF(github_keys)) < 0)
		return PMBOT_ERROR;
	t = json_object_get(v, "write_budget");
	if (!t || json_is_null(t))
		return PMBOT_OK;
	if (push_key(c, "write_budget", &mark) < 0)
		return PMBOT_ERROR;
	if (!json_is_string(t)) {
		err = type_error(c, t, "a string of COUNT/SECONDSs windows such as \"80/60s,500/3600s\"");
	} else if (pmbot_github_budget_parse(&b, json_string_value(t), &why) < 0) {
		err = report(c, "CONFIG_VALUE", "%s", why.buf) < 0 ? PMBOT_ERROR : PMBOT_OK;
	} else {
		free(cfg->write_budget);
		if (!(cfg->write_budget = strdup(json_string_value(t))))
			err = PMBOT_ERROR;
	}
	pmbot_buf_free(&why);
	if (err < 0)
		return PMBOT_ERROR;
	pop(c, mark);
	return PMBOT_OK;
}

/* Same order as top_keys. */
/*
 * llm: custom governance policies (their fields are checked by the Mode B
 * governance, pmbot/llm.h part 4) and the context digest threshold.
 */
static int read_llm(parse_ctx *c, const json_t *v, pmbot_config *cfg)
{
	const json_t *p, *t, *item;
	size_t mark, imark, i;
	int bad = 0;

	if (json_is_null(v))
		return PMBOT_OK;
	if (!json_is_object(v))
		return type_error(c, v, "an object with `policies` and `digest_threshold`");
	if (check_keys(c, v, llm_keys, N_OF(llm_keys)) < 0)
		return PMBOT_ERROR;
	if ((p = json_object_get(v, "policies")) && !json_is_null(p)) {
		if (push_key(c, "policies", &mark) < 0)
			return PMBOT_ERROR;
		if (!json_is_array(p))
			return type_error(c, p, "a list of policies");
		json_array_foreach(p, i, item) {
			if (json_is_object(item))
				continue;
			bad = 1;
			imark = c->path.len;
			if (pmbot_json_pointer_push_index(&c->path, i) < 0 ||
			    type_error(c, item, "a policy ({name, type, forbidden_patterns or "
				    "forbidden_keywords, action})") < 0)
				return PMBOT_ERROR;
			pop(c, imark);
		}
		if (!bad && !(cfg->llm_policies = json_deep_copy(p)))
			return PMBOT_ERROR;
		pop(c, mark);
	}
	if ((t = json_object_get(v, "digest_threshold")) && !json_is_null(t)) {
		if (push_key(c, "digest_threshold", &mark) < 0)
			return PMBOT_ERROR;
		if (!json_is_integer(t) || json_integer_value(t) < 1 || json_integer_value(t) > 1000) {
			if (report(c, "CONFIG_VALUE", "digest_threshold must be an integer from 1 to 1000") < 0)
				return PMBOT_ERROR;
		} else {
			cfg->llm_digest_threshold = (long)json_integer_value(t);
		}
		pop(c, mark);
	}
	return PMBOT_OK;
}

/* One limit: an integer from 1 to `max`, or null for the default. */
static int read_limit(parse_ctx *c, const json_t *v, const char *key, long long max, size_t *out)
{
	const json_t *t = json_object_get(v, key);
	size_t mark;

	if (!t || json_is_null(t))
		return PMBOT_OK;
	if (push_key(c, key, &mark) < 0)
		return PMBOT_ERROR;
	if (!json_is_integer(t) || json_integer_value(t) < 1 || json_integer_value(t) > max) {
		if (report(c, "CONFIG_VALUE", "%s must be an integer from 1 to %lld", key, max) < 0)
			return PMBOT_ERROR;
	} else {
		*out = (size_t)json_integer_value(t);
	}
	pop(c, mark);
	return PMBOT_OK;
}

/*
 * limits: what one run reads of the reports, checked on blob sizes before
 * any byte is parsed, so a hostile push costs at most these.
 */
static int read_limits(parse_ctx *c, const json_t *v, pmbot_config *cfg)
{
	if (json_is_null(v))
		return PMBOT_OK;
	if (!json_is_object(v))
		return type_error(c, v, "an object with `max_report_bytes`, `max_total_bytes` and "
			"`max_items`");
	if (check_keys(c, v, limits_keys, N_OF(limits_keys)) < 0 ||
	    read_limit(c, v, "max_report_bytes", PMBOT_CONFIG_LIMIT_BYTES_MAX,
		    &cfg->max_report_bytes) < 0 ||
	    read_limit(c, v, "max_total_bytes", PMBOT_CONFIG_LIMIT_BYTES_MAX,
		    &cfg->max_total_bytes) < 0 ||
	    read_limit(c, v, "max_items", PMBOT_CONFIG_LIMIT_ITEMS_MAX, &cfg->max_items) < 0)
		return PMBOT_ERROR;
	return PMBOT_OK;
}

/* issue_types: auto (set the GitHub issue type matching each kind) or off. */
static int read_issue_types(parse_ctx *c, const json_t *v, pmbot_config *cfg)
{
	const char *s;

	if (json_is_null(v))
		return PMBOT_OK;
	if (get_string(c, v, &s) < 0)
		return PMBOT_ERROR;
	if (!s)
		return PMBOT_OK;
	if (!strcmp(s, "auto") || !strcmp(s, "off")) {
		cfg->issue_types = !strcmp(s, "auto");
		return PMBOT_OK;
	}
	return report(c, "CONFIG_VALUE", "issue_types must be `auto` or `off`, not `%s`",
		show(c, 0, s));
}

static const key_fn top_readers[] = {
	read_reports, read_repos, read_project, read_labels, read_trusted,
	read_approval, read_deny, read_auto, read_templates, read_llm, read_limits,
	read_issue_types, read_github
};
_Static_assert(N_OF(top_readers) == N_OF(top_keys), "one reader per top-level key");

static int read_root(parse_ctx *c, const json_t *root, pmbot_config *cfg)
{
	const json_t *v;
	size_t i, mark;

	if (check_keys(c, root, top_keys, N_OF(top_keys)) < 0)
		return PMBOT_ERROR;
	for (i = 0; i < N_OF(top_keys); i++) {
		if (!(v = json_object_get(root, top_keys[i])))
			continue;
		if (push_key(c, top_keys[i], &mark) < 0 || top_readers[i](c, v, cfg) < 0)
			return PMBOT_ERROR;
		pop(c, mark);
	}
	for (i = 0; i < PMBOT_OP_COUNT; i++) {
		if (!(cfg->denied[i] && cfg->auto_approved[i]))
			continue;
		if (push_key(c, "auto_approve", &mark) < 0 ||
		    pmbot_json_pointer_push_index(&c->path, c->auto_index[i]) < 0 ||
		    report(c, "CONFIG_VALUE",
			    "operation `%s` is both denied (deny_operations) and auto-approved",
			    pmbot_operation_name((pmbot_operation)i)) < 0)
			return PMBOT_ERROR;
		pop(c, mark);
	}
	return PMBOT_OK;
}

/*
 * Only blank lines and comments: the loader calls that "no YAML document"
 * (right for a report block), but a config without settings is all defaults.
 */
static int blank_yaml(const char *text, size_t len)
{
	size_t i = len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3) ? 3 : 0;

	while (i < len) {
		if (text[i] == '#')
			while (i < len && text[i] != '\n')
				i++;
		else if (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n')
			i++;
		else
			return 0;
	}
	return 1;
}

int pmbot_config_parse(pmbot_config **out, const char *file, const char *text,
	size_t len, const char *default_repo, pmbot_diag_list *diags)
{
	parse_ctx c;
	pmbot_config *cfg = NULL;
	pmbot_srcmap *map = NULL;
	json_t *root = NULL;
	pmbot_limits lim;
	int err;

	*out = NULL;
	memset(&c, 0, sizeof(c));
	c.file = file;
	pmbot_buf_init(&c.path, 0);
	pmbot_buf_init(&c.show[0], 0);
	pmbot_buf_init(&c.show[1], 0);
	if ((err = pmbot_config_default(&cfg, default_repo)) < 0) {
		if (err == PMBOT_EINVALID &&
		    report(&c, "CONFIG_VALUE",
			    "the current repository `%s` is not OWNER/NAME",
			    show(&c, 0, default_repo)) < 0)
			err = PMBOT_ERROR;
		goto done;
	}
	err = PMBOT_EINVALID;
	if (len > PMBOT_CONFIG_MAX_BYTES) {
		if (report(&c, "INPUT_TOO_LARGE", "the configuration is %zu bytes; the limit is %zu",
			    len, PMBOT_CONFIG_MAX_BYTES) < 0)
			err = PMBOT_ERROR;
		goto done;
	}
	if (!blank_yaml(text, len)) {
		pmbot_limits_default(&lim);
		lim.max_bytes = PMBOT_CONFIG_MAX_BYTES;
		err = PMBOT_ERROR;
		if (!(map = pmbot_srcmap_new()))
			goto done;
		c.map = map;
		if ((err = pmbot_yaml_parse(&root, map, file, text, len, 1, 0, &lim, &c.diags)) < 0)
			goto done;
		err = PMBOT_ERROR;
		if (root && json_is_object(root)) {
			if (read_root(&c, root, cfg) < 0)
				goto done;
		} else if (root && !json_is_null(root)) {
			if (type_error(&c, root, "an object (a mapping of keys)") < 0)
				goto done;
		}
	}
	err = c.diags.errors ? PMBOT_EINVALID : PMBOT_OK;
	if (err == PMBOT_OK) {
		*out = cfg;
		cfg = NULL;
	}
done:
	pmbot_diag_list_sort(&c.diags);
	if (pmbot_diag_list_move(diags, &c.diags) < 0)
		err = PMBOT_ERROR;
	if (err != PMBOT_OK) {
		pmbot_config_free(*out);
		*out = NULL;
	}
	pmbot_config_free(cfg);
	pmbot_diag_list_free(&c.diags);
	pmbot_buf_free(&c.path);
	pmbot_buf_free(&c.show[0]);
	pmbot_buf_free(&c.show[1]);
	pmbot_srcmap_free(map);
	json_decref(root);
	return err;
}

/* ---- output and queries ---- */

static json_t *list_json(const pmbot_config_list *l)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < l->count; i++) {
		if (json_array_append_new(a, json_string(l->items[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *operations_json(const unsigned char *set)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < PMBOT_OP_COUNT; i++) {
		if (set[i] && json_array_append_new(a, json_string(pmbot_operation_name((pmbot_operation)i))) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

int pmbot_config_to_json(json_t **out, const pmbot_config *cfg)
{
	json_t *o = NULL, *labels = NULL, *approval = NULL, *project = NULL;
	size_t i;
	int err = PMBOT_ERROR, bad = 0;

	*out = NULL;
	if (!(o = json_object()) || !(labels = json_object()) || !(approval = json_object()))
		goto done;
	for (i = 0; i < N_OF(label_keys); i++)
		bad |= json_object_set_new(labels, label_keys[i],
			json_string(label_get(&cfg->labels, i)));
	bad |= json_object_set_new(approval, "min_permission",
		json_string(pmbot_permission_name(cfg->min_permission)));
	bad |= json_object_set_new(approval, "users", list_json(&cfg->approvers));
	if (cfg->project_owner)
		project = json_pack("{s:s, s:I}", "owner", cfg->project_owner,
			"number", (json_int_t)cfg->project_number);
	else
		project = json_null();
	bad |= json_object_set_new(o, "project", project);
	bad |= json_object_set_new(o, "reports", list_json(&cfg->reports));
	bad |= json_object_set_new(o, "repos", list_json(&cfg->repos));
	bad |= json_object_set_new(o, "trusted_authors", list_json(&cfg->trusted_authors));
	bad |= json_object_set_new(o, "deny_operations", operations_json(cfg->denied));
	bad |= json_object_set_new(o, "auto_approve", operations_json(cfg->auto_approved));
	bad |= json_object_set_new(o, "templates", json_string(cfg->templates));
	bad |= json_object_set_new(o, "issue_types", json_string(cfg->issue_types ? "auto" : "off"));
	bad |= json_object_set_new(o, "llm", json_pack("{s:o, s:I}", "policies",
		cfg->llm_policies ? json_deep_copy(cfg->llm_policies) : json_array(),
		"digest_threshold", (json_int_t)(cfg->llm_digest_threshold ? cfg->llm_digest_threshold
			: PMBOT_CONFIG_DEFAULT_DIGEST_THRESHOLD)));
	bad |= json_object_set_new(o, "limits", json_pack("{s:I, s:I, s:I}",
		"max_items", (json_int_t)cfg->max_items,
		"max_report_bytes", (json_int_t)cfg->max_report_bytes,
		"max_total_bytes", (json_int_t)cfg->max_total_bytes));
	bad |= json_object_set_new(o, "github", json_pack("{s:s}", "write_budget",
		cfg->write_budget ? cfg->write_budget : PMBOT_GITHUB_DEFAULT_WRITE_BUDGET));
	bad |= json_object_set_new(o, "labels", labels);
	labels = NULL;
	bad |= json_object_set_new(o, "approval", approval);
	approval = NULL;
	if (bad)
		goto done;
	*out = o;
	o = NULL;
	err = PMBOT_OK;
done:
	json_decref(o);
	json_decref(labels);
	json_decref(approval);
	return err;
}

int pmbot_config_operation_denied(const pmbot_config *cfg, pmbot_operation op)
{
	return (size_t)op >= PMBOT_OP_COUNT || cfg->denied[op];
}

int pmbot_config_operation_auto_approved(const pmbot_config *cfg, pmbot_operation op)
{
	return (size_t)op < PMBOT_OP_COUNT && cfg->auto_approved[op];
}

static int list_has(const pmbot_config_list *l, const char *s)
{
	size_t i;

	for (i = 0; i < l->count; i++)
		if (ieq(l->items[i], s))
			return 1;
	return 0;
}

int pmbot_config_repo_allowed(const pmbot_config *cfg, const char *repo)
{
	return repo && list_has(&cfg->repos, repo);
}

int pmbot_config_trust(pmbot_config *cfg, const char *login)
{
	pmbot_config_list *l = &cfg->trusted_authors;
	char **items, *copy;
	size_t i;

	if (!login || !*login)
		return PMBOT_EINVALID;
	for (i = 0; i < l->count; i++)
		if (ieq(l->items[i], login))
			return PMBOT_OK;
	if (!(copy = strdup(login)))
		return PMBOT_ERROR;
	if (!(items = pmbot_array_grow(l->items, &l->alloc, l->count + 1, sizeof(*items)))) {
		free(copy);
		return PMBOT_ERROR;
	}
	items[l->count++] = copy;
	l->items = items;
	return PMBOT_OK;
}

int pmbot_config_author_trusted(const pmbot_config *cfg, const char *login, int is_bot)
{
	size_t i, n;

	if (!login || !*login)
		return 0;
	n = strlen(login);
	for (i = 0; i < cfg->trusted_authors.count; i++) {
		const char *e = cfg->trusted_authors.items[i];

		if (!ends_with(e, "[bot]")) {
			if (!is_bot && ieq(e, login))
				return 1;
			continue;
		}
		if (!is_bot)
			continue;
		if (ieq(e, login))
			return 1;
		/* GraphQL spelling: the entry without its "[bot]" suffix. */
		if (strlen(e) == n + 5) {
			size_t k;

			for (k = 0; k < n && fold((unsigned char)e[k]) == fold((unsigned char)login[k]); k++)
				;
			if (k == n)
				return 1;
		}
	}
	return 0;
}

int pmbot_config_approver_allowed(const pmbot_config *cfg, const char *login,
	pmbot_permission perm)
{
	if (!login || (size_t)perm >= N_OF(permission_names) || perm < cfg->min_permission)
		return 0;
	return !cfg->approvers.count || list_has(&cfg->approvers, login);
}
