#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers/tmpdir.h"

#include "pmbot/buf.h"
#include "pmbot/fs.h"
#include "pmbot/banned.h"

/* Each test gets its own scratch directory, removed afterwards. */
typedef struct {
	char dir[256];
} scratch;

static int setup(void **state)
{
	scratch *s = calloc(1, sizeof(*s));
	const char *tmp = getenv("TMPDIR");

	if (!s)
		return -1;
	snprintf(s->dir, sizeof(s->dir), "%s/pmbot-test-fs-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(s->dir)) {
		free(s);
		return -1;
	}
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	scratch *s = *state;

	test_remove_tree(s->dir);
	free(s);
	return 0;
}

static const char *path_in(char *out, size_t size, void **state, const char *name)
{
	scratch *s = *state;

	snprintf(out, size, "%s/%s", s->dir, name);
	return out;
}

/* Names in `dir`, sorted and joined with ',' (so leftovers are visible). */
static void list_dir(pmbot_buf *out, const char *dir)
{
	struct dirent **names;
	int n, i;

	pmbot_buf_clear(out);
	n = scandir(dir, &names, NULL, alphasort);
	assert_true(n >= 0);
	for (i = 0; i < n; i++) {
		if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, "..")) {
			if (out->len)
				pmbot_buf_putc(out, ',');
			pmbot_buf_puts(out, names[i]->d_name);
		}
		free(names[i]);
	}
	free(names);
}

static void write_plain(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void assert_file(const char *path, const void *want, size_t len)
{
	pmbot_buf got = PMBOT_BUF_INIT;

	assert_int_equal(pmbot_fs_read(&got, path), 0);
	assert_int_equal(got.len, len);
	assert_memory_equal(got.buf, want, len);
	pmbot_buf_free(&got);
}

static void test_fs__write_atomic_creates_the_file(void **state)
{
	char path[512];
	pmbot_buf names = PMBOT_BUF_INIT;
	struct stat st;
	mode_t old = umask(022);

	path_in(path, sizeof(path), state, "out.json");
	assert_int_equal(pmbot_fs_write_atomic(path, "{\"a\":1}\n", 8), 0);
	umask(old);
	assert_file(path, "{\"a\":1}\n", 8);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	list_dir(&names, ((scratch *)*state)->dir);
	assert_string_equal(names.buf, "out.json");
	pmbot_buf_free(&names);
}

static void test_fs__write_atomic_honours_the_umask(void **state)
{
	char path[512];
	struct stat st;
	mode_t old = umask(077);

	path_in(path, sizeof(path), state, "private");
	assert_int_equal(pmbot_fs_write_atomic(path, "x", 1), 0);
	umask(old);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
}

static void test_fs__write_atomic_replaces_and_leaves_no_temporary_files(void **state)
{
	char path[512];
	pmbot_buf names = PMBOT_BUF_INIT;
	int i;

	path_in(path, sizeof(path), state, "state.json");
	write_plain(path, "a much longer old content that must disappear", 46);
	for (i = 0; i < 5; i++) {
		char data[32];
		int n = snprintf(data, sizeof(data), "version %d", i);

		assert_int_equal(pmbot_fs_write_atomic(path, data, (size_t)n), 0);
		assert_file(path, data, (size_t)n);
	}
	assert_int_equal(pmbot_fs_write_atomic(path, "", 0), 0);
	assert_file(path, "", 0);
	list_dir(&names, ((scratch *)*state)->dir);
	assert_string_equal(names.buf, "state.json");
	pmbot_buf_free(&names);
}

static void test_fs__write_atomic_keeps_binary_content(void **state)
{
	char path[512];
	static char data[300000];
	size_t i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (char)(i * 7 + (i >> 8));
	path_in(path, sizeof(path), state, "blob");
	assert_int_equal(pmbot_fs_write_atomic(path, data, sizeof(data)), 0);
	assert_file(path, data, sizeof(data));
}

static void test_fs__write_atomic_in_a_missing_directory_fails_cleanly(void **state)
{
	char path[512];
	pmbot_buf names = PMBOT_BUF_INIT;

	path_in(path, sizeof(path), state, "missing/out.json");
	errno = 0;
	assert_int_equal(pmbot_fs_write_atomic(path, "data", 4), -1);
	assert_int_equal(errno, ENOENT);
	list_dir(&names, ((scratch *)*state)->dir);
	assert_string_equal(names.buf, "");
	pmbot_buf_free(&names);
}

static void test_fs__write_atomic_over_a_directory_fails_and_cleans_up(void **state)
{
	char path[512];
	pmbot_buf names = PMBOT_BUF_INIT;

	path_in(path, sizeof(path), state, "taken");
	assert_int_equal(mkdir(path, 0755), 0);
	errno = 0;
	assert_int_equal(pmbot_fs_write_atomic(path, "data", 4), -1);
	assert_int_not_equal(errno, 0);
	list_dir(&names, ((scratch *)*state)->dir);
	assert_string_equal(names.buf, "taken");
	pmbot_buf_free(&names);
}

static void test_fs__read_appends_to_the_buffer(void **state)
{
	char path[512];
	pmbot_buf b = PMBOT_BUF_INIT;

	path_in(path, sizeof(path), state, "in.md");
	write_plain(path, "line 1\nline\0 2\n", 15);
	assert_int_equal(pmbot_buf_puts(&b, ">>"), 0);
	assert_int_equal(pmbot_fs_read(&b, path), 0);
	assert_int_equal(b.len, 17);
	assert_memory_equal(b.buf, ">>line 1\nline\0 2\n", 18);
	pmbot_buf_free(&b);
}

static void test_fs__read_of_an_empty_file_succeeds(void **state)
{
	char path[512];
	pmbot_buf b = PMBOT_BUF_INIT;

	path_in(path, sizeof(path), state, "empty");
	write_plain(path, "", 0);
	assert_int_equal(pmbot_fs_read(&b, path), 0);
	assert_int_equal(b.len, 0);
	assert_string_equal(b.buf, "");
	pmbot_buf_free(&b);
}

static void test_fs__read_of_a_large_file_takes_every_chunk(void **state)
{
	char path[512];
	pmbot_buf b = PMBOT_BUF_INIT;
	static char data[65536 * 3 + 17];
	size_t i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (char)('a' + i % 26);
	path_in(path, sizeof(path), state, "large");
	write_plain(path, data, sizeof(data));
	assert_int_equal(pmbot_fs_read(&b, path), 0);
	assert_int_equal(b.len, sizeof(data));
	assert_memory_equal(b.buf, data, sizeof(data));
	assert_int_equal(b.buf[b.len], '\0');
	/* A regular file is read into one right-sized allocation, not a doubled one. */
	assert_true(b.cap <= sizeof(data) + 2);
	pmbot_buf_free(&b);
}

static void test_fs__read_past_the_cap_fails_with_efbig(void **state)
{
	char path[512];
	pmbot_buf b;

	path_in(path, sizeof(path), state, "eleven");
	write_plain(path, "0123456789A", 11);
	pmbot_buf_init(&b, 10);
	errno = 0;
	assert_int_equal(pmbot_fs_read(&b, path), -1);
	assert_int_equal(errno, EFBIG);
	assert_true(b.len <= 10);
	pmbot_buf_free(&b);

	/* The cap counts what the buffer already holds. */
	path_in(path, sizeof(path), state, "seven");
	write_plain(path, "0123456", 7);
	pmbot_buf_init(&b, 10);
	assert_int_equal(pmbot_buf_puts(&b, "abcd"), 0);
	errno = 0;
	assert_int_equal(pmbot_fs_read(&b, path), -1);
	assert_int_equal(errno, EFBIG);
	pmbot_buf_free(&b);
}

static void test_fs__read_of_a_file_exactly_at_the_cap_succeeds(void **state)
{
	char path[512];
	pmbot_buf b;

	path_in(path, sizeof(path), state, "ten");
	write_plain(path, "0123456789", 10);
	pmbot_buf_init(&b, 10);
	assert_int_equal(pmbot_fs_read(&b, path), 0);
	assert_int_equal(b.len, 10);
	assert_string_equal(b.buf, "0123456789");
	pmbot_buf_free(&b);

	path_in(path, sizeof(path), state, "six");
	write_plain(path, "012345", 6);
	pmbot_buf_init(&b, 10);
	assert_int_equal(pmbot_buf_puts(&b, "abcd"), 0);
	assert_int_equal(pmbot_fs_read(&b, path), 0);
	assert_string_equal(b.buf, "abcd012345");
	pmbot_buf_free(&b);

	/* A chunk-sized cap meets the 0-byte probe read at the boundary. */
	path_in(path, sizeof(path), state, "chunk");
	{
		static char data[65536];

		memset(data, 'c', sizeof(data));
		write_plain(path, data, sizeof(data));
	}
	pmbot_buf_init(&b, 65536);
	assert_int_equal(pmbot_fs_read(&b, path), 0);
	assert_int_equal(b.len, 65536);
	pmbot_buf_free(&b);
}

static void test_fs__read_of_a_missing_file_fails_with_enoent(void **state)
{
	char path[512];
	pmbot_buf b = PMBOT_BUF_INIT;

	path_in(path, sizeof(path), state, "nope");
	errno = 0;
	assert_int_equal(pmbot_fs_read(&b, path), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(b.len, 0);
	pmbot_buf_free(&b);
}

static void test_fs__read_of_a_directory_fails(void **state)
{
	pmbot_buf b = PMBOT_BUF_INIT;

	errno = 0;
	assert_int_equal(pmbot_fs_read(&b, ((scratch *)*state)->dir), -1);
	assert_int_equal(errno, EISDIR);
	pmbot_buf_free(&b);
}

static void test_fs__read_of_dash_reads_standard_input(void **state)
{
	char path[512];
	pmbot_buf b = PMBOT_BUF_INIT;
	int fd, saved;

	path_in(path, sizeof(path), state, "stdin.md");
	write_plain(path, "from stdin\n", 11);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	saved = dup(STDIN_FILENO);
	assert_true(saved >= 0);
	assert_true(dup2(fd, STDIN_FILENO) >= 0);
	close(fd);
	assert_int_equal(pmbot_fs_read(&b, "-"), 0);
	/* Standard input stays open: the caller owns it. */
	assert_int_not_equal(fcntl(STDIN_FILENO, F_GETFD), -1);
	assert_true(dup2(saved, STDIN_FILENO) >= 0);
	close(saved);
	assert_string_equal(b.buf, "from stdin\n");
	pmbot_buf_free(&b);
}

static void test_fs__mkdirs_creates_every_missing_parent(void **state)
{
	char path[512], file[600];
	struct stat st;

	path_in(path, sizeof(path), state, "a/b/c/d");
	assert_int_equal(pmbot_fs_mkdirs(path, 0755), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	/* Running it again is harmless, and new files can go inside. */
	assert_int_equal(pmbot_fs_mkdirs(path, 0755), 0);
	snprintf(file, sizeof(file), "%s/x", path);
	assert_int_equal(pmbot_fs_write_atomic(file, "ok", 2), 0);
	assert_file(file, "ok", 2);
}

static void test_fs__mkdirs_accepts_trailing_and_doubled_slashes(void **state)
{
	char path[512], check[512];
	struct stat st;

	path_in(path, sizeof(path), state, "p//q/r/");
	assert_int_equal(pmbot_fs_mkdirs(path, 0755), 0);
	path_in(check, sizeof(check), state, "p/q/r");
	assert_int_equal(stat(check, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
}

static void test_fs__mkdirs_through_a_regular_file_fails(void **state)
{
	char path[512];

	path_in(path, sizeof(path), state, "file");
	write_plain(path, "x", 1);
	path_in(path, sizeof(path), state, "file/sub");
	errno = 0;
	assert_int_equal(pmbot_fs_mkdirs(path, 0755), -1);
	assert_int_equal(errno, ENOTDIR);
}

static void test_fs__mkdirs_onto_an_existing_regular_file_fails(void **state)
{
	char path[512];

	/* mkdir -p fails here too: the path exists but is no directory. */
	path_in(path, sizeof(path), state, "plain");
	write_plain(path, "x", 1);
	errno = 0;
	assert_int_equal(pmbot_fs_mkdirs(path, 0755), -1);
	assert_int_equal(errno, ENOTDIR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fs__write_atomic_creates_the_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fs__write_atomic_honours_the_umask, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fs__write_atomic_replaces_and_leaves_no_temporary_files,
			setup, teardown),
		cmocka_unit_test_setup_teardown(test_fs__write_atomic_keeps_binary_content, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fs__write_atomic_in_a_missing_directory_fails_cleanly,
			setup, teardown),
		cmocka_unit_test_setup_teardown(test_fs__write_atomic_over_a_directory_fails_and_cleans_up,
			setup, teardown),
		cmocka_unit_test_setup_teardown(test_fs__read_appends_to_the_buffer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fs__read_of_an_empty_file_succeeds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fs__read_of_a_large_file_takes_every_chunk,
			setup, teardown),
		cmocka_unit_test_setup_teardown(test_fs__read_past_the_cap_fails_with_efbig, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fs__read_of_a_file_exactly_at_the_cap_succeeds,
			setup, teardown),
		cmocka_unit_test_setup_teardown(test_fs__read_of_a_missing_file_fails_with_enoent,
			setup, teardown),
		cmocka_unit_test_setup_teardown(test_fs__read_of_a_directory_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fs__read_of_dash_reads_standard_input, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fs__mkdirs_creates_every_missing_parent,
			setup, teardown),
		cmocka_unit_test_setup_teardown(test_fs__mkdirs_accepts_trailing_and_doubled_slashes,
			setup, teardown),
		cmocka_unit_test_setup_teardown(test_fs__mkdirs_through_a_regular_file_fails,
			setup, teardown),
		cmocka_unit_test_setup_teardown(test_fs__mkdirs_onto_an_existing_regular_file_fails,
			setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
