#ifndef PMBOT_LABELS_H
#define PMBOT_LABELS_H

/*
 * The label scheme: the prefixes pm-bot writes and owns. Labels with one of
 * these prefixes are pm-bot's to add and remove; every other label on an
 * issue belongs to people and is never touched.
 */
typedef struct {
	const char *type;   /* "type:" */
	const char *area;   /* "area:" */
	const char *prio;   /* "prio:" */
	const char *size;   /* "size:" */
	const char *status; /* "status:" */
} pmbot_label_scheme;

/* The default scheme, static storage. */
#define PMBOT_LABEL_SCHEME_DEFAULT { "type:", "area:", "prio:", "size:", "status:" }

/* The label pm-bot adds to items whose area or priority was left to triage. */
#define PMBOT_LABEL_NEEDS_HUMAN "needs-human"

#endif
