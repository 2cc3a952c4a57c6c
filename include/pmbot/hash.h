#ifndef PMBOT_HASH_H
#define PMBOT_HASH_H

#include <jansson.h>
#include <stddef.h>

#include "pmbot/buf.h"
#include "pmbot/common.h"

/* Lower-case hex SHA-256 digest: 64 characters and a NUL. */
#define PMBOT_SHA256_HEX_SIZE 65

/*
 * Load libcrypto (opened when first needed, pmbot/dl.h) and set up
 * SHA-256, once; the functions below do it on their first call but can
 * only answer -1, so a program calls this first to say why: PMBOT_ERROR
 * with the reason noted in `err` (may be NULL; the caller owns it).
 */
PMBOT_WARN_UNUSED int pmbot_sha256_init(pmbot_buf *err);

/*
 * Write the hex SHA-256 of `len` bytes at `data` into `out`. 0 or -1.
 * The first call fetches SHA-256 once for the process and keeps one
 * digest context (freed at exit), so neither function may be called from
 * two threads at once; pm-bot runs one.
 */
int pmbot_sha256_hex(char out[PMBOT_SHA256_HEX_SIZE], const void *data, size_t len);

/*
 * Internal, declared for its tests: 1 (the default where OpenSSL's headers
 * have them) lets the hashes above go through libcrypto's SHA256_* calls,
 * which cost less a call than EVP; 0 makes them use EVP. Set it before a
 * hash, not between two that must be compared.
 */
extern int pmbot_sha256__direct;

/* Write the hex SHA-256 of the canonical JSON of `v` into `out`. 0 or -1. */
int pmbot_sha256_json(char out[PMBOT_SHA256_HEX_SIZE], const json_t *v);

#endif
