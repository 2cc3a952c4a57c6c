#ifndef PMBOT_GQL_H
#define PMBOT_GQL_H

#include <stddef.h>

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

#endif
