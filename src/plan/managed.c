#include <stdlib.h>
#include <string.h>

#include "pmbot/plan.h"
#include "pmbot/strmap.h"

#include "plan_int.h"
#include "pmbot/banned.h"

/*
 * What pm-bot manages, as the planner sees it: the same marker and trust
 * rules, so `pm-bot state list` never shows an issue the planner would not
 * treat as its item, nor hides one it would.
 */

void pmbot_plan_managed_free(pmbot_managed_issue *list, size_t n)
{
	size_t i;

	for (i = 0; list && i < n; i++)
		free(list[i].stable_id);
	free(list);
}

int pmbot_plan_managed(pmbot_managed_issue **out, size_t *n_out, const pmbot_state *st,
	const pmbot_config *config, const char *self_login)
{
	pmbot_managed_issue *list = NULL;
	pmbot_strmap seen = PMBOT_STRMAP_INIT;
	char **keys = NULL;
	pmbot_buf ref = PMBOT_BUF_INIT;
	pmbot_body body;
	size_t i, n = 0;
	int err = PMBOT_ERROR;

	*out = NULL;
	*n_out = 0;
	memset(&body, 0, sizeof(body));
	if (!(list = calloc(st->n_issues + 1, sizeof(*list))) ||
	    !(keys = calloc(st->n_issues + 1, sizeof(*keys))))
		goto done;
	for (i = 0; i < st->n_issues; i++) {
		const pmbot_issue *is = &st->issues[i];
		pmbot_managed_issue *m;
		void *prev = NULL;
		char rev[PMBOT_SHA256_HEX_SIZE];

		if (!pmbot_config_repo_allowed(config, is->repo) || !is->body)
			continue;
		pmbot_body_free(&body);
		if (pmbot_body_parse(&body, is->body, strlen(is->body), NULL) < 0)
			goto done;
		if (body.marker != PMBOT_MARKER_OK ||
		    !pmbot_plan_author_trusted(config, self_login, is))
			continue;
		if (pmbot_body_rev(rev, is->body, strlen(is->body)) < 0)
			goto done;
		m = &list[n];
		m->issue = is;
		m->edited = strcmp(rev, body.rev) != 0;
		pmbot_buf_clear(&ref);
		if (!(m->stable_id = strdup(body.stable_id)) ||
		    pmbot_issue_ref(&ref, is->repo, is->number) < 0 ||
		    !(keys[n] = pmbot_plan_issue_key(is->repo, body.stable_id)))
			goto done;
		m->item = pmbot_state_item(st, ref.buf);
		switch (pmbot_strmap_put(&seen, keys[n], m, &prev)) {
		case -1:
			n++;
			goto done;
		case 1:
			m->duplicate = 1;
			((pmbot_managed_issue *)prev)->duplicate = 1;
			break;
		}
		n++;
	}
	/*
	 * A duplicate's first claim was flagged through the map, which points
	 * into `list`: nothing moved it, since `list` was never reallocated.
	 */
	*out = list;
	*n_out = n;
	list = NULL;
	err = PMBOT_OK;
done:
	pmbot_plan_managed_free(list, n);
	for (i = 0; keys && i < st->n_issues; i++)
		free(keys[i]);
	free(keys);
	pmbot_strmap_free(&seen);
	pmbot_buf_free(&ref);
	pmbot_body_free(&body);
	return err;
}

const pmbot_managed_issue *pmbot_plan_managed_find(const pmbot_managed_issue *list, size_t n,
	const char *id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(list[i].stable_id, id))
			return &list[i];
	return NULL;
}
