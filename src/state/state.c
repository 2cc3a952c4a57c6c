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
 * A State's lifetime and its lookups (binary search in the sorted issues
 * and board items).
 */

const char *const pmbot_state__field_type_names[4] = {
	"text", "number", "single_select", "date"
};

int pmbot_state_new(pmbot_state **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? PMBOT_OK : PMBOT_ERROR;
}

void pmbot_state__strings_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Free `p` unless the strings are in a block (`strings` 0). */
static void str_free(void *p, int strings)
{
	if (strings)
		free(p);
}

static void strings_drop(char **v, size_t n, int strings)
{
	if (strings)
		pmbot_state__strings_free(v, n);
	else
		free(v);
}

void pmbot_state__issue_drop(pmbot_issue *is, int strings)
{
	str_free(is->repo, strings);
	str_free(is->node_id, strings);
	str_free(is->title, strings);
	str_free(is->body, strings);
	strings_drop(is->labels, is->n_labels, strings);
	str_free(is->author, strings);
	str_free(is->updated_at, strings);
	str_free(is->parent, strings);
	strings_drop(is->blocked_by, is->n_blocked_by, strings);
	str_free(is->issue_type, strings);
	memset(is, 0, sizeof(*is));
}

void pmbot_issue_clear(pmbot_issue *is)
{
	pmbot_state__issue_drop(is, 1);
}

void pmbot_state__field_drop(pmbot_pfield *f, int strings)
{
	size_t i;

	for (i = 0; strings && i < f->n_options; i++) {
		free(f->options[i].id);
		free(f->options[i].name);
	}
	free(f->options);
	str_free(f->id, strings);
	str_free(f->name, strings);
	memset(f, 0, sizeof(*f));
}

void pmbot_state__field_clear(pmbot_pfield *f)
{
	pmbot_state__field_drop(f, 1);
}

void pmbot_state__item_drop(pmbot_pitem *it, int strings)
{
	str_free(it->id, strings);
	str_free(it->issue, strings);
	json_decref(it->values);
	memset(it, 0, sizeof(*it));
}

void pmbot_state__item_clear(pmbot_pitem *it)
{
	pmbot_state__item_drop(it, 1);
}

static void project_free(pmbot_project *p, int strings)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->n_fields; i++)
		pmbot_state__field_drop(&p->fields[i], strings);
	for (i = 0; i < p->n_items; i++)
		pmbot_state__item_drop(&p->items[i], strings);
	free(p->fields);
	free(p->items);
	str_free(p->owner, strings);
	str_free(p->node_id, strings);
	free(p);
}

void pmbot_state_free(pmbot_state *state)
{
	int strings;
	size_t i;

	if (!state)
		return;
	if (state->shares) {
		state->shares--;
		return;
	}
	/* A parsed state's strings go with their block, in one free. */
	strings = !state->strings;
	for (i = 0; i < state->n_issues; i++)
		pmbot_state__issue_drop(&state->issues[i], strings);
	free(state->issues);
	project_free(state->project, strings);
	json_decref(state->extra);
	free(state->strings);
	free(state);
}

pmbot_state *pmbot_state_share(pmbot_state *state)
{
	state->shares++;
	return state;
}

int pmbot_state_read_only(const pmbot_state *state)
{
	return state->shares != 0 || state->strings != NULL;
}

static size_t lower_bound(const pmbot_state *st, const char *repo, size_t repo_len, long number)
{
	size_t lo = 0, hi = st->n_issues;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pmbot_state__issue_key_cmp(repo, repo_len, number, &st->issues[mid]) > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t pmbot_state_lower_bound(const pmbot_state *state, const char *repo, long number)
{
	return lower_bound(state, repo, strlen(repo), number);
}

static const pmbot_issue *find_issue(const pmbot_state *st, const char *repo, size_t repo_len,
	long number)
{
	size_t i = lower_bound(st, repo, repo_len, number);

	if (i < st->n_issues && !pmbot_state__issue_key_cmp(repo, repo_len, number, &st->issues[i]))
		return &st->issues[i];
	return NULL;
}

const pmbot_issue *pmbot_state_issue_at(const pmbot_state *state, const char *repo, long number)
{
	return repo ? find_issue(state, repo, strlen(repo), number) : NULL;
}

const pmbot_issue *pmbot_state_issue(const pmbot_state *state, const char *ref)
{
	size_t n;
	long num;

	if (!ref || pmbot_state__ref_split(ref, &n, &num) < 0)
		return NULL;
	return find_issue(state, ref, n, num);
}

const pmbot_pitem *pmbot_state_item(const pmbot_state *state, const char *ref)
{
	const pmbot_project *p = state->project;
	size_t lo = 0, hi, n;
	long num;

	if (!p || !ref || pmbot_state__ref_split(ref, &n, &num) < 0)
		return NULL;
	hi = p->n_items;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		/* `ref` is split once. */
		int c = pmbot_state__ref_key_cmp(ref, n, num, p->items[mid].issue);

		if (!c)
			return &p->items[mid];
		if (c > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int pmbot_state_items_by_issue(const pmbot_pitem ***out, const pmbot_state *state)
{
	const pmbot_project *p = state->project;
	size_t i, j = 0;

	if (!(*out = calloc(state->n_issues ? state->n_issues : 1, sizeof(**out))))
		return -1;
	for (i = 0; p && i < state->n_issues; i++) {
		const pmbot_issue *is = &state->issues[i];
		size_t n = strlen(is->repo);
		int c = 1;

		/* Items before this issue belong to no issue of the state. */
		while (j < p->n_items &&
		       (c = pmbot_state__ref_key_cmp(is->repo, n, is->number, p->items[j].issue)) > 0)
			j++;
		if (!c)
			(*out)[i] = &p->items[j];
	}
	return 0;
}

int pmbot_state__ieq(const char *a, const char *b)
{
	size_t an = strlen(a), bn = strlen(b);

	return an == bn && !pmbot_state__fold_cmp(a, an, b, bn);
}

const pmbot_pfield *pmbot_state_field(const pmbot_state *state, const char *name)
{
	size_t i;

	if (!state->project || !name)
		return NULL;
	for (i = 0; i < state->project->n_fields; i++)
		if (pmbot_state__ieq(state->project->fields[i].name, name))
			return &state->project->fields[i];
	return NULL;
}
