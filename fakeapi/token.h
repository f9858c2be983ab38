/*
 * token.h - service-account tokens: JSON Web Tokens signed with HS256
 * (HMAC-SHA256, GnuTLS) under a key each server derives from its seed.
 *
 * The claims are the ones kube-apiserver puts in a TokenRequest's token
 * (iss, sub, aud, exp, iat, nbf, jti and the private "kubernetes.io" claim);
 * only the signature algorithm differs (the real server signs RS256 with a
 * key pair it is given). Nothing here reads the store or the clock: the
 * callers (verbs_pod.c issues, review.c verifies) pass times and objects in.
 *
 * Reentrant: any thread.
 */
#ifndef FAKEAPI_TOKEN_H
#define FAKEAPI_TOKEN_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

/* The issuer (and default audience) kube-apiserver has under kubeadm and kind. */
#define FAKEAPI__SA_ISSUER "https://kubernetes.default.svc.cluster.local"

#define FAKEAPI__TOKEN_KEY_LEN 32

/* Fill key with the signing key of a server started with seed: the same
 * seed gives the same key, so a scenario's tokens repeat run after run. */
void fakeapi__token_key_init(unsigned char key[FAKEAPI__TOKEN_KEY_LEN], uint64_t seed);

/* What a token is about. Strings are borrowed; NULL or "" for absent refs. */
typedef struct fakeapi__token_subject {
    const char *ns, *sa_name, *sa_uid;
    const char *pod_name, *pod_uid;       /* a Pod-bound token */
    const char *secret_name, *secret_uid; /* a Secret-bound token */
    const char *node_name, *node_uid;     /* a Node-bound token, or the pod's node */
    const char *jti;
} fakeapi__token_subject;

/*
 * The claims of a token for sub, valid from now_s (seconds since the epoch)
 * for exp_s seconds, for the audiences auds (an array of strings, borrowed).
 * A new object, or NULL on allocation failure.
 */
json_t *fakeapi__token_claims(const fakeapi__token_subject *sub, const json_t *auds, int64_t now_s,
                              int64_t exp_s);

/* The compact JWS "header.payload.signature" of claims (borrowed), signed
 * with key: malloc'ed, or NULL on allocation failure. */
char *fakeapi__token_sign(const unsigned char key[FAKEAPI__TOKEN_KEY_LEN], const json_t *claims);

/*
 * Check that token is a compact JWS this key signed (alg HS256) and read its
 * claims. Returns 0 and a new object in *claims, or -1 with the reason in err
 * (*claims untouched). Times and audiences are the caller's to check.
 */
int fakeapi__token_verify(const unsigned char key[FAKEAPI__TOKEN_KEY_LEN], const char *token,
                          json_t **claims, char *err, size_t errlen);

#endif
