#include "pmbot/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pmbot/banned.h"

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int fsync_parent(const char *path)
{
	pmbot_buf dir = PMBOT_BUF_INIT;
	const char *slash = strrchr(path, '/');
	int fd, err = -1;

	if (!slash)
		err = pmbot_buf_putc(&dir, '.');
	else if (slash == path)
		err = pmbot_buf_putc(&dir, '/');
	else
		err = pmbot_buf_put(&dir, path, (size_t)(slash - path));
	if (err < 0) {
		errno = ENOMEM;
		goto done;
	}
	err = -1;
	if ((fd = open(dir.buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		goto done;
	err = fsync(fd);
	close(fd);
done:
	pmbot_buf_free(&dir);
	return err;
}

int pmbot_fs_write_atomic(const char *path, const void *data, size_t len)
{
	pmbot_buf tmp = PMBOT_BUF_INIT;
	int fd = -1, err = -1, saved;
	mode_t mask;

	if (pmbot_buf_printf(&tmp, "%s.tmp.XXXXXX", path) < 0) {
		errno = ENOMEM;
		goto done;
	}
	/* Until mkstemp succeeds the name is not ours to unlink. */
	if ((fd = mkstemp(tmp.buf)) < 0) {
		pmbot_buf_clear(&tmp);
		goto done;
	}
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0644 & ~mask) < 0 || write_all(fd, data, len) < 0 ||
	    fsync(fd) < 0)
		goto done;
	if (close(fd) < 0) {
		fd = -1;
		goto done;
	}
	fd = -1;
	if (rename(tmp.buf, path) < 0)
		goto done;
	err = fsync_parent(path);
	pmbot_buf_clear(&tmp);
done:
	saved = errno;
	if (fd >= 0)
		close(fd);
	if (err < 0 && tmp.len)
		unlink(tmp.buf);
	pmbot_buf_free(&tmp);
	errno = saved;
	return err;
}

int pmbot_fs_read(pmbot_buf *out, const char *path)
{
	int fd, err = -1, saved;
	int is_stdin = !strcmp(path, "-");

	struct stat st;

	fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/*
	 * Size a regular file's buffer once (and one byte more for the final
	 * 0-byte read) instead of doubling towards it: reports can be large.
	 */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (unsigned long long)st.st_size < out->max - out->len &&
	    pmbot_buf_grow(out, (size_t)st.st_size + 1) < 0) {
		errno = ENOMEM;
		goto done;
	}
	for (;;) {
		size_t room = out->max - out->len;
		ssize_t n;

		if (room > 65536)
			room = 65536;
		if (out->cap - out->len > 1 && out->cap - out->len - 1 < room)
			room = out->cap - out->len - 1;
		if (!room) {
			/* A file that fits exactly still ends with a 0-byte read. */
			char probe;

			while ((n = read(fd, &probe, 1)) < 0 && errno == EINTR)
				;
			if (n == 0)
				break;
			if (n > 0)
				errno = EFBIG;
			goto done;
		}
		if (pmbot_buf_grow(out, room) < 0) {
			errno = ENOMEM;
			goto done;
		}
		n = read(fd, out->buf + out->len, room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto done;
		if (n == 0)
			break;
		out->len += (size_t)n;
		out->buf[out->len] = '\0';
	}
	err = 0;
done:
	saved = errno;
	if (!is_stdin)
		close(fd);
	errno = saved;
	return err;
}

int pmbot_fs_mkdirs(const char *path, unsigned mode)
{
	pmbot_buf p = PMBOT_BUF_INIT;
	size_t i;
	int err = -1;

	if (pmbot_buf_puts(&p, path) < 0) {
		errno = ENOMEM;
		goto done;
	}
	for (i = 1; i <= p.len; i++) {
		if (p.buf[i] != '/' && p.buf[i] != '\0')
			continue;
		p.buf[i] = '\0';
		if (mkdir(p.buf, (mode_t)mode) < 0) {
			struct stat st;

			if (errno != EEXIST)
				goto done;
			/* Like mkdir -p: an existing non-directory is a failure. */
			if (stat(p.buf, &st) < 0)
				goto done;
			if (!S_ISDIR(st.st_mode)) {
				errno = ENOTDIR;
				goto done;
			}
		}
		if (i < p.len)
			p.buf[i] = '/';
	}
	err = 0;
done:
	pmbot_buf_free(&p);
	return err;
}
