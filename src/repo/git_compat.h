#ifndef PMBOT_GIT_COMPAT_H
#define PMBOT_GIT_COMPAT_H

/*
 * libgit2 as pm-bot uses it, from 1.5 to 1.9: the one place that knows
 * where the versions differ.
 */

#include <git2.h>

#if !defined(LIBGIT2_VER_MAJOR) || LIBGIT2_VER_MAJOR < 1 || \
	(LIBGIT2_VER_MAJOR == 1 && LIBGIT2_VER_MINOR < 5)
#error "pm-bot needs libgit2 1.5 or later: install a newer libgit2-dev (pkg-config --modversion libgit2 shows the one found)"
#endif

/* 1.8 moved git_error_clear() out of git2.h into the "sys" headers. */
#if LIBGIT2_VER_MAJOR > 1 || LIBGIT2_VER_MINOR >= 8
#include <git2/sys/errors.h>
#endif

/*
 * libgit2's message for the last failure, or NULL when there is none:
 * before 1.8 git_error_last() answers NULL then, from 1.8 on an error of
 * class GIT_ERROR_NONE saying "no error".
 */
static inline const char *pmbot_git_error_message(void)
{
	const git_error *ge = git_error_last();

	if (!ge || ge->klass == GIT_ERROR_NONE || !ge->message || !*ge->message)
		return NULL;
	return ge->message;
}

#endif
