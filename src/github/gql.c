#include <string.h>

#include "pmbot/gql.h"
#include "pmbot/banned.h"

const char *pmbot_gql(const char *name)
{
	size_t i;

	for (i = 0; i < pmbot_gql_n_docs; i++)
		if (!strcmp(pmbot_gql_docs[i].name, name))
			return pmbot_gql_docs[i].text;
	return NULL;
}
