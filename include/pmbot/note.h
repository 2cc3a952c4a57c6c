#ifndef PMBOT_NOTE_H
#define PMBOT_NOTE_H

#include "pmbot/diag.h"

/*
 * What a long-running library call has to tell the person watching it
 * (`pm-bot action`'s log, `plan`'s warnings) while it goes on: src/ never
 * prints, so it hands each line to the caller's pmbot_notes. The text is
 * raw: it may quote outside text (logins, file names, GitHub's error
 * messages), so the caller escapes it (pmbot_log_show()) before printing.
 */
typedef enum {
	PMBOT_NOTE_INFO,     /* progress: "pm-bot: <msg>" on standard output */
	PMBOT_NOTE_NOTICE,   /* a workflow notice ("::notice::<msg>") */
	PMBOT_NOTE_WARNING,  /* a workflow warning ("::warning::<msg>") */
	PMBOT_NOTE_ERROR,    /* why something failed or was refused: "pm-bot: <msg>" on standard error */
	PMBOT_NOTE_RECORD    /* one line of canonical JSON (an audit event), printed as it is */
} pmbot_note_level;

typedef struct {
	/* May be NULL (nothing is told). `msg` is borrowed for the call. */
	void (*line)(void *ctx, pmbot_note_level level, const char *msg);
	/* May be NULL. Diagnostics to show now (borrowed for the call). */
	void (*diags)(void *ctx, pmbot_diag_list *diags);
	void *ctx;
} pmbot_notes;

/* Format and hand one line to `n` (may be NULL); nothing happens on out of memory. */
void pmbot_note(const pmbot_notes *n, pmbot_note_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Hand `diags` to `n` (may be NULL) when there are any. */
void pmbot_note_diags(const pmbot_notes *n, pmbot_diag_list *diags);

#endif
