#include "pmbot/hash.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include "pmbot/common.h"
#include "pmbot/dl.h"
#include "pmbot/json.h"
#include "pmbot/banned.h"

/*
 * libcrypto is opened on the first hash, not linked (pmbot/dl.h): mapping
 * and relocating it costs every process about 0.7 ms, and `validate FILE`
 * hashes nothing. The soname is OpenSSL's ABI (libcrypto.so.3 for 3.x).
 */
#define LIBCRYPTO_SONAME "libcrypto.so." OPENSSL_MSTR(OPENSSL_SHLIB_VERSION)

PMBOT_DL_NOTE(dlopen_note, "[{\"feature\":\"sha256\",\"description\":\"plan and body "
	"hashes\",\"priority\":\"required\",\"soname\":[\"" LIBCRYPTO_SONAME "\"]}]");

static struct {
	__typeof__(EVP_MD_fetch) *md_fetch;
	__typeof__(EVP_MD_free) *md_free;
	__typeof__(EVP_MD_CTX_new) *ctx_new;
	__typeof__(EVP_MD_CTX_free) *ctx_free;
	__typeof__(EVP_DigestInit_ex2) *init;
	__typeof__(EVP_DigestUpdate) *update;
	__typeof__(EVP_DigestFinal_ex) *final;
} evp;

#define SYM(name, m) { name, offsetof(__typeof__(evp), m) }
static const struct pmbot_dl_sym evp_syms[] = {
	SYM("EVP_MD_fetch", md_fetch), SYM("EVP_MD_free", md_free),
	SYM("EVP_MD_CTX_new", ctx_new), SYM("EVP_MD_CTX_free", ctx_free),
	SYM("EVP_DigestInit_ex2", init), SYM("EVP_DigestUpdate", update),
	SYM("EVP_DigestFinal_ex", final),
};
#undef SYM

static struct pmbot_dl_lib evp_lib = PMBOT_DL_LIB(LIBCRYPTO_SONAME, "libcrypto", evp_syms, evp);

/*
 * One SHA-256 implementation and one context for the process, made on the
 * first call: EVP_Digest() fetches the algorithm from the provider by name
 * and sets up a fresh context on every call, which costs as much as hashing
 * a short issue body, and a plan hashes one body per work item. pm-bot
 * runs one thread (pmbot/hash.h).
 */
static EVP_MD *sha256_md;
static EVP_MD_CTX *sha256_ctx;

/*
 * OpenSSL 3 deprecates SHA256_Init/Update/Final for EVP, but EVP still
 * costs about 100 ns more a hash (OpenSSL 3.0 frees and makes its provider
 * context on each init): 3.5 ms of the 35,000 hashes of a 10,000-item
 * plan, 3 % of it. Where libcrypto still has them (OpenSSL 3 keeps its
 * deprecated API unless built without it) they do the work, with EVP
 * behind them; the bytes out are the same SHA-256.
 */
#ifndef OPENSSL_NO_DEPRECATED_3_0
#define HAVE_DIRECT 1
int pmbot_sha256__direct = 1;

static struct {
	int (*init)(SHA256_CTX *c);
	int (*update)(SHA256_CTX *c, const void *data, size_t len);
	int (*final)(unsigned char *md, SHA256_CTX *c);
} direct;

#define SYM(name, m) { name, offsetof(__typeof__(direct), m) }
static const struct pmbot_dl_sym direct_syms[] = {
	SYM("SHA256_Init", init), SYM("SHA256_Update", update), SYM("SHA256_Final", final),
};
#undef SYM

static struct pmbot_dl_lib direct_lib =
	PMBOT_DL_LIB(LIBCRYPTO_SONAME, "libcrypto", direct_syms, direct);
#else
#define HAVE_DIRECT 0
int pmbot_sha256__direct = 0;
#endif

/*
 * Registered after OpenSSL's own handler, so it runs first: the context and
 * the fetched algorithm go back while their provider still exists, and a
 * leak checker sees nothing left.
 */
static void sha256_release(void)
{
	if (evp_lib.state > 0) {
		evp.ctx_free(sha256_ctx);
		evp.md_free(sha256_md);
	}
	sha256_ctx = NULL;
	sha256_md = NULL;
}

/* Fetch SHA-256 and make the context, once. 0 or -1. */
static int evp_setup(void)
{
	if (sha256_ctx)
		return 0;
	if (!(sha256_md = evp.md_fetch(NULL, "SHA256", NULL)) ||
	    !(sha256_ctx = evp.ctx_new()) || atexit(sha256_release)) {
		sha256_release();
		return -1;
	}
	return 0;
}

int pmbot_sha256_init(pmbot_buf *err)
{
	if (pmbot_dl_load(&evp_lib, err) < 0)
		return PMBOT_ERROR;
#if HAVE_DIRECT
	/* Then EVP is not set up at all: OpenSSL reads its configuration for that. */
	if (pmbot_sha256__direct && pmbot_dl_load(&direct_lib, NULL) == 0)
		return 0;
#endif
	if (evp_setup() < 0) {
		pmbot_buf_note(err, "cannot set up SHA-256 from libcrypto");
		return PMBOT_ERROR;
	}
	return 0;
}

static int digest(unsigned char md[32], const void *data, size_t len)
{
	unsigned int mdlen = 0;

#if HAVE_DIRECT
	if (pmbot_sha256__direct && direct_lib.state > 0) {
		SHA256_CTX c;

		return direct.init(&c) && direct.update(&c, data, len) && direct.final(md, &c) ?
			0 : -1;
	}
#endif
	return evp.init(sha256_ctx, sha256_md, NULL) && evp.update(sha256_ctx, data, len) &&
	       evp.final(sha256_ctx, md, &mdlen) && mdlen == 32 ? 0 : -1;
}

/* Each byte's two hex digits: a plan writes 35,000 digests. */
static const char hex_pairs[513] =
	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	"202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
	"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
	"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
	"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	"c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
	"e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

int pmbot_sha256_hex(char out[PMBOT_SHA256_HEX_SIZE], const void *data, size_t len)
{
	unsigned char md[32];
	unsigned int i;

	if (pmbot_sha256_init(NULL) < 0 || digest(md, data, len) < 0)
		return -1;
	for (i = 0; i < 32; i++)
		memcpy(out + 2 * i, hex_pairs + 2 * md[i], 2);
	out[64] = '\0';
	return 0;
}

int pmbot_sha256_json(char out[PMBOT_SHA256_HEX_SIZE], const json_t *v)
{
	pmbot_buf b = PMBOT_BUF_INIT;
	int err = -1;

	if (pmbot_json_canonical(&b, v) < 0)
		goto done;
	err = pmbot_sha256_hex(out, b.buf, b.len);
done:
	pmbot_buf_free(&b);
	return err;
}
