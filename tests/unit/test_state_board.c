#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/buf.h"
#include "pmbot/diag.h"
#include "pmbot/json.h"
#include "pmbot/state.h"
#include "pmbot/banned.h"

typedef struct {
	pmbot_state *st;
	pmbot_diag_list diags;
	json_t *out;
	pmbot_buf text;
} fixture;

static int setup(void **state)
{
	fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	pmbot_buf_init(&fx->text, 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	fixture *fx = *state;

	pmbot_state_free(fx->st);
	pmbot_diag_list_free(&fx->diags);
	json_decref(fx->out);
	pmbot_buf_free(&fx->text);
	free(fx);
	return 0;
}

static void parse(fixture *fx, const char *doc)
{
	assert_int_equal(pmbot_state_parse(&fx->st, "state.json", doc, strlen(doc), &fx->diags),
		PMBOT_OK);
}

static const char *board(fixture *fx)
{
	assert_int_equal(pmbot_state_board(&fx->out, fx->st), 0);
	pmbot_buf_clear(&fx->text);
	assert_int_equal(pmbot_json_canonical(&fx->text, fx->out), 0);
	return fx->text.buf;
}

#define ISSUE(n, rest) "{\"number\":" #n ",\"database_id\":" #n ",\"node_id\":\"I_" #n "\"," \
	"\"author\":\"a\",\"author_type\":\"User\"," \
	"\"updated_at\":\"2026-11-02T10:00:00Z\"," rest "}"

static void test_state_board__issues_and_items_in_state_order_without_ids(void **state)
{
	fixture *fx = *state;

	parse(fx, "{\"schema_version\":\"state/v1\",\"repositories\":[{\"repo\":\"acme/w\","
		"\"issues\":["
		ISSUE(3, "\"title\":\"Task\",\"body\":null,\"labels\":[\"type:task\",\"area:ui\"],"
			"\"state\":\"open\","
			"\"parent\":\"acme/w#1\",\"blocked_by\":[\"acme/w#2\"]") ","
		ISSUE(1, "\"title\":\"Epic\",\"body\":\"why\",\"labels\":[],\"state\":\"closed\"")
		"]}],"
		"\"project\":{\"owner\":\"acme\",\"number\":1,\"node_id\":\"PVT_1\","
		"\"fields\":[{\"id\":\"F_1\",\"name\":\"Status\",\"type\":\"single_select\","
		"\"options\":[{\"id\":\"o1\",\"name\":\"Todo\"}]}],"
		"\"items\":[{\"id\":\"PVTI_1\",\"issue\":\"acme/w#3\",\"values\":{\"Status\":\"Todo\"}}]}}");
	assert_string_equal(board(fx), "{\"board_items\":[{\"issue\":\"acme/w#3\","
		"\"values\":{\"Status\":\"Todo\"}}],"
		"\"issues\":["
		"{\"blocked_by\":[],\"body\":\"why\",\"labels\":[],\"number\":1,\"parent\":null,\"repo\":\"acme/w\","
		"\"state\":\"closed\",\"title\":\"Epic\"},"
		"{\"blocked_by\":[\"acme/w#2\"],\"body\":\"\",\"labels\":[\"area:ui\",\"type:task\"],"
		"\"number\":3,\"parent\":\"acme/w#1\",\"repo\":\"acme/w\",\"state\":\"open\","
		"\"title\":\"Task\"}]}");
}

static void test_state_board__an_empty_state_is_an_empty_board(void **state)
{
	fixture *fx = *state;

	parse(fx, "{\"schema_version\":\"state/v1\",\"repositories\":[]}");
	assert_string_equal(board(fx), "{\"board_items\":[],\"issues\":[]}");
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_state_board__issues_and_items_in_state_order_without_ids),
		T(test_state_board__an_empty_state_is_an_empty_board),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
