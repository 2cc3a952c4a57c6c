#ifndef PMBOT_TEST_TMPDIR_H
#define PMBOT_TEST_TMPDIR_H

/*
 * Delete `path` and everything below it (like rm -rf; symlinks are removed,
 * never followed). Failures are ignored: it only cleans up after a test.
 */
void test_remove_tree(const char *path);

#endif
