/*
 * webhook_review.c - what the webhook server answers (webhook_int.h): an
 * AdmissionReview v1 run through a validator or a defaulter (whose changes
 * become a JSON patch, webhook_patch.c), a ConversionReview through a
 * converter; and the ctrl_admission_* builders handlers fill in.
 *
 * As controller-runtime, every review gets HTTP 200 and its outcome in the
 * review (one it cannot read: allowed false, code 400). Runs on the server's
 * connection threads; no state of its own.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webhook_int.h"

#define MAX_WARNINGS 64

struct ctrl_admission_response {
    bool denied;
    int code;
    char reason[64];
    char *message;
    json_t *warnings;
};

/* ---- responses ---- */

static void set_message(ctrl_admission_response *r, const char *fmt, va_list ap)
{
    free(r->message);
    r->message = NULL;
    if (vasprintf(&r->message, fmt, ap) < 0)
        r->message = NULL;
}

void ctrl_admission_deny(ctrl_admission_response *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_message(r, fmt, ap);
    va_end(ap);
    r->denied = true;
    r->code = 403;
    snprintf(r->reason, sizeof r->reason, "Forbidden");
}

void ctrl_admission_deny_status(ctrl_admission_response *r, int code, const char *reason,
                                const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_message(r, fmt, ap);
    va_end(ap);
    r->denied = true;
    r->code = code;
    snprintf(r->reason, sizeof r->reason, "%s", reason ? reason : "");
}

void ctrl_admission_warn(ctrl_admission_response *r, const char *fmt, ...)
{
    if (!r->warnings || json_array_size(r->warnings) >= MAX_WARNINGS)
        return;
    char *text = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&text, fmt, ap);
    va_end(ap);
    if (n >= 0)
        json_array_append_new(r->warnings, json_string(text));
    free(text);
}

static const char *str_or_empty(const json_t *o, const char *key)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v ? v : "";
}

char *ctrl__webhook_b64(const char *in, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc((n + 2) / 3 * 4 + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned char)in[i] << 16;
        if (i + 1 < n)
            v |= (unsigned char)in[i + 1] << 8;
        if (i + 2 < n)
            v |= (unsigned char)in[i + 2];
        out[o++] = tab[(v >> 18) & 63];
        out[o++] = tab[(v >> 12) & 63];
        out[o++] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? tab[v & 63] : '=';
    }
    out[o] = '\0';
    return out;
}

/* The "response" of a review: allowed or not, with its Status. */
static json_t *response_new(const char *uid, const ctrl_admission_response *r)
{
    json_t *st = json_pack("{s:i}", "code", r->denied ? r->code : 200);
    if (r->denied && r->reason[0])
        json_object_set_new(st, "reason", json_string(r->reason));
    if (r->message && *r->message)
        json_object_set_new(st, "message", json_string(r->message));
    json_t *resp = json_pack("{s:s, s:b, s:o}", "uid", uid, "allowed", !r->denied, "status", st);
    if (resp && json_array_size(r->warnings))
        json_object_set(resp, "warnings", r->warnings);
    return resp;
}

static void errored(ctrl_admission_response *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void errored(ctrl_admission_response *r, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_message(r, fmt, ap);
    va_end(ap);
    r->denied = true;
    r->code = code;
    r->reason[0] = '\0';
}

/* Run the handler on one review: the AdmissionReview to answer (new). */
static json_t *review(const ctrl__webhook_handler *h, const json_t *in)
{
    const json_t *rq = json_object_get(in, "request");
    const char *uid = str_or_empty(rq, "uid");
    ctrl_admission_response r = {.warnings = json_array()};
    json_t *patch = NULL;
    const char *av = json_string_value(json_object_get(in, "apiVersion"));
    const char *kind = json_string_value(json_object_get(in, "kind"));
    if (!av || !kind || strcmp(av, "admission.k8s.io/v1") || strcmp(kind, "AdmissionReview")) {
        errored(&r, 400,
                "unsupported AdmissionReview: apiVersion %s, kind %s (want "
                "admission.k8s.io/v1 AdmissionReview)",
                av ? av : "", kind ? kind : "");
        goto answer;
    }
    if (!json_is_object(rq)) {
        errored(&r, 400, "the AdmissionReview has no request");
        goto answer;
    }
    const json_t *k = json_object_get(rq, "kind");
    const json_t *res = json_object_get(rq, "resource");
    const json_t *obj = json_object_get(rq, "object"), *old = json_object_get(rq, "oldObject");
    ctrl_admission_request req = {
        .uid = uid,
        .operation = str_or_empty(rq, "operation"),
        .group = str_or_empty(k, "group"),
        .version = str_or_empty(k, "version"),
        .kind = str_or_empty(k, "kind"),
        .resource = str_or_empty(res, "resource"),
        .sub_resource = str_or_empty(rq, "subResource"),
        .name = str_or_empty(rq, "name"),
        .ns = str_or_empty(rq, "namespace"),
        .dry_run = json_is_true(json_object_get(rq, "dryRun")),
        .object = json_is_object(obj) ? obj : NULL,
        .old_object = json_is_object(old) ? old : NULL,
        .user_info = json_object_get(rq, "userInfo"),
        .review = in,
    };
    if (h->validate) {
        int rc = h->validate(&req, &r, h->user);
        if (rc < 0 && !r.denied)
            errored(&r, 500, "%s", ctrl_strerror(rc));
        goto answer;
    }
    /* A defaulter: CREATE and UPDATE, on a copy. */
    if (strcmp(req.operation, "CREATE") && strcmp(req.operation, "UPDATE"))
        goto answer;
    if (!req.object) {
        errored(&r, 400, "the request has no object to default");
        goto answer;
    }
    json_t *copy = json_deep_copy(req.object);
    if (!copy) {
        errored(&r, 500, "out of memory");
        goto answer;
    }
    int rc = h->mutate(&req, copy, &r, h->user);
    if (rc < 0 && !r.denied)
        errored(&r, 500, "%s", ctrl_strerror(rc));
    if (!r.denied && ctrl_json_patch_diff(req.object, copy, &patch) < 0)
        errored(&r, 500, "out of memory");
    json_decref(copy);
answer:;
    json_t *resp = response_new(uid, &r);
    if (resp && !r.denied && json_array_size(patch)) {
        char *text = json_dumps(patch, JSON_COMPACT);
        char *b64 = text ? ctrl__webhook_b64(text, strlen(text)) : NULL;
        if (b64) {
            json_object_set_new(resp, "patch", json_string(b64));
            json_object_set_new(resp, "patchType", json_string("JSONPatch"));
        }
        free(b64);
        free(text);
    }
    json_decref(patch);
    json_decref(r.warnings);
    free(r.message);
    return json_pack("{s:s, s:s, s:o?}", "apiVersion", "admission.k8s.io/v1", "kind",
                     "AdmissionReview", "response", resp);
}

/* A ConversionReview's answer (new): every object converted, or a Failure. */
static json_t *conversion(const ctrl__webhook_handler *h, const json_t *in)
{
    const json_t *rq = json_object_get(in, "request");
    const char *uid = str_or_empty(rq, "uid");
    const char *want = json_string_value(json_object_get(rq, "desiredAPIVersion"));
    const char *av = json_string_value(json_object_get(in, "apiVersion"));
    const char *kind = json_string_value(json_object_get(in, "kind"));
    char msg[1024] = "";
    json_t *done = json_array();
    if (!av || !kind || strcmp(av, "apiextensions.k8s.io/v1") || strcmp(kind, "ConversionReview"))
        snprintf(msg, sizeof msg, "unsupported ConversionReview: apiVersion %s, kind %s",
                 av ? av : "", kind ? kind : "");
    else if (!want || !*want)
        snprintf(msg, sizeof msg, "the ConversionReview has no desiredAPIVersion");
    size_t i;
    json_t *o;
    json_array_foreach(msg[0] ? NULL : json_object_get(rq, "objects"), i, o)
    {
        const char *ov = json_string_value(json_object_get(o, "apiVersion"));
        if (ov && !strcmp(ov, want)) {
            json_array_append(done, o);
            continue;
        }
        json_t *out = NULL;
        char why[900] = "";
        int rc = h->convert(o, want, &out, why, sizeof why, h->user);
        const char *got = json_string_value(json_object_get(out, "apiVersion"));
        if (rc < 0 || !json_is_object(out) || !got || strcmp(got, want)) {
            snprintf(msg, sizeof msg, "cannot convert %s %s to %s: %s", ov ? ov : "",
                     str_or_empty(json_object_get(o, "metadata"), "name"), want,
                     rc < 0 ? (why[0] ? why : ctrl_strerror(rc))
                            : "the converter returned another apiVersion");
            json_decref(out);
            break;
        }
        json_array_append_new(done, out);
    }
    json_t *result = msg[0] ? json_pack("{s:s, s:s}", "status", "Failure", "message", msg)
                            : json_pack("{s:s}", "status", "Success");
    json_t *resp = json_pack("{s:s, s:o, s:o}", "uid", uid, "convertedObjects",
                             msg[0] ? json_array() : json_incref(done), "result", result);
    json_decref(done);
    return json_pack("{s:s, s:s, s:o?}", "apiVersion", "apiextensions.k8s.io/v1", "kind",
                     "ConversionReview", "response", resp);
}

json_t *ctrl__webhook_answer(const ctrl__webhook_handler *h, const json_t *in)
{
    return h->convert ? conversion(h, in) : review(h, in);
}
