#ifndef PMBOT_FS_H
#define PMBOT_FS_H

#include <stddef.h>

#include "pmbot/buf.h"
#include "pmbot/common.h"

/*
 * Thin POSIX wrappers. Unlike the rest of the library they report through
 * errno, not a `pmbot_buf *err`: every caller branches on the value
 * (ENOENT: no file yet, EFBIG: over the cap) and words the message for its
 * own context (docs/architecture.md, "Messages").
 */

/*
 * Write `len` bytes to `path` so that a reader sees either the old file or
 * the whole new one, never a part: a temporary file in the same directory,
 * fsync, rename over `path`, fsync of the directory. Mode 0644 less umask.
 * Returns 0, or -1 with errno set (the temporary file is removed).
 */
PMBOT_WARN_UNUSED int pmbot_fs_write_atomic(const char *path, const void *data, size_t len);

/*
 * Read the whole file at `path` ("-" is standard input) into `out`
 * (appended). Fails with errno EFBIG when it would pass out->max.
 * Returns 0 or -1 with errno set.
 */
PMBOT_WARN_UNUSED int pmbot_fs_read(pmbot_buf *out, const char *path);

/* Create `path` and its missing parents (like mkdir -p). 0 or -1 with errno. */
int pmbot_fs_mkdirs(const char *path, unsigned mode);

#endif
