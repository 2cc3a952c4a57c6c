#include "state_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pmbot/array.h"
#include "pmbot/datetime.h"
#include "pmbot/doc.h"
#include "pmbot/json.h"
#include "pmbot/strmap.h"
#include "pmbot/banned.h"

/*
 * Names and issue refs ("owner/name#N"): validation and the one order
 * (repository case-folded, then number) every list in a State follows.
 */

/* ASCII only: GitHub folds the case of logins and repository names this way. */
int pmbot_state__fold(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static int fold(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

int pmbot_state__fold_cmp(const char *a, size_t an, const char *b, size_t bn)
{
	size_t i, n = an < bn ? an : bn;

	/* Every lookup lands here, mostly on names spelt alike: one memcmp settles those. */
	if (an == bn && !memcmp(a, b, n))
		return 0;
	/* Else fold only bytes that differ. */
	for (i = 0; i < n; i++) {
		int x = (unsigned char)a[i], y = (unsigned char)b[i];

		if (x == y)
			continue;
		x = fold(x);
		y = fold(y);
		if (x != y)
			return x < y ? -1 : 1;
	}
	return an < bn ? -1 : an > bn;
}

static int is_alnum(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

int pmbot_state__valid_owner(const char *s, size_t n)
{
	size_t i;

	if (!n || n > LOGIN_MAX || s[0] == '-')
		return 0;
	for (i = 0; i < n; i++)
		if (!is_alnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_')
			return 0;
	return 1;
}

static int valid_repo_n(const char *s, size_t n)
{
	const char *slash = memchr(s, '/', n), *name;
	size_t nn, i;

	if (!slash || !pmbot_state__valid_owner(s, (size_t)(slash - s)))
		return 0;
	name = slash + 1;
	nn = n - (size_t)(slash - s) - 1;
	if (!nn || nn > REPO_NAME_MAX || (nn == 1 && name[0] == '.') ||
	    (nn == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	for (i = 0; i < nn; i++)
		if (!is_alnum((unsigned char)name[i]) && name[i] != '.' && name[i] != '_' &&
		    name[i] != '-')
			return 0;
	return 1;
}

int pmbot_state__valid_repo(const char *s)
{
	return valid_repo_n(s, strlen(s));
}

/* The issue number that is all of `p`: 1..NUMBER_MAX, no leading zero. 0, or -1. */
static int number_of(const char *p, long *number)
{
	long long n = 0;

	if (*p < '1' || *p > '9')
		return -1;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		n = n * 10 + (*p - '0');
		if (n > NUMBER_MAX)
			return -1;
	}
	*number = (long)n;
	return 0;
}

/* "OWNER/NAME#N": the repo's length and N. 0, or -1 when malformed. */
int pmbot_state__ref_split(const char *ref, size_t *repo_len, long *number)
{
	const char *hash = strchr(ref, '#');

	if (!hash || !valid_repo_n(ref, (size_t)(hash - ref)) || number_of(hash + 1, number) < 0)
		return -1;
	*repo_len = (size_t)(hash - ref);
	return 0;
}

int pmbot_state__valid_ref(const char *s)
{
	size_t n;
	long num;

	return pmbot_state__ref_split(s, &n, &num) == 0;
}

int pmbot_state__key_cmp(const char *repo, size_t repo_len, long number,
	const char *repo2, size_t repo2_len, long number2)
{
	int c = pmbot_state__fold_cmp(repo, repo_len, repo2, repo2_len);

	if (c)
		return c;
	return number < number2 ? -1 : number > number2;
}

/*
 * Compare the valid query (its repo `n` bytes, number `num`) with item ref
 * `item` as ref_cmp would. An item spelling the query's repo byte for byte
 * has that valid repo and its '#' at `n`: only its number needs checking,
 * which spares the full split on nearly every compare of a lookup.
 */
int pmbot_state__ref_key_cmp(const char *ref, size_t n, long num, const char *item)
{
	size_t mn;
	long mnum;

	if (!strncmp(item, ref, n) && item[n] == '#') {
		long x;

		/* A malformed item ref sorts last, as in ref_cmp. */
		if (number_of(item + n + 1, &x) < 0)
			return -1;
		return num < x ? -1 : num > x;
	}
	/* A malformed item ref sorts last, as in ref_cmp. */
	if (pmbot_state__ref_split(item, &mn, &mnum) < 0)
		return -1;
	return pmbot_state__key_cmp(ref, n, num, item, mn, mnum);
}

/* Refs in issue order; malformed refs (never in a valid state) sort last. */
int pmbot_state__ref_cmp(const char *a, const char *b)
{
	size_t an;
	long x;

	if (pmbot_state__ref_split(a, &an, &x) < 0)
		return pmbot_state__valid_ref(b) ? 1 : strcmp(a, b);
	return pmbot_state__ref_key_cmp(a, an, x, b);
}

int pmbot_issue_ref_cmp(const char *a, const char *b)
{
	return pmbot_state__ref_cmp(a, b);
}

int pmbot_state__issue_key_cmp(const char *repo, size_t repo_len, long number, const pmbot_issue *is)
{
	return pmbot_state__key_cmp(repo, repo_len, number, is->repo, strlen(is->repo), is->number);
}

int pmbot_issue_ref(pmbot_buf *out, const char *repo, long number)
{
	char tmp[24], *p = tmp + sizeof(tmp);
	unsigned long u = number < 0 ? 0UL - (unsigned long)number : (unsigned long)number;

	/* "%s#%ld" without printf: the planner makes a ref per issue it reads. */
	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (number < 0)
		*--p = '-';
	*--p = '#';
	if (pmbot_buf_puts(out, repo ? repo : "(null)") < 0 ||
	    pmbot_buf_put(out, p, (size_t)(tmp + sizeof(tmp) - p)) < 0)
		return -1;
	return 0;
}

int pmbot_issue_ref_parse(pmbot_buf *repo, long *number, const char *ref)
{
	size_t n;
	long num;

	if (!ref || pmbot_state__ref_split(ref, &n, &num) < 0)
		return PMBOT_EINVALID;
	if (pmbot_buf_put(repo, ref, n) < 0)
		return PMBOT_ERROR;
	*number = num;
	return PMBOT_OK;
}

int pmbot_state__valid_date(const char *s)
{
	return pmbot_datetime_date_valid(s);
}
