#include "tmpdir.h"

#include <dirent.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmbot/buf.h"
#include "pmbot/banned.h"

void test_remove_tree(const char *path)
{
	pmbot_buf child = PMBOT_BUF_INIT;
	struct dirent *de;
	struct stat sb;
	DIR *d;

	if (lstat(path, &sb) < 0)
		return;
	if (!S_ISDIR(sb.st_mode)) {
		unlink(path);
		return;
	}
	if ((d = opendir(path))) {
		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			pmbot_buf_clear(&child);
			if (pmbot_buf_printf(&child, "%s/%s", path, de->d_name) == 0)
				test_remove_tree(child.buf);
		}
		closedir(d);
	}
	pmbot_buf_free(&child);
	rmdir(path);
}
