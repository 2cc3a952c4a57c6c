#include "pmbot/hash.h"

#include <stdlib.h>
#include <openssl/evp.h>

#include "pmbot/json.h"
#include "pmbot/banned.h"

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
	EVP_MD_CTX_free(sha256_ctx);
	EVP_MD_free(sha256_md);
	sha256_ctx = NULL;
	sha256_md = NULL;
}

static int sha256_setup(void)
{
	if (sha256_ctx)
		return 0;
	if (!(sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL)) ||
	    !(sha256_ctx = EVP_MD_CTX_new()) || atexit(sha256_release)) {
		sha256_release();
		return -1;
	}
	return 0;
}

int pmbot_sha256_hex(char out[PMBOT_SHA256_HEX_SIZE], const void *data, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;

	if (sha256_setup() < 0 || !EVP_DigestInit_ex2(sha256_ctx, sha256_md, NULL) ||
	    !EVP_DigestUpdate(sha256_ctx, data, len) ||
	    !EVP_DigestFinal_ex(sha256_ctx, md, &mdlen) || mdlen != 32)
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
