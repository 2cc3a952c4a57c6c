#ifndef PMBOT_COMMON_H
#define PMBOT_COMMON_H

/*
 * Return codes shared by every module: 0 on success, a negative value on
 * failure. PMBOT_EINVALID means the input was rejected and the diagnostic
 * list says why; PMBOT_ERROR is a runtime failure (out of memory, I/O, git).
 */
#define PMBOT_OK 0
#define PMBOT_ERROR (-1)
#define PMBOT_EINVALID (-2)
#define PMBOT_ENOTFOUND (-3)

/*
 * On a function whose result it is a bug to ignore: a failure that would
 * go unseen (the out-parameter left NULL, a file not written) or memory
 * that only the caller can free. gcc warns even through a (void) cast.
 */
#if defined(__GNUC__) || defined(__clang__)
#define PMBOT_WARN_UNUSED __attribute__((warn_unused_result))
#else
#define PMBOT_WARN_UNUSED
#endif

#endif
