/*
 * libFuzzer target for the approval-command parser on raw bytes
 * (pmbot_command_parse_bytes): a comment body is whatever its author typed,
 * including invalid UTF-8 and NUL bytes (the event target reaches the parser
 * only through JSON that was checked to be UTF-8).
 *
 * Input: the comment body, passed with its exact length and no terminator.
 * Properties checked (abort on failure):
 *  - the result is PMBOT_OK with one of the four kinds; APPLY holds 64
 *    lower-case hex, other kinds an empty hash; `word` is empty unless
 *    UNKNOWN, at most 31 bytes, free of control characters and valid UTF-8
 *    whatever the input;
 *  - without a NUL byte, pmbot_command_parse() on a terminated copy agrees;
 *  - the same body with every line quoted ("> ") or indented by four
 *    spaces (a block quote, an indented code block) holds no command;
 *  - a second parse gives the same answer.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pmbot/action.h"
#include "pmbot/buf.h"
#include "pmbot/utf8.h"

#include "fuzz_util.h"
#include "pmbot/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const pmbot_command *cmd)
{
	size_t wlen, i;

	CHECK(cmd->kind == PMBOT_CMD_NONE || cmd->kind == PMBOT_CMD_PLAN ||
		cmd->kind == PMBOT_CMD_APPLY || cmd->kind == PMBOT_CMD_UNKNOWN);
	CHECK(memchr(cmd->hash, '\0', sizeof(cmd->hash)) != NULL);
	CHECK(memchr(cmd->word, '\0', sizeof(cmd->word)) != NULL);
	if (cmd->kind == PMBOT_CMD_APPLY) {
		CHECK(strlen(cmd->hash) == 64);
		for (i = 0; i < 64; i++)
			CHECK((cmd->hash[i] >= '0' && cmd->hash[i] <= '9') ||
				(cmd->hash[i] >= 'a' && cmd->hash[i] <= 'f'));
	} else {
		CHECK(cmd->hash[0] == '\0');
	}
	wlen = strlen(cmd->word);
	if (cmd->kind != PMBOT_CMD_UNKNOWN)
		CHECK(wlen == 0);
	CHECK(wlen <= 31);
	CHECK(pmbot_utf8_valid(cmd->word, wlen, NULL, NULL, NULL));
	for (i = 0; i < wlen; i++)
		CHECK((unsigned char)cmd->word[i] >= 0x20 && cmd->word[i] != 0x7f);
}

static int same(const pmbot_command *a, const pmbot_command *b)
{
	return a->kind == b->kind && !strcmp(a->hash, b->hash) && !strcmp(a->word, b->word);
}

/* `prefix` at the start of every line; CommonMark ends lines at LF, CR and CRLF. */
static void prefix_lines(pmbot_buf *out, const uint8_t *data, size_t size, const char *prefix)
{
	size_t i;

	CHECK(pmbot_buf_puts(out, prefix) == 0);
	for (i = 0; i < size; i++) {
		CHECK(pmbot_buf_putc(out, (char)data[i]) == 0);
		if ((data[i] == '\n' || (data[i] == '\r' && (i + 1 == size || data[i + 1] != '\n'))) &&
		    i + 1 < size)
			CHECK(pmbot_buf_puts(out, prefix) == 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *exact = fuzz_exact_copy(data, size);
	pmbot_command one, two, other;
	pmbot_buf quoted = PMBOT_BUF_INIT;

	memset(&one, 0x5a, sizeof(one));
	CHECK(pmbot_command_parse_bytes(&one, exact, size) == PMBOT_OK);
	check(&one);
	CHECK(pmbot_command_parse_bytes(&two, exact, size) == PMBOT_OK);
	CHECK(same(&one, &two));
	if (!memchr(data, '\0', size)) {
		char *str = fuzz_string_copy(data, size);

		CHECK(pmbot_command_parse(&other, str) == PMBOT_OK);
		CHECK(same(&one, &other));
		free(str);
	}
	prefix_lines(&quoted, data, size, "> ");
	CHECK(pmbot_command_parse_bytes(&other, quoted.buf, quoted.len) == PMBOT_OK);
	CHECK(other.kind == PMBOT_CMD_NONE);
	pmbot_buf_clear(&quoted);
	prefix_lines(&quoted, data, size, "    ");
	CHECK(pmbot_command_parse_bytes(&other, quoted.buf, quoted.len) == PMBOT_OK);
	CHECK(other.kind == PMBOT_CMD_NONE);
	CHECK(pmbot_command_parse_bytes(NULL, exact, size) == PMBOT_ERROR);
	pmbot_buf_free(&quoted);
	free(exact);
	return 0;
}
