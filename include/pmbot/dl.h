#ifndef PMBOT_DL_H
#define PMBOT_DL_H

#include <stddef.h>
#include <stdint.h>

#include "pmbot/buf.h"

/*
 * Shared libraries opened when first needed instead of linked: mapping and
 * relocating a library and its dependencies costs every process that
 * starts, whether or not it calls them (libcurl with its TLS, Kerberos and
 * LDAP about 9 ms; libgit2 with its own about 2 ms, a tenth of a
 * `validate`). Each user keeps its functions in a struct of pointers
 * filled by pmbot_dl_load() and says its soname in an ELF note
 * (PMBOT_DL_NOTE) where package tools look for a dependency the dynamic
 * section no longer shows.
 */

/* A function to look up: its name in the library, its place in the table. */
struct pmbot_dl_sym {
	const char *name;
	size_t offset;
};

/*
 * One library opened on demand: what to open, what to look up and where
 * to put it, and how the one attempt went. Define it static with
 * PMBOT_DL_LIB and load it before each use with pmbot_dl_load().
 */
struct pmbot_dl_lib {
	const char *soname;             /* what dlopen opens: "libcurl.so.4" */
	const char *library;            /* its name in messages: "libcurl" */
	const struct pmbot_dl_sym *syms;
	size_t nsyms;
	void *table;                    /* the struct of function pointers */
	int state;                      /* 0: not tried; 1: loaded; -1: failed */
	char why[256];                  /* when it failed, why */
};

#define PMBOT_DL_LIB(soname, library, syms, table) \
	{ (soname), (library), (syms), sizeof(syms) / sizeof((syms)[0]), &(table), 0, "" }

/*
 * Open `lib` the first time and fill its table: every function of `syms`
 * at its offset; later calls answer as the first did. The library stays
 * loaded for the life of the process (a TLS library's exit handlers must
 * not outlive their code). 0, or PMBOT_ERROR with "cannot load LIBRARY:
 * why" noted in `err` (may be NULL; the caller owns it): the loader's
 * message, or the function the library lacks. After a failure the table
 * is not to be used. Not thread-safe; pm-bot runs one thread.
 */
int pmbot_dl_load(struct pmbot_dl_lib *lib, pmbot_buf *err);

/*
 * The FDO note for libraries opened this way
 * (https://systemd.io/ELF_DLOPEN_METADATA/), one per library: `id` names
 * the object, `json` is the note's text, e.g.
 * "[{\"feature\":\"http\",\"description\":\"...\",\"priority\":\"required\",
 * \"soname\":[\"libcurl.so.4\"]}]".
 */
#define PMBOT_DL_NOTE(id, json)                                                          \
	__attribute__((used, section(".note.dlopen"))) _Alignas(4) static const struct { \
		struct {                                                                 \
			uint32_t namesz, descsz, type;                                   \
		} head;                                                                  \
		char name[sizeof("FDO")];                                                \
		_Alignas(4) char desc[sizeof(json)];                                     \
	} id = {                                                                         \
		{ sizeof("FDO"), sizeof(json), UINT32_C(0x407c0c0a) },                   \
		"FDO",                                                                   \
		json,                                                                    \
	}

#endif
