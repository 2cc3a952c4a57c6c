#ifndef PMBOT_GQL_H
#define PMBOT_GQL_H

#include <stddef.h>

#include "pmbot/buf.h"

/*
 * The GraphQL documents pm-bot sends, one per file in src/github/graphql/
 * (compiled in by scripts/embed-graphql.sh), so each can be validated
 * against GitHub's published schema by the emulator's tests.
 */
typedef struct {
	const char *name; /* the file name without ".graphql" */
	const char *text; /* the document, byte for byte */
} pmbot_gql_doc;

extern const pmbot_gql_doc pmbot_gql_docs[];
extern const size_t pmbot_gql_n_docs;

/* The text of document `name` (static storage), or NULL when there is none. */
const char *pmbot_gql(const char *name);

/*
 * Features a GitHub may lack (GitHub Enterprise Server up to 3.21 has
 * neither). A document line that selects one ends in a trailing comment
 * naming it, e.g. `  parent { # needs: sub_issues`, so one file serves every
 * GitHub instead of a near-copy per combination.
 */
#define PMBOT_GQL_SUB_ISSUES 0x1u   /* `# needs: sub_issues` (Issue.parent) */
#define PMBOT_GQL_DEPENDENCIES 0x2u /* `# needs: dependencies` (Issue.blockedBy) */
#define PMBOT_GQL_ISSUE_TYPES 0x4u  /* `# needs: issue_types` (Issue.issueType,
                                       Repository.issueTypes) */

/*
 * Append to `out` document `doc` without the lines whose comment is
 * `# needs: FEATURE[, FEATURE...]` naming a feature in `missing` (a mask of
 * PMBOT_GQL_*); every other line is kept byte for byte, so with `missing`
 * 0, or a document without tags, `out` gets `doc` unchanged. Returns 0,
 * PMBOT_EINVALID when a tag names an unknown feature (`out` is left as it
 * was), PMBOT_ERROR when out of memory.
 */
int pmbot_gql_without(pmbot_buf *out, const char *doc, unsigned missing);

#endif
