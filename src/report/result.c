#include "pmbot/report.h"

#include "pmbot/banned.h"

int pmbot_diag_list_to_json(json_t **out, const pmbot_diag_list *diags, pmbot_severity sev)
{
	json_t *a = json_array();
	size_t i;

	*out = NULL;
	if (!a)
		return PMBOT_ERROR;
	for (i = 0; i < diags->count; i++) {
		const pmbot_diag *d = &diags->items[i];

		if (d->severity != sev)
			continue;
		if (json_array_append_new(a, json_pack("{s:s, s:s, s:i, s:i, s:s}",
			"code", d->code, "path", d->path, "line", d->line, "column", d->column,
			"message", d->message)) < 0) {
			json_decref(a);
			return PMBOT_ERROR;
		}
	}
	*out = a;
	return 0;
}

int pmbot_report_result(json_t **out, const char *file, const char *blob,
	pmbot_diag_list *diags)
{
	json_t *errors = NULL, *warnings = NULL, *o = NULL;

	*out = NULL;
	/* Sorted first: the same diagnostics give the same bytes whatever order found them. */
	pmbot_diag_list_sort(diags);
	if (pmbot_diag_list_to_json(&errors, diags, PMBOT_SEV_ERROR) < 0 ||
	    pmbot_diag_list_to_json(&warnings, diags, PMBOT_SEV_WARNING) < 0)
		goto fail;
	o = json_pack("{s:s, s:b, s:O, s:O}", "file", file, "valid", diags->errors == 0,
		"errors", errors, "warnings", warnings);
	if (!o || (blob && json_object_set_new(o, "blob", json_string(blob)) < 0))
		goto fail;
	json_decref(errors);
	json_decref(warnings);
	*out = o;
	return 0;
fail:
	json_decref(errors);
	json_decref(warnings);
	json_decref(o);
	return PMBOT_ERROR;
}
