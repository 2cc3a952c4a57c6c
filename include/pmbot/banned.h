#ifndef PMBOT_BANNED_H
#define PMBOT_BANNED_H

/*
 * Functions that are too easy to misuse: a use fails to compile. Use
 * pmbot_buf, snprintf or memcpy with an explicit length instead.
 *
 * Every .c file includes this header last, after every system header (as
 * git does): defined earlier, these macros would rewrite the C library's
 * own declarations and the inline wrappers of _FORTIFY_SOURCE.
 * scripts/check-includes.sh checks that in `make check`.
 */

#define PMBOT_BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) PMBOT_BANNED(strcpy)
#undef strcat
#define strcat(x, y) PMBOT_BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) PMBOT_BANNED(strncpy)
#undef strncat
#define strncat(x, y, n) PMBOT_BANNED(strncat)
#undef sprintf
#define sprintf(...) PMBOT_BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) PMBOT_BANNED(vsprintf)
#undef strtok
#define strtok(x, y) PMBOT_BANNED(strtok)
#undef gets
#define gets(x) PMBOT_BANNED(gets)

#endif
