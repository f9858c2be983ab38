/*
 * token.c - service-account JWTs: claims, HS256 signing and verification,
 * base64url. See token.h; a leaf below the verbs (no store, no clock).
 */
#include "token.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHA256_LEN 32
/* A token longer than this is not one of ours (ours are well under 2 KiB). */
#define MAX_TOKEN 16384

static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* base64url without padding of in[0..n) into a new string. */
static char *b64_encode(const unsigned char *in, size_t n)
{
    char *out = malloc(n / 3 * 4 + 5);
    if (!out)
        return NULL;
    size_t o = 0, i = 0;
    for (; i + 2 < n; i += 3) {
        unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8 | in[i + 2];
        out[o++] = b64url[v >> 18 & 63];
        out[o++] = b64url[v >> 12 & 63];
        out[o++] = b64url[v >> 6 & 63];
        out[o++] = b64url[v & 63];
    }
    if (n - i == 1) {
        unsigned v = (unsigned)in[i] << 16;
        out[o++] = b64url[v >> 18 & 63];
        out[o++] = b64url[v >> 12 & 63];
    } else if (n - i == 2) {
        unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8;
        out[o++] = b64url[v >> 18 & 63];
        out[o++] = b64url[v >> 12 & 63];
        out[o++] = b64url[v >> 6 & 63];
    }
    out[o] = '\0';
    return out;
}

static int b64_val(char c)
{
    const char *p = c ? strchr(b64url, c) : NULL;
    return p ? (int)(p - b64url) : -1;
}

/* Decode unpadded base64url in[0..n) into a new buffer (*len bytes, NUL
 * added). NULL if it is not base64url. */
static unsigned char *b64_decode(const char *in, size_t n, size_t *len)
{
    if (n % 4 == 1)
        return NULL;
    unsigned char *out = malloc(n / 4 * 3 + 4);
    if (!out)
        return NULL;
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64_val(in[i]);
        if (v < 0) {
            free(out);
            return NULL;
        }
        acc = (acc << 6 | (unsigned)v) & 0xffffff;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits & 0xff);
        }
    }
    out[o] = '\0';
    *len = o;
    return out;
}

void fakeapi__token_key_init(unsigned char key[FAKEAPI__TOKEN_KEY_LEN], uint64_t seed)
{
    static const char label[] = "fakeapi service-account signing key";
    char msg[32];
    int n = snprintf(msg, sizeof msg, "%llu", (unsigned long long)seed);
    /* HMAC output is SHA256_LEN = FAKEAPI__TOKEN_KEY_LEN bytes. */
    if (gnutls_hmac_fast(GNUTLS_MAC_SHA256, label, sizeof label - 1, msg, (size_t)n, key) < 0)
        memset(key, 0x5a, FAKEAPI__TOKEN_KEY_LEN);
}

/* The key id the header names: base64url of the key's SHA-256, as the real
 * server names its signing key by a digest of the public key. */
static char *key_id(const unsigned char key[FAKEAPI__TOKEN_KEY_LEN])
{
    unsigned char d[SHA256_LEN];
    if (gnutls_hash_fast(GNUTLS_DIG_SHA256, key, FAKEAPI__TOKEN_KEY_LEN, d) < 0)
        return NULL;
    return b64_encode(d, sizeof d);
}

static int put_ref(json_t *obj, const char *key, const char *name, const char *uid)
{
    if (!name || !*name)
        return 0;
    return json_object_set_new(obj, key,
                               json_pack("{s:s, s:s}", "name", name, "uid", uid ? uid : ""));
}

json_t *fakeapi__token_claims(const fakeapi__token_subject *sub, const json_t *auds, int64_t now_s,
                              int64_t exp_s)
{
    char user[1024];
    snprintf(user, sizeof user, "system:serviceaccount:%s:%s", sub->ns, sub->sa_name);
    json_t *k8s = json_pack("{s:s}", "namespace", sub->ns);
    int rc = k8s ? 0 : -1;
    rc |= put_ref(k8s, "serviceaccount", sub->sa_name, sub->sa_uid);
    rc |= put_ref(k8s, "pod", sub->pod_name, sub->pod_uid);
    rc |= put_ref(k8s, "secret", sub->secret_name, sub->secret_uid);
    rc |= put_ref(k8s, "node", sub->node_name, sub->node_uid);
    json_t *c =
        json_pack("{s:O, s:I, s:I, s:s, s:o, s:I, s:s}", "aud", auds, "exp",
                  (json_int_t)(now_s + exp_s), "iat", (json_int_t)now_s, "iss", FAKEAPI__SA_ISSUER,
                  "kubernetes.io", k8s, "nbf", (json_int_t)now_s, "sub", user);
    if (c && sub->jti && *sub->jti)
        rc |= json_object_set_new(c, "jti", json_string(sub->jti));
    if (rc != 0) {
        json_decref(c);
        return NULL;
    }
    return c;
}

/* base64url(JSON of v) into a new string. */
static char *b64_json(const json_t *v)
{
    char *text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
    if (!text)
        return NULL;
    char *out = b64_encode((const unsigned char *)text, strlen(text));
    free(text);
    return out;
}

/* The HS256 signature of signing_input[0..n), base64url-encoded. */
static char *signature(const unsigned char key[FAKEAPI__TOKEN_KEY_LEN], const char *input, size_t n)
{
    unsigned char mac[SHA256_LEN];
    if (gnutls_hmac_fast(GNUTLS_MAC_SHA256, key, FAKEAPI__TOKEN_KEY_LEN, input, n, mac) < 0)
        return NULL;
    return b64_encode(mac, sizeof mac);
}

char *fakeapi__token_sign(const unsigned char key[FAKEAPI__TOKEN_KEY_LEN], const json_t *claims)
{
    char *kid = key_id(key), *out = NULL, *sig = NULL;
    json_t *hdr = kid ? json_pack("{s:s, s:s}", "alg", "HS256", "kid", kid) : NULL;
    char *h = hdr ? b64_json(hdr) : NULL, *p = b64_json(claims);
    if (!h || !p)
        goto out;
    size_t n = strlen(h) + 1 + strlen(p);
    char *input = malloc(n + 1);
    if (!input)
        goto out;
    snprintf(input, n + 1, "%s.%s", h, p);
    sig = signature(key, input, n);
    if (sig) {
        out = malloc(n + 1 + strlen(sig) + 1);
        if (out)
            sprintf(out, "%s.%s", input, sig);
    }
    free(input);
out:
    free(kid);
    json_decref(hdr);
    free(h);
    free(p);
    free(sig);
    return out;
}

/* Parse base64url JSON text s[0..n) as an object; NULL if it is not one. */
static json_t *b64_object(const char *s, size_t n)
{
    size_t len = 0;
    unsigned char *raw = b64_decode(s, n, &len);
    json_t *v = raw ? json_loadb((const char *)raw, len, JSON_REJECT_DUPLICATES, NULL) : NULL;
    free(raw);
    if (!json_is_object(v)) {
        json_decref(v);
        return NULL;
    }
    return v;
}

int fakeapi__token_verify(const unsigned char key[FAKEAPI__TOKEN_KEY_LEN], const char *token,
                          json_t **claims, char *err, size_t errlen)
{
    size_t len = token ? strnlen(token, MAX_TOKEN + 1) : 0;
    const char *d1 = len && len <= MAX_TOKEN ? memchr(token, '.', len) : NULL;
    const char *d2 = d1 ? memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - token)) : NULL;
    if (!d2 || memchr(d2 + 1, '.', len - (size_t)(d2 + 1 - token))) {
        snprintf(err, errlen, "not a JSON Web Token");
        return -1;
    }
    json_t *hdr = b64_object(token, (size_t)(d1 - token));
    const char *alg = json_string_value(json_object_get(hdr, "alg"));
    if (!hdr || !alg || strcmp(alg, "HS256")) {
        snprintf(err, errlen, "%s", hdr ? "unsupported signing algorithm" : "malformed header");
        json_decref(hdr);
        return -1;
    }
    json_decref(hdr);
    char *want = signature(key, token, (size_t)(d2 - token));
    const char *got = d2 + 1;
    size_t wl = want ? strlen(want) : 0;
    bool same = want && strlen(got) == wl;
    unsigned diff = 0;
    for (size_t i = 0; same && i < wl; i++)
        diff |= (unsigned)(want[i] ^ got[i]);
    free(want);
    if (!same || diff) {
        snprintf(err, errlen, "the signature is invalid");
        return -1;
    }
    json_t *c = b64_object(d1 + 1, (size_t)(d2 - d1 - 1));
    if (!c) {
        snprintf(err, errlen, "malformed claims");
        return -1;
    }
    *claims = c;
    return 0;
}
