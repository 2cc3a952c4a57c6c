#include "pmbot/hash.h"

#include <stddef.h>
#include <stdlib.h>
#include <openssl/evp.h>

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

int pmbot_sha256_init(pmbot_buf *err)
{
	if (sha256_ctx)
		return 0;
	if (pmbot_dl_load(&evp_lib, err) < 0)
		return PMBOT_ERROR;
	if (!(sha256_md = evp.md_fetch(NULL, "SHA256", NULL)) ||
	    !(sha256_ctx = evp.ctx_new()) || atexit(sha256_release)) {
		sha256_release();
		pmbot_buf_note(err, "cannot set up SHA-256 from libcrypto");
		return PMBOT_ERROR;
	}
	return 0;
}

int pmbot_sha256_hex(char out[PMBOT_SHA256_HEX_SIZE], const void *data, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;

	if (pmbot_sha256_init(NULL) < 0 || !evp.init(sha256_ctx, sha256_md, NULL) ||
	    !evp.update(sha256_ctx, data, len) || !evp.final(sha256_ctx, md, &mdlen) ||
	    mdlen != 32)
		return -1;
	for (i = 0; i < mdlen; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
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
