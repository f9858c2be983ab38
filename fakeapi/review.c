/*
 * review.c - the create-only kinds that are answered, never stored:
 * TokenReview and SelfSubjectReview (authentication.k8s.io/v1), the access
 * reviews (authorization.k8s.io/v1), and serviceaccounts/token, which issues
 * the tokens TokenReview checks (JWTs from token.h). POST .../bindings goes
 * on to verbs_pod.c.
 *
 * Who a request is: the service account of a valid token it carries as a
 * bearer token, else the server's admin (the user of the kubeconfig that
 * `fakeapi serve` writes). fakeapi has no authorization: every request is
 * allowed, so every access review says allowed, and the rules review says
 * everything. Runs on the request's thread; reads take the store lock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objmeta.h"
#include "timefmt.h"
#include "token.h"
#include "verbs.h"

#define AUTHN "authentication.k8s.io"
#define AUTHZ "authorization.k8s.io"
#define ADMIN_USER "fakeapi-admin"
#define ALLOWED_REASON "fakeapi has no authorization: every request is allowed"
/* The clock skew go-jose allows on exp and nbf, as kube-apiserver uses it. */
#define LEEWAY_S 60
#define DEFAULT_EXPIRATION_S 3600
#define MIN_EXPIRATION_S 600

static const char *jstr(const json_t *v, const char *key)
{
    return json_string_value(json_object_get(v, key));
}

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

/* 422 Invalid for one field, with the cause, as field.Invalid words it. */
static void invalid_kind(fakeapi__ctx *c, const char *kind, const char *group, const char *name,
                         const char *field, const char *shown, const char *why)
{
    char cause[700];
    snprintf(cause, sizeof cause, "Invalid value: %s: %s", shown, why);
    json_t *details =
        json_pack("{s:s, s:s, s:s, s:[{s:s, s:s, s:s}]}", "name", name, "group", group, "kind",
                  kind, "causes", "reason", "FieldValueInvalid", "message", cause, "field", field);
    fakeapi__resp_error(c->resp, 422, "Invalid", details, "%s.%s \"%s\" is invalid: %s: %s", kind,
                        group, name, field, cause);
}

/* The same for the review kind being posted. */
static void invalid(fakeapi__ctx *c, const char *name, const char *field, const char *shown,
                    const char *why)
{
    invalid_kind(c, c->res->kind, c->res->group, name, field, shown, why);
}

/* The same for a TokenRequest. */
static void invalid_tr(fakeapi__ctx *c, const char *field, const char *shown, const char *why)
{
    invalid_kind(c, "TokenRequest", AUTHN, c->rt->name, field, shown, why);
}

/* The body, checked to be an object of kind (when it names one). NULL having answered. */
static json_t *review_body(fakeapi__ctx *c, const char *kind, const char *group_version)
{
    json_t *b = fakeapi__body_object(c);
    if (!b)
        return NULL;
    const char *k = jstr(b, "kind"), *av = jstr(b, "apiVersion");
    if (!json_is_object(b)) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL, "the body is not a %s object", kind);
    } else if (k && strcmp(k, kind)) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                            "the kind in the data (%s) does not match the expected kind (%s)", k,
                            kind);
    } else if (av && strcmp(av, group_version)) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                            "the API version in the data (%s) does not match the expected API "
                            "version (%s)",
                            av, group_version);
    } else {
        return b;
    }
    json_decref(b);
    return NULL;
}

/* Answer 201 with the object as sent, typed kind in group_version, with
 * its status (stolen). */
static void answer_as(fakeapi__ctx *c, const char *kind, const char *group_version, json_t *body,
                      json_t *status)
{
    json_object_set_new(body, "kind", json_string(kind));
    json_object_set_new(body, "apiVersion", json_string(group_version));
    json_t *meta = json_object_get(body, "metadata");
    if (!json_is_object(meta))
        json_object_set_new(body, "metadata", meta = json_object());
    if (!json_object_get(meta, "creationTimestamp"))
        json_object_set_new(meta, "creationTimestamp", json_null());
    if (!json_is_object(json_object_get(body, "spec")))
        json_object_set_new(body, "spec", json_object());
    json_object_set_new(body, "status", status);
    fakeapi__resp_json(c->resp, 201, json_incref(body));
}

/* answer_as for the review kind posted. */
static void answer_review(fakeapi__ctx *c, json_t *body, json_t *status)
{
    answer_as(c, c->res->kind, c->res->group_version, body, status);
}

/* spec.audiences: absent, or an array of strings. false when it answered. */
static bool audiences_typed(fakeapi__ctx *c, const char *kind, const json_t *spec)
{
    char gostruct[64];
    snprintf(gostruct, sizeof gostruct, "%sSpec", kind);
    const json_t *a = json_object_get(spec, "audiences");
    if (!fakeapi__typed(c, kind, gostruct, "spec.audiences", a, JSON_ARRAY, "[]string"))
        return false;
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v)
    {
        if (!fakeapi__typed(c, kind, gostruct, "spec.audiences", v, JSON_STRING, "string"))
            return false;
    }
    return true;
}

/* ---- tokens ---------------------------------------------------------------------------- */

/* Read one object with the store lock taken here: 0, 1 absent, -1 error. */
static int get_locked(fakeapi__ctx *c, const char *key, const char *ns, const char *name,
                      json_t **out)
{
    fakeapi__store_lock(c->srv->store);
    int rc = fakeapi__store_get(c->srv->store, key, ns, name, out);
    fakeapi__store_unlock(c->srv->store);
    return rc;
}

/* The token's audiences that are among want, as a new array. */
static json_t *common_audiences(const json_t *claims, const json_t *want)
{
    json_t *aud = json_object_get(claims, "aud"), *out = json_array();
    json_t *one = json_is_string(aud) ? json_pack("[O]", aud) : json_incref(aud);
    size_t i, j;
    json_t *a, *w;
    json_array_foreach(one, i, a)
    {
        json_array_foreach(want, j, w)
        {
            if (json_equal(a, w)) {
                json_array_append(out, a);
                break;
            }
        }
    }
    json_decref(one);
    return out;
}

/*
 * Check a token as kube-apiserver's service-account authenticator does:
 * signature, issuer, nbf/exp by the server's clock (with go-jose's leeway),
 * the audiences (want: borrowed array), and that the service account (and
 * the pod or secret it is bound to) still exists with the uid the token
 * names. 0 with the user (userInfo) and the audiences it is valid for in new
 * references, or -1 with the reason in err.
 */
static int check_token(fakeapi__ctx *c, const char *token, const json_t *want, json_t **user,
                       json_t **auds, char *err, size_t errlen)
{
    json_t *claims = NULL, *found = NULL, *obj = NULL;
    char why[400];
    int rc = -1;
    if (fakeapi__token_verify(c->srv->sa_key, token, &claims, why, sizeof why) < 0) {
        snprintf(err, errlen, "invalid bearer token, %s", why);
        return -1;
    }
    int64_t now = fakeapi__srv_now(c->srv) / 1000000000;
    const json_t *k8s = json_object_get(claims, "kubernetes.io");
    const json_t *sa = json_object_get(k8s, "serviceaccount");
    const json_t *pod = json_object_get(k8s, "pod"), *secret = json_object_get(k8s, "secret");
    const char *ns = jstr(k8s, "namespace"), *sa_name = jstr(sa, "name");
    const char *iss = jstr(claims, "iss");
    if (!iss || strcmp(iss, FAKEAPI__SA_ISSUER) || !ns || !sa_name) {
        snprintf(err, errlen, "invalid bearer token, not a service account token of this server");
        goto out;
    }
    if (json_integer_value(json_object_get(claims, "nbf")) > now + LEEWAY_S) {
        snprintf(err, errlen, "service account token is not valid yet");
        goto out;
    }
    if (json_integer_value(json_object_get(claims, "exp")) < now - LEEWAY_S) {
        snprintf(err, errlen, "service account token has expired");
        goto out;
    }
    found = common_audiences(claims, want);
    if (!json_array_size(found)) {
        char *have = json_dumps(json_object_get(claims, "aud"), JSON_COMPACT | JSON_ENCODE_ANY);
        char *asked = json_dumps(want, JSON_COMPACT);
        snprintf(err, errlen, "token audiences %s is invalid for the target audiences %s",
                 or_empty(have), or_empty(asked));
        free(have);
        free(asked);
        goto out;
    }
    int got = get_locked(c, "/serviceaccounts", ns, sa_name, &obj);
    const char *sa_uid = or_empty(jstr(sa, "uid"));
    if (got != 0) {
        snprintf(err, errlen, got == 1 ? "serviceaccounts \"%s\" not found" : "%s: storage error",
                 sa_name);
        goto out;
    }
    if (fakeapi__meta_str(obj, "deletionTimestamp")) {
        snprintf(err, errlen, "service account %s/%s has been deleted", ns, sa_name);
        goto out;
    }
    if (strcmp(or_empty(fakeapi__meta_str(obj, "uid")), sa_uid)) {
        snprintf(err, errlen, "service account UID (%s) does not match claim (%s)",
                 or_empty(fakeapi__meta_str(obj, "uid")), sa_uid);
        goto out;
    }
    const json_t *bound = pod ? pod : secret;
    if (bound) {
        json_decref(obj);
        obj = NULL;
        const char *what = pod ? "pod" : "secret";
        if (get_locked(c, pod ? "/pods" : "/secrets", ns, or_empty(jstr(bound, "name")), &obj) !=
                0 ||
            fakeapi__meta_str(obj, "deletionTimestamp")) {
            snprintf(err, errlen, "service account token has been invalidated");
            goto out;
        }
        if (strcmp(or_empty(fakeapi__meta_str(obj, "uid")), or_empty(jstr(bound, "uid")))) {
            snprintf(err, errlen, "%s UID (%s) does not match service account %s ref claim (%s)",
                     what, or_empty(fakeapi__meta_str(obj, "uid")), what,
                     or_empty(jstr(bound, "uid")));
            goto out;
        }
    }
    char g2[300];
    snprintf(g2, sizeof g2, "system:serviceaccounts:%s", ns);
    json_t *extra = json_object();
    if (pod) {
        json_object_set_new(extra, "authentication.kubernetes.io/pod-name",
                            json_pack("[s]", or_empty(jstr(pod, "name"))));
        json_object_set_new(extra, "authentication.kubernetes.io/pod-uid",
                            json_pack("[s]", or_empty(jstr(pod, "uid"))));
    }
    const json_t *node = json_object_get(k8s, "node");
    if (node) {
        json_object_set_new(extra, "authentication.kubernetes.io/node-name",
                            json_pack("[s]", or_empty(jstr(node, "name"))));
        json_object_set_new(extra, "authentication.kubernetes.io/node-uid",
                            json_pack("[s]", or_empty(jstr(node, "uid"))));
    }
    if (jstr(claims, "jti")) {
        char cred[128];
        snprintf(cred, sizeof cred, "JTI=%s", jstr(claims, "jti"));
        json_object_set_new(extra, "authentication.kubernetes.io/credential-id",
                            json_pack("[s]", cred));
    }
    *user = json_pack("{s:s, s:s, s:[s, s, s], s:o}", "username", or_empty(jstr(claims, "sub")),
                      "uid", sa_uid, "groups", "system:serviceaccounts", g2, "system:authenticated",
                      "extra", extra);
    *auds = found;
    found = NULL;
    rc = *user ? 0 : -1;
out:
    json_decref(found);
    json_decref(obj);
    json_decref(claims);
    return rc;
}

/* The user the request is made as (userInfo), a new reference. */
static json_t *requester(fakeapi__ctx *c)
{
    json_t *user = NULL, *auds = NULL;
    json_t *want = json_pack("[s]", FAKEAPI__SA_ISSUER);
    char err[512];
    const char *tok = c->req->token;
    if (!tok || !*tok || check_token(c, tok, want, &user, &auds, err, sizeof err) < 0)
        user = json_pack("{s:s, s:[s, s]}", "username", ADMIN_USER, "groups", "system:masters",
                         "system:authenticated");
    json_decref(auds);
    json_decref(want);
    return user;
}

static void token_review(fakeapi__ctx *c, json_t *body)
{
    const json_t *spec = json_object_get(body, "spec");
    if (!fakeapi__typed(c, "TokenReview", "TokenReview", "spec", spec, JSON_OBJECT,
                        "v1.TokenReviewSpec") ||
        !fakeapi__typed(c, "TokenReview", "TokenReviewSpec", "spec.token",
                        json_object_get(spec, "token"), JSON_STRING, "string") ||
        !audiences_typed(c, "TokenReview", spec))
        return;
    const char *token = jstr(spec, "token");
    if (!token || !*token) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                            "token is required for TokenReview in authentication");
        return;
    }
    const json_t *asked = json_object_get(spec, "audiences");
    json_t *want = json_array_size(asked) ? json_incref((json_t *)asked)
                                          : json_pack("[s]", FAKEAPI__SA_ISSUER);
    json_t *user = NULL, *auds = NULL;
    char err[600];
    json_t *status;
    if (check_token(c, token, want, &user, &auds, err, sizeof err) == 0)
        status = json_pack("{s:b, s:o, s:o}", "authenticated", 1, "user", user, "audiences", auds);
    else
        status = json_pack("{s:{}, s:s}", "user", "error", err);
    json_decref(want);
    answer_review(c, body, status);
}

/* ---- serviceaccounts/token --------------------------------------------------------- */

/* The object a TokenRequest binds to, as the token names it. 0, or -1 having answered. */
static int bound_object(fakeapi__ctx *c, const json_t *ref, fakeapi__token_subject *sub,
                        json_t **keep)
{
    const char *kind = or_empty(jstr(ref, "kind")), *av = or_empty(jstr(ref, "apiVersion"));
    const char *name = or_empty(jstr(ref, "name")), *uid = jstr(ref, "uid");
    const char *slash = strchr(av, '/');
    bool core = !slash;
    const char *key = NULL, *ns = c->ns;
    if (core && !strcmp(kind, "Pod"))
        key = "/pods";
    else if (core && !strcmp(kind, "Secret"))
        key = "/secrets";
    else if (core && !strcmp(kind, "Node"))
        key = "/nodes", ns = "";
    if (!key) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                            "cannot bind token to object of type %.*s/%s, Kind=%s",
                            slash ? (int)(slash - av) : 0, av, slash ? slash + 1 : av, kind);
        return -1;
    }
    json_t *obj = NULL;
    int rc = get_locked(c, key, ns, name, &obj);
    if (rc != 0) {
        char plural[16];
        snprintf(plural, sizeof plural, "%s", key + 1);
        fakeapi__resp_error(c->resp, rc == 1 ? 404 : 500, NULL,
                            rc == 1 ? json_pack("{s:s, s:s}", "name", name, "kind", plural) : NULL,
                            rc == 1 ? "%s \"%s\" not found" : "%s \"%s\": storage error", plural,
                            name);
        return -1;
    }
    const char *have = or_empty(fakeapi__meta_str(obj, "uid"));
    if (!strcmp(kind, "Pod")) {
        const char *psa = jstr(json_object_get(obj, "spec"), "serviceAccountName");
        if (!psa || !*psa)
            psa = "default";
        if (strcmp(psa, c->rt->name)) {
            fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                                "cannot bind token for serviceaccount \"%s\" to pod running with "
                                "serviceaccount \"%s\"",
                                c->rt->name, psa);
            json_decref(obj);
            return -1;
        }
    }
    if (uid && *uid && strcmp(uid, have)) {
        fakeapi__resp_error(c->resp, 409, "Conflict",
                            json_pack("{s:s, s:s}", "name", name, "kind", kind),
                            "Operation cannot be fulfilled on %s \"%s\": the UID in the bound "
                            "object reference (%s) does not match the UID in record (%s). The "
                            "object might have been deleted and then recreated",
                            kind, name, uid, have);
        json_decref(obj);
        return -1;
    }
    *keep = obj;
    if (!strcmp(kind, "Pod")) {
        sub->pod_name = fakeapi__meta_str(obj, "name");
        sub->pod_uid = have;
    } else if (!strcmp(kind, "Secret")) {
        sub->secret_name = fakeapi__meta_str(obj, "name");
        sub->secret_uid = have;
    } else {
        sub->node_name = fakeapi__meta_str(obj, "name");
        sub->node_uid = have;
    }
    return 0;
}

/* The TokenRequest's spec.expirationSeconds: the default, or -1 having answered. */
static long long expiration(fakeapi__ctx *c, const json_t *spec)
{
    const json_t *e = json_object_get(spec, "expirationSeconds");
    if (!e || json_is_null(e))
        return DEFAULT_EXPIRATION_S;
    if (!fakeapi__typed(c, "TokenRequest", "TokenRequestSpec", "spec.expirationSeconds", e,
                        JSON_INTEGER, "int64"))
        return -1;
    long long n = json_integer_value(e);
    char shown[32];
    snprintf(shown, sizeof shown, "%lld", n);
    if (n < MIN_EXPIRATION_S) {
        invalid_tr(c, "spec.expirationSeconds", shown,
                   "may not specify a duration less than 10 minutes");
        return -1;
    }
    if (n > (1LL << 32)) {
        invalid_tr(c, "spec.expirationSeconds", shown,
                   "may not specify a duration larger than 2^32 seconds");
        return -1;
    }
    return n;
}

void fakeapi__do_token_request(fakeapi__ctx *c)
{
    if (strcmp(c->req->method, "POST")) {
        fakeapi__resp_error(c->resp, 405, "MethodNotAllowed", NULL,
                            "the server does not allow this method on the requested resource");
        return;
    }
    json_t *body = review_body(c, "TokenRequest", AUTHN "/v1"), *sa = NULL, *bound = NULL,
           *node = NULL;
    if (!body)
        goto out;
    const char *name = fakeapi__meta_str(body, "name"), *ns = fakeapi__meta_str(body, "namespace");
    if (name && *name && strcmp(name, c->rt->name)) {
        char shown[300];
        snprintf(shown, sizeof shown, "\"%s\"", name);
        invalid_tr(c, "metadata.name", shown, "must match the service account name if specified");
        goto out;
    }
    if (ns && *ns && strcmp(ns, c->ns)) {
        char shown[300];
        snprintf(shown, sizeof shown, "\"%s\"", ns);
        invalid_tr(c, "metadata.namespace", shown,
                   "must match the service account namespace if specified");
        goto out;
    }
    json_t *spec = json_object_get(body, "spec");
    if (!fakeapi__typed(c, "TokenRequest", "TokenRequest", "spec", spec, JSON_OBJECT,
                        "v1.TokenRequestSpec") ||
        !audiences_typed(c, "TokenRequest", spec) ||
        !fakeapi__typed(c, "TokenRequest", "TokenRequestSpec", "spec.boundObjectRef",
                        json_object_get(spec, "boundObjectRef"), JSON_OBJECT,
                        "v1.BoundObjectReference"))
        goto out;
    if (!json_is_object(spec))
        json_object_set_new(body, "spec", spec = json_object());
    long long exp = expiration(c, spec);
    if (exp < 0)
        goto out;
    int rc = get_locked(c, "/serviceaccounts", c->ns, c->rt->name, &sa);
    if (rc != 0) {
        if (rc == 1)
            fakeapi__not_found(c, c->rt->name);
        else
            fakeapi__storage_error(c);
        goto out;
    }
    fakeapi__token_subject sub = {
        .ns = c->ns, .sa_name = c->rt->name, .sa_uid = or_empty(fakeapi__meta_str(sa, "uid"))};
    const json_t *ref = json_object_get(spec, "boundObjectRef");
    if (json_is_object(ref) && bound_object(c, ref, &sub, &bound) < 0)
        goto out;
    /* A pod-bound token also names the pod's node, when that node exists. */
    const char *node_name = sub.pod_name ? jstr(json_object_get(bound, "spec"), "nodeName") : NULL;
    if (node_name && *node_name && get_locked(c, "/nodes", "", node_name, &node) == 0) {
        sub.node_name = fakeapi__meta_str(node, "name");
        sub.node_uid = or_empty(fakeapi__meta_str(node, "uid"));
    }
    json_t *auds = json_object_get(spec, "audiences");
    if (!json_array_size(auds))
        json_object_set_new(spec, "audiences", auds = json_pack("[s]", FAKEAPI__SA_ISSUER));
    json_object_set_new(spec, "expirationSeconds", json_integer(exp));
    char jti[40];
    fakeapi__store_lock(c->srv->store);
    fakeapi__rng_uuid(&c->srv->rng, jti);
    fakeapi__store_unlock(c->srv->store);
    sub.jti = jti;
    int64_t now = fakeapi__srv_now(c->srv) / 1000000000;
    json_t *claims = fakeapi__token_claims(&sub, auds, now, exp);
    char *tok = claims ? fakeapi__token_sign(c->srv->sa_key, claims) : NULL;
    json_decref(claims);
    if (!tok) {
        fakeapi__resp_error(c->resp, 500, "InternalError", NULL, "failed to generate token");
        goto out;
    }
    char when[40];
    fakeapi__fmt_time((now + exp) * 1000000000, when, sizeof when);
    json_t *meta = fakeapi__meta(body);
    json_object_set_new(meta, "name", json_string(c->rt->name));
    json_object_set_new(meta, "namespace", json_string(c->ns));
    answer_as(c, "TokenRequest", AUTHN "/v1", body,
              json_pack("{s:s, s:s}", "token", tok, "expirationTimestamp", when));
    free(tok);
out:
    json_decref(body);
    json_decref(sa);
    json_decref(bound);
    json_decref(node);
}

/* ---- access reviews ----------------------------------------------------------------- */

/* Exactly one of resourceAttributes and nonResourceAttributes. false having answered. */
static bool attributes_ok(fakeapi__ctx *c, const json_t *spec, bool local)
{
    const json_t *ra = json_object_get(spec, "resourceAttributes");
    const json_t *nra = json_object_get(spec, "nonResourceAttributes");
    bool has_ra = json_is_object(ra), has_nra = json_is_object(nra);
    if (local && has_nra) {
        invalid(c, "", "spec.nonResourceAttributes", "{}", "disallowed on this kind of request");
        return false;
    }
    if (has_ra == has_nra) {
        invalid(c, "", "spec.resourceAttributes", has_ra ? "{}" : "\"null\"",
                "exactly one of nonResourceAttributes or resourceAttributes must be specified");
        return false;
    }
    return true;
}

static void access_review(fakeapi__ctx *c, json_t *body)
{
    const char *kind = c->res->kind;
    bool local = !strcmp(kind, "LocalSubjectAccessReview");
    bool subject = local || !strcmp(kind, "SubjectAccessReview");
    json_t *spec = json_object_get(body, "spec");
    if (!attributes_ok(c, spec, local))
        return;
    if (subject && !*or_empty(jstr(spec, "user")) &&
        !json_array_size(json_object_get(spec, "groups"))) {
        invalid(c, "", "spec.user", "\"\"", "at least one of user or group must be specified");
        return;
    }
    if (local) {
        const char *mns = or_empty(fakeapi__meta_str(body, "namespace"));
        const char *rns = or_empty(jstr(json_object_get(spec, "resourceAttributes"), "namespace"));
        if (*mns && strcmp(mns, c->ns)) {
            fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                                "spec.resourceAttributes.namespace must match namespace: %s",
                                c->ns);
            return;
        }
        if (strcmp(rns, c->ns)) {
            char shown[300];
            snprintf(shown, sizeof shown, "\"%s\"", rns);
            invalid(c, "", "spec.resourceAttributes.namespace", shown,
                    "must match metadata.namespace");
            return;
        }
        fakeapi__meta_set_str(body, "namespace", c->ns);
    }
    answer_review(c, body, json_pack("{s:b, s:s}", "allowed", 1, "reason", ALLOWED_REASON));
}

static void rules_review(fakeapi__ctx *c, json_t *body)
{
    const char *ns = jstr(json_object_get(body, "spec"), "namespace");
    if (!ns || !*ns) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL, "no namespace on request");
        return;
    }
    answer_review(c, body,
                  json_pack("{s:[{s:[s], s:[s], s:[s]}], s:[{s:[s], s:[s]}], s:b}", "resourceRules",
                            "verbs", "*", "apiGroups", "*", "resources", "*", "nonResourceRules",
                            "verbs", "*", "nonResourceURLs", "*", "incomplete", 0));
}

void fakeapi__do_review(fakeapi__ctx *c)
{
    if (strcmp(c->req->method, "POST")) {
        fakeapi__resp_error(c->resp, 405, "MethodNotAllowed", NULL,
                            "the server does not allow this method on the requested resource");
        return;
    }
    const char *kind = c->res->kind;
    if (!strcmp(kind, "Binding")) {
        fakeapi__do_binding(c);
        return;
    }
    json_t *body = review_body(c, kind, c->res->group_version);
    if (!body)
        return;
    if (!strcmp(kind, "TokenReview"))
        token_review(c, body);
    else if (!strcmp(kind, "SelfSubjectReview"))
        answer_review(c, body, json_pack("{s:o}", "userInfo", requester(c)));
    else if (!strcmp(kind, "SelfSubjectRulesReview"))
        rules_review(c, body);
    else
        access_review(c, body);
    json_decref(body);
}
