#include "pmbot/dl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "pmbot/common.h"
#include "pmbot/banned.h"

_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "dlsym's answer holds a function");

static int dl_open(struct pmbot_dl_lib *lib)
{
	void *h, *f;
	size_t i;

	if (!(h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE))) {
		const char *msg = dlerror();

		snprintf(lib->why, sizeof(lib->why), "%s", msg ? msg : lib->soname);
		return PMBOT_ERROR;
	}
	for (i = 0; i < lib->nsyms; i++) {
		if (!(f = dlsym(h, lib->syms[i].name))) {
			snprintf(lib->why, sizeof(lib->why), "%s has no %s: not the %s pm-bot was built for",
				 lib->soname, lib->syms[i].name, lib->library);
			return PMBOT_ERROR;
		}
		memcpy((char *)lib->table + lib->syms[i].offset, &f, sizeof(f));
	}
	return 0;
}

int pmbot_dl_load(struct pmbot_dl_lib *lib, pmbot_buf *err)
{
	if (lib->state == 0)
		lib->state = dl_open(lib) == 0 ? 1 : -1;
	if (lib->state > 0)
		return 0;
	pmbot_buf_note(err, "cannot load %s: %s", lib->library, lib->why);
	return PMBOT_ERROR;
}
