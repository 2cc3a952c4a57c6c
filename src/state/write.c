#include "state_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pmbot/array.h"
#include "pmbot/datetime.h"
#include "pmbot/doc.h"
#include "pmbot/json.h"
#include "pmbot/strmap.h"
#include "pmbot/banned.h"

/*
 * Writing a State: canonical JSON, byte for byte the same for the same
 * State, written straight from the structs.
 */

static json_t *strings_json(char *const *v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	if (!a)
		return NULL;
	for (i = 0; i < n; i++) {
		if (json_array_append_new(a, json_string(v[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *issue_json(const pmbot_issue *is)
{
	json_t *o = json_object();
	int err = 0;

	if (!o)
		return NULL;
	err |= json_object_set_new(o, "number", json_integer(is->number));
	err |= json_object_set_new(o, "database_id", json_integer(is->database_id));
	err |= json_object_set_new(o, "node_id", json_string(is->node_id));
	err |= json_object_set_new(o, "title", json_string(is->title));
	err |= json_object_set_new(o, "body", json_string(is->body ? is->body : ""));
	err |= json_object_set_new(o, "labels", strings_json(is->labels, is->n_labels));
	err |= json_object_set_new(o, "state", json_string(is->closed ? "closed" : "open"));
	err |= json_object_set_new(o, "author", json_string(is->author));
	err |= json_object_set_new(o, "author_type", json_string(is->author_is_bot ? "Bot" : "User"));
	err |= json_object_set_new(o, "updated_at", json_string(is->updated_at));
	err |= json_object_set_new(o, "parent", is->parent ? json_string(is->parent) : json_null());
	err |= json_object_set_new(o, "blocked_by", strings_json(is->blocked_by, is->n_blocked_by));
	/* Only when set: a state without issue types keeps its bytes. */
	if (is->issue_type)
		err |= json_object_set_new(o, "issue_type", json_string(is->issue_type));
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *field_json(const pmbot_pfield *f)
{
	json_t *o = json_object(), *opts = NULL;
	size_t i;
	int err = 0;

	if (!o)
		return NULL;
	err |= json_object_set_new(o, "id", json_string(f->id));
	err |= json_object_set_new(o, "name", json_string(f->name));
	err |= json_object_set_new(o, "type", json_string(pmbot_state__field_type_names[f->type]));
	if (f->type == PMBOT_PFIELD_SINGLE_SELECT) {
		err |= json_object_set_new(o, "options", opts = json_array());
		for (i = 0; opts && !err && i < f->n_options; i++)
			err |= json_array_append_new(opts, json_pack("{s:s,s:s}",
				"id", f->options[i].id, "name", f->options[i].name));
	}
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *project_json(const pmbot_project *p)
{
	json_t *o = json_object(), *fields = json_array(), *items = json_array();
	size_t i;
	int err = !o || !fields || !items;

	for (i = 0; !err && i < p->n_fields; i++)
		err |= json_array_append_new(fields, field_json(&p->fields[i]));
	for (i = 0; !err && i < p->n_items; i++)
		err |= json_array_append_new(items, json_pack("{s:s,s:s,s:o}", "id",
			p->items[i].id, "issue", p->items[i].issue, "values",
			json_deep_copy(p->items[i].values)));
	if (!err) {
		err |= json_object_set_new(o, "owner", json_string(p->owner));
		err |= json_object_set_new(o, "number", json_integer(p->number));
		err |= json_object_set_new(o, "node_id", json_string(p->node_id));
		err |= json_object_set(o, "fields", fields);
		err |= json_object_set(o, "items", items);
	}
	json_decref(fields);
	json_decref(items);
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int pmbot_state_to_json(json_t **out, const pmbot_state *state)
{
	json_t *root = json_object(), *repos = json_array(), *issues = NULL;
	size_t i;
	int err = !root || !repos;

	*out = NULL;
	if (!err)
		err |= json_object_set(root, "repositories", repos);
	for (i = 0; !err && i < state->n_issues; i++) {
		const pmbot_issue *is = &state->issues[i], *prev = i ? is - 1 : NULL;

		if (!prev || pmbot_state__fold_cmp(prev->repo, strlen(prev->repo), is->repo, strlen(is->repo))) {
			json_t *entry = json_object();

			issues = json_array();
			err |= !entry || !issues ||
				json_object_set_new(entry, "repo", json_string(is->repo)) ||
				json_object_set(entry, "issues", issues);
			/* `issues` stays borrowed from `entry`, which `repos` keeps. */
			json_decref(issues);
			if (err) {
				json_decref(entry);
				break;
			}
			if ((err |= json_array_append_new(repos, entry)))
				break;
		}
		err |= json_array_append_new(issues, issue_json(is));
	}
	if (!err) {
		err |= json_object_set_new(root, "schema_version", json_string(STATE_SCHEMA_VERSION));
		err |= json_object_set_new(root, "project",
			state->project ? project_json(state->project) : json_null());
		if (state->extra)
			err |= json_object_set_new(root, "extra", json_deep_copy(state->extra));
	}
	json_decref(repos);
	if (err) {
		json_decref(root);
		return PMBOT_ERROR;
	}
	*out = root;
	return PMBOT_OK;
}

/*
 * The direct writer: keys in byte order by hand, strings quoted like
 * pmbot_json_canonical does, and the opaque parts (values, extra) through
 * it. Tests compare the two writers on every file the backend writes.
 */
static int put_str(pmbot_buf *out, const char *s)
{
	return pmbot_json_quote(out, s, strlen(s));
}

static int put_strings(pmbot_buf *out, char *const *v, size_t n)
{
	size_t i;
	int err = pmbot_buf_putc(out, '[');

	for (i = 0; i < n && !err; i++) {
		if (i)
			err = pmbot_buf_putc(out, ',');
		if (!err)
			err = put_str(out, v[i]);
	}
	return err ? err : pmbot_buf_putc(out, ']');
}

static int put_issue(pmbot_buf *out, const pmbot_issue *is)
{
	int err = 0;

	err = err ? err : pmbot_buf_puts(out, "{\"author\":");
	err = err ? err : put_str(out, is->author);
	err = err ? err : pmbot_buf_puts(out, is->author_is_bot ? ",\"author_type\":\"Bot\""
		: ",\"author_type\":\"User\"");
	err = err ? err : pmbot_buf_puts(out, ",\"blocked_by\":");
	err = err ? err : put_strings(out, is->blocked_by, is->n_blocked_by);
	err = err ? err : pmbot_buf_puts(out, ",\"body\":");
	err = err ? err : put_str(out, is->body ? is->body : "");
	err = err ? err : pmbot_buf_printf(out, ",\"database_id\":%lld", is->database_id);
	if (is->issue_type) {
		err = err ? err : pmbot_buf_puts(out, ",\"issue_type\":");
		err = err ? err : put_str(out, is->issue_type);
	}
	err = err ? err : pmbot_buf_puts(out, ",\"labels\":");
	err = err ? err : put_strings(out, is->labels, is->n_labels);
	err = err ? err : pmbot_buf_puts(out, ",\"node_id\":");
	err = err ? err : put_str(out, is->node_id);
	err = err ? err : pmbot_buf_printf(out, ",\"number\":%ld,\"parent\":", is->number);
	err = err ? err : is->parent ? put_str(out, is->parent) : pmbot_buf_puts(out, "null");
	err = err ? err : pmbot_buf_puts(out, is->closed ? ",\"state\":\"closed\",\"title\":"
		: ",\"state\":\"open\",\"title\":");
	err = err ? err : put_str(out, is->title);
	err = err ? err : pmbot_buf_puts(out, ",\"updated_at\":");
	err = err ? err : put_str(out, is->updated_at);
	return err ? err : pmbot_buf_putc(out, '}');
}

static int put_project(pmbot_buf *out, const pmbot_project *p)
{
	size_t i, k;
	int err = pmbot_buf_puts(out, "{\"fields\":[");

	for (i = 0; i < p->n_fields && !err; i++) {
		const pmbot_pfield *f = &p->fields[i];

		err = err ? err : pmbot_buf_puts(out, i ? ",{\"id\":" : "{\"id\":");
		err = err ? err : put_str(out, f->id);
		err = err ? err : pmbot_buf_puts(out, ",\"name\":");
		err = err ? err : put_str(out, f->name);
		if (f->type == PMBOT_PFIELD_SINGLE_SELECT) {
			err = err ? err : pmbot_buf_puts(out, ",\"options\":[");
			for (k = 0; k < f->n_options && !err; k++) {
				err = err ? err : pmbot_buf_puts(out, k ? ",{\"id\":" : "{\"id\":");
				err = err ? err : put_str(out, f->options[k].id);
				err = err ? err : pmbot_buf_puts(out, ",\"name\":");
				err = err ? err : put_str(out, f->options[k].name);
				err = err ? err : pmbot_buf_putc(out, '}');
			}
			err = err ? err : pmbot_buf_putc(out, ']');
		}
		err = err ? err : pmbot_buf_printf(out, ",\"type\":\"%s\"}",
			pmbot_state__field_type_names[f->type]);
	}
	err = err ? err : pmbot_buf_puts(out, "],\"items\":[");
	for (i = 0; i < p->n_items && !err; i++) {
		err = err ? err : pmbot_buf_puts(out, i ? ",{\"id\":" : "{\"id\":");
		err = err ? err : put_str(out, p->items[i].id);
		err = err ? err : pmbot_buf_puts(out, ",\"issue\":");
		err = err ? err : put_str(out, p->items[i].issue);
		err = err ? err : pmbot_buf_puts(out, ",\"values\":");
		err = err ? err : pmbot_json_canonical(out, p->items[i].values);
		err = err ? err : pmbot_buf_putc(out, '}');
	}
	err = err ? err : pmbot_buf_puts(out, "],\"node_id\":");
	err = err ? err : put_str(out, p->node_id);
	err = err ? err : pmbot_buf_printf(out, ",\"number\":%ld,\"owner\":", p->number);
	err = err ? err : put_str(out, p->owner);
	return err ? err : pmbot_buf_putc(out, '}');
}

int pmbot_state_canonical(pmbot_buf *out, const pmbot_state *state)
{
	size_t start = out->len, i;
	int err = 0;

	if (state->extra) {
		err = err ? err : pmbot_buf_puts(out, "{\"extra\":");
		err = err ? err : pmbot_json_canonical(out, state->extra);
		err = err ? err : pmbot_buf_puts(out, ",\"project\":");
	} else {
		err = pmbot_buf_puts(out, "{\"project\":");
	}
	err = err ? err : state->project ? put_project(out, state->project)
		: pmbot_buf_puts(out, "null");
	err = err ? err : pmbot_buf_puts(out, ",\"repositories\":[");
	for (i = 0; i < state->n_issues && !err; i++) {
		const pmbot_issue *is = &state->issues[i];
		int first = !i || pmbot_state__fold_cmp(is[-1].repo, strlen(is[-1].repo), is->repo, strlen(is->repo));
		int last = i + 1 == state->n_issues ||
			pmbot_state__fold_cmp(is->repo, strlen(is->repo), is[1].repo, strlen(is[1].repo));

		if (i)
			err = pmbot_buf_putc(out, ',');
		if (first)
			err = err ? err : pmbot_buf_puts(out, "{\"issues\":[");
		err = err ? err : put_issue(out, is);
		/* "repo" sorts after "issues": it closes the repository's run. */
		if (last) {
			err = err ? err : pmbot_buf_puts(out, "],\"repo\":");
			err = err ? err : put_str(out, is->repo);
			err = err ? err : pmbot_buf_putc(out, '}');
		}
	}
	err = err ? err : pmbot_buf_puts(out, "],\"schema_version\":\"" STATE_SCHEMA_VERSION "\"}");
	if (err)
		pmbot_buf_truncate(out, start);
	return err;
}
