/*
 * test_token.c - service-account JWTs (token.h): the key from the seed, the
 * claims kube-apiserver issues, HS256 signing and what verification refuses.
 */
#include "token.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* Decode one base64url part [s, e) as a JSON object (new reference). */
static json_t *part(const char *s, const char *e)
{
    char out[4096];
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;
    for (const char *p = s; p < e; p++) {
        const char *at = strchr(al, *p);
        cr_assert(*p && at, "not base64url: '%c'", *p);
        acc = (acc << 6 | (unsigned)(at - al)) & 0xffffff;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char)(acc >> bits & 0xff);
        }
    }
    json_t *v = json_loadb(out, o, 0, NULL);
    cr_assert(json_is_object(v), "%.*s", (int)o, out);
    return v;
}

/* base64url of text, unpadded (malloc'ed). */
static char *enc(const char *text)
{
    size_t n = strlen(text);
    char *out = malloc(n / 3 * 4 + 5);
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        acc = (acc << 8 | (unsigned char)text[i]) & 0xffffff;
        bits += 8;
        while (bits >= 6) {
            bits -= 6;
            out[o++] = al[acc >> bits & 63];
        }
    }
    if (bits)
        out[o++] = al[(acc << (6 - bits)) & 63];
    out[o] = '\0';
    return out;
}

static json_t *sample_claims(void)
{
    fakeapi__token_subject sub = {.ns = "team",
                                  .sa_name = "robot",
                                  .sa_uid = "sa-uid",
                                  .pod_name = "p",
                                  .pod_uid = "pod-uid",
                                  .node_name = "n1",
                                  .node_uid = "node-uid",
                                  .jti = "j-1"};
    json_t *auds = json_pack("[s, s]", "vault", FAKEAPI__SA_ISSUER);
    json_t *c = fakeapi__token_claims(&sub, auds, 1800000000, 3600);
    json_decref(auds);
    cr_assert(c);
    return c;
}

Test(token, key_from_seed)
{
    unsigned char a[FAKEAPI__TOKEN_KEY_LEN], b[FAKEAPI__TOKEN_KEY_LEN], c[FAKEAPI__TOKEN_KEY_LEN];
    fakeapi__token_key_init(a, 42);
    fakeapi__token_key_init(b, 42);
    fakeapi__token_key_init(c, 43);
    cr_assert_eq(memcmp(a, b, sizeof a), 0, "the same seed, the same key");
    cr_assert_neq(memcmp(a, c, sizeof a), 0, "another seed, another key");
}

Test(token, claims_shape)
{
    json_t *c = sample_claims();
    cr_assert_str_eq(json_string_value(json_object_get(c, "iss")), FAKEAPI__SA_ISSUER);
    cr_assert_str_eq(json_string_value(json_object_get(c, "sub")),
                     "system:serviceaccount:team:robot");
    cr_assert_eq(json_array_size(json_object_get(c, "aud")), 2);
    cr_assert_eq(json_integer_value(json_object_get(c, "iat")), 1800000000);
    cr_assert_eq(json_integer_value(json_object_get(c, "nbf")), 1800000000);
    cr_assert_eq(json_integer_value(json_object_get(c, "exp")), 1800003600);
    cr_assert_str_eq(json_string_value(json_object_get(c, "jti")), "j-1");
    json_t *k = json_object_get(c, "kubernetes.io");
    cr_assert_str_eq(json_string_value(json_object_get(k, "namespace")), "team");
    json_t *sa = json_object_get(k, "serviceaccount");
    cr_assert_str_eq(json_string_value(json_object_get(sa, "name")), "robot");
    cr_assert_str_eq(json_string_value(json_object_get(sa, "uid")), "sa-uid");
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(k, "pod"), "uid")),
                     "pod-uid");
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(k, "node"), "name")), "n1");
    cr_assert_null(json_object_get(k, "secret"), "absent refs are left out");
    json_decref(c);

    /* No bound object and no jti: only the service account. */
    fakeapi__token_subject bare = {.ns = "d", .sa_name = "s", .sa_uid = "u"};
    json_t *auds = json_pack("[s]", "x");
    c = fakeapi__token_claims(&bare, auds, 0, 600);
    k = json_object_get(c, "kubernetes.io");
    cr_assert_eq(json_object_size(k), 2, "namespace and serviceaccount");
    cr_assert_null(json_object_get(c, "jti"));
    json_decref(c);
    json_decref(auds);
}

Test(token, sign_and_verify)
{
    unsigned char key[FAKEAPI__TOKEN_KEY_LEN];
    fakeapi__token_key_init(key, 7);
    json_t *c = sample_claims();
    char *tok = fakeapi__token_sign(key, c);
    cr_assert(tok);
    cr_assert_null(strpbrk(tok, "=+/ \n"), "compact, base64url, unpadded: %s", tok);
    const char *d1 = strchr(tok, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
    cr_assert(d2 && !strchr(d2 + 1, '.'), "three parts");
    json_t *hdr = part(tok, d1);
    cr_assert_str_eq(json_string_value(json_object_get(hdr, "alg")), "HS256");
    cr_assert(json_string_value(json_object_get(hdr, "kid")));
    json_decref(hdr);
    json_t *pl = part(d1 + 1, d2);
    cr_assert(json_equal(pl, c), "the payload is the claims");
    json_decref(pl);

    json_t *back = NULL;
    char err[256] = "";
    cr_assert_eq(fakeapi__token_verify(key, tok, &back, err, sizeof err), 0, "%s", err);
    cr_assert(json_equal(back, c));
    json_decref(back);

    /* Another server's key. */
    unsigned char other[FAKEAPI__TOKEN_KEY_LEN];
    fakeapi__token_key_init(other, 8);
    back = NULL;
    cr_assert_eq(fakeapi__token_verify(other, tok, &back, err, sizeof err), -1);
    cr_assert_str_eq(err, "the signature is invalid");
    cr_assert_null(back, "untouched on failure");

    /* A payload changed under the same signature. */
    char *evil = enc("{\"sub\":\"system:serviceaccount:kube-system:admin\"}");
    char forged[8192];
    snprintf(forged, sizeof forged, "%.*s.%s%s", (int)(d1 - tok), tok, evil, d2);
    cr_assert_eq(fakeapi__token_verify(key, forged, &back, err, sizeof err), -1);
    cr_assert_str_eq(err, "the signature is invalid");
    free(evil);

    /* alg none, and an empty signature. */
    char *none = enc("{\"alg\":\"none\"}");
    snprintf(forged, sizeof forged, "%s%.*s.", none, (int)(d2 - d1), d1);
    cr_assert_eq(fakeapi__token_verify(key, forged, &back, err, sizeof err), -1);
    cr_assert_str_eq(err, "unsupported signing algorithm");
    free(none);
    snprintf(forged, sizeof forged, "%.*s.", (int)(d2 - tok), tok);
    cr_assert_eq(fakeapi__token_verify(key, forged, &back, err, sizeof err), -1);

    /* Not a JWT at all. */
    static const char *const junk[] = {"", "abc", "a.b", "a.b.c.d", "!!.b.c", "fakeapi"};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++)
        cr_assert_eq(fakeapi__token_verify(key, junk[i], &back, err, sizeof err), -1, "%s",
                     junk[i]);
    cr_assert_eq(fakeapi__token_verify(key, NULL, &back, err, sizeof err), -1);
    cr_assert_null(back);
    free(tok);
    json_decref(c);
}
