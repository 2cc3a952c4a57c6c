#ifndef PMBOT_REPORT_ISODATE_H
#define PMBOT_REPORT_ISODATE_H

/*
 * The ISO-8601 subset accepted for report.generated_at (grammar in
 * docs/report-format.md, "generated_at"). `s` is borrowed and NUL-terminated.
 * Returns 1 when `s` is a complete calendar, week or ordinal date, optionally
 * followed by a time of day and zone, that exists on the calendar; 0 otherwise.
 * Pure syntax and calendar check: nothing is normalised, so the value is kept
 * byte for byte wherever the report is hashed or rendered.
 */
int pmbot_report_isodate_valid(const char *s);

#endif
