/*
 * libFuzzer target for pmbot_comment_parse(): the hidden header of a plan
 * comment is read back from GitHub, where anyone who can comment can write
 * a body that starts with the same prefix (the author check is the
 * caller's, after parsing).
 *
 * Input: the comment body, passed with its exact length and no terminator.
 * Properties checked (abort on failure):
 *  - the result is OK, ENOTFOUND or EINVALID, ENOTFOUND exactly when the
 *    body does not start with PMBOT_COMMENT_PREFIX, and `*out` is all zero
 *    unless OK;
 *  - an accepted header holds what the header documents (kinds, hex
 *    lengths, run set exactly while applying) and is one that
 *    pmbot_comment_header() writes again; that header reads back to the
 *    same fields, holds no "--" before its closing "-->" and no line break;
 *  - a second parse gives the same fields.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pmbot/action.h"
#include "pmbot/buf.h"

#include "fuzz_util.h"
#include "pmbot/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int is_lower_hex_or_empty(const char *s, size_t n)
{
	size_t i, len = strlen(s);

	if (len == 0)
		return 1;
	if (len != n)
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

static int same_meta(const pmbot_comment_meta *a, const pmbot_comment_meta *b)
{
	return !strcmp(a->kind, b->kind) && a->number == b->number && !strcmp(a->head, b->head) &&
		!strcmp(a->plan_hash, b->plan_hash) && !strcmp(a->status, b->status) &&
		!strcmp(a->run, b->run);
}

static int all_zero(const void *p, size_t n)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (c[i])
			return 0;
	return 1;
}

static void check_meta(const pmbot_comment_meta *m)
{
	size_t i;

	CHECK(memchr(m->kind, '\0', sizeof(m->kind)));
	CHECK(memchr(m->head, '\0', sizeof(m->head)));
	CHECK(memchr(m->plan_hash, '\0', sizeof(m->plan_hash)));
	CHECK(memchr(m->status, '\0', sizeof(m->status)));
	CHECK(memchr(m->run, '\0', sizeof(m->run)));
	CHECK(!strcmp(m->kind, "plan") || !strcmp(m->kind, "field-sync"));
	CHECK(m->number >= 0);
	CHECK(is_lower_hex_or_empty(m->head, 40));
	CHECK(is_lower_hex_or_empty(m->plan_hash, 64));
	CHECK((m->run[0] != '\0') == (strcmp(m->status, "applying") == 0));
	for (i = 0; m->run[i]; i++)
		CHECK(m->run[i] >= 0x20 && m->run[i] < 0x7f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char prefix[] = PMBOT_COMMENT_PREFIX;
	char *body = fuzz_exact_copy(data, size);
	pmbot_comment_meta m1, m2, m3;
	pmbot_buf header = PMBOT_BUF_INIT;
	int rc, starts;
	size_t i;

	memset(&m1, 0x5a, sizeof(m1));
	rc = pmbot_comment_parse(&m1, body, size);
	CHECK(rc == PMBOT_OK || rc == PMBOT_ENOTFOUND || rc == PMBOT_EINVALID);
	starts = size >= sizeof(prefix) - 1 && !memcmp(data, prefix, sizeof(prefix) - 1);
	CHECK((rc == PMBOT_ENOTFOUND) == !starts);
	if (rc != PMBOT_OK) {
		CHECK(all_zero(&m1, sizeof(m1)));
		goto done;
	}
	check_meta(&m1);

	memset(&m2, 0, sizeof(m2));
	CHECK(pmbot_comment_parse(&m2, body, size) == PMBOT_OK);
	CHECK(same_meta(&m1, &m2));

	CHECK(pmbot_comment_header(&header, &m1) == PMBOT_OK);
	CHECK(header.len > sizeof(prefix) + 4);
	CHECK(!memcmp(header.buf, prefix, sizeof(prefix) - 1));
	CHECK(!memcmp(header.buf + header.len - 4, " -->", 4));
	for (i = 0; i + 1 < header.len - 3; i++)
		CHECK(!(header.buf[i] == '-' && header.buf[i + 1] == '-') || i < 3);
	CHECK(memchr(header.buf, '\n', header.len) == NULL);
	memset(&m3, 0, sizeof(m3));
	CHECK(pmbot_comment_parse(&m3, header.buf, header.len) == PMBOT_OK);
	CHECK(same_meta(&m1, &m3));
done:
	pmbot_buf_free(&header);
	free(body);
	return 0;
}
