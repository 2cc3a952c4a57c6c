#ifndef PMBOT_COMMON_H
#define PMBOT_COMMON_H

/*
 * Every return code of every module, in one enum so no two mean the same
 * number: 0 on success, a negative value on failure. PMBOT_EINVALID means
 * the input was rejected (the diagnostic list or the error text says why);
 * PMBOT_ERROR is a runtime failure (out of memory, I/O, git). A module's
 * own codes are documented beside the functions that return them; each
 * module has its own block of numbers. Functions return `int` holding one
 * of these, so `< 0` is always "failed".
 */
typedef enum {
	PMBOT_OK = 0,
	PMBOT_ERROR = -1,
	PMBOT_EINVALID = -2,
	PMBOT_ENOTFOUND = -3,
	PMBOT_ETOOBIG = -4,                 /* a write would pass a pmbot_buf's cap (buf.h) */

	PMBOT_REPO_ETOOBIG = -16,           /* repo.h: a blob larger than the room left */

	PMBOT_GITHUB_EHTTP = -32,           /* github.h: the client's outcomes */
	PMBOT_GITHUB_EUNKNOWN_OUTCOME = -33,
	PMBOT_GITHUB_ETRANSPORT = -34,
	PMBOT_GITHUB_ERATELIMIT = -35,
	PMBOT_GITHUB_ETOOBIG = -36,
	PMBOT_GITHUB_EGRAPHQL = -37,
	PMBOT_GITHUB_EBUDGET = -38,

	PMBOT_GH_EFORBIDDEN = -40,          /* action.h: the Action's reads and writes */
	PMBOT_GH_EEXISTS = -41,
	PMBOT_LOCK_EBUSY = -42,             /* action.h: the run lock is held */
	PMBOT_BACKEND_EPAUSED = -44,        /* state.h: a write waits for the budget */

	PMBOT_LLM_EHTTP = -48,              /* llm.h: the model provider's outcomes */
	PMBOT_LLM_ETRANSPORT = -49,
	PMBOT_LLM_ETOOBIG = -50,
	PMBOT_LLM_EBADRESPONSE = -51
} pmbot_error;

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
