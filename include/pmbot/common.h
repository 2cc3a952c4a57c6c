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

#endif
