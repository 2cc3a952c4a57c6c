#ifndef PMBOT_DATETIME_H
#define PMBOT_DATETIME_H

#include "pmbot/buf.h"
#include "pmbot/common.h"

/*
 * Seconds since 1970-01-01T00:00:00Z of an RFC 3339 date-time
 * ("2026-11-02T10:00:00Z"; a fraction, which is dropped, and a numeric
 * offset are allowed; the calendar is checked; seconds 00..59).
 * 0 or PMBOT_EINVALID.
 */
PMBOT_WARN_UNUSED int pmbot_datetime_parse(long long *out, const char *s);

/* Append `t` (seconds since the epoch, years 0000..9999) as
 * "YYYY-MM-DDTHH:MM:SSZ". 0, PMBOT_EINVALID out of range, PMBOT_ERROR. */
int pmbot_datetime_format(pmbot_buf *out, long long t);

/* 1 when `s` is exactly "YYYY-MM-DD", a real calendar date; else 0 (NULL too). */
int pmbot_datetime_date_valid(const char *s);

#endif
