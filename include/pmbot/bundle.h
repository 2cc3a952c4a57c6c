#ifndef PMBOT_BUNDLE_H
#define PMBOT_BUNDLE_H

#include <jansson.h>
#include <stddef.h>

#include "pmbot/common.h"
#include "pmbot/diag.h"

/*
 * A ChangesetBundle v1 read back from a file (a plan `pm-bot plan --out`
 * wrote, a proposal of `pm-bot advise`, an approved plan the Action kept in
 * its cache): hostile input until checked. pmbot_bundle_check() holds it
 * to the shape every reader relies on (docs/schemas/
 * changeset-bundle.v1.schema.json, the parts pm-bot reads), so that apply,
 * the staleness check and the Action read typed values, never NULL where a
 * string was expected:
 *
 *   schema_version  "changeset_bundle/v1"
 *   plan_hash       64 lower-case hex
 *   target          "OWNER/NAME" (no whitespace, one '/')
 *   source          object; kind and config_blob strings, commit a string
 *                   or null, backend {kind: "file"|"github", state:
 *                   string}, reports [{path: non-empty string, blob:
 *                   string}], each optional
 *   changesets      array of {changeset_id, idempotency_key (non-empty),
 *                   operation (pmbot_operation_parse()), status: strings;
 *                   requires_approval: boolean; target: {repo: string and
 *                   stable_id (non-empty string) or number (integer >= 1)};
 *                   payload: object; before, after: objects when present}
 *   fingerprint     array of {ref, node_id, updated_at}: strings
 *   conflicts       array of objects with stable_id a string (optional)
 *   orphaned, diagnostics  arrays (optional); summary an object (optional)
 *
 * Other members are left alone (they are not read). Whether plan_hash is
 * the hash of the changesets and fingerprint is the staleness check's
 * question (pmbot_apply_check()), not the loader's.
 */

/* A plan file larger than this is refused before it is parsed. */
#define PMBOT_BUNDLE_MAX_BYTES ((size_t)256 << 20)

/*
 * Check `bundle` as above. Each fault is one diagnostic PLAN_INVALID
 * (error) with the JSON Pointer of the member at fault and what it must
 * be; at most 20 are listed, the first fault of each changeset or entry.
 * PMBOT_OK, PMBOT_EINVALID (faults listed), PMBOT_ERROR (out of memory).
 */
PMBOT_WARN_UNUSED int pmbot_bundle_check(const json_t *bundle, pmbot_diag_list *diags);

/*
 * Parse `len` bytes of JSON text (duplicate keys refused) and check the
 * result. `*out` receives the bundle (owned by the caller: json_decref())
 * on PMBOT_OK and is NULL otherwise. Not JSON: PLAN_INVALID with the line
 * and column jansson reports. PMBOT_OK, PMBOT_EINVALID, PMBOT_ERROR.
 */
PMBOT_WARN_UNUSED int pmbot_bundle_parse(json_t **out, const char *text, size_t len,
	pmbot_diag_list *diags);

/*
 * pmbot_bundle_parse() of the file at `path` (at most
 * PMBOT_BUNDLE_MAX_BYTES; diagnostics name `path` as their file).
 * PMBOT_ENOTFOUND when there is no such file, PMBOT_ERROR when it cannot
 * be read (both with a diagnostic PLAN_READ), else as pmbot_bundle_parse().
 */
PMBOT_WARN_UNUSED int pmbot_bundle_load(json_t **out, const char *path, pmbot_diag_list *diags);

/*
 * Typed reads of a bundle pmbot_bundle_check() accepted (borrowed from it;
 * NULL when the optional member is absent or null).
 */
const char *pmbot_bundle_plan_hash(const json_t *bundle);
const char *pmbot_bundle_target(const json_t *bundle);
const char *pmbot_bundle_source_kind(const json_t *bundle);    /* "proposal", ... */
const char *pmbot_bundle_source_commit(const json_t *bundle);
const char *pmbot_bundle_backend_kind(const json_t *bundle);   /* "file" | "github" */
const char *pmbot_bundle_backend_state(const json_t *bundle);
size_t pmbot_bundle_report_count(const json_t *bundle);
const char *pmbot_bundle_report_path(const json_t *bundle, size_t i);

/*
 * Does the plan show drift (what `pm-bot plan --detailed-exitcode` exits 3
 * for)? 1 when it has a changeset or a standing conflict, 0 when there is
 * nothing to do: a conflict is drift too, since "nothing to do" would hide
 * it. `bundle` is borrowed; NULL is 0.
 */
int pmbot_bundle_has_drift(const json_t *bundle);

#endif
