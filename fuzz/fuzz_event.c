/*
 * libFuzzer target for `pm-bot action`'s untrusted input: the webhook
 * payload (pmbot_event_parse), what pm-bot decides about it
 * (pmbot_event_decide) and the `/pm-bot` command in comment text
 * (pmbot_command_parse). Payloads and comments are written by whoever can
 * open a pull request or comment on one.
 *
 * Input: "<GITHUB_EVENT_NAME>\n<payload JSON>". Without a line break the
 * whole input is the event name and the payload is empty. The payload is
 * passed with its exact length and no terminator. The whole input is also
 * parsed as a comment body, so command parsing is fuzzed on raw text and
 * not only on bodies that survived JSON decoding.
 *
 * Properties checked (abort on failure):
 *  - a second parse of the same bytes gives the same bytes (fields,
 *    diagnostics, decision, command);
 *  - PMBOT_OK gives an event and no error; PMBOT_EINVALID gives no event
 *    and at least one error; head_sha and after are 40 lower-case hex;
 *  - the decision is a known action with a reason, and COMMAND only for a
 *    created issue_comment with a command;
 *  - a command is one of the four kinds; APPLY holds 64 lower-case hex,
 *    other kinds an empty hash; `word` is empty unless UNKNOWN, at most 31
 *    bytes, free of control characters, and valid UTF-8 even when the body
 *    is not (invalid bytes become U+FFFD).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pmbot/action.h"
#include "pmbot/buf.h"
#include "pmbot/diag.h"
#include "pmbot/utf8.h"

#include "fuzz_util.h"
#include "pmbot/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int is_lower_hex(const char *s, size_t n)
{
	size_t i;

	if (strlen(s) != n)
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

static void put_str(pmbot_buf *out, const char *s)
{
	CHECK(pmbot_buf_puts(out, s ? s : "<null>") == 0);
	CHECK(pmbot_buf_putc(out, '\n') == 0);
}

static void check_command(pmbot_buf *out, const char *body)
{
	pmbot_command cmd;
	size_t wlen, i;

	memset(&cmd, 0x5a, sizeof(cmd));
	CHECK(pmbot_command_parse(&cmd, body) == PMBOT_OK);
	CHECK(cmd.kind == PMBOT_CMD_NONE || cmd.kind == PMBOT_CMD_PLAN ||
		cmd.kind == PMBOT_CMD_APPLY || cmd.kind == PMBOT_CMD_UNKNOWN);
	CHECK(memchr(cmd.hash, '\0', sizeof(cmd.hash)) != NULL);
	CHECK(memchr(cmd.word, '\0', sizeof(cmd.word)) != NULL);
	if (cmd.kind == PMBOT_CMD_APPLY)
		CHECK(is_lower_hex(cmd.hash, 64));
	else
		CHECK(cmd.hash[0] == '\0');
	wlen = strlen(cmd.word);
	if (cmd.kind != PMBOT_CMD_UNKNOWN)
		CHECK(wlen == 0);
	CHECK(wlen <= 31);
	/* The word is cut at a character boundary, and invalid bytes were replaced. */
	CHECK(pmbot_utf8_valid(cmd.word, wlen, NULL, NULL, NULL));
	for (i = 0; i < wlen; i++)
		CHECK((unsigned char)cmd.word[i] >= 0x20 && cmd.word[i] != 0x7f);
	CHECK(pmbot_buf_printf(out, "cmd %d %s %s\n", (int)cmd.kind, cmd.hash, cmd.word) == 0);
}

static void run_once(pmbot_buf *out, int *rc_out, const char *name, const char *payload,
	size_t plen, const char *raw_body)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_event *ev = (pmbot_event *)(uintptr_t)1;
	pmbot_event_action act;
	const char *why = NULL;
	int rc;

	rc = pmbot_event_parse(&ev, name, payload, plen, &diags);
	*rc_out = rc;
	CHECK(rc == PMBOT_OK || rc == PMBOT_EINVALID || rc == PMBOT_ERROR);
	if (rc != PMBOT_OK)
		CHECK(ev == NULL);
	if (rc == PMBOT_EINVALID)
		CHECK(diags.errors > 0);
	fuzz_check_diags(&diags, out);
	if (rc == PMBOT_OK) {
		CHECK(ev != NULL);
		CHECK(diags.errors == 0);
		CHECK(ev->name != NULL);
		if (ev->head_sha)
			CHECK(is_lower_hex(ev->head_sha, 40));
		if (ev->kind == PMBOT_EV_PUSH)
			CHECK(ev->ref && ev->after && strlen(ev->after) == 40);
		if (ev->kind == PMBOT_EV_PULL_REQUEST || ev->kind == PMBOT_EV_ISSUE_COMMENT ||
			ev->kind == PMBOT_EV_PUSH || ev->kind == PMBOT_EV_WORKFLOW_DISPATCH)
			CHECK(ev->repo && ev->default_branch);
		if (ev->kind == PMBOT_EV_ISSUE_COMMENT)
			CHECK(ev->comment_body != NULL);
		CHECK(pmbot_buf_printf(out, "ev %d %ld %d %d %lld %d\n", (int)ev->kind,
			ev->number, ev->is_pull_request, ev->is_fork, ev->comment_id,
			ev->comment_author_is_bot) == 0);
		put_str(out, ev->name);
		put_str(out, ev->action);
		put_str(out, ev->repo);
		put_str(out, ev->default_branch);
		put_str(out, ev->head_sha);
		put_str(out, ev->head_repo);
		put_str(out, ev->base_ref);
		put_str(out, ev->base_repo);
		put_str(out, ev->comment_body);
		put_str(out, ev->comment_author);
		put_str(out, ev->ref);
		put_str(out, ev->after);
		put_str(out, ev->sender);

		act = pmbot_event_decide(ev, &why);
		CHECK(why != NULL && why[0]);
		CHECK(act == PMBOT_ACT_IGNORE || act == PMBOT_ACT_PLAN_PR ||
			act == PMBOT_ACT_COMMAND || act == PMBOT_ACT_PLAN_PUSH ||
			act == PMBOT_ACT_FIELD_SYNC);
		CHECK(pmbot_event_decide(ev, NULL) == act);
		if (act == PMBOT_ACT_COMMAND) {
			pmbot_command cmd;

			CHECK(ev->kind == PMBOT_EV_ISSUE_COMMENT);
			CHECK(ev->comment_author && !ev->comment_author_is_bot);
			CHECK(pmbot_command_parse(&cmd, ev->comment_body) == PMBOT_OK);
			CHECK(cmd.kind != PMBOT_CMD_NONE);
		}
		CHECK(pmbot_buf_printf(out, "act %d %s\n", (int)act, why) == 0);
		if (ev->comment_body)
			check_command(out, ev->comment_body);
	}
	pmbot_event_free(rc == PMBOT_OK ? ev : NULL);
	pmbot_diag_list_free(&diags);
	check_command(out, raw_body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t name_len = nl ? (size_t)(nl - data) : size;
	size_t plen = nl ? size - name_len - 1 : 0;
	char *name = fuzz_string_copy(data, name_len);
	char *payload = fuzz_exact_copy(nl ? nl + 1 : data, plen);
	char *raw = fuzz_string_copy(data, size);
	pmbot_buf one = PMBOT_BUF_INIT, two = PMBOT_BUF_INIT;
	int rc1, rc2;

	CHECK(pmbot_command_parse(NULL, raw) == PMBOT_ERROR);
	run_once(&one, &rc1, name, payload, plen, raw);
	if (rc1 != PMBOT_ERROR) {
		run_once(&two, &rc2, name, payload, plen, raw);
		CHECK(rc1 == rc2);
		CHECK(fuzz_same(&one, &two));
	}
	pmbot_buf_free(&one);
	pmbot_buf_free(&two);
	free(name);
	free(payload);
	free(raw);
	return 0;
}
