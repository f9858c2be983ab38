/*
 * verbs_write.c - create, update (PUT) and patch, and the admission steps
 * they share: type and name checks, metadata stamping, generation, finalizer
 * rules, CRD schemas, status/spec separation.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "admission.h"
#include "builtin_check.h"
#include "builtin_default.h"
#include "builtin_valid.h"
#include "convert.h"
#include "decode.h"
#include "jsondup.h"
#include "kh/jsonfast.h"
#include "kh/yaml.h"
#include "objmeta.h"
#include "patch.h"
#include "protobuf.h"
#include "schema.h"
#include "ssa.h"
#include "strbuf.h"
#include "timefmt.h"
#include "types.h"
#include "verbs.h"

#define GENERATE_NAME_TRIES 8
/* kube-apiserver's maxJSONPatchOperations. */
#define MAX_JSON_PATCH_OPS 10000

json_t *fakeapi__details(const fakeapi__resource *res, const char *name)
{
    json_t *d = json_object();
    if (!d)
        return NULL;
    if (name && *name)
        json_object_set_new(d, "name", json_string(name));
    if (*res->group)
        json_object_set_new(d, "group", json_string(res->group));
    json_object_set_new(d, "kind", json_string(res->plural));
    return d;
}

void fakeapi__not_found(fakeapi__ctx *c, const char *name)
{
    char q[300];
    fakeapi__resource_qualified(c->res, q, sizeof q);
    fakeapi__resp_error(c->resp, 404, "NotFound", fakeapi__details(c->res, name),
                        "%s \"%s\" not found", q, name);
}

void fakeapi__storage_error(fakeapi__ctx *c)
{
    fakeapi__resp_error(c->resp, 500, "InternalError", NULL, "storage error: %s",
                        fakeapi__store_errmsg(c->srv->store));
}

bool fakeapi__dry_run(const fakeapi__ctx *c)
{
    const char *d = fakeapi__q(c->req, "dryRun");
    if (d && !strcmp(d, "All"))
        return true;
    if (strcmp(c->req->method, "DELETE") != 0 || !c->req->body_len)
        return false;
    /* kubectl sends DeleteOptions {"dryRun":["All"]} in the body. */
    json_t *opts = json_loadb(c->req->body, c->req->body_len, 0, NULL);
    bool dry = false;
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(opts, "dryRun"), i, v)
    {
        dry |= json_string_value(v) && !strcmp(json_string_value(v), "All");
    }
    json_decref(opts);
    return dry;
}

/* 422 Invalid with one cause. */
static void invalid(fakeapi__ctx *c, const char *name, const char *field, const char *reason,
                    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void invalid_causes(fakeapi__ctx *c, const char *name, json_t *causes)
{
    /* The API server wraps several causes in [...]. */
    fakeapi__strbuf b = {.max = 1u << 20};
    bool many = json_array_size(causes) > 1;
    char q[300];
    snprintf(q, sizeof q, "%s%s%s", c->res->kind, *c->res->group ? "." : "", c->res->group);
    fakeapi__strbuf_addf(&b, "%s \"%s\" is invalid: %s", q, name ? name : "", many ? "[" : "");
    size_t i;
    json_t *cause;
    json_array_foreach(causes, i, cause)
    {
        fakeapi__strbuf_addf(&b, "%s%s: %s", i ? ", " : "",
                             json_string_value(json_object_get(cause, "field")),
                             json_string_value(json_object_get(cause, "message")));
    }
    if (many)
        fakeapi__strbuf_adds(&b, "]");
    char *msg = fakeapi__strbuf_take(&b, NULL);
    json_t *details = fakeapi__details(c->res, name);
    json_object_set_new(details, "kind", json_string(c->res->kind));
    json_object_set(details, "causes", causes);
    fakeapi__resp_json(c->resp, 422,
                       fakeapi__status_new(422, "Invalid", msg ? msg : "invalid", details));
    free(msg);
}

static void invalid(fakeapi__ctx *c, const char *name, const char *field, const char *reason,
                    const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_t *causes =
        json_pack("[{s:s, s:s, s:s}]", "reason", reason, "message", msg, "field", field);
    invalid_causes(c, name, causes);
    json_decref(causes);
}

/*
 * A body with a repeated key: Go's decoder keeps the last one; strict
 * decoding refuses it (400), Warn warns (the default), Ignore says nothing.
 * -1 having answered.
 */
static int duplicate_keys(fakeapi__ctx *c)
{
    const char *fv = fakeapi__q(c->req, "fieldValidation");
    if (fv && !strcmp(fv, "Ignore"))
        return 0;
    bool strict = fv && !strcmp(fv, "Strict");
    json_t *dups = json_array();
    if (!dups || fakeapi__json_duplicates(c->req->body, c->req->body_len, dups) < 0) {
        json_decref(dups);
        fakeapi__resp_error(c->resp, 500, "InternalError", NULL, "out of memory");
        return -1;
    }
    fakeapi__strbuf b = {.max = 64u << 10};
    fakeapi__strbuf_adds(&b, "strict decoding error: ");
    size_t i;
    json_t *d;
    json_array_foreach(dups, i, d)
    {
        char w[600];
        snprintf(w, sizeof w, "duplicate field \"%s\"", json_string_value(d));
        if (strict)
            fakeapi__strbuf_addf(&b, "%s%s", i ? ", " : "", w);
        else
            fakeapi__resp_warn(c->resp, w);
    }
    int rc = 0;
    if (strict && json_array_size(dups)) {
        char *msg = fakeapi__strbuf_take(&b, NULL);
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL, "%s",
                            msg ? msg : "strict decoding error");
        free(msg);
        rc = -1;
    }
    fakeapi__strbuf_deinit(&b);
    json_decref(dups);
    return rc;
}

json_t *fakeapi__body_object(fakeapi__ctx *c)
{
    const fakeapi__req *req = c->req;
    json_t *v = NULL;
    if (req->body_len == 0) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL, "request body is empty");
        return NULL;
    }
    if (fakeapi__media_is(req->content_type, "application/vnd.kubernetes.protobuf")) {
        char err[384];
        /* Custom resources have no protobuf form (the real server: 415);
         * their scale subresource is a built-in autoscaling/v1 Scale. */
        if (c->res && c->res->custom && !(c->rt && !strcmp(c->rt->sub, "scale"))) {
            fakeapi__resp_error(c->resp, 415, "UnsupportedMediaType", NULL,
                                "the body of the request was in an unknown format - accepted "
                                "media types include: application/json, application/yaml");
            return NULL;
        }
        if (fakeapi__pb_decode(req->body, req->body_len, &v, err, sizeof err) < 0) {
            fakeapi__resp_error(c->resp, 400, "BadRequest", NULL, "%s", err);
            return NULL;
        }
        return v;
    }
    json_error_t jerr;
    v = kh_json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &jerr);
    if (!v && strstr(jerr.text, "duplicate object key") && duplicate_keys(c) < 0)
        return NULL;
    if (!v && strstr(jerr.text, "duplicate object key"))
        v = kh_json_loadb(req->body, req->body_len, 0, &jerr); /* the last one wins, as in Go */
    if (!v && (fakeapi__media_is(req->content_type, "application/yaml") ||
               fakeapi__media_is(req->content_type, "application/apply-patch+yaml"))) {
        json_t *docs = NULL;
        kh_yaml_error yerr;
        if (kh_yaml_load(req->body, req->body_len, &docs, &yerr) == 0 && json_array_size(docs) == 1)
            v = json_incref(json_array_get(docs, 0));
        json_decref(docs);
    }
    if (!v) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                            "the body of the request was in an unknown format - accepted media "
                            "types include: application/json, application/yaml (%s at line %d)",
                            jerr.text, jerr.line);
        return NULL;
    }
    if (!json_is_object(v)) {
        json_decref(v);
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                            "the body of the request must be a JSON object");
        return NULL;
    }
    return v;
}

/* The start of a body as the API server quotes it: up to 30 bytes, hex unless JSON. */
static void body_summary(const fakeapi__req *req, char *out, size_t len)
{
    const size_t max = 30;
    size_t n = req->body_len < max ? req->body_len : max, off = 0;
    const char *more = req->body_len > max ? " ..." : "";
    if (n == 0)
        snprintf(out, len, "<empty>");
    else if (req->body[0] == '{')
        snprintf(out, len, "%.*s%s", (int)n, req->body, more);
    else {
        for (size_t i = 0; i < n && off + 3 < len; i++)
            off += (size_t)snprintf(out + off, len - off, "%02x", (unsigned char)req->body[i]);
        snprintf(out + off, len - off, "%s", more);
    }
}

/*
 * The decode step. Built-in kinds: by their types, and the unknown fields
 * their Go types drop: with fieldValidation=Strict a 400 (all of them, in
 * document order), with Warn (the default) one warning each, with Ignore
 * nothing. Returns 1 with e filled in for a type error, -1 having answered,
 * 0 when obj decodes.
 */
static int decodes(fakeapi__ctx *c, json_t *obj, fakeapi__decode_error *e)
{
    const fakeapi__tmsg *m = fakeapi__builtin_msg(c->res);
    if (!m)
        return fakeapi__decode_check(c->res, obj, e) < 0 ? 1 : 0;
    const char *fv = fakeapi__q(c->req, "fieldValidation");
    bool strict = fv && !strcmp(fv, "Strict"), ignore = fv && !strcmp(fv, "Ignore");
    json_t *unknown = NULL;
    int n = fakeapi__builtin_decode(m, obj, e, NULL, false);
    if (n > 0 && !ignore) {
        /* Rare: a second walk names them. */
        unknown = json_array();
        n = fakeapi__builtin_decode(m, obj, e, unknown, !strict);
    } else if (n > 0) {
        n = fakeapi__builtin_decode(m, obj, e, NULL, true);
    }
    if (n == -1)
        return 1;
    if (n == -2) {
        json_decref(unknown);
        fakeapi__resp_error(c->resp, 500, "InternalError", NULL, "out of memory");
        return -1;
    }
    if (n > 0 && strict) {
        fakeapi__strbuf b = {.max = 64u << 10};
        fakeapi__strbuf_adds(&b, "strict decoding error: ");
        size_t i;
        json_t *f;
        json_array_foreach(unknown, i, f)
        {
            fakeapi__strbuf_addf(&b, "%sunknown field \"%s\"", i ? ", " : "", json_string_value(f));
        }
        char *msg = fakeapi__strbuf_take(&b, NULL);
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL, "%s",
                            msg ? msg : "strict decoding error");
        free(msg);
        json_decref(unknown);
        return -1;
    }
    size_t i;
    json_t *f;
    json_array_foreach(unknown, i, f)
    {
        char w[600];
        snprintf(w, sizeof w, "unknown field \"%s\"", json_string_value(f));
        fakeapi__resp_warn(c->resp, w);
    }
    json_decref(unknown);
    return 0;
}

/*
 * Create and update: a body the kind's Go type could not decode is 400, as
 * the API server's transformDecodeError words it.
 */
static int check_decodes(fakeapi__ctx *c, json_t *obj)
{
    fakeapi__decode_error e;
    int rc = decodes(c, obj, &e);
    if (rc <= 0)
        return rc;
    char detail[768];
    fakeapi__decode_message(&e, FAKEAPI__DIALECT_JSON, detail, sizeof detail);
    if (e.code == FAKEAPI__DECODE_TYPEMETA) {
        char summary[80];
        body_summary(c->req, summary, sizeof summary);
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                            "the object provided is unrecognized (must be of type %s): %s (%s)",
                            c->res->kind, detail, summary);
        return -1;
    }
    /* The body's own kind and version, defaulted from the URL. */
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const char *version = av && *av ? (strchr(av, '/') ? strchr(av, '/') + 1 : av) : NULL;
    kind = kind && *kind ? kind : c->res->kind;
    fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                        "%s in version \"%s\" cannot be handled as a %s: %s", kind,
                        version ? version : c->res->version, c->res->kind, detail);
    return -1;
}

/*
 * A patched object the kind's Go type cannot decode: 422 Invalid with no
 * kind and no name and one cause at "patch" showing what was decoded (%q of
 * the patched JSON, or %v of a strategic merge patch), as the API server's
 * patch handler answers.
 */
static void patch_undecodable(fakeapi__ctx *c, const char *shown, const char *detail)
{
    fakeapi__strbuf b = {.max = 8u << 20};
    fakeapi__strbuf_adds(&b, "Invalid value: ");
    fakeapi__go_quote(&b, shown);
    fakeapi__strbuf_addf(&b, ": %s", detail);
    char *cause = fakeapi__strbuf_take(&b, NULL);
    char *msg = NULL;
    if (!cause || asprintf(&msg, " \"\" is invalid: patch: %s", cause) < 0) {
        free(cause);
        fakeapi__resp_error(c->resp, 500, "InternalError", NULL, "out of memory");
        return;
    }
    json_t *details = json_pack("{s:[{s:s, s:s, s:s}]}", "causes", "reason", "FieldValueInvalid",
                                "message", cause, "field", "patch");
    fakeapi__resp_json(c->resp, 422, fakeapi__status_new(422, "Invalid", msg, details));
    free(cause);
    free(msg);
}

/* The result of a patch must decode like a body (see check_decodes). */
static int check_patch_decodes(fakeapi__ctx *c, json_t *patched, const json_t *patch, bool smp,
                               bool apply)
{
    fakeapi__decode_error e;
    int rc = decodes(c, patched, &e);
    if (rc <= 0)
        return rc;
    char detail[768];
    if (apply) {
        /* Upstream answers 500 here (kubernetes#139253; a fix making it 400
         * is pending): a client error is a 400, and a 500 makes clients retry. */
        fakeapi__decode_message(&e, FAKEAPI__DIALECT_APPLY, detail, sizeof detail);
        const char *gv = c->res->group_version;
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                            "failed to create typed patch object (%s/%s; %s%s, Kind=%s): %s",
                            c->ns ? c->ns : "", c->rt->name, strchr(gv, '/') ? "" : "/", gv,
                            c->res->kind, detail);
        return -1;
    }
    fakeapi__decode_message(&e, smp ? FAKEAPI__DIALECT_UNSTRUCTURED : FAKEAPI__DIALECT_JSON, detail,
                            sizeof detail);
    char *shown = smp ? fakeapi__decode_gofmt(patch, 4u << 20)
                      : json_dumps(patched, JSON_COMPACT | JSON_ENCODE_ANY);
    patch_undecodable(c, shown ? shown : "", detail);
    free(shown);
    return -1;
}

/* apiVersion and kind must name this resource; absent ones are filled in. */
static int check_type(fakeapi__ctx *c, json_t *obj)
{
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    if ((av && strcmp(av, c->res->group_version)) || (kind && strcmp(kind, c->res->kind))) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                            "the API version in the data (%s) does not match the expected API "
                            "version (%s), or the kind (%s) does not match %s",
                            av ? av : "", c->res->group_version, kind ? kind : "", c->res->kind);
        return -1;
    }
    json_object_set_new(obj, "apiVersion", json_string(c->res->group_version));
    json_object_set_new(obj, "kind", json_string(c->res->kind));
    return 0;
}

/* The URL's namespace wins; a different one in the body is an error. */
static int check_namespace(fakeapi__ctx *c, json_t *obj)
{
    const char *ns = fakeapi__meta_str(obj, "namespace");
    if (!c->res->namespaced) {
        if (ns && *ns)
            json_object_del(fakeapi__meta(obj), "namespace");
        return 0;
    }
    if (ns && *ns && strcmp(ns, c->ns)) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                            "the namespace of the provided object does not match the namespace "
                            "sent on the request");
        return -1;
    }
    return fakeapi__meta_set_str(obj, "namespace", c->ns);
}

/* Append to out the dotted paths present in a but not in b (b is a pruned a). */
static void unknown_fields(const json_t *a, const json_t *b, const char *path, json_t *out)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)a, k, v)
    {
        char sub[512];
        snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", k);
        json_t *w = json_object_get(b, k);
        if (!w)
            json_array_append_new(out, json_string(sub));
        else if (json_is_object(v))
            unknown_fields(v, w, sub, out);
        else if (json_is_array(v)) {
            for (size_t i = 0; i < json_array_size(v) && i < json_array_size(w); i++) {
                char idx[540];
                snprintf(idx, sizeof idx, "%s[%zu]", sub, i);
                unknown_fields(json_array_get(v, i), json_array_get(w, i), idx, out);
            }
        }
    }
}

/* fieldValidation=Strict (kubectl's default): unknown fields are an error,
 * not silently pruned; Warn (the default) warns about each; Ignore prunes
 * them silently. */
static int check_strict(fakeapi__ctx *c, const json_t *obj)
{
    const char *fv = fakeapi__q(c->req, "fieldValidation");
    if (fv && !strcmp(fv, "Ignore"))
        return 0;
    bool strict = fv && !strcmp(fv, "Strict");
    json_t *pruned = json_deep_copy(obj), *unknown = json_array();
    fakeapi__schema_prune(c->res->schema, pruned);
    unknown_fields(obj, pruned, "", unknown);
    int rc = 0;
    size_t k;
    json_t *u;
    json_array_foreach(strict ? NULL : unknown, k, u)
    {
        char w[600];
        snprintf(w, sizeof w, "unknown field \"%s\"", json_string_value(u));
        fakeapi__resp_warn(c->resp, w);
    }
    if (strict && json_array_size(unknown)) {
        char msg[900] = "";
        size_t off = 0;
        size_t i;
        json_t *f;
        json_array_foreach(unknown, i, f)
        {
            off += (size_t)snprintf(msg + off, off < sizeof msg ? sizeof msg - off : 0,
                                    "%sunknown field \"%s\"", i ? ", " : "", json_string_value(f));
            if (off >= sizeof msg)
                off = sizeof msg - 1;
        }
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL, "strict decoding error: %s", msg);
        rc = -1;
    }
    json_decref(pruned);
    json_decref(unknown);
    return rc;
}

/* CRD kinds: prune unknown fields and disallowed nulls, apply defaults, validate. */
static int check_schema(fakeapi__ctx *c, json_t *obj)
{
    if (!c->res->schema)
        return 0;
    if (check_strict(c, obj) < 0)
        return -1;
    fakeapi__schema_prune(c->res->schema, obj);
    fakeapi__schema_prune_nulls(c->res->schema, obj);
    fakeapi__schema_default(c->res->schema, obj);
    json_t *causes = json_array();
    int n = fakeapi__schema_validate(c->res->schema, obj, causes);
    if (n > 0)
        invalid_causes(c, fakeapi__meta_str(obj, "name"), causes);
    json_decref(causes);
    return n > 0 ? -1 : 0;
}

static int check_crd(fakeapi__ctx *c, json_t *obj)
{
    if (strcmp(c->res->kind, "CustomResourceDefinition") != 0)
        return 0;
    json_t *spec = json_object_get(obj, "spec");
    json_t *names = json_object_get(spec, "names");
    const char *group = json_string_value(json_object_get(spec, "group"));
    const char *plural = json_string_value(json_object_get(names, "plural"));
    const char *name = fakeapi__meta_str(obj, "name");
    if (!group || !plural || !json_string_value(json_object_get(names, "kind"))) {
        invalid(c, name, "spec", "FieldValueRequired",
                "Required value: spec.group, spec.names.plural and spec.names.kind");
        return -1;
    }
    char want[512];
    snprintf(want, sizeof want, "%s.%s", plural, group);
    if (!name || strcmp(name, want)) {
        invalid(c, name, "metadata.name", "FieldValueInvalid",
                "Invalid value: \"%s\": must be spec.names.plural+\".\"+spec.group",
                name ? name : "");
        return -1;
    }
    if (json_array_size(json_object_get(spec, "versions")) == 0) {
        invalid(c, name, "spec.versions", "FieldValueRequired",
                "Required value: must have "
                "exactly one version marked as "
                "storage version");
        return -1;
    }
    return 0;
}

/* Checks every new state passes, on create and on update. */
/* A Secret's stringData is write-only: merged into data (base64), as the
 * API server does, and never stored. -1 on ENOMEM. */
static int fold_string_data(const fakeapi__resource *res, json_t *obj)
{
    json_t *sd = json_object_get(obj, "stringData");
    if (!sd || strcmp(res->kind, "Secret") || res->group[0])
        return 0;
    json_t *data = json_object_get(obj, "data");
    if (json_is_object(sd) && json_object_size(sd) && !json_is_object(data)) {
        data = json_object();
        if (!data || json_object_set_new(obj, "data", data) < 0)
            return -1;
    }
    const char *k;
    json_t *v;
    json_object_foreach(sd, k, v)
    {
        const char *text = json_string_value(v);
        size_t n = 0;
        char *b64 = fakeapi__base64_encode(text ? text : "", text ? json_string_length(v) : 0, &n);
        if (!b64 || json_object_set_new(data, k, json_stringn(b64, n)) < 0) {
            free(b64);
            return -1;
        }
        free(b64);
    }
    json_object_del(obj, "stringData");
    return 0;
}

/* Built-in kinds: defaults, then the kind's rules (cur: the stored object on update). */
static int admit_builtin(fakeapi__ctx *c, json_t *obj, const json_t *cur)
{
    if (c->res->custom)
        return 0;
    if (fakeapi__builtin_default(c->res, obj) < 0) {
        fakeapi__resp_error(c->resp, 500, "InternalError", NULL, "out of memory");
        return -1;
    }
    json_t *causes = json_array();
    int n = fakeapi__builtin_validate(c->res, obj, cur, causes);
    if (n > 0)
        invalid_causes(c, fakeapi__meta_str(obj, "name"), causes);
    json_decref(causes);
    return n > 0 ? -1 : 0;
}

static int admit(fakeapi__ctx *c, json_t *obj, const json_t *cur)
{
    char field[64], msg[512];
    if (fold_string_data(c->res, obj) < 0) {
        fakeapi__resp_error(c->resp, 500, "InternalError", NULL, "out of memory");
        return -1;
    }
    const char *gen = fakeapi__meta_str(obj, "generateName");
    if (gen && *gen && fakeapi__generate_name_check(c->res->name_rule, gen, msg, sizeof msg) < 0) {
        invalid(c, fakeapi__meta_str(obj, "name"), "metadata.generateName", "FieldValueInvalid",
                "Invalid value: \"%s\": %s", gen, msg);
        return -1;
    }
    if (fakeapi__labels_check(obj, field, sizeof field, msg, sizeof msg) < 0) {
        invalid(c, fakeapi__meta_str(obj, "name"), field,
                strncmp(msg, "Too long", 8) ? "FieldValueInvalid" : "FieldValueTooLong", "%s", msg);
        return -1;
    }
    if (check_schema(c, obj) < 0 || check_crd(c, obj) < 0 || admit_builtin(c, obj, cur) < 0)
        return -1;
    return 0;
}

/* A CRD's status as the API server reports it once it is serving. */
static void crd_set_established(json_t *crd, const char *now)
{
    json_t *names = json_object_get(json_object_get(crd, "spec"), "names");
    json_t *status = json_pack(
        "{s:O?, s:[{s:s, s:s, s:s, s:s, s:s}, {s:s, s:s, s:s, s:s, s:s}], "
        "s:[]}",
        "acceptedNames", names, "conditions", "type", "NamesAccepted", "status", "True", "reason",
        "NoConflicts", "message", "no conflicts found", "lastTransitionTime", now, "type",
        "Established", "status", "True", "reason", "InitialNamesAccepted", "message",
        "the initial names have been accepted", "lastTransitionTime", now, "storedVersions");
    json_t *versions = json_object_get(json_object_get(crd, "spec"), "versions");
    size_t i;
    json_t *v;
    json_array_foreach(versions, i, v)
    {
        if (json_is_true(json_object_get(v, "storage")))
            json_array_append(json_object_get(status, "storedVersions"),
                              json_object_get(v, "name"));
    }
    if (status)
        json_object_set_new(crd, "status", status);
}

/* After a CRD write inside the txn: serve its kinds (undone if the txn fails
 * is not needed: the registry follows the stored CRD on the next write). */
static int serve_crd(fakeapi__ctx *c, const json_t *crd)
{
    if (strcmp(c->res->kind, "CustomResourceDefinition") != 0 || fakeapi__dry_run(c))
        return 0;
    char err[256];
    if (fakeapi__registry_add_crd(c->srv->reg, crd, err, sizeof err) < 0) {
        invalid(c, fakeapi__meta_str(crd, "name"), "spec", "FieldValueInvalid", "%s", err);
        return -1;
    }
    return 0;
}

/* What the server generated on a new object must pass its rules (a Job's selector). */
static int generated_ok(fakeapi__ctx *c, const json_t *obj)
{
    json_t *causes = json_array();
    int n = fakeapi__builtin_validate_generated(c->res, obj, causes);
    if (n > 0)
        invalid_causes(c, fakeapi__meta_str(obj, "name"), causes);
    json_decref(causes);
    return n > 0 ? -1 : 0;
}

/* A Service's cluster IP (allocated on create, kept on update). Holds the store lock. */
static int cluster_ip(fakeapi__ctx *c, json_t *obj, const json_t *cur)
{
    char field[64], msg[512];
    int rc = fakeapi__builtin_cluster_ip(c->srv->store, c->res, obj, cur, field, sizeof field, msg,
                                         sizeof msg);
    if (rc == -2)
        fakeapi__storage_error(c);
    else if (rc < 0)
        invalid(c, fakeapi__meta_str(obj, "name"), field, "FieldValueInvalid", "%s", msg);
    return rc < 0 ? -1 : 0;
}

/*
 * A new pod's QoS class (v1 qos.GetPodQOS): BestEffort without cpu or
 * memory requests and limits, Guaranteed when every container limits both
 * and requests (where given) equal the limits, else Burstable. Requests and
 * limits are compared as written ("1" and "1000m" differ here).
 */
static const char *pod_qos(const json_t *pod)
{
    static const char *const lists[] = {"containers", "initContainers"};
    static const char *const res[] = {"cpu", "memory"};
    const json_t *spec = json_object_get(pod, "spec");
    bool any = false, guaranteed = true;
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *ctr;
        json_array_foreach(json_object_get(spec, lists[l]), i, ctr)
        {
            const json_t *r = json_object_get(ctr, "resources");
            const json_t *req = json_object_get(r, "requests"), *lim = json_object_get(r, "limits");
            for (int k = 0; k < 2; k++) {
                const char *q = json_string_value(json_object_get(req, res[k]));
                const char *m = json_string_value(json_object_get(lim, res[k]));
                any |= q || m || json_is_integer(json_object_get(req, res[k])) ||
                       json_is_integer(json_object_get(lim, res[k]));
                if (!json_object_get(lim, res[k]) ||
                    (json_object_get(req, res[k]) &&
                     !json_equal(json_object_get(req, res[k]), json_object_get(lim, res[k]))))
                    guaranteed = false;
            }
        }
    }
    return !any ? "BestEffort" : guaranteed ? "Guaranteed" : "Burstable";
}

/* Stamp what the server owns on a new object. Holds the store lock. */
static void stamp_new(fakeapi__ctx *c, json_t *obj)
{
    char uid[40], now[40];
    fakeapi__rng_uuid(&c->srv->rng, uid);
    fakeapi__fmt_time(fakeapi__srv_now(c->srv), now, sizeof now);
    json_t *m = fakeapi__meta(obj);
    json_object_set_new(m, "uid", json_string(uid));
    json_object_set_new(m, "creationTimestamp", json_string(now));
    if (fakeapi__builtin_has_generation(c->res))
        json_object_set_new(m, "generation", json_integer(1));
    else
        json_object_del(m, "generation");
    json_object_del(m, "deletionTimestamp");
    json_object_del(m, "deletionGracePeriodSeconds");
    json_object_del(m, "selfLink");
    if (!strcmp(c->res->store_key, "/namespaces")) {
        json_t *spec = json_object_get(obj, "spec");
        if (!json_is_object(spec))
            json_object_set_new(obj, "spec", spec = json_object());
        json_object_set_new(spec, "finalizers", json_pack("[s]", "kubernetes"));
        json_object_set_new(obj, "status", json_pack("{s:s}", "phase", "Active"));
    } else if (!strcmp(c->res->kind, "CustomResourceDefinition")) {
        crd_set_established(obj, now);
    } else if ((c->res->subresources & FAKEAPI__SUB_STATUS) && strcmp(c->res->kind, "Node")) {
        /* With a status subresource, status is the controllers' to write;
         * a pod starts Pending, with its QoS class (the pod strategy's
         * PrepareForCreate). */
        json_object_del(obj, "status");
        if (!strcmp(c->res->store_key, "/pods"))
            json_object_set_new(
                obj, "status",
                json_pack("{s:s, s:s}", "phase", "Pending", "qosClass", pod_qos(obj)));
    }
}

/* Namespaced creates need a live namespace. Holds the store lock. */
static int check_namespace_live(fakeapi__ctx *c, const char *ns, const char *name)
{
    if (!c->res->namespaced)
        return 0;
    int rc = fakeapi__store_state(c->srv->store, "/namespaces", "", ns);
    if (rc < 0) {
        fakeapi__storage_error(c);
        return -1;
    }
    if (rc == 2) {
        fakeapi__resp_error(c->resp, 404, "NotFound",
                            json_pack("{s:s, s:s}", "name", ns, "kind", "namespaces"),
                            "namespaces \"%s\" not found", ns);
        return -1;
    }
    bool terminating = rc == 1;
    if (terminating) {
        fakeapi__resp_error(c->resp, 403, "Forbidden",
                            json_pack("{s:s, s:s}", "name", ns, "kind", "namespaces"),
                            "%s \"%s\" is forbidden: unable to create new content in namespace "
                            "%s because it is being terminated",
                            c->res->plural, name ? name : "", ns);
        return -1;
    }
    return 0;
}

/* Pick a free name for generateName. Holds the store lock. */
static int generate_name(fakeapi__ctx *c, json_t *obj)
{
    const char *prefix = fakeapi__meta_str(obj, "generateName");
    char base[64], name[80];
    snprintf(base, sizeof base, "%.58s", prefix);
    for (int i = 0; i < GENERATE_NAME_TRIES; i++) {
        char suffix[6];
        fakeapi__rng_name_suffix(&c->srv->rng, suffix, 5);
        snprintf(name, sizeof name, "%s%s", base, suffix);
        char *text = NULL;
        int rc =
            fakeapi__store_get_text(c->srv->store, c->res->store_key, c->ns, name, &text, NULL);
        free(text);
        if (rc == 1)
            return fakeapi__meta_set_str(obj, "name", name);
        if (rc < 0)
            return -1;
    }
    return -1;
}

static int check_name(fakeapi__ctx *c, const char *name)
{
    char msg[512];
    if (fakeapi__name_check(c->res->name_rule, name, msg, sizeof msg) == 0)
        return 0;
    invalid(c, name, "metadata.name", "FieldValueInvalid", "Invalid value: \"%s\": %s", name, msg);
    return -1;
}

/*
 * A dry run's answer: what would have been stored, as kube-apiserver's
 * DryRunnableStorage and dryrun.ResetMetadata leave it. An update keeps the
 * stored object's resourceVersion (cur's; nothing was written, so a client
 * that diffs sees no change there); a create has no resourceVersion and no
 * uid, and with generateName no name either (a dry run must not promise
 * them), but its creationTimestamp and generation. obj is borrowed.
 */
static void dry_run_meta(json_t *obj, const json_t *cur)
{
    json_t *m = fakeapi__meta(obj);
    if (cur) {
        json_t *rv = json_object_get(json_object_get(cur, "metadata"), "resourceVersion");
        if (rv)
            json_object_set(m, "resourceVersion", rv);
        return;
    }
    json_object_del(m, "resourceVersion");
    json_object_del(m, "uid");
    const char *gen = fakeapi__meta_str(obj, "generateName");
    if (gen && *gen)
        json_object_set_new(m, "name", json_string(""));
}

static bool is_apply(const fakeapi__ctx *c)
{
    return !strcmp(c->req->method, "PATCH") &&
           fakeapi__media_is(c->req->content_type, "application/apply-patch+yaml");
}

/*
 * The fieldManager parameter as upstream's ValidateFieldManager checks it:
 * at most 128 bytes, printable. -1 having answered 422.
 */
static int check_field_manager(fakeapi__ctx *c)
{
    const char *m = fakeapi__q(c->req, "fieldManager");
    if (!m)
        return 0;
    if (strlen(m) > 128) {
        invalid(c, c->rt->name, "fieldManager", "FieldValueTooLong",
                "Too long: may not be more than 128 bytes");
        return -1;
    }
    for (size_t i = 0; m[i]; i++) {
        unsigned char ch = (unsigned char)m[i];
        if (ch < 0x20 || ch == 0x7f) {
            invalid(c, c->rt->name, "fieldManager", "FieldValueInvalid",
                    "Invalid value: \"%s\": invalid character U+%04X (at position %zu)", m, ch, i);
            return -1;
        }
    }
    return 0;
}

/* Whether two objects carry the same managedFields (both none counts). */
static bool same_managed(const json_t *a, const json_t *b)
{
    const json_t *ma = json_object_get(json_object_get(a, "metadata"), "managedFields");
    const json_t *mb = json_object_get(json_object_get(b, "metadata"), "managedFields");
    return (!ma && !mb) || (ma && mb && json_equal((json_t *)ma, (json_t *)mb));
}

/* managedFields for a non-apply write from cur (NULL: create) to next (ssa.h);
 * an apply has computed its own (an apply to /scale, merged into the Scale
 * by verbs_sub.c, is recorded as an update of the scale subresource). */
static void record_managed(fakeapi__ctx *c, const json_t *cur, json_t *next)
{
    if (is_apply(c) && strcmp(c->rt->sub, "scale"))
        return;
    char now[40], manager[200];
    fakeapi__fmt_time(fakeapi__srv_now(c->srv), now, sizeof now);
    fakeapi__ssa_opts o = fakeapi__ssa_opts_for(c->res, c->rt->sub, now);
    fakeapi__ssa_manager_name(fakeapi__q(c->req, "fieldManager"), c->req->user_agent, manager,
                              sizeof manager);
    fakeapi__ssa_update(&o, cur, next, manager);
}

/* Commit (or, for a dry run, roll back) and answer with what was stored,
 * reusing the text the store already has. obj is stolen; cur (borrowed) is
 * the stored state an update started from, NULL for a create. */
static void answer_written(fakeapi__ctx *c, fakeapi__txn *t, json_t *obj, const json_t *cur,
                           int status)
{
    size_t len = 0;
    char *text = NULL;
    if (fakeapi__dry_run(c)) {
        /* Nothing stored: the staged events go, then obj is ours again. */
        fakeapi__txn_abort(t);
        dry_run_meta(obj, cur);
        fakeapi__resp_json(c->resp, status, obj);
        return;
    }
    text = fakeapi__txn_last_text(t, &len);
    /* An updated object is read again soon (the next status write, a
     * retry after a conflict); most created ones (events, pods bound
     * next) are not. */
    if (cur)
        fakeapi__txn_keep(t, obj);
    if (fakeapi__txn_commit(t) < 0) {
        free(text);
        json_decref(obj);
        fakeapi__storage_error(c);
        return;
    }
    /* The stored text is in the storage version; a converted kind answers obj. */
    if (text && !fakeapi__convert_needed(c->res)) {
        fakeapi__resp_take(c->resp, status, text, len);
        json_decref(obj);
    } else {
        free(text);
        fakeapi__resp_json(c->resp, status, obj);
    }
}

/* A create may go to name: its namespace is live and the name free. 0 yes,
 * 1 having answered, -1 on a storage error (not answered). Holds the store
 * lock. */
static int check_create_target(fakeapi__ctx *c, const char *name)
{
    if (check_namespace_live(c, c->ns, name) < 0)
        return 1;
    char *text = NULL;
    int rc = fakeapi__store_get_text(c->srv->store, c->res->store_key, c->ns, name, &text, NULL);
    free(text);
    if (rc == 0) {
        char q[300];
        fakeapi__resource_qualified(c->res, q, sizeof q);
        fakeapi__resp_error(c->resp, 409, "AlreadyExists", fakeapi__details(c->res, name),
                            "%s \"%s\" already exists", q, name);
        return 1;
    }
    return rc < 0 ? -1 : 0;
}

void fakeapi__finish_create(fakeapi__ctx *c, fakeapi__txn *t, json_t *obj)
{
    const char *name = fakeapi__meta_str(obj, "name");
    const char *gen = fakeapi__meta_str(obj, "generateName");
    if ((!name || !*name) && gen && *gen) {
        if (generate_name(c, obj) < 0) {
            fakeapi__resp_error(c->resp, 409, "AlreadyExists", fakeapi__details(c->res, gen),
                                "could not generate a unique name for prefix %s", gen);
            goto fail;
        }
        name = fakeapi__meta_str(obj, "name");
        c->generated_name = true;
    }
    int rc = check_create_target(c, name);
    if (rc == 1)
        goto fail;
    record_managed(c, NULL, obj);
    stamp_new(c, obj);
    fakeapi__builtin_after_stamp(c->res, obj);
    if (rc >= 0 && (generated_ok(c, obj) < 0 || cluster_ip(c, obj, NULL) < 0))
        goto fail;
    if (rc >= 0 && fakeapi__admission_active(c->srv)) {
        /* Validating webhooks see the object as it will be stored (name,
         * uid, timestamps), without the store lock; then the checks that
         * depend on the store run again. */
        fakeapi__txn_abort(t);
        if (fakeapi__admission_validate(c, "CREATE", obj, NULL) < 0) {
            json_decref(obj);
            return;
        }
        if (fakeapi__txn_begin(t, c->srv) < 0) {
            fakeapi__storage_error(c);
            json_decref(obj);
            return;
        }
        rc = check_create_target(c, name);
        if (rc == 1 || (rc == 0 && cluster_ip(c, obj, NULL) < 0))
            goto fail;
    }
    if (rc < 0 || fakeapi__txn_put(t, c->res, obj, NULL) < 0) {
        fakeapi__storage_error(c);
        goto fail;
    }
    if (serve_crd(c, obj) < 0)
        goto fail;
    answer_written(c, t, obj, NULL, 201);
    return;
fail:
    fakeapi__txn_abort(t);
    json_decref(obj);
}

/* Everything a create checks before it takes the store lock. */
static int prepare_create(fakeapi__ctx *c, json_t *obj)
{
    if (check_type(c, obj) < 0 || check_namespace(c, obj) < 0)
        return -1;
    const char *name = fakeapi__meta_str(obj, "name");
    const char *gen = fakeapi__meta_str(obj, "generateName");
    if ((!name || !*name) && (!gen || !*gen)) {
        invalid(c, "", "metadata.name", "FieldValueRequired",
                "Required value: name or generateName is required");
        return -1;
    }
    if (name && *name && check_name(c, name) < 0)
        return -1;
    if (fakeapi__meta_rv(obj) != 0) {
        invalid(c, name, "metadata.resourceVersion", "FieldValueInvalid",
                "Invalid value: \"%s\": resourceVersion should not be set on objects to be "
                "created",
                fakeapi__meta_str(obj, "resourceVersion"));
        return -1;
    }
    return admit(c, obj, NULL);
}

static void conflict(fakeapi__ctx *c, const char *name);
static void keep_server_fields(json_t *next, const json_t *cur);

/*
 * Mutating admission webhooks on a create (admission.h), before the store
 * lock is taken, then the create's checks again on what they changed (the
 * validating ones run in fakeapi__finish_create). -1 having answered.
 */
static int webhooks_create(fakeapi__ctx *c, json_t **obj)
{
    if (!fakeapi__admission_active(c->srv))
        return 0;
    bool changed = false;
    if (fakeapi__admission_mutate(c, "CREATE", obj, NULL, &changed) < 0 ||
        (changed && prepare_create(c, *obj) < 0))
        return -1;
    return 0;
}

/*
 * Admission webhooks on an update: cur (stored) and *next (to be written)
 * were computed inside t. The webhooks run with the store lock released;
 * then t is begun again. 0: go on (t held, the object still at cur's
 * resourceVersion); 1: it changed meanwhile (t released; the caller starts
 * over, as kube-apiserver's update retries); -1 having answered (t released).
 */
static int webhooks_update(fakeapi__ctx *c, fakeapi__txn *t, const json_t *cur, json_t **next)
{
    if (!fakeapi__admission_active(c->srv))
        return 0;
    long long rv = fakeapi__meta_rv(cur);
    fakeapi__txn_abort(t);
    if (fakeapi__admission_mutate(c, "UPDATE", next, cur, NULL) < 0)
        return -1;
    /* Validating webhooks see the uid and timestamps the write keeps. */
    keep_server_fields(*next, cur);
    if (fakeapi__admission_validate(c, "UPDATE", *next, cur) < 0)
        return -1;
    if (fakeapi__txn_begin(t, c->srv) < 0) {
        fakeapi__storage_error(c);
        return -1;
    }
    json_t *now = NULL;
    int rc = fakeapi__store_get(c->srv->store, c->res->store_key, c->ns, c->rt->name, &now);
    long long now_rv = rc == 0 ? fakeapi__meta_rv(now) : -1;
    json_decref(now);
    if (rc < 0) {
        fakeapi__txn_abort(t);
        fakeapi__storage_error(c);
        return -1;
    }
    if (now_rv != rv) {
        fakeapi__txn_abort(t);
        return 1;
    }
    return 0;
}

/* Times an update starts over when the object changed while its webhooks ran. */
#define WEBHOOK_RETRIES 5

/* Start an update over: the warnings the last try added (past the first
 * keep bytes) go. */
static bool retry_update(fakeapi__ctx *c, int *tries, size_t keep)
{
    if (c->resp->warnings && strlen(c->resp->warnings) > keep)
        c->resp->warnings[keep] = '\0';
    if (++*tries <= WEBHOOK_RETRIES)
        return true;
    conflict(c, c->rt->name);
    return false;
}

void fakeapi__do_create(fakeapi__ctx *c)
{
    if (check_field_manager(c) < 0)
        return;
    json_t *obj = fakeapi__body_object(c);
    if (!obj)
        return;
    if (check_decodes(c, obj) < 0 || prepare_create(c, obj) < 0 || webhooks_create(c, &obj) < 0) {
        json_decref(obj);
        return;
    }
    fakeapi__txn t;
    if (fakeapi__txn_begin(&t, c->srv) < 0) {
        json_decref(obj);
        fakeapi__storage_error(c);
        return;
    }
    fakeapi__finish_create(c, &t, obj);
}

/* Carry over what clients cannot change on update. */
static void keep_server_fields(json_t *next, const json_t *cur)
{
    static const char *const kept[] = {
        "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation",
        NULL};
    json_t *nm = fakeapi__meta(next);
    json_t *cm = json_object_get(cur, "metadata");
    for (const char *const *k = kept; *k; k++) {
        json_t *v = json_object_get(cm, *k);
        if (v)
            json_object_set(nm, *k, v);
        else
            json_object_del(nm, *k);
    }
}

/*
 * Whether a and b are the same JSON written the same way: equal values,
 * object members in the same order (json_equal ignores the order).
 */
static bool same_text(const json_t *a, const json_t *b)
{
    if (a == b)
        return true;
    if (!a || !b || json_typeof(a) != json_typeof(b))
        return false;
    if (json_is_object(a)) {
        if (json_object_size(a) != json_object_size(b))
            return false;
        void *ia = json_object_iter((json_t *)a), *ib = json_object_iter((json_t *)b);
        for (; ia && ib; ia = json_object_iter_next((json_t *)a, ia),
                         ib = json_object_iter_next((json_t *)b, ib)) {
            if (strcmp(json_object_iter_key(ia), json_object_iter_key(ib)) ||
                !same_text(json_object_iter_value(ia), json_object_iter_value(ib)))
                return false;
        }
        return !ia && !ib;
    }
    if (json_is_array(a)) {
        size_t n = json_array_size(a);
        if (n != json_array_size(b))
            return false;
        for (size_t i = 0; i < n; i++)
            if (!same_text(json_array_get(a, i), json_array_get(b, i)))
                return false;
        return true;
    }
    if (json_is_real(a)) /* 0.0 and -0.0 are equal but written apart */
        return json_real_value(a) == json_real_value(b) &&
               signbit(json_real_value(a)) == signbit(json_real_value(b));
    return json_equal((json_t *)a, (json_t *)b);
}

/*
 * A copy of obj's members in their order, but for those named skip or
 * skip2 (NULL: none), whose values are shared instead (the caller replaces
 * or drops them). A member whose value mine (an object of the caller's own
 * that shares nothing with obj; NULL: none) has written the same way is
 * taken from mine instead of copied: a client writing /status sends back
 * the rest of the object as it read it. NULL when out of memory.
 */
static json_t *copy_but(const json_t *obj, const char *skip, const char *skip2, const json_t *mine)
{
    json_t *out = json_object();
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v)
    {
        bool share = (skip && !strcmp(k, skip)) || (skip2 && !strcmp(k, skip2));
        json_t *own = share ? NULL : json_object_get(mine, k);
        json_t *nv = share                           ? json_incref(v)
                     : own != v && same_text(v, own) ? json_incref(own)
                                                     : json_deep_copy(v);
        if (!out || !nv || json_object_set_new(out, k, nv) < 0) {
            json_decref(nv);
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

/* The state a /status write starts from: cur copied but for its status
 * and, when the write's ownership is recorded (record_managed replaces it
 * in every case), its managedFields: both only shared until replaced. What
 * the body of a PUT (next: the decoded body, sharing nothing with cur) has
 * the same as cur is taken from it instead. */
/* Whether objects a and b have the same members in the same order, written
 * the same way but for the values of skip and skip2 (NULL: none). */
static bool same_members(const json_t *a, const json_t *b, const char *skip, const char *skip2)
{
    if (!json_is_object(a) || !json_is_object(b) || json_object_size(a) != json_object_size(b))
        return false;
    void *ia = json_object_iter((json_t *)a), *ib = json_object_iter((json_t *)b);
    for (; ia && ib;
         ia = json_object_iter_next((json_t *)a, ia), ib = json_object_iter_next((json_t *)b, ib)) {
        const char *k = json_object_iter_key(ia);
        if (strcmp(k, json_object_iter_key(ib)))
            return false;
        if ((skip && !strcmp(k, skip)) || (skip2 && !strcmp(k, skip2)))
            continue;
        json_t *va = json_object_iter_value(ia), *vb = json_object_iter_value(ib);
        if (va == vb || !same_text(va, vb))
            return false;
    }
    return !ia && !ib;
}

static json_t *status_base(const fakeapi__ctx *c, const json_t *cur, const json_t *next)
{
    const json_t *meta = json_object_get(cur, "metadata");
    /* The body is cur but for its status and managedFields (a client
     * sending back what it read): it is the base itself. */
    if (next && json_is_object(meta) && same_members(cur, next, "status", "metadata") &&
        same_members(meta, json_object_get(next, "metadata"), "managedFields", NULL))
        return json_incref((json_t *)next);
    if (!json_is_object(meta))
        return copy_but(cur, "status", NULL, next);
    json_t *out = copy_but(cur, "status", "metadata", next);
    json_t *m = out ? copy_but(meta, is_apply(c) ? NULL : "managedFields", NULL,
                               json_object_get(next, "metadata"))
                    : NULL;
    if (!m || json_object_set_new(out, "metadata", m) < 0) {
        json_decref(out);
        return NULL;
    }
    return out;
}

/* The new state a write to sub ("status", or the main resource) may make. */
static json_t *scope_write(const fakeapi__ctx *c, const json_t *cur, json_t *next, const char *sub)
{
    if (sub && !strcmp(sub, "status")) {
        /* Only status changes (and, as the API server allows, nothing else). */
        json_t *out = status_base(c, cur, strcmp(c->req->method, "PUT") ? NULL : next);
        json_t *st = json_object_get(next, "status");
        if (out && st)
            json_object_set(out, "status", st);
        else if (out)
            json_object_del(out, "status");
        /* An apply to /status brings the ownership it computed. */
        json_t *mf = json_object_get(json_object_get(next, "metadata"), "managedFields");
        if (out && mf)
            json_object_set(fakeapi__meta(out), "managedFields", mf);
        json_decref(next);
        return out;
    }
    if (c->res->subresources & FAKEAPI__SUB_STATUS) {
        json_t *st = json_object_get(cur, "status");
        if (st)
            json_object_set(next, "status", st);
        else
            json_object_del(next, "status");
    }
    return next;
}

static bool new_finalizers_added(const json_t *cur, const json_t *next)
{
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(json_object_get(next, "metadata"), "finalizers"), i, f)
    {
        if (json_string_value(f) && !fakeapi__has_finalizer(cur, json_string_value(f)))
            return true;
    }
    return false;
}

/* An immutable ConfigMap or Secret keeps its data, and stays immutable:
 * the first field changed, or NULL (upstream's ValidateConfigMapUpdate and
 * ValidateSecretUpdate). */
static const char *immutable_changed(const fakeapi__resource *res, const json_t *cur,
                                     const json_t *next)
{
    bool cm = !strcmp(res->kind, "ConfigMap") && !res->group[0];
    bool secret = !strcmp(res->kind, "Secret") && !res->group[0];
    if ((!cm && !secret) || !json_is_true(json_object_get(cur, "immutable")))
        return NULL;
    if (!json_is_true(json_object_get(next, "immutable")))
        return "immutable";
    static const char *const fields[] = {"data", "binaryData"};
    for (size_t i = 0; i < (cm ? 2u : 1u); i++) {
        const json_t *a = json_object_get(cur, fields[i]), *b = json_object_get(next, fields[i]);
        bool empty_a = !a || (json_is_object(a) && json_object_size(a) == 0);
        bool empty_b = !b || (json_is_object(b) && json_object_size(b) == 0);
        if (!(empty_a && empty_b) && !json_equal(a, b))
            return fields[i];
    }
    return NULL;
}

void fakeapi__finish_update(fakeapi__ctx *c, fakeapi__txn *t, json_t *cur, json_t *next,
                            const char *sub)
{
    const char *name = fakeapi__meta_str(cur, "name");
    next = scope_write(c, cur, next, sub);
    if (!next || check_type(c, next) < 0 || check_namespace(c, next) < 0)
        goto fail;
    keep_server_fields(next, cur);
    fakeapi__meta_set_str(next, "name", name);
    if (admit(c, next, cur) < 0 || cluster_ip(c, next, cur) < 0)
        goto fail;
    const char *frozen = immutable_changed(c->res, cur, next);
    if (frozen) {
        invalid(c, name, frozen, "FieldValueForbidden",
                "Forbidden: field is immutable when `immutable` is set");
        goto fail;
    }
    bool deleting = fakeapi__meta_str(cur, "deletionTimestamp") != NULL;
    if (deleting && new_finalizers_added(cur, next)) {
        invalid(c, name, "metadata.finalizers", "FieldValueForbidden",
                "Forbidden: no new finalizers can be added if the object is being deleted");
        goto fail;
    }
    record_managed(c, cur, next);
    if (fakeapi__same_object(cur, next) && same_managed(cur, next)) {
        /* A no-op write: no new revision, no event (as the API server). */
        fakeapi__txn_abort(t);
        json_decref(next);
        fakeapi__resp_json(c->resp, 200, json_incref(cur));
        json_decref(cur);
        return;
    }
    if (fakeapi__builtin_has_generation(c->res) && fakeapi__spec_changed(cur, next)) {
        json_int_t gen =
            json_integer_value(json_object_get(json_object_get(cur, "metadata"), "generation"));
        json_object_set_new(fakeapi__meta(next), "generation", json_integer(gen + 1));
    }
    int rc;
    if (deleting && fakeapi__finalizer_count(next) == 0 && !fakeapi__grace_pending(cur))
        rc = fakeapi__txn_remove(t, c->res, next);
    else
        rc = fakeapi__txn_put(t, c->res, next, cur);
    if (rc < 0 || serve_crd(c, next) < 0) {
        if (rc < 0)
            fakeapi__storage_error(c);
        goto fail;
    }
    answer_written(c, t, next, cur, 200);
    json_decref(cur);
    return;
fail:
    fakeapi__txn_abort(t);
    json_decref(cur);
    json_decref(next);
}

/* Read the stored object inside t; answers 404/500 itself. NULL on failure.
 * shared: the caller changes nothing in it (fakeapi__store_get_shared). */
static json_t *load_current(fakeapi__ctx *c, fakeapi__txn *t, bool shared)
{
    json_t *cur = NULL;
    int rc =
        shared && !fakeapi__convert_needed(c->res)
            ? fakeapi__store_get_shared(c->srv->store, c->res->store_key, c->ns, c->rt->name, &cur)
            : fakeapi__store_get(c->srv->store, c->res->store_key, c->ns, c->rt->name, &cur);
    if (rc == 1)
        fakeapi__not_found(c, c->rt->name);
    else if (rc < 0)
        fakeapi__storage_error(c);
    if (rc != 0)
        fakeapi__txn_abort(t);
    if (rc == 0 && fakeapi__convert_needed(c->res))
        fakeapi__convert_out(c->res, cur);
    return rc == 0 ? cur : NULL;
}

static void conflict(fakeapi__ctx *c, const char *name)
{
    char q[300];
    fakeapi__resource_qualified(c->res, q, sizeof q);
    fakeapi__resp_error(c->resp, 409, "Conflict", fakeapi__details(c->res, name),
                        "Operation cannot be fulfilled on %s \"%s\": the object has been "
                        "modified; please apply your changes to the latest version and try "
                        "again",
                        q, name);
}

/* The optimistic-concurrency check of an update carrying a resourceVersion. */
static int check_rv(fakeapi__ctx *c, const json_t *cur, const json_t *next, bool required)
{
    long long want = fakeapi__meta_rv(next);
    if (want < 0) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                            "metadata.resourceVersion: invalid value \"%s\"",
                            fakeapi__meta_str(next, "resourceVersion"));
        return -1;
    }
    if (want == 0 && required) {
        invalid(c, c->rt->name, "metadata.resourceVersion", "FieldValueInvalid",
                "Invalid value: 0x0: must be specified for an update");
        return -1;
    }
    if (want != 0 && want != fakeapi__meta_rv(cur)) {
        conflict(c, c->rt->name);
        return -1;
    }
    return 0;
}

/* One try of a PUT with the decoded body (borrowed): 1 to start over.
 * Without webhooks there is no second try, and the try takes *body
 * itself instead of a copy (*body is then NULL). */
static int update_try(fakeapi__ctx *c, json_t **body)
{
    json_t *next;
    bool hooks = fakeapi__admission_active(c->srv);
    if (hooks) {
        next = json_deep_copy(*body);
    } else {
        next = *body;
        *body = NULL;
    }
    fakeapi__txn t;
    if (!next || fakeapi__txn_begin(&t, c->srv) < 0) {
        json_decref(next);
        fakeapi__storage_error(c);
        return 0;
    }
    /* Read-only until the write: the checks, the webhooks and a /status
     * write (which copies it) only read it; a write of the object itself
     * takes its own copy, since the new state may share parts of it. */
    json_t *cur = load_current(c, &t, true);
    if (!cur) {
        json_decref(next);
        return 0;
    }
    if (check_rv(c, cur, next, c->res->update_needs_rv) < 0) {
        fakeapi__txn_abort(&t);
        json_decref(cur);
        json_decref(next);
        return 0;
    }
    int w = hooks ? webhooks_update(c, &t, cur, &next) : 0;
    if (w != 0) {
        json_decref(cur);
        json_decref(next);
        return w > 0;
    }
    bool status = !strcmp(c->rt->sub, "status");
    if (!status) {
        json_t *own = json_deep_copy(cur);
        json_decref(cur);
        if (!own) {
            fakeapi__txn_abort(&t);
            json_decref(next);
            fakeapi__storage_error(c);
            return 0;
        }
        cur = own;
    }
    fakeapi__finish_update(c, &t, cur, next, c->rt->sub[0] ? c->rt->sub : NULL);
    return 0;
}

/* PUT on the object or its /status. */
void fakeapi__do_update(fakeapi__ctx *c)
{
    if (check_field_manager(c) < 0)
        return;
    json_t *body = fakeapi__body_object(c);
    if (!body)
        return;
    if (check_decodes(c, body) < 0) {
        json_decref(body);
        return;
    }
    const char *name = fakeapi__meta_str(body, "name");
    if (name && strcmp(name, c->rt->name)) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                            "the name of the object (%s) does not match the name on the URL (%s)",
                            name, c->rt->name);
        json_decref(body);
        return;
    }
    int tries = 0;
    size_t keep = c->resp->warnings ? strlen(c->resp->warnings) : 0;
    while (update_try(c, &body) && retry_update(c, &tries, keep))
        ;
    json_decref(body);
}

/* The message a patch on this request's target is walked through: Scale for /scale. */
static const fakeapi__tmsg *patch_type(const fakeapi__ctx *c)
{
    if (!strcmp(c->rt->sub, "scale"))
        return fakeapi__type_find("k8s.io.api.autoscaling.v1.Scale");
    return fakeapi__type_of_kind(c->res->group_version, c->res->kind);
}

/* Server-side apply of config over live (NULL: a create); answers its errors. */
static int ssa_apply(fakeapi__ctx *c, const json_t *live, json_t *config, json_t **out)
{
    char now[40];
    fakeapi__fmt_time(fakeapi__srv_now(c->srv), now, sizeof now);
    fakeapi__ssa_opts o = fakeapi__ssa_opts_for(c->res, c->rt->sub, now);
    /* A configuration that does not decode is refused before any merge (400). */
    if (check_patch_decodes(c, config, config, true, true) < 0)
        return -1;
    const char *force = fakeapi__q(c->req, "force");
    fakeapi__ssa_err err = {0};
    bool changed;
    int rc = fakeapi__ssa_apply(&o, live, config, fakeapi__q(c->req, "fieldManager"),
                                force && !strcasecmp(force, "true"), out, &changed, &err);
    if (rc < 0 && err.typed) {
        const char *gv = c->res->group_version;
        fakeapi__resp_error(c->resp, err.code, err.reason, NULL,
                            "failed to create typed patch object (%s/%s; %s%s, Kind=%s): %s",
                            c->ns ? c->ns : "", c->rt->name, strchr(gv, '/') ? "" : "/", gv,
                            c->res->kind, err.message);
    } else if (rc < 0) {
        json_t *details = err.causes ? json_pack("{s:O}", "causes", err.causes) : NULL;
        fakeapi__resp_error(c->resp, err.code, err.reason, details, "%s", err.message);
    }
    fakeapi__ssa_err_deinit(&err);
    return rc;
}

/*
 * Apply the request's patch to doc (NULL: an apply that creates). Returns a
 * new document, or NULL having answered the error.
 */
static json_t *apply_patch(fakeapi__ctx *c, const json_t *doc)
{
    const fakeapi__req *req = c->req;
    const char *ct = req->content_type;
    json_error_t jerr;
    json_t *patch = kh_json_loadb(req->body, req->body_len, 0, &jerr), *out = NULL;
    bool apply = fakeapi__media_is(ct, "application/apply-patch+yaml");
    if (!patch && apply) {
        json_t *docs = NULL;
        if (kh_yaml_load(req->body, req->body_len, &docs, NULL) == 0 && json_array_size(docs) == 1)
            patch = json_incref(json_array_get(docs, 0));
        json_decref(docs);
    }
    if (!patch) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL, "error decoding patch: %s",
                            jerr.text);
        return NULL;
    }
    char err[512] = "";
    int rc;
    fakeapi__smp_types types = {.root = patch_type(c), .apply = apply};
    bool smp = !c->res->custom &&
               (apply || fakeapi__media_is(ct, "application/strategic-merge-patch+json"));
    if (fakeapi__media_is(ct, "application/json-patch+json") &&
        json_array_size(patch) > MAX_JSON_PATCH_OPS) {
        fakeapi__resp_error(c->resp, 413, "RequestEntityTooLarge", NULL,
                            "The allowed maximum operations in a JSON patch is %d, got %zu",
                            MAX_JSON_PATCH_OPS, json_array_size(patch));
        json_decref(patch);
        return NULL;
    }
    if (fakeapi__media_is(ct, "application/json-patch+json"))
        rc = fakeapi__json_patch(doc, patch, &out, err, sizeof err);
    else if (fakeapi__media_is(ct, "application/merge-patch+json"))
        rc = fakeapi__merge_patch(doc, patch, &out);
    else if (fakeapi__media_is(ct, "application/strategic-merge-patch+json") && !c->res->custom)
        rc = fakeapi__smp_patch(doc, patch, fakeapi__smp_type_key, &types, &out, err, sizeof err);
    else if (apply) {
        if (ssa_apply(c, doc, patch, &out) < 0) {
            json_decref(patch);
            return NULL;
        }
        rc = 0;
    } else {
        json_decref(patch);
        fakeapi__resp_error(c->resp, 415, "UnsupportedMediaType", NULL,
                            "the body of the request was in an unknown format - accepted media "
                            "types include: application/json-patch+json, "
                            "application/merge-patch+json, application/apply-patch+yaml%s",
                            c->res->custom ? "" : ", application/strategic-merge-patch+json");
        return NULL;
    }
    if (rc == -2)
        invalid(c, c->rt->name, "", "FieldValueInvalid", "%s", err);
    else if (rc < 0)
        fakeapi__resp_error(c->resp, 422, "Invalid", NULL, "%s", err[0] ? err : "invalid patch");
    else if (!json_is_object(out)) {
        fakeapi__resp_error(c->resp, 422, "Invalid", NULL, "the patch result is not an object");
        rc = -1;
    } else if (check_patch_decodes(c, out, patch, smp, apply) < 0)
        rc = -1;
    json_decref(patch);
    if (rc < 0) {
        json_decref(out);
        return NULL;
    }
    return out;
}

/*
 * A patch may not move the object: another name (or none) is 400, as the
 * API server's checkName words it; another namespace is check_namespace's.
 */
static int check_patched_identity(fakeapi__ctx *c, json_t *next)
{
    const char *name = fakeapi__meta_str(next, "name");
    if (!name || strcmp(name, c->rt->name)) {
        fakeapi__resp_error(c->resp, 400, "BadRequest", NULL,
                            "the name of the object (%s) does not match the name on the URL (%s)",
                            name ? name : "", c->rt->name);
        return -1;
    }
    return check_namespace(c, next);
}

/* Server-side apply of an object that does not exist yet creates it. */
static int apply_create(fakeapi__ctx *c, fakeapi__txn *t)
{
    json_t *obj = apply_patch(c, NULL);
    if (!obj || check_patched_identity(c, obj) < 0 || prepare_create(c, obj) < 0) {
        fakeapi__txn_abort(t);
        json_decref(obj);
        return 0;
    }
    fakeapi__meta_set_str(obj, "name", c->rt->name);
    if (fakeapi__admission_active(c->srv)) {
        /* Its webhooks run without the store lock; if the object appeared
         * meanwhile, the apply starts over as an update. */
        fakeapi__txn_abort(t);
        int rc = 0, st = 0;
        if (webhooks_create(c, &obj) < 0)
            rc = -1;
        else if (fakeapi__txn_begin(t, c->srv) < 0)
            fakeapi__storage_error(c), rc = -1;
        else if ((st = fakeapi__store_state(c->srv->store, c->res->store_key, c->ns,
                                            c->rt->name)) != 2) {
            fakeapi__txn_abort(t);
            if (st < 0)
                fakeapi__storage_error(c);
            rc = st < 0 ? -1 : 1;
        }
        if (rc != 0) {
            json_decref(obj);
            return rc > 0;
        }
    }
    fakeapi__finish_create(c, t, obj);
    return 0;
}

/* One try of a PATCH: 1 to start over. */
static int patch_try(fakeapi__ctx *c, bool apply)
{
    fakeapi__txn t;
    if (fakeapi__txn_begin(&t, c->srv) < 0) {
        fakeapi__storage_error(c);
        return 0;
    }
    json_t *cur = NULL;
    int rc = fakeapi__store_get(c->srv->store, c->res->store_key, c->ns, c->rt->name, &cur);
    if (rc == 1 && apply && !c->rt->sub[0])
        return apply_create(c, &t);
    if (rc != 0) {
        if (rc == 1)
            fakeapi__not_found(c, c->rt->name);
        else
            fakeapi__storage_error(c);
        fakeapi__txn_abort(&t);
        return 0;
    }
    if (fakeapi__convert_needed(c->res))
        fakeapi__convert_out(c->res, cur);
    json_t *next = apply_patch(c, cur);
    if (!next || check_patched_identity(c, next) < 0 || check_rv(c, cur, next, false) < 0) {
        fakeapi__txn_abort(&t);
        json_decref(cur);
        json_decref(next);
        return 0;
    }
    int w = webhooks_update(c, &t, cur, &next);
    if (w != 0) {
        json_decref(cur);
        json_decref(next);
        return w > 0;
    }
    /* The patched object keeps its stored resourceVersion semantics: a patch
     * carrying metadata.resourceVersion was checked above. */
    fakeapi__finish_update(c, &t, cur, next, c->rt->sub[0] ? c->rt->sub : NULL);
    return 0;
}

/* PATCH on the object or a subresource (scale is handled in verbs_sub.c). */
void fakeapi__do_patch(fakeapi__ctx *c)
{
    bool apply = fakeapi__media_is(c->req->content_type, "application/apply-patch+yaml");
    if (apply && !fakeapi__q(c->req, "fieldManager")) {
        invalid(c, c->rt->name, "fieldManager", "FieldValueRequired",
                "Required value: is required for apply patch");
        return;
    }
    if (!apply && fakeapi__q(c->req, "force")) {
        invalid(c, c->rt->name, "force", "FieldValueForbidden",
                "Forbidden: may not be specified for non-apply patch");
        return;
    }
    if (check_field_manager(c) < 0)
        return;
    int tries = 0;
    size_t keep = c->resp->warnings ? strlen(c->resp->warnings) : 0;
    while (patch_try(c, apply) && retry_update(c, &tries, keep))
        ;
}
