#include <string.h>

#include "pmbot/github.h"
#include "pmbot/banned.h"

const char *pmbot_gql(const char *name)
{
	size_t i;

	for (i = 0; i < pmbot_gql_n_docs; i++)
		if (!strcmp(pmbot_gql_docs[i].name, name))
			return pmbot_gql_docs[i].text;
	return NULL;
}

/* Where the comment of line [p, end) starts, or NULL: a '#' outside a "string". */
static const char *line_comment(const char *p, const char *end)
{
	int in_str = 0;

	for (; p < end; p++) {
		if (in_str && *p == '\\' && p + 1 < end)
			p++;
		else if (*p == '"')
			in_str = !in_str;
		else if (!in_str && *p == '#')
			return p;
	}
	return NULL;
}

/*
 * The features the `# needs:` tag of line [p, end) names: 0 when the line
 * has no tag, PMBOT_EINVALID for an unknown or missing name (so a typo in a
 * document fails every request in the tests rather than silently keeping a
 * field a GitHub lacks).
 */
static int line_needs(unsigned *needs, const char *p, const char *end)
{
	static const struct {
		const char *name;
		unsigned flag;
	} features[] = {
		{ "sub_issues", PMBOT_GQL_SUB_ISSUES },
		{ "dependencies", PMBOT_GQL_DEPENDENCIES },
		{ "issue_types", PMBOT_GQL_ISSUE_TYPES },
	};
	const char *c = line_comment(p, end);
	size_t i, len;

	*needs = 0;
	if (!c)
		return 0;
	for (c++; c < end && (*c == ' ' || *c == '\t'); c++)
		;
	if ((size_t)(end - c) < 6 || memcmp(c, "needs:", 6))
		return 0;
	for (c += 6;;) {
		while (c < end && (*c == ' ' || *c == '\t' || *c == ',' || *c == '\r'))
			c++;
		if (c == end)
			break;
		for (len = 0; c + len < end && !strchr(" \t,\r", c[len]); len++)
			;
		for (i = 0; i < sizeof(features) / sizeof(features[0]); i++)
			if (strlen(features[i].name) == len && !memcmp(c, features[i].name, len))
				break;
		if (i == sizeof(features) / sizeof(features[0]))
			return PMBOT_EINVALID;
		*needs |= features[i].flag;
		c += len;
	}
	return *needs ? 0 : PMBOT_EINVALID;
}

int pmbot_gql_without(pmbot_buf *out, const char *doc, unsigned missing)
{
	size_t start = out->len;
	const char *p = doc, *nl;
	unsigned needs;
	int rc = 0;

	while (*p) {
		size_t len = (nl = strchr(p, '\n')) ? (size_t)(nl - p) + 1 : strlen(p);

		if ((rc = line_needs(&needs, p, nl ? nl : p + len)) < 0)
			goto done;
		if (!(needs & missing) && (rc = pmbot_buf_put(out, p, len)) < 0)
			goto done;
		p += len;
	}
done:
	/* A failure leaves no half document behind for a caller to send. */
	if (rc < 0)
		pmbot_buf_truncate(out, start);
	return rc;
}
