#include "pmbot/hash.h"

#include <openssl/evp.h>

#include "pmbot/json.h"
#include "pmbot/banned.h"

int pmbot_sha256_hex(char out[PMBOT_SHA256_HEX_SIZE], const void *data, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;

	if (!EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) || mdlen != 32)
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
