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
 * The soname libgit2 was built with, which is its ABI ("1.5", ... "1.9"):
 * git.c opens it when a repository is first opened instead of linking it,
 * so that commands reading only files (`validate FILE`) do not map and
 * relocate it with its TLS, SSH and Kerberos libraries, about 2 ms a start.
 */
#define PMBOT_LIBGIT2_SONAME "libgit2.so." LIBGIT2_SOVERSION

/* Every libgit2 function pm-bot calls, without its git_ prefix. */
#define PMBOT_LIBGIT2_FUNCS(X)                                                           \
	X(blob_free) X(blob_lookup) X(blob_rawcontent) X(blob_rawsize) X(buf_dispose)    \
	X(commit_free) X(commit_id) X(commit_tree) X(config_free)                        \
	X(config_get_string_buf) X(diff_find_options_init) X(diff_find_similar)          \
	X(diff_free) X(diff_get_delta) X(diff_num_deltas) X(diff_options_init)           \
	X(diff_print) X(diff_tree_to_tree) X(error_clear) X(error_last)                  \
	X(libgit2_init) X(libgit2_opts) X(libgit2_shutdown) X(libgit2_version)           \
	X(merge_base) X(object_free) X(object_peel) X(object_type2string) X(odb_free)    \
	X(odb_read_header) X(oid_fromstrn) X(oid_tostr) X(remote_lookup)                 \
	X(repository_config_snapshot) X(repository_free) X(repository_head_unborn)       \
	X(repository_odb) X(repository_open_ext) X(revparse_single)                      \
	X(tree_entry_bypath) X(tree_entry_filemode) X(tree_entry_free) X(tree_entry_id)  \
	X(tree_entry_name) X(tree_free) X(tree_walk)

/* The same functions as pointers, typed from libgit2's own declarations. */
struct pmbot_libgit2 {
#define PMBOT_LIBGIT2_PTR(f) __typeof__(git_##f) *f;
	PMBOT_LIBGIT2_FUNCS(PMBOT_LIBGIT2_PTR)
#undef PMBOT_LIBGIT2_PTR
};

#endif
