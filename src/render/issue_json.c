#include "pmbot/render.h"

#include "pmbot/json.h"
#include "pmbot/banned.h"

int pmbot_rendered_issue_to_json(json_t **out, const char *stable_id,
	const pmbot_rendered_issue *is)
{
	json_t *labels = pmbot_json_strings(is->labels, is->n_labels);

	*out = NULL;
	if (!labels)
		return PMBOT_ERROR;
	/* The body by its length: it is what GitHub gets, byte for byte. */
	*out = json_pack("{s:s, s:s, s:O, s:s%}", "stable_id", stable_id, "title", is->title,
		"labels", labels, "body", is->body, is->body_len);
	json_decref(labels);
	return *out ? 0 : PMBOT_ERROR;
}
