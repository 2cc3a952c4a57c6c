#include "github_int.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "pmbot/common.h"
#include "pmbot/diag.h"
#include "pmbot/fs.h"
#include "pmbot/json.h"
#include "pmbot/banned.h"

#define SPENT_VERSION 1
/* A record of the largest budget is about 1.5 MB; anything bigger is not ours. */
#define SPENT_FILE_MAX ((size_t)4 << 20)

void pmbot_github_spent_free(pmbot_github_spent *s)
{
	free(s->t);
	memset(s, 0, sizeof(*s));
}

int pmbot_github_spent_add(pmbot_github_spent *s, long long t)
{
	if (s->n == s->alloc) {
		size_t alloc = s->alloc ? s->alloc * 2 : 64;
		long long *p = realloc(s->t, alloc * sizeof(*p));

		if (!p)
			return -1;
		s->t = p;
		s->alloc = alloc;
	}
	if (s->n && t < s->t[s->n - 1])
		t = s->t[s->n - 1];
	s->t[s->n++] = t;
	return 0;
}

void pmbot_github_spent_prune(pmbot_github_spent *s, const pmbot_github_budget *b, long long now)
{
	long long longest = 0;
	size_t i, most = 0, drop = 0;

	for (i = 0; i < b->n; i++) {
		if ((long long)b->w[i].seconds * 1000 > longest)
			longest = (long long)b->w[i].seconds * 1000;
		if ((size_t)b->w[i].count > most)
			most = (size_t)b->w[i].count;
	}
	/* Only the last `count` writes of a window can hold it full. */
	if (s->n > most)
		drop = s->n - most;
	while (drop < s->n && s->t[drop] <= now - longest)
		drop++;
	if (drop) {
		memmove(s->t, s->t + drop, (s->n - drop) * sizeof(*s->t));
		s->n -= drop;
	}
}

static int spent_path(pmbot_buf *out, const char *dir)
{
	return pmbot_buf_printf(out, "%s/" PMBOT_GITHUB_BUDGET_FILE, dir);
}

int pmbot_github_spent_load(pmbot_github_spent *s, const char *dir, const char *api_url,
	long long now, pmbot_buf *note)
{
	pmbot_buf path = PMBOT_BUF_INIT, file = PMBOT_BUF_INIT;
	json_t *doc = NULL, *v, *writes;
	const char *why = NULL;
	long long horizon = now - PMBOT_GITHUB_BUDGET_MAX_SECONDS * 1000LL;
	size_t i, from;
	int err = PMBOT_ERROR, clamped = 0;

	pmbot_buf_init(&file, SPENT_FILE_MAX);
	if (spent_path(&path, dir) < 0)
		goto done;
	if (pmbot_fs_read(&file, path.buf) < 0) {
		if (errno == ENOMEM)
			goto done;
		/* No record yet (or no directory for one): nothing to say. */
		if (errno != ENOENT && errno != ENOTDIR)
			why = errno == EFBIG ? "it is too big" : strerror(errno);
		err = 0;
		goto done;
	}
	err = 0;
	doc = json_loadb(file.buf, file.len, JSON_REJECT_DUPLICATES, NULL);
	v = json_object_get(doc, "version");
	writes = json_object_get(doc, "writes");
	if (!json_is_object(doc) || !json_is_integer(v) || json_integer_value(v) != SPENT_VERSION ||
	    !json_is_array(writes)) {
		why = "it is not a write budget record of this version";
		goto done;
	}
	v = json_object_get(doc, "api_url");
	if (!json_is_string(v) || strcmp(json_string_value(v), api_url)) {
		why = "it is for another API URL";
		goto done;
	}
	json_array_foreach(writes, i, v) {
		if (!json_is_integer(v) || json_integer_value(v) < 0) {
			why = "its writes are not times in milliseconds";
			s->n = 0;
			goto done;
		}
	}
	/* Only the newest writes can matter; a huge forged list costs nothing more. */
	from = json_array_size(writes) > (size_t)PMBOT_GITHUB_BUDGET_MAX_COUNT ?
		json_array_size(writes) - (size_t)PMBOT_GITHUB_BUDGET_MAX_COUNT : 0;
	for (i = from; i < json_array_size(writes); i++) {
		long long t = (long long)json_integer_value(json_array_get(writes, i));

		if (t <= horizon)
			continue;
		clamped |= t > now;
		if (pmbot_github_spent_add(s, t > now ? now : t) < 0) {
			err = PMBOT_ERROR;
			goto done;
		}
	}
done:
	if (why && note) {
		pmbot_buf show = PMBOT_BUF_INIT;

		pmbot_buf_printf(note, "ignoring the write budget record %s: %s",
			pmbot_diag_show(&show, path.buf, 300), why);
		pmbot_buf_free(&show);
	}
	json_decref(doc);
	pmbot_buf_free(&path);
	pmbot_buf_free(&file);
	return err < 0 ? err : clamped;
}

int pmbot_github_spent_store(const pmbot_github_spent *s, const char *dir, const char *api_url)
{
	pmbot_buf path = PMBOT_BUF_INIT, text = PMBOT_BUF_INIT;
	json_t *doc = json_pack("{s:s, s:i, s:[]}", "api_url", api_url, "version", SPENT_VERSION,
		"writes");
	json_t *writes = json_object_get(doc, "writes");
	size_t i;
	int err = -1;

	errno = ENOMEM;
	if (!doc)
		goto done;
	for (i = 0; i < s->n; i++)
		if (json_array_append_new(writes, json_integer((json_int_t)s->t[i])) < 0)
			goto done;
	if (pmbot_json_canonical(&text, doc) < 0 || pmbot_buf_putc(&text, '\n') < 0 ||
	    spent_path(&path, dir) < 0)
		goto done;
	if (pmbot_fs_mkdirs(dir, 0700) < 0)
		goto done;
	err = pmbot_fs_write_atomic(path.buf, text.buf, text.len);
done:
	json_decref(doc);
	pmbot_buf_free(&path);
	pmbot_buf_free(&text);
	return err;
}
