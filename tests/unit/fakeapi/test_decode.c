/*
 * test_decode.c - the decode check: base64 as Go decodes it, Go's %v and
 * %q, the messages of each dialect, and a table entry for every built-in
 * kind the registry serves.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "registry.h"
#include "strbuf.h"

static json_t *load(const char *text)
{
    char *t = strdup(text);
    for (char *p = t; *p; p++)
        if (*p == '\'')
            *p = '"';
    json_error_t e;
    json_t *v = json_loads(t, JSON_DECODE_ANY, &e);
    cr_assert_not_null(v, "%s: %s", text, e.text);
    free(t);
    return v;
}

Test(decode, base64_like_go)
{
    static const struct {
        const char *in;
        long want;
    } cases[] = {
        {"", -1},           {"aGk=", -1},    {"aGVsbG8=", -1}, {"aGVs\nbG8=", -1}, {"YQ==", -1},
        {"YQ==\r\n", -1},   {"a", 0},        {"ab", 0},        {"abc", 0},         {"abcde", 4},
        {"not base64!", 3}, {"YQ=", 3},      {"YQ=x", 2},      {"YQ==x", 4},       {"=", 0},
        {"a===", 1},        {"aGk=aGk=", 4}, {"a-b_", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_assert_eq(fakeapi__base64_error(cases[i].in, strlen(cases[i].in)), cases[i].want,
                     "\"%s\": got %ld", cases[i].in,
                     fakeapi__base64_error(cases[i].in, strlen(cases[i].in)));
}

Test(decode, go_formats)
{
    json_t *v = load("{'b':[1,'x',true,null],'a':{'z':1.5,'y':1e6}}");
    char *s = fakeapi__decode_gofmt(v, 1000);
    cr_assert_str_eq(s, "map[a:map[y:1e+06 z:1.5] b:[1 x true <nil>]]");
    free(s);
    s = fakeapi__decode_gofmt(v, 10);
    cr_assert_str_eq(s, "map[a:m...");
    free(s);
    json_decref(v);

    fakeapi__strbuf b = {0};
    fakeapi__go_quote(&b, "{\"a\":\"b\\c\"}\n\t\x01é");
    char *q = fakeapi__strbuf_take(&b, NULL);
    cr_assert_str_eq(q, "\"{\\\"a\\\":\\\"b\\\\c\\\"}\\n\\t\\x01é\"");
    free(q);
}

/* The registry's ConfigMap, Secret, ... entries. */
static fakeapi__registry *reg;

static void reg_setup(void)
{
    reg = fakeapi__registry_new();
    cr_assert_not_null(reg);
}

static void reg_teardown(void)
{
    fakeapi__registry_free(reg);
}

static fakeapi__resource *find(const char *group, const char *plural)
{
    fakeapi__resource *r = fakeapi__registry_find(reg, group, "v1", plural);
    cr_assert_not_null(r, "%s", plural);
    return r;
}

static void check_msg(const char *group, const char *plural, const char *obj,
                      fakeapi__decode_dialect d, const char *want)
{
    fakeapi__resource *r = find(group, plural);
    json_t *v = load(obj);
    fakeapi__decode_error e;
    cr_assert_eq(fakeapi__decode_check(r, v, &e), -1, "%s", obj);
    char msg[512];
    fakeapi__decode_message(&e, d, msg, sizeof msg);
    cr_assert_str_eq(msg, want, "%s", obj);
    json_decref(v);
    fakeapi__resource_unref(r);
}

TestSuite(decode_kinds, .init = reg_setup, .fini = reg_teardown);

Test(decode_kinds, every_builtin_kind_checks_its_metadata)
{
    size_t n;
    fakeapi__resource **all = fakeapi__registry_all(reg, &n);
    cr_assert_gt(n, 0);
    for (size_t i = 0; i < n; i++) {
        if (!all[i]->stored)
            continue;
        /* Every root knows apiVersion, kind and metadata. */
        json_t *v = load("{'metadata':{'name':7}}");
        fakeapi__decode_error e;
        cr_assert_eq(fakeapi__decode_check(all[i], v, &e), -1, "%s", all[i]->kind);
        cr_assert_str_eq(e.go_struct, "ObjectMeta");
        json_decref(v);
    }
    fakeapi__registry_release(all, n);
}

Test(decode_kinds, valid_objects_pass)
{
    fakeapi__resource *r = find("", "configmaps");
    json_t *v = load("{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'x','labels':{'a':"
                     "'b'},'ownerReferences':[{'uid':'u','controller':true}],'generation':3,"
                     "'creationTimestamp':'2024-01-01T00:00:00Z','finalizers':['f']},"
                     "'data':{'k':'v','n':null},'binaryData':{'b':'aGk='},'immutable':true,"
                     "'unknown':{'fields':[1]}}");
    cr_assert_eq(fakeapi__decode_check(r, v, NULL), 0);
    json_decref(v);
    fakeapi__resource_unref(r);
}

Test(decode_kinds, messages)
{
    const char *bad_data = "{'data':{'k':5}}";
    check_msg("", "configmaps", bad_data, FAKEAPI__DIALECT_JSON,
              "json: cannot unmarshal number into Go struct field ConfigMap.data of type string");
    check_msg("", "configmaps", bad_data, FAKEAPI__DIALECT_UNSTRUCTURED,
              "cannot convert int64 to string");
    check_msg("", "configmaps", bad_data, FAKEAPI__DIALECT_APPLY,
              ".data.k: expected string, got &{5}");
    check_msg("", "configmaps", "{'data':[]}", FAKEAPI__DIALECT_UNSTRUCTURED,
              "cannot restore map from slice");
    check_msg("", "configmaps", "{'metadata':[]}", FAKEAPI__DIALECT_UNSTRUCTURED,
              "cannot restore struct from: slice");
    check_msg("", "configmaps", "{'metadata':{'finalizers':{}}}", FAKEAPI__DIALECT_UNSTRUCTURED,
              "cannot restore slice from map");
    check_msg("", "configmaps", "{'metadata':{'finalizers':{}}}", FAKEAPI__DIALECT_APPLY,
              ".metadata.finalizers: expected list, got &{map[]}");
    check_msg("", "configmaps", "{'metadata':{'ownerReferences':[{'controller':'yes'}]}}",
              FAKEAPI__DIALECT_JSON,
              "json: cannot unmarshal string into Go struct field "
              "OwnerReference.metadata.ownerReferences.controller of type bool");
    check_msg("", "configmaps", "{'metadata':{'ownerReferences':[{'controller':'yes'}]}}",
              FAKEAPI__DIALECT_APPLY,
              ".metadata.ownerReferences[0].controller: expected boolean, got &{yes}");
    check_msg("", "configmaps", "{'metadata':{'generation':'1'}}", FAKEAPI__DIALECT_APPLY,
              ".metadata.generation: expected numeric (int or float), got string");
    check_msg("", "configmaps", "{'metadata':{'generation':1.5}}", FAKEAPI__DIALECT_UNSTRUCTURED,
              "cannot convert float64 to int64");
    check_msg("", "configmaps", "{'immutable':1}", FAKEAPI__DIALECT_UNSTRUCTURED,
              "unrecognized type: bool");
    check_msg("coordination.k8s.io", "leases", "{'spec':{'leaseTransitions':3000000000}}",
              FAKEAPI__DIALECT_JSON,
              "json: cannot unmarshal number 3000000000 into Go struct field "
              "LeaseSpec.spec.leaseTransitions of type int32");
    check_msg("", "secrets", "{'data':{'k':'abc'}}", FAKEAPI__DIALECT_UNSTRUCTURED,
              "error decoding from json: illegal base64 data at input byte 0");
    check_msg("", "configmaps", "{'apiVersion':'v1','kind':['ConfigMap']}", FAKEAPI__DIALECT_JSON,
              "couldn't get version/kind; json parse error: json: cannot unmarshal array into "
              "Go struct field .kind of type string");
    check_msg("", "events", "{'lastTimestamp':true}", FAKEAPI__DIALECT_JSON,
              "json: cannot unmarshal bool into Go value of type string");
    /* The first error in document order, as Go's decoder meets it. */
    check_msg("", "configmaps", "{'immutable':'no','data':'x'}", FAKEAPI__DIALECT_JSON,
              "json: cannot unmarshal string into Go struct field ConfigMap.immutable of type "
              "bool");
}
