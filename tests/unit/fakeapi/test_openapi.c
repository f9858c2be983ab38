/*
 * test_openapi.c - the OpenAPI documents typed from the type tables: v3
 * schemas of built-in kinds (names, references, formats, list/map/patch
 * extensions, required fields, group-version-kinds), the v2 document made
 * from them and from CRDs, its protobuf form, its cache and its Accept
 * negotiation.
 * (test_discovery.c keeps the paths, operations and CRD schema checks.)
 */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakeapi/fakeapi.h"
#include "http.h"
#include "openapi.h"
#include "openapi_pb.h"
#include "registry.h"
#include "server_int.h"

static json_t *J(const char *text)
{
    char *buf = strdup(text);
    for (char *p = buf; *p; p++)
        if (*p == '\'')
            *p = '"';
    json_error_t err;
    json_t *v = json_loads(buf, JSON_DECODE_ANY, &err);
    cr_assert_not_null(v, "bad test JSON: %s: %s", err.text, buf);
    free(buf);
    return v;
}

static void assert_json(const json_t *got, const char *want, const char *what)
{
    json_t *w = J(want);
    char *g = got ? json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) : NULL;
    cr_assert(got && json_equal(got, w), "%s: got %s, want %s", what, g ? g : "NULL", want);
    free(g);
    json_decref(w);
}

static const char gadget_crd[] =
    "{'apiVersion':'apiextensions.k8s.io/v1','kind':'CustomResourceDefinition',"
    " 'metadata':{'name':'gadgets.stable.example.com'},"
    " 'spec':{'group':'stable.example.com','scope':'Namespaced',"
    "  'names':{'plural':'gadgets','singular':'gadget','kind':'Gadget','listKind':'GadgetList'},"
    "  'versions':[{'name':'v1','served':true,'storage':true,"
    "    'schema':{'openAPIV3Schema':{'type':'object','properties':{'spec':{'type':'object',"
    "      'properties':{'size':{'type':'integer','nullable':true},"
    "                    'mode':{'oneOf':[{'type':'string'},{'type':'integer'}]}}}}}}}]}}";

static fakeapi__registry *reg;

static void setup(void)
{
    reg = fakeapi__registry_new();
    cr_assert_not_null(reg);
}

static void teardown(void)
{
    fakeapi__registry_free(reg);
    reg = NULL;
}

static void add_gadget(void)
{
    json_t *crd = J(gadget_crd);
    char err[256] = "";
    cr_assert_eq(fakeapi__registry_add_crd(reg, crd, err, sizeof err), 0, "add_crd: %s", err);
    json_decref(crd);
}

TestSuite(openapi_types, .init = setup, .fini = teardown);
TestSuite(openapi_v2, .init = setup, .fini = teardown);
TestSuite(openapi_accept);

static json_t *v3_schemas(json_t *doc)
{
    cr_assert_not_null(doc);
    json_t *s = json_object_get(json_object_get(doc, "components"), "schemas");
    cr_assert(json_is_object(s));
    return s;
}

static json_t *prop(json_t *schemas, const char *def, const char *field)
{
    json_t *d = json_object_get(schemas, def);
    cr_assert_not_null(d, "no definition %s", def);
    json_t *p = json_object_get(json_object_get(d, "properties"), field);
    cr_assert_not_null(p, "%s has no property %s", def, field);
    return p;
}

#define CORE "io.k8s.api.core.v1."
#define APPS "io.k8s.api.apps.v1."
#define META "io.k8s.apimachinery.pkg.apis.meta.v1."
#define REF3 "#/components/schemas/"

Test(openapi_types, deployment_is_typed_to_the_leaves)
{
    json_t *doc = fakeapi__openapi_v3_gv(reg, "apps", "v1");
    json_t *s = v3_schemas(doc);
    assert_json(prop(s, APPS "Deployment", "spec"),
                "{'allOf':[{'$ref':'" REF3 APPS "DeploymentSpec'}]}", "Deployment.spec");
    assert_json(prop(s, APPS "DeploymentSpec", "replicas"), "{'type':'integer','format':'int32'}",
                "replicas");
    assert_json(json_object_get(json_object_get(s, APPS "DeploymentSpec"), "required"),
                "['selector','template']", "DeploymentSpec required");
    assert_json(prop(s, APPS "DeploymentSpec", "strategy"),
                "{'allOf':[{'$ref':'" REF3 APPS
                "DeploymentStrategy'}],'x-kubernetes-patch-strategy':'retainKeys'}",
                "strategy");
    /* The pod template's types are in the apps document too. */
    assert_json(prop(s, CORE "PodSpec", "containers"),
                "{'type':'array','items':{'$ref':'" REF3 CORE
                "Container'},'x-kubernetes-list-type':'map','x-kubernetes-list-map-keys':['name'],"
                "'x-kubernetes-patch-strategy':'merge','x-kubernetes-patch-merge-key':'name'}",
                "PodSpec.containers");
    assert_json(prop(s, CORE "PodSpec", "tolerations"),
                "{'type':'array','items':{'$ref':'" REF3 CORE
                "Toleration'},'x-kubernetes-list-type':'atomic'}",
                "PodSpec.tolerations");
    json_t *vol = prop(s, CORE "PodSpec", "volumes");
    assert_json(json_object_get(vol, "x-kubernetes-patch-strategy"), "'merge,retainKeys'",
                "volumes strategy");
    assert_json(prop(s, CORE "Container", "image"), "{'type':'string'}", "image");
    assert_json(json_object_get(json_object_get(s, CORE "Container"), "required"), "['name']",
                "Container required");
    assert_json(
        json_object_get(json_object_get(s, APPS "Deployment"), "x-kubernetes-group-version-kind"),
        "[{'group':'apps','version':'v1','kind':'Deployment'}]", "gvk");
    assert_json(json_object_get(json_object_get(s, APPS "DeploymentList"),
                                "x-kubernetes-group-version-kind"),
                "[{'group':'apps','version':'v1','kind':'DeploymentList'}]", "list gvk");
    assert_json(prop(s, APPS "DeploymentList", "items"),
                "{'type':'array','items':{'$ref':'" REF3 APPS "Deployment'}}", "list items");
    /* TypeMeta is not a proto field; kinds still have apiVersion and kind. */
    assert_json(prop(s, APPS "Deployment", "kind"), "{'type':'string'}", "kind");
    json_decref(doc);
}

Test(openapi_types, formats_of_special_types)
{
    json_t *doc = fakeapi__openapi_v3_gv(reg, "", "v1");
    json_t *s = v3_schemas(doc);
    assert_json(json_object_get(s, META "Time"), "{'type':'string','format':'date-time'}", "Time");
    assert_json(json_object_get(s, "io.k8s.apimachinery.pkg.util.intstr.IntOrString"),
                "{'type':'string','format':'int-or-string'}", "IntOrString");
    assert_json(json_object_get(s, "io.k8s.apimachinery.pkg.api.resource.Quantity"),
                "{'oneOf':[{'type':'string'},{'type':'number'}]}", "Quantity");
    assert_json(prop(s, META "ObjectMeta", "creationTimestamp"),
                "{'allOf':[{'$ref':'" REF3 META "Time'}]}", "creationTimestamp");
    assert_json(prop(s, META "ObjectMeta", "generation"), "{'type':'integer','format':'int64'}",
                "generation");
    assert_json(prop(s, META "ObjectMeta", "labels"),
                "{'type':'object','additionalProperties':{'type':'string'}}", "labels");
    assert_json(prop(s, META "ObjectMeta", "finalizers"),
                "{'type':'array','items':{'type':'string'},'x-kubernetes-list-type':'set',"
                "'x-kubernetes-patch-strategy':'merge'}",
                "finalizers");
    assert_json(prop(s, CORE "Secret", "data"),
                "{'type':'object','additionalProperties':{'type':'string','format':'byte'}}",
                "Secret.data");
    assert_json(prop(s, CORE "ServicePort", "targetPort"),
                "{'allOf':[{'$ref':'" REF3 "io.k8s.apimachinery.pkg.util.intstr.IntOrString'}]}",
                "targetPort");
    assert_json(json_object_get(json_object_get(s, META "LabelSelector"), "x-kubernetes-map-type"),
                "'atomic'", "LabelSelector atomic");
    assert_json(
        json_object_get(json_object_get(s, META "Status"), "x-kubernetes-group-version-kind"),
        "[{'group':'','version':'v1','kind':'Status'}]", "Status gvk");
    json_decref(doc);
}

Test(openapi_types, definition_names_follow_the_real_server)
{
    json_t *doc = fakeapi__openapi_v3_gv(reg, "apiextensions.k8s.io", "v1");
    json_t *s = v3_schemas(doc);
    const char *pkg = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.";
    char name[256];
    snprintf(name, sizeof name, "%sJSONSchemaProps", pkg);
    json_t *props = json_object_get(s, name);
    cr_assert_not_null(props, "%s", name);
    /* A recursive type refers to itself rather than recursing forever. */
    char ref[300];
    snprintf(ref, sizeof ref, REF3 "%sJSONSchemaProps", pkg);
    json_t *items =
        json_object_get(json_object_get(json_object_get(props, "properties"), "properties"),
                        "additionalProperties");
    cr_assert_str_eq(json_string_value(json_object_get(items, "$ref")), ref);
    json_decref(doc);
}

/* Every "$ref" under schema-valued positions of v points into defs (prefix given). */
static size_t check_refs(const json_t *v, const json_t *defs, const char *prefix)
{
    size_t n = 0;
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x)
        {
            if (!strcmp(k, "$ref") && json_is_string(x)) {
                const char *ref = json_string_value(x);
                cr_assert_eq(strncmp(ref, prefix, strlen(prefix)), 0, "ref %s", ref);
                cr_assert_not_null(json_object_get(defs, ref + strlen(prefix)), "dangling %s", ref);
                n++;
            } else {
                n += check_refs(x, defs, prefix);
            }
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) n += check_refs(x, defs, prefix);
    }
    return n;
}

Test(openapi_types, every_served_document_resolves)
{
    json_t *root = fakeapi__openapi_v3_root(reg);
    cr_assert_not_null(root);
    const char *key;
    json_t *v;
    size_t docs = 0;
    json_object_foreach(json_object_get(root, "paths"), key, v)
    {
        char group[128] = "", version[64] = "";
        if (!strncmp(key, "api/", 4))
            snprintf(version, sizeof version, "%s", key + 4);
        else
            cr_assert_eq(sscanf(key, "apis/%127[^/]/%63s", group, version), 2, "%s", key);
        json_t *doc = fakeapi__openapi_v3_gv(reg, group, version);
        cr_assert_not_null(doc, "%s", key);
        json_t *schemas = v3_schemas(doc);
        /* apiextensions' JSONSchemaProps has properties named "$ref": only check the others. */
        if (strcmp(group, "apiextensions.k8s.io") != 0)
            cr_assert_gt(check_refs(doc, schemas, REF3), 10, "%s", key);
        /* Built-in kinds are typed: none falls back to a loose object. */
        const char *name;
        json_t *d;
        json_object_foreach(schemas, name, d)
            cr_assert_null(json_object_get(d, "x-kubernetes-preserve-unknown-fields"),
                           "%s: %s is loose", key, name);
        json_decref(doc);
        docs++;
    }
    cr_assert_gt(docs, 3);
    json_decref(root);
}

/* ---- v2 ------------------------------------------------------------------------------ */

/* True when no schema-ish object under v has key. */
static bool nowhere(const json_t *v, const char *key)
{
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x)
        {
            if (!strcmp(k, "properties")) {
                /* property names are data, not keywords */
                const char *pk;
                json_t *px;
                json_object_foreach(x, pk, px)
                {
                    if (!nowhere(px, key))
                        return false;
                }
                continue;
            }
            if (!strcmp(k, key))
                return false;
            if (!nowhere(x, key))
                return false;
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
        {
            if (!nowhere(x, key))
                return false;
        }
    }
    return true;
}

Test(openapi_v2, swagger_document_of_everything)
{
    add_gadget();
    json_t *doc = fakeapi__openapi_v2(reg);
    cr_assert_not_null(doc);
    cr_assert_str_eq(json_string_value(json_object_get(doc, "swagger")), "2.0");
    json_t *defs = json_object_get(doc, "definitions");
    cr_assert_gt(json_object_size(defs), 200);
    json_t *paths = json_object_get(doc, "paths");
    cr_assert_not_null(json_object_get(paths, "/api/v1/namespaces/{namespace}/pods/{name}"));
    cr_assert_not_null(json_object_get(paths, "/apis/apps/v1/namespaces/{namespace}/deployments"));
    cr_assert_not_null(
        json_object_get(paths, "/apis/stable.example.com/v1/namespaces/{namespace}/gadgets"));
    /* v2 terms: #/definitions, a reference and extensions only, no v3 keywords. */
    json_t *core = json_deep_copy(doc);
    json_object_del(json_object_get(core, "definitions"),
                    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps");
    cr_assert_gt(check_refs(core, defs, "#/definitions/"), 100);
    json_decref(core);
    cr_assert(nowhere(doc, "oneOf"));
    cr_assert(nowhere(doc, "nullable"));
    cr_assert(nowhere(doc, "allOf"));
    cr_assert(nowhere(doc, "requestBody"));
    assert_json(json_object_get(defs, "io.k8s.apimachinery.pkg.api.resource.Quantity"),
                "{'type':'string'}", "Quantity in v2");
    json_t *spec = json_object_get(json_object_get(defs, APPS "DeploymentSpec"), "properties");
    assert_json(json_object_get(spec, "strategy"),
                "{'$ref':'#/definitions/" APPS
                "DeploymentStrategy','x-kubernetes-patch-strategy':'retainKeys'}",
                "strategy in v2");
    /* The CRD's schema, reversed-group name, v3-only keywords gone. */
    json_t *g = json_object_get(defs, "com.example.stable.v1.Gadget");
    cr_assert_not_null(g);
    assert_json(json_object_get(g, "x-kubernetes-group-version-kind"),
                "[{'group':'stable.example.com','version':'v1','kind':'Gadget'}]", "gadget gvk");
    json_t *gs =
        json_object_get(json_object_get(json_object_get(g, "properties"), "spec"), "properties");
    assert_json(json_object_get(gs, "size"), "{'type':'integer'}", "size without nullable");
    assert_json(json_object_get(gs, "mode"), "{'type':'string'}", "mode: first oneOf type");
    /* A PATCH operation in v2 form. */
    json_t *patch = json_object_get(
        json_object_get(paths, "/apis/apps/v1/namespaces/{namespace}/deployments/{name}"), "patch");
    cr_assert_not_null(patch);
    json_t *consumes = json_object_get(patch, "consumes");
    bool smp = false;
    size_t i;
    json_t *c;
    json_array_foreach(consumes, i, c)
    {
        if (!strcmp(json_string_value(c), "application/strategic-merge-patch+json"))
            smp = true;
    }
    cr_assert(smp, "PATCH consumes strategic merge");
    bool body = false, fv = false;
    json_array_foreach(json_object_get(patch, "parameters"), i, c)
    {
        const char *in = json_string_value(json_object_get(c, "in"));
        const char *name = json_string_value(json_object_get(c, "name"));
        if (!strcmp(in, "body"))
            body = json_object_get(c, "schema") != NULL;
        if (!strcmp(name, "fieldValidation"))
            fv = json_is_string(json_object_get(c, "type"));
    }
    cr_assert(body && fv, "body parameter and inline-typed query parameters");
    assert_json(json_object_get(patch, "x-kubernetes-group-version-kind"),
                "{'group':'apps','version':'v1','kind':'Deployment'}", "patch gvk");
    json_decref(doc);
}

Test(openapi_v2, cached_text_follows_the_registry)
{
    fakeapi__openapi_cache *c = fakeapi__openapi_cache_new();
    cr_assert_not_null(c);
    char *a = NULL, *b = NULL, *d = NULL;
    size_t alen = 0, blen = 0, dlen = 0;
    cr_assert_eq(fakeapi__openapi_v2_body(c, reg, FAKEAPI__OPENAPI_JSON, &a, &alen), 0);
    cr_assert_eq(strlen(a), alen);
    cr_assert_null(strstr(a, "com.example.stable.v1.Gadget"));
    cr_assert_eq(fakeapi__openapi_v2_body(c, reg, FAKEAPI__OPENAPI_JSON, &b, &blen), 0);
    cr_assert(a != b && alen == blen && !memcmp(a, b, alen), "a fresh copy of the same text");
    add_gadget();
    cr_assert_eq(fakeapi__openapi_v2_body(c, reg, FAKEAPI__OPENAPI_JSON, &d, &dlen), 0);
    cr_assert_not_null(strstr(d, "com.example.stable.v1.Gadget"), "rebuilt after a CRD");
    json_error_t err;
    json_t *parsed = json_loadb(d, dlen, 0, &err);
    cr_assert_not_null(parsed, "%s", err.text);
    json_t *fresh = fakeapi__openapi_v2(reg);
    cr_assert(json_equal(parsed, fresh), "the cached text is the document");
    fakeapi__registry_remove_crd(reg, "gadgets.stable.example.com");
    free(d);
    cr_assert_eq(fakeapi__openapi_v2_body(c, reg, FAKEAPI__OPENAPI_JSON, &d, &dlen), 0);
    cr_assert_null(strstr(d, "com.example.stable.v1.Gadget"), "dropped with the CRD");
    json_decref(parsed);
    json_decref(fresh);
    free(a);
    free(b);
    free(d);
    fakeapi__openapi_cache_free(c);
}

/* ---- Accept -------------------------------------------------------------------------- */

Test(openapi_accept, forms_in_the_order_asked)
{
    const int J_ = FAKEAPI__OPENAPI_JSON, P_ = FAKEAPI__OPENAPI_PROTOBUF;
    cr_assert_eq(fakeapi__openapi_v2_form(NULL), J_);
    cr_assert_eq(fakeapi__openapi_v2_form(""), J_);
    cr_assert_eq(fakeapi__openapi_v2_form("application/json"), J_);
    cr_assert_eq(fakeapi__openapi_v2_form("Application/JSON; charset=utf-8"), J_);
    cr_assert_eq(fakeapi__openapi_v2_form("*/*"), J_);
    cr_assert_eq(fakeapi__openapi_v2_form("application/*;q=0.8"), J_);
    cr_assert_eq(fakeapi__openapi_v2_form(FAKEAPI__OPENAPI_V2_PB), P_);
    cr_assert_eq(fakeapi__openapi_v2_form(FAKEAPI__OPENAPI_V2_PB ", application/json"), P_);
    cr_assert_eq(fakeapi__openapi_v2_form("application/json, " FAKEAPI__OPENAPI_V2_PB), J_);
    cr_assert_eq(fakeapi__openapi_v2_form("application/com.github.proto-openapi.spec.v2.v1.0+"
                                          "protobuf"),
                 P_);
    cr_assert_eq(fakeapi__openapi_v2_form("application/vnd.kubernetes.protobuf, text/html"), -1);
    cr_assert_eq(fakeapi__openapi_v2_form("application/jsonx"), -1);
}

/* The handler: JSON by default, protobuf when asked, 406 with a Status for anything else. */
Test(openapi_accept, handler_answers_json_or_406)
{
    fakeapi_server *srv = NULL;
    cr_assert_eq(fakeapi_start(NULL, &srv), 0);
    json_t *q = json_object();
    fakeapi__req req = {.method = "GET", .path = "/openapi/v2", .query = q};
    fakeapi__resp resp = {0};
    fakeapi__handle(srv, &req, &resp);
    cr_assert_eq(resp.status, 200);
    json_t *doc = json_loadb(resp.body, resp.body_len, 0, NULL);
    cr_assert_str_eq(json_string_value(json_object_get(doc, "swagger")), "2.0");
    json_decref(doc);
    fakeapi__resp_deinit(&resp);

    req.accept = FAKEAPI__OPENAPI_V2_PB;
    memset(&resp, 0, sizeof resp);
    fakeapi__handle(srv, &req, &resp);
    cr_assert_eq(resp.status, 200);
    cr_assert_str_eq(resp.content_type, "application/octet-stream");
    /* Document.swagger = 1: "2.0" first. */
    cr_assert(resp.body_len > 5 && !memcmp(resp.body,
                                           "\x0a\x03"
                                           "2.0",
                                           5));
    fakeapi__resp_deinit(&resp);

    req.accept = "application/vnd.kubernetes.protobuf";
    memset(&resp, 0, sizeof resp);
    fakeapi__handle(srv, &req, &resp);
    cr_assert_eq(resp.status, 406);
    json_t *st = json_loadb(resp.body, resp.body_len, 0, NULL);
    cr_assert_str_eq(json_string_value(json_object_get(st, "reason")), "NotAcceptable");
    cr_assert_str_eq(json_string_value(json_object_get(st, "kind")), "Status");
    json_decref(st);
    fakeapi__resp_deinit(&resp);
    json_decref(q);
    fakeapi_stop(srv);
}

/* ---- the protobuf form ---------------------------------------------------------------- */

/* A length-delimited field of a protobuf message, read by a minimal reader. */
typedef struct pbfield {
    const unsigned char *p;
    size_t n;
} pbfield;

static uint64_t rd_varint(const unsigned char **p, const unsigned char *end)
{
    uint64_t v = 0;
    for (int shift = 0; *p < end && shift < 64; shift += 7) {
        unsigned char c = *(*p)++;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            return v;
    }
    cr_assert_fail("truncated varint");
    return 0;
}

/* The nth (0-based) length-delimited occurrence of field in m; false if there is none. */
static bool pb_get(pbfield m, uint32_t field, size_t nth, pbfield *out)
{
    const unsigned char *p = m.p, *end = m.p + m.n;
    while (p < end) {
        uint64_t key = rd_varint(&p, end);
        uint32_t f = (uint32_t)(key >> 3);
        switch (key & 7) {
        case 0:
            rd_varint(&p, end);
            break;
        case 1:
            p += 8;
            break;
        case 2: {
            uint64_t n = rd_varint(&p, end);
            cr_assert_leq(n, (uint64_t)(end - p), "field %u overruns its message", f);
            if (f == field && nth-- == 0) {
                *out = (pbfield){p, (size_t)n};
                return true;
            }
            p += n;
            break;
        }
        case 5:
            p += 4;
            break;
        default:
            cr_assert_fail("wire type %d", (int)(key & 7));
        }
    }
    cr_assert_eq(p, end, "message overrun");
    return false;
}

static bool pb_is(pbfield f, const char *s)
{
    return f.n == strlen(s) && !memcmp(f.p, s, f.n);
}

/* The value of the named entry (name = 1, value = 2) among the repeated field of m. */
static bool pb_named(pbfield m, uint32_t field, const char *name, pbfield *value)
{
    pbfield e, n;
    for (size_t i = 0; pb_get(m, field, i, &e); i++)
        if (pb_get(e, 1, 0, &n) && pb_is(n, name))
            return pb_get(e, 2, 0, value);
    return false;
}

Test(openapi_v2, protobuf_form_is_the_same_document)
{
    add_gadget();
    json_t *doc = fakeapi__openapi_v2(reg);
    size_t len = 0;
    char *bytes = fakeapi__openapi_v2_protobuf(doc, &len);
    cr_assert_not_null(bytes);
    pbfield d = {(const unsigned char *)bytes, len}, f, defs, s, x;
    cr_assert(pb_get(d, 1, 0, &f) && pb_is(f, "2.0"), "Document.swagger");
    cr_assert(pb_get(d, 9, 0, &defs), "Document.definitions");
    /* Definitions.additional_properties: one NamedSchema per definition. */
    size_t n = 0;
    while (pb_get(defs, 1, n, &f))
        n++;
    cr_assert_eq(n, json_object_size(json_object_get(doc, "definitions")));
    cr_assert(pb_named(defs, 1, APPS "Deployment", &s));
    /* Schema.vendor_extension = 31: the gvk as JSON in Any.yaml = 2. */
    cr_assert(pb_named(s, 31, "x-kubernetes-group-version-kind", &x));
    cr_assert(pb_get(x, 2, 0, &f));
    cr_assert(pb_is(f, "[{\"group\":\"apps\",\"version\":\"v1\",\"kind\":\"Deployment\"}]"), "%.*s",
              (int)f.n, (const char *)f.p);
    /* Schema.properties = 25 -> spec -> Schema._ref = 1. */
    pbfield props, spec;
    cr_assert(pb_get(s, 25, 0, &props) && pb_named(props, 1, "spec", &spec));
    cr_assert(pb_get(spec, 1, 0, &f) && pb_is(f, "#/definitions/" APPS "DeploymentSpec"));
    /* DeploymentSpec.replicas: TypeItem (22) "integer", format (2) "int32". */
    pbfield ds, rep, type;
    cr_assert(pb_named(defs, 1, APPS "DeploymentSpec", &ds));
    cr_assert(pb_get(ds, 25, 0, &props) && pb_named(props, 1, "replicas", &rep));
    cr_assert(pb_get(rep, 22, 0, &type) && pb_get(type, 1, 0, &f) && pb_is(f, "integer"));
    cr_assert(pb_get(rep, 2, 0, &f) && pb_is(f, "int32"));
    /* required (19) lists selector and template. */
    cr_assert(pb_get(ds, 19, 0, &f) && pb_is(f, "selector"));
    cr_assert(pb_get(ds, 19, 1, &f) && pb_is(f, "template"));
    /* The CRD kind is there; a path has its PATCH with a body parameter. */
    cr_assert(pb_named(defs, 1, "com.example.stable.v1.Gadget", &s));
    pbfield paths, item, op, param, p1, body;
    cr_assert(pb_get(d, 8, 0, &paths));
    cr_assert(pb_named(paths, 2, "/apis/apps/v1/namespaces/{namespace}/deployments/{name}", &item));
    cr_assert(pb_get(item, 8, 0, &op), "PathItem.patch");
    bool found = false;
    for (size_t i = 0; pb_get(op, 8, i, &param); i++) {
        /* ParametersItem.parameter = 1 -> Parameter.body_parameter = 1 -> name = 2 */
        if (pb_get(param, 1, 0, &p1) && pb_get(p1, 1, 0, &body) && pb_get(body, 2, 0, &f) &&
            pb_is(f, "body"))
            found = true;
    }
    cr_assert(found, "PATCH has its body parameter");
    free(bytes);
    json_decref(doc);
}

/* Paths carry only the operations a resource's verbs allow. */
Test(openapi_types, operations_follow_the_verbs)
{
    json_t *doc = fakeapi__openapi_v3_gv(reg, "", "v1");
    json_t *paths = json_object_get(doc, "paths");
    json_t *cs = json_object_get(paths, "/api/v1/componentstatuses");
    cr_assert_not_null(cs);
    cr_assert_not_null(json_object_get(cs, "get"), "list");
    cr_assert_null(json_object_get(cs, "post"), "componentstatuses are read-only");
    cr_assert_null(json_object_get(cs, "delete"));
    json_t *csi = json_object_get(paths, "/api/v1/componentstatuses/{name}");
    cr_assert_not_null(json_object_get(csi, "get"));
    cr_assert_null(json_object_get(csi, "patch"));
    cr_assert_null(json_object_get(csi, "put"));
    /* Bindings are create-only: a collection with POST, no item path at all. */
    json_t *b = json_object_get(paths, "/api/v1/namespaces/{namespace}/bindings");
    cr_assert_not_null(json_object_get(b, "post"));
    cr_assert_null(json_object_get(b, "get"));
    cr_assert_null(json_object_get(paths, "/api/v1/namespaces/{namespace}/bindings/{name}"));
    cr_assert_null(json_object_get(paths, "/api/v1/bindings"), "no list across namespaces");
    /* Binding has no list message, yet is typed. */
    json_t *s = v3_schemas(doc);
    assert_json(prop(s, CORE "Binding", "target"),
                "{'allOf':[{'$ref':'" REF3 CORE "ObjectReference'}]}", "Binding.target");
    /* Pods have everything. */
    json_t *pods = json_object_get(paths, "/api/v1/namespaces/{namespace}/pods");
    cr_assert(json_object_get(pods, "get") && json_object_get(pods, "post") &&
              json_object_get(pods, "delete"));
    json_decref(doc);
}

static json_t *load_text(const char *text, size_t len)
{
    json_error_t err;
    json_t *v = json_loadb(text, len, 0, &err);
    cr_assert_not_null(v, "%s", err.text);
    return v;
}

Test(openapi_v2, cached_v3_documents_follow_the_registry)
{
    fakeapi__openapi_cache *c = fakeapi__openapi_cache_new();
    char *t = NULL;
    size_t n = 0;
    cr_assert_eq(fakeapi__openapi_v3_body(c, reg, NULL, NULL, &t, &n), 0);
    json_t *got = load_text(t, n), *want = fakeapi__openapi_v3_root(reg);
    cr_assert(json_equal(got, want), "cached root = built root");
    json_decref(got);
    json_decref(want);
    free(t);
    cr_assert_eq(fakeapi__openapi_v3_body(c, reg, "apps", "v1", &t, &n), 0);
    got = load_text(t, n);
    want = fakeapi__openapi_v3_gv(reg, "apps", "v1");
    cr_assert(json_equal(got, want), "cached apps/v1 = built apps/v1");
    json_decref(got);
    json_decref(want);
    free(t);
    cr_assert_eq(fakeapi__openapi_v3_body(c, reg, "stable.example.com", "v1", &t, &n), 1);
    cr_assert_null(t);
    add_gadget();
    cr_assert_eq(fakeapi__openapi_v3_body(c, reg, "stable.example.com", "v1", &t, &n), 0,
                 "served once its CRD is");
    got = load_text(t, n);
    cr_assert_not_null(
        json_object_get(json_object_get(json_object_get(got, "components"), "schemas"),
                        "com.example.stable.v1.Gadget"));
    json_decref(got);
    free(t);
    cr_assert_eq(fakeapi__openapi_v3_body(c, reg, NULL, NULL, &t, &n), 0);
    got = load_text(t, n);
    cr_assert_not_null(
        json_object_get(json_object_get(got, "paths"), "apis/stable.example.com/v1"));
    json_decref(got);
    free(t);
    cr_assert_eq(fakeapi__openapi_v3_body(c, reg, "", "v1", &t, &n), 0, "core by an empty group");
    free(t);
    fakeapi__openapi_cache_free(c);
}
