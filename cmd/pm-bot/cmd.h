#ifndef PMBOT_CMD_H
#define PMBOT_CMD_H

/*
 * The command-line tool. Only code under cmd/ prints or chooses an exit
 * status; every subcommand is one cmd_<name>.c with an entry in the table
 * in main.c.
 */

enum {
	EXIT_OK = 0,
	EXIT_RUNTIME = 1,  /* I/O, out of memory, git or network failures */
	EXIT_INVALID = 2,  /* invalid input or usage */
	EXIT_CHANGES = 3   /* plan --detailed-exitcode: changes pending */
};

/* Command flags. */
#define NEEDS_REPO (1u << 0) /* reads a git repository (--repo, default ".") */

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	unsigned flags;
	const char *summary;
	const char *usage; /* full help text shown by `pm-bot help <name>` */
};

/* The command named `name`, or NULL. */
const struct cmd *cmd_lookup(const char *name);

/* Print "usage: …" for `c` to standard error; returns EXIT_INVALID. */
int cmd_usage_error(const struct cmd *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

int cmd_validate(int argc, char **argv);
int cmd_graph(int argc, char **argv);

#endif
