#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "pmbot/apply.h"
#include "pmbot/banned.h"

int cmd_audit(int argc, char **argv)
{
	const struct cmd *self = cmd_lookup("audit");
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	char head[PMBOT_SHA256_HEX_SIZE];
	const char *file = NULL, *expect = NULL;
	size_t lines = 0, at = 0;
	int i, r;

	if (argc < 2 || strcmp(argv[1], "verify"))
		return cmd_usage_error(self, "usage: pm-bot audit verify [--head HASH] FILE");
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--head") || !strcmp(argv[i], "--expect-head")) {
			if (++i == argc)
				return cmd_usage_error(self, "%s needs the head hash published earlier",
					argv[i - 1]);
			expect = argv[i];
		} else if (!strncmp(argv[i], "--head=", 7)) {
			expect = argv[i] + 7;
		} else if (!strncmp(argv[i], "--expect-head=", 14)) {
			expect = argv[i] + 14;
		} else if (!strcmp(argv[i], "--") && i + 2 == argc && !file) {
			file = argv[++i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cmd_usage_error(self, "unknown option '%s'", argv[i]);
		} else if (file) {
			return cmd_usage_error(self, "usage: pm-bot audit verify [--head HASH] FILE");
		} else {
			file = argv[i];
		}
	}
	if (!file)
		return cmd_usage_error(self, "usage: pm-bot audit verify [--head HASH] FILE");
	r = pmbot_audit_verify_head(head, &lines, &at, file, expect, &diags);
	cmd_print_diags(stderr, &diags);
	pmbot_diag_list_free(&diags);
	if (r == PMBOT_OK) {
		printf("%s: %zu event%s, chain intact\n", cmd_show(file), lines, lines == 1 ? "" : "s");
		printf("head %s (line %zu)\n", head, lines);
		if (expect)
			printf("the expected head is line %zu: lines 1-%zu are as when it was "
				"published, %zu appended since\n", at, at, lines - at);
		else
			printf("the chain is only consistent: compare the head with one published "
				"earlier (--head HASH) to show nothing was rewritten\n");
		return EXIT_OK;
	}
	if (r == PMBOT_EINVALID)
		return EXIT_INVALID;
	fprintf(stderr, "pm-bot: cannot read %s\n", cmd_show(file));
	return EXIT_RUNTIME;
}
