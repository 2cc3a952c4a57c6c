#include "pmbot/source.h"

#include <stdlib.h>
#include <string.h>

#include "pmbot/array.h"
#include "pmbot/banned.h"

int pmbot_source_select_reports(pmbot_repo_files *out, pmbot_repo *repo,
	const pmbot_config *cfg, const char *rev, const char *base,
	const char *const *paths, size_t n_paths, pmbot_buf *err)
{
	pmbot_repo_changes ch = PMBOT_REPO_CHANGES_INIT;
	const char *const *globs = (const char *const *)cfg->reports.items;
	size_t n = cfg->reports.count, i;
	int r;

	memset(out, 0, sizeof(*out));
	if (n_paths) {
		/* Explicit paths: each one is its own exact glob. */
		globs = paths;
		n = n_paths;
	}
	if (!base)
		return pmbot_repo_list(out, repo, rev, globs, n, err);
	if ((r = pmbot_repo_changed(&ch, repo, base, rev, globs, n, err)) < 0)
		goto done;
	for (i = 0; i < ch.count; i++) {
		pmbot_repo_file *f;

		/* A deleted report has nothing left to validate. */
		if (ch.items[i].kind == PMBOT_CHANGE_DELETED)
			continue;
		if (!(f = pmbot_array_grow(out->items, &out->alloc, out->count + 1, sizeof(*f)))) {
			r = PMBOT_ERROR;
			goto done;
		}
		out->items = f;
		f = &out->items[out->count];
		if (!(f->path = strdup(ch.items[i].new_path))) {
			r = PMBOT_ERROR;
			goto done;
		}
		memcpy(f->blob_id, ch.items[i].new_blob_id, sizeof(f->blob_id));
		f->executable = 0;
		out->count++;
	}
	r = 0;
done:
	pmbot_repo_changes_free(&ch);
	return r;
}
