#include "apply_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmbot/fs.h"
#include "pmbot/hash.h"
#include "pmbot/json.h"
#include "pmbot/plan.h"
#include "pmbot/banned.h"

struct pmbot_audit {
	int fd;
	char *path;
	long long seq;                    /* of the last line, 0 when empty */
	char prev[PMBOT_SHA256_HEX_SIZE]; /* SHA-256 of the last line */
	/*
	 * While held: the lines appended since pmbot_audit_hold(), not yet in
	 * the file, and the chain's end as the file has it, to go back to when
	 * they are discarded.
	 */
	int holding;
	pmbot_buf held;
	long long file_seq;
	char file_prev[PMBOT_SHA256_HEX_SIZE];
};

static const char *const events[] = {
	"proposal", "approval", "denial", "attempt", "success", "failure", "dead_letter",
	"capability_run", "pause"
};

static int known_event(const char *e)
{
	size_t i;

	for (i = 0; e && i < sizeof(events) / sizeof(events[0]); i++)
		if (!strcmp(events[i], e))
			return 1;
	return 0;
}

static const char zero_hash[] =
	"0000000000000000000000000000000000000000000000000000000000000000";

static int broken(pmbot_diag_list *diags, const char *file, size_t line, const char *ptr,
	const char *why)
{
	pmbot_diag_add(diags, PMBOT_SEV_ERROR, "AUDIT_BROKEN", file, ptr,
		line > (size_t)2147483647 ? 0 : (int)line, 0, "line %zu: %s", line, why);
	return PMBOT_EINVALID;
}

/*
 * Walk the chain in `text`. On success `*n_lines`, `*last_seq` and `last`
 * describe its end; otherwise the first broken line is in `diags`.
 */
static int verify_text(const char *text, size_t len, const char *file, size_t *n_lines,
	long long *last_seq, char last[PMBOT_SHA256_HEX_SIZE], const char *expect, size_t *found,
	pmbot_diag_list *diags)
{
	pmbot_buf canon = PMBOT_BUF_INIT, why = PMBOT_BUF_INIT;
	char prev[PMBOT_SHA256_HEX_SIZE];
	size_t pos = 0, n = 0;
	json_t *o = NULL;
	int err = PMBOT_ERROR;

	memcpy(prev, zero_hash, sizeof(prev));
	while (pos < len) {
		const char *line = text + pos, *nl = memchr(line, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - line) : len - pos;
		const json_t *seq, *p;
		json_error_t jerr;

		n++;
		if (!nl) {
			err = broken(diags, file, n, "",
				"the last line has no newline: a write was cut off");
			goto done;
		}
		if (!(o = json_loadb(line, ll, JSON_REJECT_DUPLICATES, &jerr)) || !json_is_object(o)) {
			pmbot_buf_clear(&why);
			pmbot_buf_printf(&why, "not a JSON object (%s)", o ? "another JSON value" : jerr.text);
			err = broken(diags, file, n, "", why.buf);
			goto done;
		}
		pmbot_buf_clear(&canon);
		if (pmbot_json_canonical(&canon, o) < 0)
			goto done;
		if (canon.len != ll || memcmp(canon.buf, line, ll)) {
			err = broken(diags, file, n, "", "not canonical JSON: the line was rewritten");
			goto done;
		}
		p = json_object_get(o, "prev");
		if (!json_is_string(p) || strcmp(json_string_value(p), prev)) {
			err = broken(diags, file, n, "/prev", n == 1 ?
				"prev is not 64 zeros: lines before it were removed" :
				"prev is not the SHA-256 of the line before: a line was edited, "
				"removed, inserted or moved");
			goto done;
		}
		seq = json_object_get(o, "seq");
		if (!json_is_integer(seq) || json_integer_value(seq) != (json_int_t)n) {
			pmbot_buf_clear(&why);
			pmbot_buf_printf(&why, "seq is not %zu", n);
			err = broken(diags, file, n, "/seq", why.buf);
			goto done;
		}
		if (!known_event(json_string_value(json_object_get(o, "event")))) {
			err = broken(diags, file, n, "/event", "event is not a known audit event");
			goto done;
		}
		if (!pmbot_apply_time_valid(json_string_value(json_object_get(o, "at")))) {
			err = broken(diags, file, n, "/at", "at is not an RFC 3339 UTC time");
			goto done;
		}
		json_decref(o);
		o = NULL;
		if (pmbot_sha256_hex(prev, line, ll) < 0)
			goto done;
		if (expect && found && !strcmp(prev, expect))
			*found = n;
		pos += ll + 1;
	}
	*n_lines = n;
	*last_seq = (long long)n;
	memcpy(last, prev, PMBOT_SHA256_HEX_SIZE);
	err = PMBOT_OK;
done:
	json_decref(o);
	pmbot_buf_free(&canon);
	pmbot_buf_free(&why);
	return err;
}

static int is_head(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!strchr("0123456789abcdefABCDEF", s[i]))
			return 0;
	return i == PMBOT_SHA256_HEX_SIZE - 1;
}

int pmbot_audit_verify_head(char head[PMBOT_SHA256_HEX_SIZE], size_t *lines,
	size_t *expect_line, const char *path, const char *expect, pmbot_diag_list *diags)
{
	pmbot_buf text = PMBOT_BUF_INIT;
	char last[PMBOT_SHA256_HEX_SIZE], want[PMBOT_SHA256_HEX_SIZE];
	long long seq = 0;
	size_t n = 0, found = (size_t)-1, i;
	int err;

	if (lines)
		*lines = 0;
	if (expect_line)
		*expect_line = 0;
	if (head)
		memcpy(head, zero_hash, PMBOT_SHA256_HEX_SIZE);
	if (expect) {
		if (!is_head(expect)) {
			pmbot_diag_add(diags, PMBOT_SEV_ERROR, "AUDIT_HEAD", path, "", 0, 0,
				"the expected head is not 64 hexadecimal digits (a SHA-256)");
			return PMBOT_EINVALID;
		}
		for (i = 0; i < sizeof(want); i++)
			want[i] = (char)(expect[i] >= 'A' && expect[i] <= 'F' ?
				expect[i] - 'A' + 'a' : expect[i]);
		/* The empty ledger's head: every ledger starts from it. */
		if (!strcmp(want, zero_hash))
			found = 0;
	}
	if (pmbot_fs_read(&text, path) < 0) {
		pmbot_diag_add(diags, PMBOT_SEV_ERROR, "AUDIT_IO", path, "", 0, 0,
			"cannot read the ledger: %s", strerror(errno));
		err = PMBOT_ERROR;
		goto done;
	}
	err = verify_text(text.buf, text.len, path, &n, &seq, last, expect ? want : NULL, &found,
		diags);
	if (err != PMBOT_OK)
		goto done;
	if (lines)
		*lines = n;
	if (head)
		memcpy(head, n ? last : zero_hash, PMBOT_SHA256_HEX_SIZE);
	if (expect && found == (size_t)-1) {
		/* Say it whole: the chain alone looks fine, which is the point of the check. */
		pmbot_diag_add(diags, PMBOT_SEV_ERROR, "AUDIT_HEAD", path, "", 0, 0,
			"no line of the ledger has the expected head %s as its SHA-256: the lines up to "
			"that head were rewritten or removed after it was published, and the chain "
			"was recomputed to hide it", want);
		err = PMBOT_EINVALID;
		goto done;
	}
	if (expect_line && expect)
		*expect_line = found;
done:
	pmbot_buf_free(&text);
	return err;
}

int pmbot_audit_verify(const char *path, size_t *lines, pmbot_diag_list *diags)
{
	return pmbot_audit_verify_head(NULL, lines, NULL, path, NULL, diags);
}

int pmbot_audit_open(pmbot_audit **out, const char *path, pmbot_diag_list *diags)
{
	pmbot_buf text = PMBOT_BUF_INIT, dir = PMBOT_BUF_INIT;
	char now[PMBOT_APPLY_TIME_SIZE];
	const char *slash = strrchr(path, '/');
	pmbot_audit *a = NULL;
	size_t n = 0;
	int err = PMBOT_ERROR;

	*out = NULL;
	if (pmbot_apply_now(now) < 0) {
		pmbot_diag_add(diags, PMBOT_SEV_ERROR, "AUDIT_CLOCK", NULL, "", 0, 0,
			"PMBOT_NOW is set but is not an RFC 3339 UTC time");
		err = PMBOT_EINVALID;
		goto done;
	}
	if (!(a = calloc(1, sizeof(*a))) || !(a->path = strdup(path)))
		goto done;
	a->fd = -1;
	/* A group's events: bounded by PMBOT_APPLY_GROUP_MAX changesets, capped anyway. */
	pmbot_buf_init(&a->held, (size_t)1 << 28);
	if (slash && slash != path) {
		if (pmbot_buf_put(&dir, path, (size_t)(slash - path)) < 0)
			goto done;
		if (pmbot_fs_mkdirs(dir.buf, 0755) < 0)
			goto io;
	}
	/* O_APPEND: each event lands at the end even if the file grew under us. */
	if ((a->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0)
		goto io;
	/* Two writers would fork the chain; the second one is refused. */
	if (flock(a->fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK) {
			pmbot_diag_add(diags, PMBOT_SEV_ERROR, "AUDIT_LOCKED", path, "", 0, 0,
				"another pm-bot process is writing this ledger");
			err = PMBOT_EINVALID;
			goto done;
		}
		goto io;
	}
	if (pmbot_fs_read(&text, path) < 0)
		goto io;
	err = verify_text(text.buf, text.len, path, &n, &a->seq, a->prev, NULL, NULL, diags);
	if (err != PMBOT_OK)
		goto done;
	*out = a;
	a = NULL;
	goto done;
io:
	pmbot_diag_add(diags, PMBOT_SEV_ERROR, "AUDIT_IO", path, "", 0, 0,
		"cannot open the ledger: %s", strerror(errno));
	err = PMBOT_ERROR;
done:
	pmbot_audit_close(a);
	pmbot_buf_free(&text);
	pmbot_buf_free(&dir);
	return err;
}

void pmbot_audit_close(pmbot_audit *audit)
{
	if (!audit)
		return;
	/* Held lines may claim writes that never became durable: never written here. */
	pmbot_audit_discard(audit);
	if (audit->fd >= 0)
		close(audit->fd);
	free(audit->path);
	free(audit);
}

int pmbot_audit_record(const char *path, const char *event, const json_t *fields,
	pmbot_diag_list *diags)
{
	pmbot_audit *audit = NULL;
	int rc;

	if ((rc = pmbot_audit_open(&audit, path, diags)) < 0)
		goto done;
	rc = pmbot_audit_append(audit, event, fields);
done:
	pmbot_audit_close(audit);
	return rc;
}

int pmbot_audit_repo_path(pmbot_buf *out, const char *repo_dir)
{
	return pmbot_buf_printf(out, "%s/.pm-bot/audit.jsonl", repo_dir ? repo_dir : ".");
}

json_t *pmbot_audit_proposal_fields(const json_t *bundle)
{
	return json_pack("{s:O, s:I}", "plan_hash", json_object_get(bundle, "plan_hash"),
		"changesets", (json_int_t)pmbot_plan_count(bundle));
}

void pmbot_audit_head(char out[PMBOT_SHA256_HEX_SIZE], size_t *lines, const pmbot_audit *audit)
{
	memcpy(out, audit->seq ? audit->prev : zero_hash, PMBOT_SHA256_HEX_SIZE);
	if (lines)
		*lines = (size_t)audit->seq;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int pmbot_audit_append(pmbot_audit *audit, const char *event, const json_t *fields)
{
	static const char *const reserved[] = { "event", "seq", "at", "prev" };
	char now[PMBOT_APPLY_TIME_SIZE], hash[PMBOT_SHA256_HEX_SIZE];
	pmbot_buf line = PMBOT_BUF_INIT;
	json_t *o = NULL;
	struct stat st;
	size_t i;
	int err = PMBOT_ERROR;

	if (!audit || !known_event(event) || (fields && !json_is_object(fields)))
		return PMBOT_EINVALID;
	for (i = 0; fields && i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (json_object_get(fields, reserved[i]))
			return PMBOT_EINVALID;
	if (pmbot_apply_now(now) < 0)
		goto done;
	o = fields ? json_copy((json_t *)fields) : json_object();
	if (!o || json_object_set_new(o, "event", json_string(event)) < 0 ||
	    json_object_set_new(o, "seq", json_integer((json_int_t)(audit->seq + 1))) < 0 ||
	    json_object_set_new(o, "at", json_string(now)) < 0 ||
	    json_object_set_new(o, "prev", json_string(audit->prev[0] ? audit->prev : zero_hash)) < 0)
		goto done;
	if (pmbot_json_canonical(&line, o) < 0 || pmbot_sha256_hex(hash, line.buf, line.len) < 0 ||
	    pmbot_buf_putc(&line, '\n') < 0)
		goto done;
	if (audit->holding) {
		if (pmbot_buf_put(&audit->held, line.buf, line.len) < 0)
			goto done;
	} else {
		if (fstat(audit->fd, &st) < 0)
			goto done;
		if (write_all(audit->fd, line.buf, line.len) < 0 || fsync(audit->fd) < 0) {
			/* Leave no half line behind: it would break the chain for good. */
			if (ftruncate(audit->fd, st.st_size) == 0)
				fsync(audit->fd);
			goto done;
		}
	}
	audit->seq++;
	memcpy(audit->prev, hash, sizeof(hash));
	err = PMBOT_OK;
done:
	json_decref(o);
	pmbot_buf_free(&line);
	return err;
}

void pmbot_audit_hold(pmbot_audit *audit)
{
	if (!audit || audit->holding)
		return;
	audit->holding = 1;
	audit->file_seq = audit->seq;
	memcpy(audit->file_prev, audit->prev, sizeof(audit->prev));
}

void pmbot_audit_discard(pmbot_audit *audit)
{
	if (!audit || !audit->holding)
		return;
	audit->holding = 0;
	audit->seq = audit->file_seq;
	memcpy(audit->prev, audit->file_prev, sizeof(audit->prev));
	pmbot_buf_free(&audit->held);
	pmbot_buf_init(&audit->held, (size_t)1 << 28);
}

int pmbot_audit_flush(pmbot_audit *audit)
{
	struct stat st;
	int err = PMBOT_ERROR;

	if (!audit || !audit->holding)
		return PMBOT_OK;
	if (!audit->held.len) {
		audit->holding = 0;
		return PMBOT_OK;
	}
	if (fstat(audit->fd, &st) < 0)
		goto done;
	/* One write and one fsync for the whole group: the point of holding. */
	if (write_all(audit->fd, audit->held.buf, audit->held.len) < 0 || fsync(audit->fd) < 0) {
		if (ftruncate(audit->fd, st.st_size) == 0)
			fsync(audit->fd);
		goto done;
	}
	audit->file_seq = audit->seq;
	memcpy(audit->file_prev, audit->prev, sizeof(audit->prev));
	err = PMBOT_OK;
done:
	pmbot_audit_discard(audit);
	return err;
}
