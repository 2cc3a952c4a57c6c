#ifndef PMBOT_FIELDSYNC_H
#define PMBOT_FIELDSYNC_H

#include <jansson.h>
#include <stddef.h>

#include "pmbot/source.h"
#include "pmbot/diag.h"
#include "pmbot/state.h"

/*
 * Projects v2 field sync: the scheduled / workflow_dispatch run of
 * `pm-bot action`. It needs no report: every managed issue's project field
 * values come from the issue itself (its labels, then its body's
 * "### Heading" values), and the plan writes them onto the board. The
 * result is a ChangesetBundle v1 (include/pmbot/plan.h) holding only
 * add_to_project and set_project_field changesets, built with the
 * planner's own code for ids, idempotency keys, ordering, denied and
 * auto-approved operations, fingerprint and plan_hash, so
 * pmbot_apply_check() and pmbot_apply_run() take it like any plan.
 *
 * Managed issues: the issues, open AND closed (a closed item's Status is
 * still shown on the board), of the synced repositories whose body has one
 * well-formed pm-bot marker and whose author is trusted
 * (config->trusted_authors, or self_login), exactly as the planner decides:
 * an untrusted author's marker is a MARKER_UNTRUSTED warning and the issue
 * is ignored; two trusted issues of one repository with the same marker are
 * a DUPLICATE_MARKER warning and neither is synced.
 *
 * Derivation, per managed issue and per board field (field names compare
 * ASCII case-insensitively; a field the board does not have is skipped
 * silently):
 *
 *   board field      label (config scheme)   body heading       value
 *   Area             area: ("area:")         Area               text
 *   Priority         prio: ("prio:")         Priority           text
 *   Size             size: ("size:")         Size               text
 *   Status           status: ("status:")     Status             text
 *   Estimate (hrs)   -                       Estimate (hrs)     hours
 *   Risk             -                       Risk               text
 *   Blocked by       -                       Blocked by         text
 *   Actual (hrs)     -                       Actual (hrs)       hours
 *
 *  - A label beats a heading. A label counts when it starts with the
 *    scheme prefix (ASCII case-insensitive; an empty prefix never counts)
 *    and something follows it: "prio:P1" gives "P1", the value the planner
 *    writes for priority P1. Labels of one prefix with values that differ
 *    beyond ASCII case are a FIELDSYNC_LABEL_CONFLICT warning and that
 *    field is left alone for the issue (neither label nor heading is used).
 *  - A heading counts when pmbot_form_heading_kind() maps it to the field
 *    ("Estimate (hours)", "Depends on", ...) or pmbot_body_heading_eq()
 *    equals it to the field's name ("Size (Epic)"); the first such heading
 *    of the body is used; its value is pmbot_body_parse()'s (first line,
 *    "_No response_" is empty).
 *  - Hours go through pmbot_body_parse_hours() ("4", "4.5", "~4", "4 hrs",
 *    "4h") and are written as reals; anything else is a
 *    FIELDSYNC_BAD_NUMBER warning (file: the issue ref, line: the heading's
 *    line in the body) and the field is left alone.
 *  - As in the planner, triage defaults are for people to fill in: on an
 *    issue labelled needs-human, Area "triage" and Priority "Triage" are
 *    not synced.
 *  - An empty or missing value never clears a field.
 *  - Types: text values go to single-select fields (matched to the first
 *    option equal ignoring ASCII case, written with the option's exact
 *    name) and text fields; hours go to number fields. A board field of
 *    another type is never written: one FIELDSYNC_FIELD_TYPE warning per
 *    field per plan.
 *  - A text value that is no option of a single-select field is a
 *    PROJECT_UNKNOWN_OPTION error (file: the issue ref; line: the heading's
 *    line, 0 for a label; the message names the options that exist and
 *    where the value came from); that field gets no changeset, the rest of
 *    the plan is still built.
 *
 * The derived value is compared with the item's current value on the board
 * (numbers by value, options and text exactly): only a difference is a
 * set_project_field {field: the board's name, value}, before {value or
 * null}. A managed issue that is not on the board gets add_to_project
 * {project: "OWNER/NUMBER"} first, then every derived value. When the
 * config denies add_to_project, such an issue gets no field changesets
 * either (they could not land), and OPERATION_DENIED counts the
 * add_to_project.
 *
 * Targets are {"repo", "stable_id"}, the repo spelled as in `repos` (as the
 * planner spells its target), so pmbot_apply_run() resolves them by
 * trusted marker. The bundle's `target` is repos[0]; `fingerprint` lists
 * every issue that has a changeset; `conflicts` and `orphaned` are empty;
 * `summary.project` equals `summary.total`. Same input, same bytes: the
 * order of issues, labels and items in the state document changes nothing.
 */

typedef struct {
	const pmbot_config *config;     /* required: scheme, trust, repos allowlist, project */
	/*
	 * Issues of the synced repositories and the board. NULL (nothing was
	 * read) is the NO_PROJECT error.
	 */
	const pmbot_state *state;
	/*
	 * "OWNER/NAME" of the repositories whose managed issues are synced
	 * (case-insensitive; a name given twice is synced once). n_repos 0:
	 * every repository of config->repos. One not in config->repos is a
	 * REPO_NOT_ALLOWED error and its issues are not synced.
	 */
	const char *const *repos;
	size_t n_repos;
	const json_t *source;           /* borrowed, deep-copied into the bundle; may be NULL ({}) */
	const char *self_login;         /* also trusted for markers; may be NULL */
} pmbot_fieldsync_input;

/*
 * Build the field sync bundle described above. The project is config's
 * (project.owner/number); when the config names none, or the state is NULL
 * or holds another project or none, that is a NO_PROJECT error and the
 * bundle has no changesets.
 *
 * Same return contract as pmbot_plan_build(): `*out` is the bundle (a new
 * reference the caller owns) whenever the return is not PMBOT_ERROR; the
 * diagnostics are added to `diags` (which is sorted) and copied into the
 * bundle; an error among them makes the return PMBOT_EINVALID, else
 * PMBOT_OK. PMBOT_ERROR (and `*out` NULL) when out of memory, or when the
 * arguments are unusable: `in`, `in->config` or `diags` NULL, or no
 * repository to sync at all (n_repos 0 and an empty allowlist: the bundle
 * would have no target).
 */
int pmbot_fieldsync_build(json_t **out, const pmbot_fieldsync_input *in, pmbot_diag_list *diags);

/*
 * The changeset ids of `bundle` (borrowed) that `config`'s auto_approve
 * lets run without an approval, in bundle order: `*out` is a new array the
 * caller owns. A set_project_field of an issue whose add_to_project is in
 * the bundle and not pre-approved itself is left out: the value could not
 * land before the issue is on the board, so it waits with the
 * add_to_project for a person's approval. 0, or PMBOT_ERROR (`*out` NULL)
 * when out of memory.
 */
PMBOT_WARN_UNUSED int pmbot_fieldsync_auto_approved(json_t **out, const json_t *bundle,
	const pmbot_config *config);

#endif
