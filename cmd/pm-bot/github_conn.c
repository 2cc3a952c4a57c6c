#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "pmbot/github.h"
#include "pmbot/net.h"
#include "pmbot/banned.h"

/* How often a long run says how far it got. */
#define PROGRESS_EVERY_MS 5000LL

static long long monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int env_flag(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0");
}

/*
 * Waits are always told (a silent minute looks like a hang); with
 * --verbose every request is; otherwise a line every few seconds says how
 * many requests a long run has made.
 */
static void on_event(void *payload, const pmbot_github_event *ev)
{
	struct github_conn *gc = payload;
	long long now;

	/* The client's messages never hold the token. */
	if (gc->verbose || ev->kind == PMBOT_GITHUB_EV_RATE_LIMIT ||
	    (ev->kind == PMBOT_GITHUB_EV_RETRY && ev->wait_ms >= 1000) ||
	    ev->kind == PMBOT_GITHUB_EV_CACHE_ERROR || ev->kind == PMBOT_GITHUB_EV_BUDGET) {
		fprintf(stderr, "pm-bot: github: %s\n", cmd_show_msg(ev->message));
		return;
	}
	if (ev->kind != PMBOT_GITHUB_EV_RESPONSE)
		return;
	gc->responses++;
	now = monotonic_ms();
	if (now - gc->last_progress_ms >= PROGRESS_EVERY_MS) {
		fprintf(stderr, "pm-bot: github: %lu requests answered in %lld s\n", gc->responses,
			(now - gc->start_ms) / 1000);
		gc->last_progress_ms = now;
	}
}

int github_conn_open(struct github_conn *gc, const struct plan_opts *o)
{
	pmbot_github_options opts;
	pmbot_buf err = PMBOT_BUF_INIT, cache = PMBOT_BUF_INIT;
	const char *env, *pace_text = o->pace_ms;
	int r, rc = EXIT_OK;

	memset(gc, 0, sizeof(*gc));
	gc->stats = o->stats || env_flag("PMBOT_GITHUB_STATS");
	gc->verbose = env_flag("PMBOT_VERBOSE");
	gc->start_ms = gc->last_progress_ms = monotonic_ms();
	pmbot_github_options_init(&opts);
	if (o->cache_dir) {
		opts.cache_dir = o->cache_dir;
	} else if ((env = getenv("PMBOT_GITHUB_CACHE_DIR")) && *env) {
		opts.cache_dir = env;
	} else {
		if (pmbot_buf_printf(&cache, "%s/%s", o->repo ? o->repo : ".",
			PMBOT_GITHUB_DEFAULT_CACHE_DIR) < 0) {
			rc = EXIT_RUNTIME;
			goto done;
		}
		opts.cache_dir = cache.buf;
	}
	if (!pace_text && (env = getenv("PMBOT_GITHUB_PACE_MS")) && *env)
		pace_text = env;
	if (pace_text && pmbot_github_pace_parse(&opts.pace_ms, pace_text) < 0) {
		fprintf(stderr, "pm-bot: the write pace must be a number of milliseconds, not '%s'\n",
			cmd_show(pace_text));
		rc = EXIT_INVALID;
		goto done;
	}
	opts.on_event = on_event;
	opts.event_payload = gc;
	if (pmbot_net_global_init(&err) < 0) {
		fprintf(stderr, "pm-bot: %s\n", cmd_show_msg(err.buf));
		rc = EXIT_RUNTIME;
		goto done;
	}
	gc->curl_ready = 1;
	r = pmbot_github_client_new(&gc->client, &opts, &err);
	if (r < 0) {
		fprintf(stderr, "pm-bot: cannot make the GitHub client: %s\n",
			cmd_show_msg(err.len ? err.buf : "unknown error"));
		rc = r == PMBOT_EINVALID ? EXIT_INVALID : EXIT_RUNTIME;
		goto done;
	}
	/*
	 * Issues pm-bot created carry the token's login as their author, so its
	 * markers are trusted as well. Not fatal: without it only the
	 * configured authors are trusted.
	 */
	if (pmbot_github_viewer_login(&gc->self_login, gc->client, &err) < 0)
		fprintf(stderr, "pm-bot: github: cannot tell which login the token acts as (%s); "
			"trusting only the configured authors\n", cmd_show_msg(err.buf));
done:
	pmbot_buf_free(&err);
	pmbot_buf_free(&cache);
	return rc;
}

void github_conn_close(struct github_conn *gc)
{
	pmbot_github_stats st;

	if (gc->client && gc->stats) {
		pmbot_github_client_stats(&st, gc->client);
		fprintf(stderr, "pm-bot: github: %lu requests (%lu REST, %lu GraphQL, %lu writes, "
			"%lu not modified, %lu retries, %lu rate limited, waited %lld ms)\n",
			st.requests, st.rest, st.graphql, st.writes, st.not_modified, st.retries,
			st.rate_limited, st.waited_ms);
	}
	pmbot_github_client_free(gc->client);
	/* libcurl is loaded and set up only for GitHub, so `validate` never pays for it. */
	if (gc->curl_ready)
		pmbot_net_global_cleanup();
	free(gc->self_login);
	memset(gc, 0, sizeof(*gc));
}
