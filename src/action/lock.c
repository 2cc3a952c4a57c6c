#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmbot/action.h"
#include "pmbot/banned.h"

/* Run ids (GitHub's are 64-bit integers) and keys fit a 50-character marker name. */
#define ID_MAX 20
#define KEY_MAX 16
#define RUN_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZ._-"

static int id_ok(const char *s, size_t max, const char *extra)
{
	if (!s || !*s || strlen(s) > max)
		return 0;
	for (; *s; s++) {
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || strchr(extra, *s)))
			return 0;
	}
	return 1;
}

int pmbot_lock_parse(char *run, size_t run_size, long long *at, const char *description)
{
	char id[ID_MAX + 2];
	long long t;
	int used = 0;

	if (!description || run_size < ID_MAX + 1 ||
	    sscanf(description, "run=%21[A-Za-z0-9._-] at=%lld%n", id, &t, &used) != 2 ||
	    description[used] || !id_ok(id, ID_MAX, RUN_CHARS) || t < 0)
		return PMBOT_EINVALID;
	snprintf(run, run_size, "%s", id);
	*at = t;
	return PMBOT_OK;
}

/* Create the lock label with this run as holder: 0, PMBOT_GH_EEXISTS or a failure. */
static int create(const pmbot_lock *l, pmbot_github_client *c, const char *name, pmbot_buf *err)
{
	pmbot_buf desc = PMBOT_BUF_INIT, scratch = PMBOT_BUF_INIT;
	char *now_desc = NULL;
	int rc;

	if (pmbot_buf_printf(&desc, "run=%s at=%lld", l->run_id, l->now) < 0) {
		pmbot_buf_free(&desc);
		return PMBOT_ERROR;
	}
	rc = pmbot_gh_label_create(c, l->repo, name, desc.buf, &scratch);
	if (rc == PMBOT_GITHUB_EUNKNOWN_OUTCOME) {
		/* The answer was lost: the label itself says whether the create landed. */
		pmbot_buf_clear(&scratch);
		rc = pmbot_gh_label_get(&now_desc, c, l->repo, name, &scratch);
		if (rc == 0)
			rc = strcmp(now_desc, desc.buf) ? PMBOT_GH_EEXISTS : 0;
	}
	if (rc < 0 && rc != PMBOT_GH_EEXISTS && scratch.len)
		pmbot_buf_note(err, "%s", scratch.buf);
	free(now_desc);
	pmbot_buf_free(&scratch);
	pmbot_buf_free(&desc);
	return rc;
}

static int lock_name(pmbot_buf *name, const pmbot_lock *l, pmbot_buf *err)
{
	if (!id_ok(l->key, KEY_MAX, "-") || !id_ok(l->run_id, ID_MAX, RUN_CHARS)) {
		pmbot_buf_note(err, "the lock needs a key of [a-z0-9-] (at most %d bytes) and a run id of "
			"[A-Za-z0-9._-] (at most %d bytes)", KEY_MAX, ID_MAX);
		return PMBOT_EINVALID;
	}
	return pmbot_buf_printf(name, PMBOT_LOCK_PREFIX "%s", l->key) < 0 ? PMBOT_ERROR : 0;
}

/* Is the holder `run` (locked at `at`) gone? */
static int holder_dead(const pmbot_lock *l, const char *run, long long at)
{
	long long ttl = l->ttl > 0 ? l->ttl : PMBOT_LOCK_TTL_S;

	if (l->now - at > ttl)
		return 1;
	return l->run_alive && l->run_alive(l->run_alive_ctx, run) == 0;
}

int pmbot_lock_take(char **holder, const pmbot_lock *l, pmbot_github_client *c, pmbot_buf *err)
{
	pmbot_buf name = PMBOT_BUF_INIT, marker = PMBOT_BUF_INIT, scratch = PMBOT_BUF_INIT;
	char run[ID_MAX + 1] = "", *desc = NULL;
	long long at = 0;
	int rc, tries;

	if (holder)
		*holder = NULL;
	if ((rc = lock_name(&name, l, err)) < 0)
		goto done;
	/* A holder that releases between our create and our read leaves the name free: try again. */
	for (tries = 0; tries < 3; tries++) {
		if ((rc = create(l, c, name.buf, err)) != PMBOT_GH_EEXISTS)
			goto done;
		free(desc);
		desc = NULL;
		pmbot_buf_clear(&scratch);
		rc = pmbot_gh_label_get(&desc, c, l->repo, name.buf, &scratch);
		if (rc == PMBOT_ENOTFOUND)
			continue;
		if (rc < 0) {
			pmbot_buf_note(err, "%s", scratch.buf);
			goto done;
		}
		break;
	}
	if (!desc) {
		pmbot_buf_note(err, "the lock %s kept changing hands", name.buf);
		rc = PMBOT_LOCK_EBUSY;
		goto done;
	}
	if (pmbot_lock_parse(run, sizeof(run), &at, desc) < 0) {
		/* Not pm-bot's format: someone made the label by hand; a person removes it. */
		pmbot_buf_note(err, "the label %s exists but does not name a run", name.buf);
		run[0] = '\0';
		rc = PMBOT_LOCK_EBUSY;
		goto done;
	}
	if (!strcmp(run, l->run_id)) {
		rc = 0;
		goto done;
	}
	if (!holder_dead(l, run, at)) {
		pmbot_buf_note(err, "run %s holds the lock %s", run, name.buf);
		rc = PMBOT_LOCK_EBUSY;
		goto done;
	}
	/* Takeover: the marker exists once per dead holder, so one run wins it. */
	if (pmbot_buf_printf(&marker, "%s:x%s", name.buf, run) < 0) {
		rc = PMBOT_ERROR;
		goto done;
	}
	if ((rc = create(l, c, marker.buf, err)) == PMBOT_GH_EEXISTS) {
		pmbot_buf_note(err, "another run is taking over the lock %s from run %s", name.buf, run);
		rc = PMBOT_LOCK_EBUSY;
		goto done;
	}
	if (rc < 0)
		goto done;
	pmbot_buf_clear(&scratch);
	rc = pmbot_gh_label_delete(c, l->repo, name.buf, &scratch);
	if (rc < 0 && rc != PMBOT_ENOTFOUND) {
		pmbot_buf_note(err, "%s", scratch.buf);
		goto done;
	}
	if ((rc = create(l, c, name.buf, err)) == PMBOT_GH_EEXISTS) {
		pmbot_buf_note(err, "another run took the lock %s first", name.buf);
		snprintf(run, sizeof(run), "%s", "");
		rc = PMBOT_LOCK_EBUSY;
	}
done:
	if (rc == PMBOT_LOCK_EBUSY && holder && !(*holder = strdup(run)))
		rc = PMBOT_ERROR;
	free(desc);
	pmbot_buf_free(&scratch);
	pmbot_buf_free(&marker);
	pmbot_buf_free(&name);
	return rc;
}

int pmbot_lock_release(const pmbot_lock *l, pmbot_github_client *c, pmbot_buf *err)
{
	pmbot_buf name = PMBOT_BUF_INIT;
	int rc;

	if ((rc = lock_name(&name, l, err)) == 0) {
		rc = pmbot_gh_label_delete(c, l->repo, name.buf, err);
		if (rc == PMBOT_ENOTFOUND)
			rc = 0;
	}
	pmbot_buf_free(&name);
	return rc;
}
