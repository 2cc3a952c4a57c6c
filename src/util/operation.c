#include "pmbot/operation.h"

#include <string.h>

#include "pmbot/banned.h"

static const pmbot_operation_info table[PMBOT_OP_COUNT] = {
	[PMBOT_OP_CREATE_ISSUE] = { "create_issue", PMBOT_OPGROUP_CREATE, "creates", 0 },
	[PMBOT_OP_UPDATE_ISSUE_TITLE] = { "update_issue_title", PMBOT_OPGROUP_UPDATE, "updates", 1 },
	[PMBOT_OP_UPDATE_ISSUE_BODY] = { "update_issue_body", PMBOT_OPGROUP_UPDATE, "updates", 1 },
	[PMBOT_OP_ADD_LABELS] = { "add_labels", PMBOT_OPGROUP_UPDATE, "updates", 1 },
	[PMBOT_OP_REMOVE_LABELS] = { "remove_labels", PMBOT_OPGROUP_UPDATE, "updates", 1 },
	[PMBOT_OP_SET_PARENT] = { "set_parent", PMBOT_OPGROUP_RELATION, "relationships", 1 },
	[PMBOT_OP_ADD_DEPENDENCY] = { "add_dependency", PMBOT_OPGROUP_RELATION, "relationships", 1 },
	[PMBOT_OP_REMOVE_DEPENDENCY] = { "remove_dependency", PMBOT_OPGROUP_RELATION,
		"relationships", 1 },
	/* The item's id comes from GitHub; adding an issue twice keeps one item. */
	[PMBOT_OP_ADD_TO_PROJECT] = { "add_to_project", PMBOT_OPGROUP_ITEM, "project", 0 },
	[PMBOT_OP_SET_PROJECT_FIELD] = { "set_project_field", PMBOT_OPGROUP_FIELD, "project", 1 },
	[PMBOT_OP_SET_ISSUE_TYPE] = { "set_issue_type", PMBOT_OPGROUP_UPDATE, "updates", 1 },
};

const pmbot_operation_info *pmbot_operation_info_of(pmbot_operation op)
{
	return (size_t)op < PMBOT_OP_COUNT ? &table[op] : NULL;
}

const char *pmbot_operation_name(pmbot_operation op)
{
	return (size_t)op < PMBOT_OP_COUNT ? table[op].name : NULL;
}

int pmbot_operation_parse(pmbot_operation *out, const char *name)
{
	size_t i;

	for (i = 0; name && i < PMBOT_OP_COUNT; i++) {
		if (!strcmp(table[i].name, name)) {
			*out = (pmbot_operation)i;
			return PMBOT_OK;
		}
	}
	return PMBOT_ENOTFOUND;
}
