#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmbot/buf.h"
#include "pmbot/json.h"
#include "pmbot/plan.h"
#include "pmbot/banned.h"

typedef struct {
	pmbot_issue issue;
	pmbot_pitem item;
	pmbot_managed_issue m;
	char *labels[2];
	char *blocked[1];
	json_t *out;
	pmbot_buf text;
} fixture;

static int setup(void **state)
{
	static char repo[] = "acme/widgets", title[] = "Task: gauge", l1[] = "area:ui",
		l2[] = "type:task", parent[] = "acme/widgets#2", b1[] = "acme/gadgets#1",
		type[] = "Task", sid[] = "task:gauge", item_issue[] = "acme/widgets#10";
	fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	pmbot_buf_init(&fx->text, 0);
	fx->labels[0] = l1;
	fx->labels[1] = l2;
	fx->blocked[0] = b1;
	fx->issue.repo = repo;
	fx->issue.number = 10;
	fx->issue.title = title;
	fx->issue.labels = fx->labels;
	fx->issue.n_labels = 2;
	fx->issue.parent = parent;
	fx->issue.blocked_by = fx->blocked;
	fx->issue.n_blocked_by = 1;
	fx->issue.issue_type = type;
	fx->item.issue = item_issue;
	fx->item.values = json_pack("{s:s, s:i}", "Status", "Todo", "Estimate", 3);
	fx->m.issue = &fx->issue;
	fx->m.stable_id = sid;
	if (!fx->item.values) {
		free(fx);
		return -1;
	}
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	fixture *fx = *state;

	json_decref(fx->item.values);
	json_decref(fx->out);
	pmbot_buf_free(&fx->text);
	free(fx);
	return 0;
}

static const char *to_json(fixture *fx, int full)
{
	json_decref(fx->out);
	fx->out = NULL;
	assert_int_equal(pmbot_plan_managed_to_json(&fx->out, &fx->m, full), 0);
	pmbot_buf_clear(&fx->text);
	assert_int_equal(pmbot_json_canonical(&fx->text, fx->out), 0);
	return fx->text.buf;
}

static void test_plan_managed_json__a_list_entry_is_the_summary(void **state)
{
	fixture *fx = *state;

	assert_string_equal(to_json(fx, 0), "{\"duplicate\":false,\"edited\":false,"
		"\"issue\":\"acme/widgets#10\",\"on_board\":false,\"stable_id\":\"task:gauge\","
		"\"state\":\"open\",\"title\":\"Task: gauge\"}");
	fx->m.item = &fx->item;
	fx->m.edited = 1;
	fx->m.duplicate = 1;
	fx->issue.closed = 1;
	fx->issue.title = NULL;
	assert_string_equal(to_json(fx, 0), "{\"duplicate\":true,\"edited\":true,"
		"\"issue\":\"acme/widgets#10\",\"on_board\":true,\"stable_id\":\"task:gauge\","
		"\"state\":\"closed\",\"title\":\"\"}");
}

static void test_plan_managed_json__show_adds_the_details(void **state)
{
	fixture *fx = *state;

	fx->m.item = &fx->item;
	assert_string_equal(to_json(fx, 1), "{\"blocked_by\":[\"acme/gadgets#1\"],"
		"\"board\":{\"Estimate\":3,\"Status\":\"Todo\"},\"duplicate\":false,\"edited\":false,"
		"\"issue\":\"acme/widgets#10\",\"issue_type\":\"Task\",\"labels\":[\"area:ui\","
		"\"type:task\"],\"on_board\":true,\"parent\":\"acme/widgets#2\","
		"\"stable_id\":\"task:gauge\",\"state\":\"open\",\"title\":\"Task: gauge\"}");
	/* The board is a copy: the state keeps its own. */
	assert_ptr_not_equal(json_object_get(fx->out, "board"), fx->item.values);
}

static void test_plan_managed_json__absent_details_are_null(void **state)
{
	fixture *fx = *state;

	fx->issue.parent = NULL;
	fx->issue.issue_type = NULL;
	fx->issue.n_blocked_by = 0;
	fx->issue.n_labels = 0;
	assert_string_equal(to_json(fx, 1), "{\"blocked_by\":[],\"board\":null,"
		"\"duplicate\":false,\"edited\":false,\"issue\":\"acme/widgets#10\","
		"\"issue_type\":null,\"labels\":[],\"on_board\":false,\"parent\":null,"
		"\"stable_id\":\"task:gauge\",\"state\":\"open\",\"title\":\"Task: gauge\"}");
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_plan_managed_json__a_list_entry_is_the_summary),
		T(test_plan_managed_json__show_adds_the_details),
		T(test_plan_managed_json__absent_details_are_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
