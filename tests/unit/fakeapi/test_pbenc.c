/*
 * test_pbenc.c - JSON to protobuf (pbenc.c) and back (protobuf.c), for every
 * built-in message of the type tables.
 *
 * For each message a sample JSON value is built from its fields: every field
 * that has a JSON form set to a non-zero sample of its type (strings, numbers,
 * bools, base64 bytes, maps of one entry, lists of two elements, nested
 * messages down to a message already on the path, the hand-written JSON of
 * Time, MicroTime, Duration, Quantity, IntOrString, raw JSON, slices and the
 * JSONSchemaPropsOr* unions). Encoding and decoding it must give the same
 * JSON back; so must every served kind in its envelope. A field the decoder
 * misnamed, mistyped or lost, or an inline field not merged, fails here.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbenc.h"
#include "protobuf.h"
#include "types.h"

#define MAX_PATH 64

typedef struct {
    const fakeapi__tmsg *path[MAX_PATH];
    int depth;
    unsigned n; /* a counter that varies samples */
} sampler;

static json_t *sample_msg(sampler *s, const fakeapi__tmsg *m);

static bool on_path(const sampler *s, const fakeapi__tmsg *m)
{
    for (int i = 0; i < s->depth; i++)
        if (s->path[i] == m)
            return true;
    return false;
}

static json_t *sample_scalar(sampler *s, const fakeapi__tfield *f, uint8_t type)
{
    s->n++;
    switch (type) {
    case FAKEAPI__T_STRING: {
        char buf[96];
        snprintf(buf, sizeof buf, "%s-%u", f->json[0] ? f->json : f->proto, s->n);
        return json_string(buf);
    }
    case FAKEAPI__T_BOOL:
        return json_true();
    case FAKEAPI__T_INT32:
        return json_integer(7 + (json_int_t)s->n);
    case FAKEAPI__T_INT64:
        return json_integer(1234567890123 + (json_int_t)s->n);
    case FAKEAPI__T_DOUBLE:
        return json_real(1.5 + s->n);
    case FAKEAPI__T_BYTES:
        return json_string("aGVsbG8="); /* "hello" */
    default:
        return NULL;
    }
}

/* A value of field f's type: NULL to leave the field out (a cycle). */
static json_t *sample_value(sampler *s, const fakeapi__tfield *f)
{
    if (f->type != FAKEAPI__T_MSG)
        return sample_scalar(s, f, f->type);
    const fakeapi__tmsg *sub = fakeapi__type_at(f->msg);
    cr_assert_not_null(sub);
    return sample_msg(s, sub);
}

static json_t *sample_special(sampler *s, const fakeapi__tmsg *m)
{
    s->n++;
    switch (m->special) {
    case FAKEAPI__S_TIME:
        return json_string("2024-05-06T07:08:09Z");
    case FAKEAPI__S_MICROTIME:
        return json_string("2024-05-06T07:08:09.123456Z");
    case FAKEAPI__S_DURATION:
        return json_string(s->n % 2 ? "1h2m3.5s" : "1.5ms");
    case FAKEAPI__S_QUANTITY:
        return json_string(s->n % 2 ? "250m" : "1Gi");
    case FAKEAPI__S_INTORSTRING:
        return s->n % 2 ? json_integer(8080) : json_string("http");
    case FAKEAPI__S_RAW:
        return json_pack("{s:[i,s],s:{s:b}}", "a", 1, "x", "b", "c", 1);
    case FAKEAPI__S_SLICE:
        return json_pack("[s,s]", "x", "y");
    default:
        break;
    }
    if (!strcmp(m->short_name, "GroupVersion"))
        return json_string("apps/v1");
    if (!strcmp(m->short_name, "JSONSchemaPropsOrBool"))
        return json_false();
    if (!strcmp(m->short_name, "JSONSchemaPropsOrStringArray"))
        return json_pack("[s,s]", "a", "b");
    if (!strcmp(m->short_name, "JSONSchemaPropsOrArray"))
        return json_pack("[{s:s}]", "type", "string");
    return NULL; /* runtime.Unknown: no JSON form */
}

static json_t *sample_msg(sampler *s, const fakeapi__tmsg *m)
{
    if (m->special != FAKEAPI__S_NONE)
        return sample_special(s, m);
    if (on_path(s, m) || s->depth >= MAX_PATH)
        return NULL;
    s->path[s->depth++] = m;
    json_t *o = json_object();
    for (uint16_t i = 0; i < m->nfields; i++) {
        const fakeapi__tfield *f = &m->fields[i];
        json_t *v = NULL;
        if (f->flags & FAKEAPI__F_INLINE) {
            json_t *in = sample_msg(s, fakeapi__type_at(f->msg));
            if (in)
                json_object_update(o, in);
            json_decref(in);
            continue;
        }
        if (f->flags & FAKEAPI__F_NOJSON)
            continue;
        if (f->flags & FAKEAPI__F_MAP) {
            json_t *val = sample_value(s, f);
            if (!val)
                continue;
            const char *key = f->map_key == FAKEAPI__T_STRING ? "key-1"
                              : f->map_key == FAKEAPI__T_BOOL ? "true"
                                                              : "7";
            v = json_object();
            json_object_set_new(v, key, val);
        } else if (f->flags & FAKEAPI__F_REPEATED) {
            json_t *a = sample_value(s, f), *b = a ? sample_value(s, f) : NULL;
            if (!a)
                continue;
            v = json_array();
            json_array_append_new(v, a);
            json_array_append_new(v, b);
        } else if (!(v = sample_value(s, f))) {
            continue;
        }
        json_object_set_new(o, f->json, v);
    }
    s->depth--;
    return o;
}

static void round_trip_msg(const fakeapi__tmsg *m)
{
    sampler s = {.depth = 0, .n = 0};
    json_t *want = sample_msg(&s, m), *got = NULL;
    if (!want)
        return; /* runtime.Unknown */
    uint8_t *pb = NULL;
    size_t n = 0;
    char err[256];
    cr_assert_eq(fakeapi__pb_encode_msg(m, want, &pb, &n, err, sizeof err), 0, "%s: %s", m->name,
                 err);
    cr_assert_eq(fakeapi__pb_decode_msg(m, pb, n, &got, err, sizeof err), 0, "%s: %s", m->name,
                 err);
    if (!json_equal(want, got)) {
        char *w = json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        char *g = got ? json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) : NULL;
        cr_assert_fail("%s:\n want %.2000s\n got  %.2000s", m->name, w, g ? g : "null");
    }
    json_decref(want);
    json_decref(got);
    free(pb);
}

Test(round_trip, every_message)
{
    size_t specials = 0, plain = 0;
    for (size_t i = 0; i < fakeapi__ntmsgs; i++) {
        round_trip_msg(&fakeapi__tmsgs[i]);
        *(fakeapi__tmsgs[i].special ? &specials : &plain) += 1;
    }
    cr_assert_gt(plain, 500, "only %zu messages", plain);
    cr_assert_gt(specials, 10);
}

/* Every kind the served group-versions serve (and each subresource's body),
 * in its envelope, as a client would send it. */
Test(round_trip, every_served_kind_in_its_envelope)
{
    size_t kinds = 0;
    for (size_t i = 0; i < fakeapi__ntress; i++) {
        const fakeapi__tres *r = &fakeapi__tress[i];
        if (r->msg < 0)
            continue;
        const fakeapi__tmsg *m = fakeapi__type_at(r->msg);
        cr_assert_eq(fakeapi__pb_kind_msg(r->kind_group_version, r->kind), m, "%s %s",
                     r->kind_group_version, r->kind);
        sampler s = {.depth = 0, .n = 0};
        json_t *obj = json_pack("{s:s,s:s}", "apiVersion", r->kind_group_version, "kind", r->kind);
        json_t *fields = sample_msg(&s, m), *got = NULL;
        json_object_update(obj, fields);
        json_decref(fields);
        uint8_t *pb = NULL;
        size_t n = 0;
        char err[256];
        cr_assert_eq(fakeapi__pb_encode(obj, &pb, &n, err, sizeof err), 0, "%s: %s", r->kind, err);
        cr_assert_eq(fakeapi__pb_decode(pb, n, &got, err, sizeof err), 0, "%s: %s", r->kind, err);
        cr_assert(json_equal(obj, got), "%s/%s %s", r->group, r->version, r->resource);
        json_decref(obj);
        json_decref(got);
        free(pb);
        kinds++;
    }
    cr_assert_gt(kinds, 100);
}

/* DeleteOptions, ListOptions ... are registered in every group-version. */
Test(round_trip, options_kinds_in_any_group_version)
{
    const char *gvs[] = {"v1", "apps/v1", "meta.k8s.io/v1", "rbac.authorization.k8s.io/v1"};
    const char *kinds[] = {"DeleteOptions", "ListOptions",   "GetOptions",
                           "CreateOptions", "UpdateOptions", "PatchOptions"};
    for (size_t g = 0; g < 4; g++)
        for (size_t k = 0; k < 6; k++) {
            const fakeapi__tmsg *m = fakeapi__pb_kind_msg(gvs[g], kinds[k]);
            cr_assert_not_null(m, "%s %s", gvs[g], kinds[k]);
            cr_assert_str_eq(m->short_name, kinds[k]);
        }
    /* Subresource and review bodies by their own group-version. */
    cr_assert_str_eq(fakeapi__pb_kind_msg("autoscaling/v1", "Scale")->name,
                     "k8s.io.api.autoscaling.v1.Scale");
    cr_assert_str_eq(fakeapi__pb_kind_msg("policy/v1", "Eviction")->name,
                     "k8s.io.api.policy.v1.Eviction");
    cr_assert_str_eq(fakeapi__pb_kind_msg("authentication.k8s.io/v1", "TokenRequest")->name,
                     "k8s.io.api.authentication.v1.TokenRequest");
    cr_assert_str_eq(fakeapi__pb_kind_msg("authentication.k8s.io/v1", "TokenReview")->name,
                     "k8s.io.api.authentication.v1.TokenReview");
    cr_assert_str_eq(fakeapi__pb_kind_msg("authorization.k8s.io/v1", "SubjectAccessReview")->name,
                     "k8s.io.api.authorization.v1.SubjectAccessReview");
    cr_assert_null(fakeapi__pb_kind_msg("example.com/v1", "Widget"));
    cr_assert_null(fakeapi__pb_kind_msg("apps/v1", "ConfigMap"));
}

static json_t *decode_as(const char *msg, const uint8_t *p, size_t n)
{
    const fakeapi__tmsg *m = fakeapi__type_find(msg);
    json_t *out = NULL;
    char err[256];
    cr_assert_not_null(m, "%s", msg);
    cr_assert_eq(fakeapi__pb_decode_msg(m, p, n, &out, err, sizeof err), 0, "%s", err);
    return out;
}

Test(specials, durations_as_go_writes_them)
{
    static const struct {
        int64_t ns;
        const char *want;
    } cases[] = {
        {0, "0s"},
        {1, "1ns"},
        {1500, "1.5\xc2\xb5s"},
        {1500000, "1.5ms"},
        {1000000000, "1s"},
        {90 * INT64_C(1000000000), "1m30s"},
        {3723 * INT64_C(1000000000) + 500000000, "1h2m3.5s"},
        {-2 * INT64_C(3600000000000), "-2h0m0s"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t buf[16] = {0x08};
        size_t n = 1;
        uint64_t v = (uint64_t)cases[i].ns;
        do {
            buf[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
            v >>= 7;
        } while (v);
        json_t *d = decode_as("k8s.io.apimachinery.pkg.apis.meta.v1.Duration", buf, n);
        cr_assert_str_eq(json_string_value(d), cases[i].want);
        json_decref(d);
    }
}

Test(specials, packed_and_unpacked_repeated_numbers)
{
    /* PodSecurityContext.supplementalGroups (field 4, int64) is a repeated number. */
    const uint8_t unpacked[] = {0x20, 0x05, 0x20, 0x06};
    const uint8_t packed[] = {0x22, 0x02, 0x05, 0x06};
    json_t *a = decode_as("k8s.io.api.core.v1.PodSecurityContext", unpacked, sizeof unpacked);
    json_t *want = json_pack("{s:[i,i]}", "supplementalGroups", 5, 6);
    cr_assert(json_equal(a, want));
    json_decref(want);
    json_t *b = decode_as("k8s.io.api.core.v1.PodSecurityContext", packed, sizeof packed);
    cr_assert(json_equal(a, b));
    json_decref(a);
    json_decref(b);
}

Test(specials, map_of_quantities_and_int_or_string)
{
    /* ResourceRequirements.limits (1): map<string, Quantity>. */
    const uint8_t limits[] = {0x0a, 0x0d, 0x0a, 0x03, 'c', 'p', 'u', 0x12,
                              0x06, 0x0a, 0x04, '5',  '0', '0', 'm'};
    json_t *r = decode_as("k8s.io.api.core.v1.ResourceRequirements", limits, sizeof limits);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(r, "limits"), "cpu")),
                     "500m");
    json_decref(r);
    /* IntOrString {type=1 (string), strVal="http"} and {type=0, intVal=80}. */
    const uint8_t s[] = {0x08, 0x01, 0x1a, 0x04, 'h', 't', 't', 'p'};
    const uint8_t i[] = {0x08, 0x00, 0x10, 0x50};
    json_t *js = decode_as("k8s.io.apimachinery.pkg.util.intstr.IntOrString", s, sizeof s);
    json_t *ji = decode_as("k8s.io.apimachinery.pkg.util.intstr.IntOrString", i, sizeof i);
    cr_assert_str_eq(json_string_value(js), "http");
    cr_assert_eq(json_integer_value(ji), 80);
    json_decref(js);
    json_decref(ji);
}

Test(specials, raw_extension_holding_json_or_an_envelope)
{
    const uint8_t raw[] = {0x0a, 0x07, '{', '"', 'a', '"', ':', '1', '}'};
    json_t *j = decode_as("k8s.io.apimachinery.pkg.runtime.RawExtension", raw, sizeof raw);
    cr_assert_eq(json_integer_value(json_object_get(j, "a")), 1);
    json_decref(j);
    /* A ControllerRevision's data holding a protobuf ConfigMap. */
    json_t *cm =
        json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap", "data", "k", "v");
    uint8_t *inner = NULL;
    size_t n = 0;
    char err[256];
    cr_assert_eq(fakeapi__pb_encode(cm, &inner, &n, err, sizeof err), 0, "%s", err);
    uint8_t *wrapped = malloc(n + 4);
    wrapped[0] = 0x0a;
    wrapped[1] = (uint8_t)(0x80 | (n & 0x7f));
    wrapped[2] = (uint8_t)(n >> 7);
    memcpy(wrapped + 3, inner, n);
    cr_assert_lt(n, 1 << 14);
    json_t *got = decode_as("k8s.io.apimachinery.pkg.runtime.RawExtension", wrapped, n + 3);
    cr_assert(json_equal(got, cm));
    json_decref(got);
    /* Bad raw JSON is an error, not a crash. */
    const uint8_t bad[] = {0x0a, 0x02, '{', '"'};
    json_t *out = NULL;
    cr_assert_eq(
        fakeapi__pb_decode_msg(fakeapi__type_find("k8s.io.apimachinery.pkg.runtime.RawExtension"),
                               bad, sizeof bad, &out, err, sizeof err),
        -1);
    cr_assert(strstr(err, "is not JSON"), "%s", err);
    free(inner);
    free(wrapped);
    json_decref(cm);
}

Test(encode, wrong_json_types_are_errors)
{
    uint8_t *pb = (uint8_t *)"x";
    size_t n = 99;
    char err[256];
    json_t *d = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "apps/v1", "kind", "Deployment",
                          "spec", "replicas", "three");
    cr_assert_eq(fakeapi__pb_encode(d, &pb, &n, err, sizeof err), -1);
    cr_assert(strstr(err, "replicas of DeploymentSpec: want an integer"), "%s", err);
    cr_assert_eq(n, 99);
    json_decref(d);
    d = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "Secret", "data", "k", "!!");
    cr_assert_eq(fakeapi__pb_encode(d, &pb, &n, err, sizeof err), -1);
    cr_assert(strstr(err, "base64"), "%s", err);
    json_decref(d);
    d = json_pack("{s:s,s:s}", "apiVersion", "example.com/v1", "kind", "Widget");
    cr_assert_eq(fakeapi__pb_encode(d, &pb, &n, err, sizeof err), -1);
    cr_assert(strstr(err, "no kind \"Widget\""), "%s", err);
    json_decref(d);
}

static void rt_value(const char *msg, json_t *v)
{
    const fakeapi__tmsg *m = fakeapi__type_find(msg);
    uint8_t *pb = NULL;
    size_t n = 0;
    char err[256];
    json_t *got = NULL;
    cr_assert_not_null(m, "%s", msg);
    cr_assert_eq(fakeapi__pb_encode_msg(m, v, &pb, &n, err, sizeof err), 0, "%s", err);
    cr_assert_eq(fakeapi__pb_decode_msg(m, pb, n, &got, err, sizeof err), 0, "%s", err);
    char *w = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    char *g = got ? json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY) : strdup("null");
    cr_assert(json_equal(v, got), "%s: want %s, got %s", msg, w, g);
    free(w);
    free(g);
    free(pb);
    json_decref(got);
    json_decref(v);
}

/* The unions of apiextensions take every one of their JSON forms. */
Test(specials, json_schema_unions_and_group_version)
{
    const char *ax = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.";
    char name[160];
    snprintf(name, sizeof name, "%sJSONSchemaPropsOrBool", ax);
    rt_value(name, json_true());
    rt_value(name, json_false());
    rt_value(name, json_pack("{s:s,s:{s:{s:s}}}", "type", "object", "properties", "a", "type",
                             "integer"));
    snprintf(name, sizeof name, "%sJSONSchemaPropsOrStringArray", ax);
    rt_value(name, json_pack("[s,s]", "a", "b"));
    rt_value(name, json_pack("{s:s}", "type", "string"));
    snprintf(name, sizeof name, "%sJSONSchemaPropsOrArray", ax);
    rt_value(name, json_pack("{s:s}", "type", "string"));
    rt_value(name, json_pack("[{s:s},{s:s}]", "type", "string", "type", "integer"));
    snprintf(name, sizeof name, "%sJSON", ax);
    rt_value(name, json_pack("[i,s,b]", 1, "x", 0));
    rt_value(name, json_string("just a string"));
    rt_value("k8s.io.apimachinery.pkg.apis.meta.v1.GroupVersion", json_string("apps/v1"));
    rt_value("k8s.io.apimachinery.pkg.apis.meta.v1.GroupVersion", json_string("v1"));
    /* A CRD with a nested schema survives whole. */
    json_t *crd = json_loads(
        "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
        "\"metadata\":{\"name\":\"widgets.example.com\"},\"spec\":{\"group\":\"example.com\","
        "\"names\":{\"plural\":\"widgets\",\"kind\":\"Widget\"},\"scope\":\"Namespaced\","
        "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,\"schema\":"
        "{\"openAPIV3Schema\":{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\","
        "\"x-kubernetes-preserve-unknown-fields\":true,\"properties\":{\"size\":{\"type\":"
        "\"integer\",\"minimum\":1,\"default\":3},\"tags\":{\"type\":\"array\",\"items\":{\"type\":"
        "\"string\"}}},\"additionalProperties\":false,\"required\":[\"size\"]}}}}}]}}",
        0, NULL);
    cr_assert_not_null(crd);
    uint8_t *pb = NULL;
    size_t n = 0;
    char err[256];
    json_t *got = NULL;
    cr_assert_eq(fakeapi__pb_encode(crd, &pb, &n, err, sizeof err), 0, "%s", err);
    cr_assert_eq(fakeapi__pb_decode(pb, n, &got, err, sizeof err), 0, "%s", err);
    cr_assert(json_equal(crd, got), "%s", json_dumps(got, JSON_COMPACT));
    free(pb);
    json_decref(got);
    json_decref(crd);
}
