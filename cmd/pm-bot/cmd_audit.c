#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "pmbot/apply.h"
#include "pmbot/banned.h"

int cmd_audit(int argc, char **argv)
{
	const struct cmd *self = cmd_lookup("audit");
	pmbot_diag_list diags = PMBOT_DIAG_LIST_INIT;
	size_t lines = 0;
	int r;

	if (argc != 3 || strcmp(argv[1], "verify"))
		return cmd_usage_error(self, "usage: pm-bot audit verify FILE");
	r = pmbot_audit_verify(argv[2], &lines, &diags);
	cmd_print_diags(stderr, &diags);
	pmbot_diag_list_free(&diags);
	if (r == PMBOT_OK) {
		printf("%s: %zu event%s, chain intact\n", cmd_show(argv[2]), lines, lines == 1 ? "" : "s");
		return EXIT_OK;
	}
	if (r == PMBOT_EINVALID)
		return EXIT_INVALID;
	fprintf(stderr, "pm-bot: cannot read %s\n", cmd_show(argv[2]));
	return EXIT_RUNTIME;
}
