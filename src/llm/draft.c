#include "pmbot/llm.h"

#include <stdlib.h>

#include "pmbot/report.h"
#include "pmbot/banned.h"

/* Scratch buffers for the values of one printf, each escaped on its own. */
#define SHOWN 4

struct shown {
	pmbot_buf b[SHOWN];
};

static void shown_free(struct shown *s)
{
	size_t i;

	for (i = 0; i < SHOWN; i++)
		pmbot_buf_free(&s->b[i]);
}

/* "## heading" and one bullet per string of `list`; nothing for an empty list. */
static int bullets(pmbot_buf *out, struct shown *s, const char *heading, const json_t *list)
{
	json_t *v;
	size_t i;

	if (!json_array_size(list))
		return 0;
	if (pmbot_buf_printf(out, "## %s\n\n", heading) < 0)
		return PMBOT_ERROR;
	json_array_foreach(list, i, v)
		if (pmbot_buf_printf(out, "- %s\n", pmbot_log_show(&s->b[0], json_string_value(v),
			PMBOT_LOG_MESSAGE_MAX)) < 0)
			return PMBOT_ERROR;
	return pmbot_buf_putc(out, '\n');
}

int pmbot_llm_draft_markdown(pmbot_buf *out, const json_t *result, const json_t *flags,
	const char *model, const char *provider, const char *source)
{
	const json_t *draft = json_object_get(result, "draft"), *v;
	const char *title = json_string_value(json_object_get(json_object_get(draft, "report"), "title"));
	char *pretty = json_dumps(draft, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
	struct shown s;
	size_t i;
	int rc = PMBOT_ERROR;

	for (i = 0; i < SHOWN; i++)
		pmbot_buf_init(&s.b[i], 0);
	if (!pretty)
		goto done;
	if (pmbot_buf_printf(out, "# %s\n\n> **Draft for review.** Written by the model `%s` (%s) from "
		"`%s` with pm-bot's `report_ir_draft` capability. Nothing has been written to GitHub: "
		"check every item, then commit this report and let `pm-bot plan` propose the issues.\n\n",
		pmbot_log_show(&s.b[0], title ? title : "Draft report", PMBOT_LOG_MESSAGE_MAX),
		pmbot_log_show(&s.b[1], model, PMBOT_LOG_NAME_MAX),
		pmbot_log_show(&s.b[2], provider, PMBOT_LOG_NAME_MAX),
		pmbot_log_show(&s.b[3], source, PMBOT_LOG_NAME_MAX)) < 0)
		goto done;
	if (json_array_size(flags)) {
		if (pmbot_buf_puts(out, "## Flagged for review\n\nThe input text contains phrases that "
			"pm-bot's policies name. They were passed to the model as text, not as "
			"instructions; check that the draft does not act on them.\n\n") < 0)
			goto done;
		json_array_foreach(flags, i, v)
			if (pmbot_buf_printf(out, "- `%s` (policy `%s`) in `%s`\n",
				pmbot_log_show(&s.b[0], json_string_value(json_object_get(v, "matched")),
					PMBOT_LOG_NAME_MAX),
				pmbot_log_show(&s.b[1], json_string_value(json_object_get(v, "policy")),
					PMBOT_LOG_NAME_MAX),
				pmbot_log_show(&s.b[2], json_string_value(json_object_get(v, "ref")),
					PMBOT_LOG_NAME_MAX)) < 0)
				goto done;
		if (pmbot_buf_putc(out, '\n') < 0)
			goto done;
	}
	if (bullets(out, &s, "Assumptions", json_object_get(result, "assumptions")) < 0 ||
	    bullets(out, &s, "Open questions", json_object_get(result, "open_questions")) < 0)
		goto done;
	if (pmbot_buf_printf(out, "```pm-bot:report-ir/v1\n%s\n```\n", pretty) < 0)
		goto done;
	rc = 0;
done:
	shown_free(&s);
	free(pretty);
	return rc;
}

int pmbot_llm_draft_check(pmbot_diag_list *diags, const char *markdown, size_t len,
	const char *name)
{
	pmbot_limits lim;
	pmbot_report *rep = NULL;
	int r;

	pmbot_limits_default(&lim);
	r = pmbot_report_load_values(&rep, name, markdown, len, &lim, diags);
	if (r == PMBOT_OK)
		r = pmbot_report_validate(rep, diags);
	pmbot_report_free(rep);
	return r == PMBOT_OK || r == PMBOT_EINVALID ? r : PMBOT_ERROR;
}
