#include <stdlib.h>
#include <string.h>

#include "pmbot/github.h"
#include "pmbot/banned.h"

int pmbot_github_viewer_login(char **out, pmbot_github_client *c, pmbot_buf *err)
{
	json_t *data = NULL;
	const char *login;
	int rc;

	*out = NULL;
	if ((rc = pmbot_github_graphql(&data, c, pmbot_gql("viewer"), NULL, err)) < 0)
		return rc;
	login = json_string_value(json_object_get(json_object_get(data, "viewer"), "login"));
	rc = login && *login && (*out = strdup(login)) ? 0 : PMBOT_ERROR;
	json_decref(data);
	return rc;
}
