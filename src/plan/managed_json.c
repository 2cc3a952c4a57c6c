#include "pmbot/plan.h"

#include "pmbot/json.h"
#include "pmbot/banned.h"

/* Each member, or fail: set_new consumes the value even when it fails. */
static int add_details(json_t *o, const pmbot_managed_issue *m)
{
	const pmbot_issue *is = m->issue;

	return json_object_set_new(o, "labels", pmbot_json_strings(is->labels, is->n_labels)) < 0 ||
	    json_object_set_new(o, "parent", is->parent ? json_string(is->parent) : json_null()) < 0 ||
	    json_object_set_new(o, "blocked_by",
		pmbot_json_strings(is->blocked_by, is->n_blocked_by)) < 0 ||
	    json_object_set_new(o, "issue_type", is->issue_type ? json_string(is->issue_type) :
		json_null()) < 0 ||
	    json_object_set_new(o, "board", m->item ? json_deep_copy(m->item->values) :
		json_null()) < 0 ? PMBOT_ERROR : 0;
}

int pmbot_plan_managed_to_json(json_t **out, const pmbot_managed_issue *m, int full)
{
	const pmbot_issue *is = m->issue;
	pmbot_buf ref = PMBOT_BUF_INIT;
	json_t *o = NULL;
	int rc = PMBOT_ERROR;

	*out = NULL;
	if (pmbot_issue_ref(&ref, is->repo, is->number) < 0)
		goto done;
	o = json_pack("{s:s, s:s, s:s, s:s, s:b, s:b, s:b}", "stable_id", m->stable_id,
		"issue", ref.buf, "state", is->closed ? "closed" : "open",
		"title", is->title ? is->title : "", "on_board", m->item != NULL,
		"edited", m->edited, "duplicate", m->duplicate);
	if (!o || (full && add_details(o, m) < 0))
		goto done;
	*out = o;
	o = NULL;
	rc = 0;
done:
	json_decref(o);
	pmbot_buf_free(&ref);
	return rc;
}
