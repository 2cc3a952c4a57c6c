#include "pmbot/state.h"

#include "pmbot/json.h"
#include "pmbot/banned.h"

int pmbot_state_board(json_t **out, const pmbot_state *st)
{
	json_t *issues = json_array(), *items = json_array(), *labels = NULL, *blocked = NULL;
	size_t i;
	int rc = PMBOT_ERROR;

	*out = NULL;
	if (!issues || !items)
		goto done;
	for (i = 0; i < st->n_issues; i++) {
		const pmbot_issue *is = &st->issues[i];

		if (!(labels = pmbot_json_strings(is->labels, is->n_labels)) ||
		    !(blocked = pmbot_json_strings(is->blocked_by, is->n_blocked_by)))
			goto done;
		/* The body may be absent in a state; the model always gets a string. */
		if (json_array_append_new(issues, json_pack("{s:s, s:I, s:s, s:s, s:O, s:s?, s:O, s:s}",
			"repo", is->repo, "number", (json_int_t)is->number, "title", is->title,
			"state", is->closed ? "closed" : "open", "labels", labels, "parent", is->parent,
			"blocked_by", blocked, "body", is->body ? is->body : "")) < 0)
			goto done;
		json_decref(labels);
		json_decref(blocked);
		labels = blocked = NULL;
	}
	for (i = 0; st->project && i < st->project->n_items; i++)
		if (json_array_append_new(items, json_pack("{s:s, s:O}",
			"issue", st->project->items[i].issue, "values", st->project->items[i].values)) < 0)
			goto done;
	if (!(*out = json_pack("{s:O, s:O}", "issues", issues, "board_items", items)))
		goto done;
	rc = 0;
done:
	json_decref(labels);
	json_decref(blocked);
	json_decref(issues);
	json_decref(items);
	return rc;
}
