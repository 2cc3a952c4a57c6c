#ifndef PMBOT_GLOB_H
#define PMBOT_GLOB_H

#include <stddef.h>

/*
 * Path globs, as used for report paths in `.github/pm-bot.yml` (docs/git.md
 * is the user-facing description). A pattern is matched against a whole
 * repository-relative path with '/' separators ("plans/q3/a.md"); there is
 * no leading "/" and no implicit "match the base name anywhere" rule.
 *
 * The pattern is split into segments at every '/'; each segment matches one
 * path segment, except a segment that is exactly "**":
 *   *      any run of characters (possibly empty) inside one segment
 *   ?      exactly one character (a UTF-8 character, not a byte)
 *   [abc] [a-z] [!a] [^a]   one character of / not of a class; "]" first in
 *          the class and "-" first or last are literal; "\" escapes in it
 *   \c     the character c literally
 *   **     as a whole segment: zero or more directories, so the pattern
 *          "plans/" "**" "/b.md" (one string; split here only because C
 *          comments cannot hold it) matches plans/b.md and plans/x/y/b.md;
 *          as the last segment: everything below (one or more segments);
 *          inside a segment ("a**b") it is the same as "*"
 * Nothing but a literal '/' in the pattern ever matches a '/' in the path.
 * Leading dots are ordinary characters: "*" matches ".hidden".
 *
 * Matching never allocates and takes at most
 * O(pattern length x path length) steps: there is no exponential
 * backtracking whatever the pattern.
 */

/*
 * Does `path` match `pattern`? Returns 1 for a match, 0 otherwise. An
 * invalid pattern (see pmbot_glob_check) or an empty path matches nothing.
 * Both strings are borrowed.
 */
int pmbot_glob_match(const char *pattern, const char *path);

/*
 * Could some path strictly below the directory `dir` (no trailing '/';
 * "" is the root) match `pattern`? Returns 1 when it might, 0 when no path
 * under `dir` can. Conservative: it may say 1 for a directory that holds no
 * match, never 0 for one that does. Lets a tree walk skip whole subtrees.
 */
int pmbot_glob_may_match_under(const char *pattern, const char *dir);

/*
 * Check that `pattern` is well formed: not empty, no empty segment (a
 * leading or trailing '/', or "//"), every '[' closed within its segment,
 * no '\' at the end of a segment. Returns 0 when valid; PMBOT_EINVALID
 * otherwise, with the byte offset of the problem in `*bad_offset` and a
 * static English reason in `*reason` (either pointer may be NULL).
 */
int pmbot_glob_check(const char *pattern, size_t *bad_offset, const char **reason);

#endif
