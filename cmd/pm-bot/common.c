#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "pmbot/fs.h"
#include "pmbot/hash.h"
#include "pmbot/json.h"
#include "pmbot/source.h"
#include "pmbot/banned.h"

/*
 * A few scratch buffers in turn, so one printf can show several values;
 * cmd_show_free() at exit releases them.
 */
#define SHOW_SLOTS 8
static pmbot_buf show_slots[SHOW_SLOTS] = {
	PMBOT_BUF_INIT, PMBOT_BUF_INIT, PMBOT_BUF_INIT, PMBOT_BUF_INIT,
	PMBOT_BUF_INIT, PMBOT_BUF_INIT, PMBOT_BUF_INIT, PMBOT_BUF_INIT
};
static unsigned show_next;

static const char *show_max(const char *s, size_t max_chars)
{
	pmbot_buf *b = &show_slots[show_next++ % SHOW_SLOTS];

	return pmbot_log_show(b, s, max_chars);
}

int cmd_color(FILE *f)
{
	const char *no = getenv("NO_COLOR"), *term = getenv("TERM");

	return isatty(fileno(f)) && !(no && *no) && !(term && !strcmp(term, "dumb"));
}

const char *cmd_show(const char *s)
{
	return show_max(s, PMBOT_LOG_NAME_MAX);
}

const char *cmd_show_msg(const char *s)
{
	return show_max(s, PMBOT_LOG_MESSAGE_MAX);
}

void cmd_show_free(void)
{
	size_t i;

	for (i = 0; i < SHOW_SLOTS; i++)
		pmbot_buf_free(&show_slots[i]);
}

static void note_line(void *ctx, pmbot_note_level level, const char *msg)
{
	(void)ctx;
	switch (level) {
	case PMBOT_NOTE_INFO: printf("pm-bot: %s\n", cmd_show_msg(msg)); break;
	case PMBOT_NOTE_NOTICE: printf("::notice::%s\n", cmd_show_msg(msg)); break;
	case PMBOT_NOTE_WARNING: printf("::warning::%s\n", cmd_show_msg(msg)); break;
	/* Canonical JSON: one line, nothing raw in it. */
	case PMBOT_NOTE_RECORD: printf("%s\n", msg); fflush(stdout); break;
	default: fprintf(stderr, "pm-bot: %s\n", cmd_show_msg(msg)); break;
	}
}

static void note_diags(void *ctx, pmbot_diag_list *diags)
{
	(void)ctx;
	cmd_print_diags(stderr, diags);
}

const pmbot_notes *cmd_notes(void)
{
	static const pmbot_notes notes = { note_line, note_diags, NULL };

	return &notes;
}

/*
 * In the Action the runner reads standard output for workflow commands:
 * each diagnostic also becomes an annotation on its report line.
 */
static void note_diags_annotated(void *ctx, pmbot_diag_list *diags)
{
	pmbot_buf line = PMBOT_BUF_INIT;
	size_t i;

	(void)ctx;
	cmd_print_diags(stderr, diags);
	fflush(stderr);
	for (i = 0; i < diags->count; i++) {
		pmbot_buf_clear(&line);
		if (pmbot_diag_annotation(&line, &diags->items[i]) == 0)
			fputs(line.buf, stdout);
	}
	fflush(stdout);
	pmbot_buf_free(&line);
}

const pmbot_notes *cmd_action_notes(void)
{
	static const pmbot_notes notes = { note_line, note_diags_annotated, NULL };

	return &notes;
}

const char *cmd_display_name(const char *file)
{
	return strcmp(file, "-") ? file : "<stdin>";
}

/* `out` NULL: check only (pmbot_workgraph_check). */
static int load_report_file(pmbot_workgraph **out, const char *file, pmbot_diag_list *diags)
{
	pmbot_limits lim;
	pmbot_buf text;
	const char *name = cmd_display_name(file);
	int rc;

	if (out)
		*out = NULL;
	pmbot_limits_default(&lim);
	pmbot_buf_init(&text, lim.max_bytes);
	if (pmbot_fs_read(&text, file) < 0) {
		if (errno == EFBIG) {
			pmbot_diag_add(diags, PMBOT_SEV_ERROR, "INPUT_TOO_LARGE", name, "", 0, 0,
				"the report is larger than %zu bytes", lim.max_bytes);
			rc = EXIT_INVALID;
		} else {
			fprintf(stderr, "pm-bot: cannot read %s: %s\n", cmd_show(name), strerror(errno));
			rc = EXIT_RUNTIME;
		}
		goto done;
	}
	switch (out ? pmbot_workgraph_load_buf(out, name, &text, &lim, diags)
		    : pmbot_workgraph_check_buf(name, &text, &lim, diags)) {
	case PMBOT_OK:
		rc = EXIT_OK;
		break;
	case PMBOT_EINVALID:
		rc = EXIT_INVALID;
		break;
	default:
		fprintf(stderr, "pm-bot: %s: out of memory\n", cmd_show(name));
		rc = EXIT_RUNTIME;
	}
done:
	pmbot_buf_free(&text);
	return rc;
}

int cmd_load_report_file(pmbot_workgraph **out, const char *file, pmbot_diag_list *diags)
{
	return load_report_file(out, file, diags);
}

int cmd_check_report_file(const char *file, pmbot_diag_list *diags)
{
	return load_report_file(NULL, file, diags);
}

void cmd_print_diags(FILE *f, pmbot_diag_list *diags)
{
	pmbot_buf line = PMBOT_BUF_INIT;
	size_t i;

	pmbot_diag_list_sort(diags);
	for (i = 0; i < diags->count; i++) {
		pmbot_buf_clear(&line);
		if (pmbot_diag_format(&line, &diags->items[i]) == 0)
			fputs(line.buf, f);
	}
	pmbot_buf_free(&line);
}

int cmd_print_json(const json_t *v)
{
	pmbot_buf out = PMBOT_BUF_INIT;
	int rc = EXIT_RUNTIME;

	/* People read a terminal; pipes and files get the canonical bytes. */
	if (isatty(fileno(stdout))) {
		char *pretty = json_dumps(v, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_ENCODE_ANY);

		if (!pretty || pmbot_buf_puts(&out, pretty) < 0 || pmbot_buf_putc(&out, '\n') < 0) {
			free(pretty);
			fputs("pm-bot: cannot serialise output\n", stderr);
			goto done;
		}
		free(pretty);
	} else if (pmbot_json_canonical(&out, v) < 0 || pmbot_buf_putc(&out, '\n') < 0) {
		fputs("pm-bot: cannot serialise output\n", stderr);
		goto done;
	}
	if (fwrite(out.buf, 1, out.len, stdout) != out.len || fflush(stdout) != 0) {
		fprintf(stderr, "pm-bot: cannot write output: %s\n", strerror(errno));
		goto done;
	}
	rc = EXIT_OK;
done:
	pmbot_buf_free(&out);
	return rc;
}

char *cmd_current_repo(pmbot_repo *repo)
{
	pmbot_buf url = PMBOT_BUF_INIT;
	const char *env = getenv("GITHUB_REPOSITORY");
	char *slug = NULL;

	if (env && *env)
		return strdup(env);
	if (repo && pmbot_repo_remote_url(&url, repo, "origin", NULL) == 0)
		pmbot_source_slug_from_url(&slug, url.buf);
	pmbot_buf_free(&url);
	return slug;
}

static int git_ready;

void cmd_git_shutdown(void)
{
	if (git_ready)
		pmbot_repo_global_shutdown();
	git_ready = 0;
}

int cmd_open_repo(pmbot_repo **out, const char *path)
{
	pmbot_buf err = PMBOT_BUF_INIT;

	*out = NULL;
	if (!git_ready) {
		/*
		 * The commands that read a repository plan or check plans, so
		 * they hash: a libcrypto that cannot be loaded is said here,
		 * once, not as a failed hash deep inside. First, as libgit2's
		 * own dependencies may need it.
		 */
		if (pmbot_sha256_init(&err) < 0 || pmbot_repo_global_init(&err) < 0) {
			fprintf(stderr, "pm-bot: %s\n", cmd_show_msg(err.buf));
			pmbot_buf_free(&err);
			return EXIT_RUNTIME;
		}
		git_ready = 1;
	}

	if (pmbot_repo_open(out, path, &err) < 0) {
		fprintf(stderr, "pm-bot: %s\n",
			cmd_show_msg(err.len ? err.buf : "cannot open the repository"));
		pmbot_buf_free(&err);
		return EXIT_RUNTIME;
	}
	pmbot_buf_free(&err);
	return EXIT_OK;
}

int cmd_load_config(pmbot_config **out, pmbot_repo *repo, const char *rev)
{
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	pmbot_buf err = PMBOT_BUF_INIT;
	char *current = cmd_current_repo(repo);
	int rc = pmbot_source_config(out, NULL, repo, rev, current, &diags, &err);

	free(current);
	cmd_print_diags(stderr, &diags);
	pmbot_diag_list_free(&diags);
	if (rc != PMBOT_OK && rc != PMBOT_EINVALID)
		fprintf(stderr, "pm-bot: cannot read %s at %s: %s\n", PMBOT_CONFIG_PATH,
			cmd_show(rev), cmd_show_msg(err.buf));
	pmbot_buf_free(&err);
	if (rc == PMBOT_OK)
		return EXIT_OK;
	if (rc == PMBOT_EINVALID)
		return EXIT_INVALID;
	/* An unknown revision is the user's input, not a failure of ours. */
	return rc == PMBOT_ENOTFOUND ? EXIT_INVALID : EXIT_RUNTIME;
}

int cmd_bad_option(const struct cmd *self, int c, char **argv)
{
	if (c == ':')
		return cmd_usage_error(self, "option '%s' needs a value", argv[optind - 1]);
	return cmd_usage_error(self, "unknown option '%s'", argv[optind - 1]);
}
