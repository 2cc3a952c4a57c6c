#ifndef PMBOT_STATE_INT_H
#define PMBOT_STATE_INT_H

/*
 * What the parts of the state module share: ref.c (names, issue refs),
 * state.c (lifetime, lookups), write.c (serialisation) and read.c
 * (parsing and validation). Not for other modules.
 */

#include <stddef.h>

#include "pmbot/state.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

#define STATE_SCHEMA_VERSION "state/v1"
#define LOGIN_MAX 39
#define REPO_NAME_MAX 100
#define NUMBER_MAX 2147483647LL        /* GraphQL Int */
#define ID_MAX 9007199254740991LL      /* 2^53-1: exact in every JSON reader */
#define STATE_MAX_DEPTH 64
#define SHOW_MAX 64

/* "text", "number", "single_select", "date": by pmbot_field_type. */
extern const char *const pmbot_state__field_type_names[4];

int pmbot_state__fold(int c);
int pmbot_state__fold_cmp(const char *a, size_t an, const char *b, size_t bn);
int pmbot_state__ieq(const char *a, const char *b);
/* Valid repo `repo`[0..n) and number `num` against ref `ref` as ref_cmp orders them. */
int pmbot_state__ref_key_cmp(const char *repo, size_t n, long num, const char *ref);
int pmbot_state__issue_key_cmp(const char *repo, size_t repo_len, long number, const pmbot_issue *is);
int pmbot_state__key_cmp(const char *repo, size_t repo_len, long number,
	const char *repo2, size_t repo2_len, long number2);
int pmbot_state__ref_cmp(const char *a, const char *b);
int pmbot_state__ref_split(const char *ref, size_t *repo_len, long *number);
void pmbot_state__strings_free(char **v, size_t n);
int pmbot_state__valid_date(const char *s);
int pmbot_state__valid_owner(const char *s, size_t n);
int pmbot_state__valid_ref(const char *s);
int pmbot_state__valid_repo(const char *s);
void pmbot_state__field_clear(pmbot_pfield *f);
void pmbot_state__item_clear(pmbot_pitem *it);
/* The clears for a state whose strings are in one block: `strings` 0 frees only the arrays. */
void pmbot_state__issue_drop(pmbot_issue *is, int strings);
void pmbot_state__field_drop(pmbot_pfield *f, int strings);
void pmbot_state__item_drop(pmbot_pitem *it, int strings);

#endif
