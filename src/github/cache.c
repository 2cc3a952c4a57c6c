#include "github_int.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmbot/common.h"
#include "pmbot/fs.h"
#include "pmbot/json.h"
#include "pmbot/banned.h"

#define CACHE_VERSION 1

/* Room for the header line above the body's own cap. */
#define CACHE_HEADER_MAX ((size_t)64 << 10)

void pmbot_github_cache_entry_free(pmbot_github_cache_entry *e)
{
	free(e->etag);
	free(e->next_url);
	e->etag = NULL;
	e->next_url = NULL;
	pmbot_buf_free(&e->body);
}

int pmbot_github_cache_key(char out[PMBOT_SHA256_HEX_SIZE], const char *url,
	const char *token_id)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	int err = -1;

	if (pmbot_buf_printf(&b, "GET\n%s\n%s", url, token_id) < 0)
		goto done;
	err = pmbot_sha256_hex(out, b.buf, b.len);
done:
	pmbot_buf_free(&b);
	return err;
}

static int entry_path(pmbot_buf *out, const char *dir, const char *key)
{
	return pmbot_buf_printf(out, "%s/%s", dir, key);
}

int pmbot_github_cache_load(pmbot_github_cache_entry *e, const char *dir, const char *key,
	const char *url, size_t max)
{
	pmbot_buf path = PMBOT_BUF_INIT, file = PMBOT_BUF_INIT;
	json_t *head = NULL, *v;
	const char *nl, *etag, *next = NULL;
	size_t head_len;
	int err = PMBOT_ERROR;

	pmbot_buf_init(&file, max > (size_t)-1 - CACHE_HEADER_MAX ? 0 : max + CACHE_HEADER_MAX);
	if (entry_path(&path, dir, key) < 0)
		goto done;
	if (pmbot_fs_read(&file, path.buf) < 0) {
		err = errno == ENOMEM ? PMBOT_ERROR : PMBOT_ENOTFOUND;
		goto done;
	}
	err = PMBOT_ENOTFOUND;
	if (!(nl = memchr(file.buf, '\n', file.len)))
		goto done;
	head_len = (size_t)(nl - file.buf);
	if (!(head = json_loadb(file.buf, head_len, 0, NULL)) || !json_is_object(head))
		goto done;
	v = json_object_get(head, "version");
	if (!json_is_integer(v) || json_integer_value(v) != CACHE_VERSION)
		goto done;
	/* A key collision or a copied file must not answer for another URL. */
	v = json_object_get(head, "url");
	if (!json_is_string(v) || strcmp(json_string_value(v), url))
		goto done;
	if (!(etag = json_string_value(json_object_get(head, "etag"))) || !*etag)
		goto done;
	v = json_object_get(head, "next");
	if (json_is_string(v))
		next = json_string_value(v);
	else if (!json_is_null(v))
		goto done;
	if (file.len - head_len - 1 > max)
		goto done;
	err = PMBOT_ERROR;
	if (!(e->etag = strdup(etag)) || (next && !(e->next_url = strdup(next))))
		goto done;
	pmbot_buf_init(&e->body, max);
	if (pmbot_buf_put(&e->body, nl + 1, file.len - head_len - 1) < 0)
		goto done;
	err = 0;
done:
	if (err < 0)
		pmbot_github_cache_entry_free(e);
	json_decref(head);
	pmbot_buf_free(&path);
	pmbot_buf_free(&file);
	return err;
}

int pmbot_github_cache_store(const char *dir, const char *key, const char *url,
	const char *etag, const char *next_url, const char *body, size_t len)
{
	pmbot_buf path = PMBOT_BUF_INIT, file = PMBOT_BUF_INIT;
	json_t *head = NULL;
	int err = -1;

	pmbot_buf_init(&file, len > (size_t)-1 - CACHE_HEADER_MAX ? 0 : len + CACHE_HEADER_MAX);
	head = json_pack("{s:s, s:o, s:s, s:i}", "etag", etag,
		"next", next_url ? json_string(next_url) : json_null(), "url", url,
		"version", CACHE_VERSION);
	if (!head || entry_path(&path, dir, key) < 0 || pmbot_json_canonical(&file, head) < 0 ||
	    pmbot_buf_putc(&file, '\n') < 0 || pmbot_buf_put(&file, body, len) < 0) {
		errno = ENOMEM;
		goto done;
	}
	if (pmbot_fs_mkdirs(dir, 0700) < 0)
		goto done;
	err = pmbot_fs_write_atomic(path.buf, file.buf, file.len);
done:
	json_decref(head);
	pmbot_buf_free(&path);
	pmbot_buf_free(&file);
	return err;
}

void pmbot_github_cache_drop(const char *dir, const char *key)
{
	pmbot_buf path = PMBOT_BUF_INIT;

	if (entry_path(&path, dir, key) == 0)
		unlink(path.buf);
	pmbot_buf_free(&path);
}
