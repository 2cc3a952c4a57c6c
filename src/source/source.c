#include <stdlib.h>
#include <string.h>

#include "pmbot/source.h"
#include "pmbot/banned.h"

int pmbot_source_slug_from_url(char **out, const char *url)
{
	pmbot_buf slug = PMBOT_BUF_INIT;
	const char *p, *end, *owner_end;
	size_t len;
	int rc = PMBOT_EINVALID;

	*out = NULL;
	if ((p = strstr(url, "://"))) {
		p += 3;
		if (!(p = strchr(p, '/')))
			goto done;
		p++;
	} else if ((p = strchr(url, ':')) && strchr(url, '@') && strchr(url, '@') < p) {
		p++;
	} else {
		goto done;
	}
	len = strlen(p);
	while (len && p[len - 1] == '/')
		len--;
	if (len > 4 && !memcmp(p + len - 4, ".git", 4))
		len -= 4;
	end = p + len;
	owner_end = memchr(p, '/', len);
	if (!owner_end || owner_end == p || owner_end + 1 >= end ||
	    memchr(owner_end + 1, '/', (size_t)(end - owner_end - 1)))
		goto done;
	rc = PMBOT_ERROR;
	if (pmbot_buf_put(&slug, p, len) < 0)
		goto done;
	*out = pmbot_buf_detach(&slug, NULL);
	rc = *out ? PMBOT_OK : PMBOT_ERROR;
done:
	pmbot_buf_free(&slug);
	return rc;
}

int pmbot_source_config(pmbot_config **out, char blob_id[PMBOT_OID_HEX_SIZE],
	pmbot_repo *repo, const char *rev, const char *default_repo,
	pmbot_diag_list *diags, pmbot_buf *err)
{
	return pmbot_source_config_at(out, blob_id, repo, rev, PMBOT_CONFIG_PATH, default_repo,
		diags, err);
}

int pmbot_source_config_at(pmbot_config **out, char blob_id[PMBOT_OID_HEX_SIZE],
	pmbot_repo *repo, const char *rev, const char *path, const char *default_repo,
	pmbot_diag_list *diags, pmbot_buf *err)
{
	pmbot_buf text;
	char id[PMBOT_OID_HEX_SIZE] = "";
	size_t mark = err ? err->len : 0;
	int rc;

	*out = NULL;
	pmbot_buf_init(&text, PMBOT_CONFIG_MAX_BYTES);
	rc = pmbot_repo_read(&text, id, repo, rev, path, err);
	/* Both answers below are not failures of the read: their message goes. */
	if ((rc == PMBOT_REPO_ETOOBIG || rc == PMBOT_ENOTFOUND) && err)
		pmbot_buf_truncate(err, mark);
	if (rc == PMBOT_REPO_ETOOBIG) {
		pmbot_diag_add(diags, PMBOT_SEV_ERROR, "INPUT_TOO_LARGE", path, "", 0, 0,
			"the configuration is larger than %zu bytes", (size_t)PMBOT_CONFIG_MAX_BYTES);
		rc = PMBOT_EINVALID;
		goto done;
	}
	if (rc == PMBOT_ENOTFOUND) {
		char commit[PMBOT_OID_HEX_SIZE];

		/* A missing file means defaults; a missing revision is an error. */
		if ((rc = pmbot_repo_resolve(commit, repo, rev, err)) < 0)
			goto done;
		id[0] = '\0';
		rc = pmbot_config_default(out, default_repo);
		goto done;
	}
	if (rc < 0)
		goto done;
	rc = pmbot_config_parse(out, path, text.buf, text.len, default_repo, diags);
done:
	if (blob_id)
		memcpy(blob_id, id, sizeof(id));
	pmbot_buf_free(&text);
	return rc;
}

int pmbot_source_forms(pmbot_formset **out, pmbot_repo *repo, const char *rev,
	const pmbot_config *cfg, pmbot_diag_list *diags, pmbot_buf *err)
{
	pmbot_repo_files files = PMBOT_REPO_FILES_INIT;
	pmbot_formset *set = NULL;
	pmbot_buf glob = PMBOT_BUF_INIT, text = PMBOT_BUF_INIT;
	const char *globs[1];
	size_t i;
	int rc, invalid = 0;

	*out = NULL;
	if ((rc = pmbot_formset_new(&set, &cfg->labels)) < 0)
		goto done;
	rc = PMBOT_ERROR;
	/* Forms sit directly in the directory; '*' never crosses a '/'. */
	if (pmbot_buf_printf(&glob, "%s/*", cfg->templates) < 0)
		goto done;
	globs[0] = glob.buf;
	if ((rc = pmbot_repo_list(&files, repo, rev, globs, 1, err)) < 0)
		goto done;
	for (i = 0; i < files.count; i++) {
		if (!pmbot_form_is_form_path(files.items[i].path))
			continue;
		pmbot_buf_clear(&text);
		if ((rc = pmbot_repo_read_blob(&text, repo, files.items[i].blob_id, err)) < 0)
			goto done;
		rc = pmbot_formset_add(set, files.items[i].path, text.buf, text.len, diags);
		if (rc == PMBOT_EINVALID)
			invalid = 1;
		else if (rc < 0)
			goto done;
	}
	*out = set;
	set = NULL;
	rc = invalid ? PMBOT_EINVALID : PMBOT_OK;
done:
	pmbot_formset_free(set);
	pmbot_repo_files_free(&files);
	pmbot_buf_free(&glob);
	pmbot_buf_free(&text);
	return rc;
}

int pmbot_source_report(pmbot_workgraph **out, pmbot_repo *repo, const char *blob_id,
	const char *path, const pmbot_limits *lim, pmbot_diag_list *diags, pmbot_buf *err)
{
	pmbot_limits def;
	pmbot_buf text;
	size_t mark = err ? err->len : 0;
	int rc;

	*out = NULL;
	if (!lim) {
		pmbot_limits_default(&def);
		lim = &def;
	}
	pmbot_buf_init(&text, lim->max_bytes);
	rc = pmbot_repo_read_blob(&text, repo, blob_id, err);
	if (rc == PMBOT_REPO_ETOOBIG) {
		/* A diagnostic, not a failure: the read's message goes. */
		if (err)
			pmbot_buf_truncate(err, mark);
		pmbot_diag_add(diags, PMBOT_SEV_ERROR, "INPUT_TOO_LARGE", path, "", 0, 0,
			"the report is larger than %zu bytes", lim->max_bytes);
		rc = PMBOT_EINVALID;
	} else if (rc == 0) {
		rc = pmbot_workgraph_load_buf(out, path, &text, lim, diags);
	}
	pmbot_buf_free(&text);
	return rc;
}
