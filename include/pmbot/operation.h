#ifndef PMBOT_OPERATION_H
#define PMBOT_OPERATION_H

#include "pmbot/common.h"

/*
 * The write operations a plan can hold: one enum and one table, used by
 * the planner (order, summary groups, idempotency keys), the Markdown and
 * text plans, the configuration (deny_operations, auto_approve) and both
 * backends (which dispatch on the enum). The names are the ones written
 * in the configuration and in bundles.
 */
typedef enum {
	PMBOT_OP_CREATE_ISSUE = 0,
	PMBOT_OP_UPDATE_ISSUE_TITLE,
	PMBOT_OP_UPDATE_ISSUE_BODY,
	PMBOT_OP_ADD_LABELS,
	PMBOT_OP_REMOVE_LABELS,
	PMBOT_OP_SET_PARENT,
	PMBOT_OP_ADD_DEPENDENCY,
	PMBOT_OP_REMOVE_DEPENDENCY,
	PMBOT_OP_ADD_TO_PROJECT,
	PMBOT_OP_SET_PROJECT_FIELD,
	PMBOT_OP_SET_ISSUE_TYPE  /* last: configs and bundles name operations, never numbers */
} pmbot_operation;

/* Number of operations; every value below it is a valid pmbot_operation. */
#define PMBOT_OP_COUNT 11

/* "create_issue", …; static storage. NULL for an out-of-range value. */
const char *pmbot_operation_name(pmbot_operation op);

/*
 * Parse an operation name (exact, case-sensitive) into `*out`.
 * PMBOT_OK, or PMBOT_ENOTFOUND when `name` is not an operation.
 */
PMBOT_WARN_UNUSED int pmbot_operation_parse(pmbot_operation *out, const char *name);

/* Where an operation sorts in a plan, and which summary row counts it. */
typedef enum {
	PMBOT_OPGROUP_CREATE = 0,  /* "creates" */
	PMBOT_OPGROUP_UPDATE,      /* "updates" */
	PMBOT_OPGROUP_RELATION,    /* "relationships" */
	PMBOT_OPGROUP_ITEM,        /* "project": the board's items ... */
	PMBOT_OPGROUP_FIELD        /* "project": ... then their fields */
} pmbot_opgroup;

typedef struct {
	const char *name;      /* as written in bundles and the configuration */
	pmbot_opgroup group;
	const char *summary;   /* the plan summary's row: "creates", "updates",
	                          "relationships" or "project" */
	int hashed;            /* the idempotency key carries the intent's hash */
} pmbot_operation_info;

/* The table row of `op` (static storage); NULL for an out-of-range value. */
const pmbot_operation_info *pmbot_operation_info_of(pmbot_operation op);

#endif
