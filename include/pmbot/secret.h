#ifndef PMBOT_SECRET_H
#define PMBOT_SECRET_H

#include "pmbot/buf.h"

/*
 * Secrets (the GitHub token, a model provider's key) kept out of every text
 * pm-bot shows: servers echo credentials in their error messages, whole or
 * in part ("Incorrect API key provided: sk-abc...xyz"), and a quoted message
 * may be cut in the middle of one.
 */

/* The shortest part of a secret that is scrubbed wherever it appears. */
#define PMBOT_SECRET_MIN_MATCH 8

/* What a scrubbed part is replaced by. */
#define PMBOT_SECRET_MASK "[REDACTED]"

/*
 * Replace, in `b`, every run of bytes made of substrings of `secret` that
 * are PMBOT_SECRET_MIN_MATCH bytes or longer (a prefix, a middle, a suffix,
 * the whole secret) by one PMBOT_SECRET_MASK. Fragments shorter than that
 * stay: 7 bytes of a random key are not worth making ordinary words
 * unreadable (a secret shorter than PMBOT_SECRET_MIN_MATCH is scrubbed only
 * whole). `secret` NULL or empty changes nothing. Returns 0; when out of
 * memory `b` holds only the mask and -1 is returned: better no text than
 * text with the secret.
 */
int pmbot_secret_scrub(pmbot_buf *b, const char *secret);

#endif
