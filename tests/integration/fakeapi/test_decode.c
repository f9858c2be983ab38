/*
 * test_decode.c - bodies and patch results the kind's Go type could not
 * decode are refused with the API server's wording and nothing is stored;
 * generateName is validated; a patch may not rename; JSON patches are
 * limited to 10,000 operations.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakeapi/fakeapi.h"
#include "apitest.h"

TestSuite(decode, .init = setup, .fini = teardown);

#define MERGE "application/merge-patch+json"
#define JSONP "application/json-patch+json"
#define SMP "application/strategic-merge-patch+json"
#define APPLY "application/apply-patch+yaml"
#define CMS "/api/v1/namespaces/default/configmaps"
#define CMX CMS "/x"
#define SECRETS "/api/v1/namespaces/default/secrets"

#define CM_IN "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: "

typedef struct bad_body {
    const char *path;
    const char *body;
    const char *message; /* the whole message */
} bad_body;

static const bad_body bad_bodies[] = {
    {CMS, "{'metadata':{'name':'x'},'data':'x'}",
     CM_IN "json: cannot unmarshal string into Go struct field ConfigMap.data of type "
           "map[string]string"},
    {CMS, "{'metadata':{'name':'x'},'data':{'k':1}}",
     CM_IN "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"},
    {CMS, "{'metadata':{'name':'x'},'immutable':'yes'}",
     CM_IN "json: cannot unmarshal string into Go struct field ConfigMap.immutable of type bool"},
    {CMS, "{'metadata':{'name':'x'},'binaryData':{'k':'not base64!'}}",
     CM_IN "illegal base64 data at input byte 3"},
    {CMS, "{'metadata':'x'}",
     CM_IN "json: cannot unmarshal string into Go struct field ConfigMap.metadata of type "
           "v1.ObjectMeta"},
    {CMS, "{'metadata':{'name':'x','labels':{'a':1}}}",
     CM_IN "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of "
           "type string"},
    {CMS, "{'metadata':{'name':'x','annotations':['a']}}",
     CM_IN "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.annotations of "
           "type map[string]string"},
    {CMS, "{'metadata':{'name':'x','finalizers':'f'}}",
     CM_IN "json: cannot unmarshal string into Go struct field ObjectMeta.metadata.finalizers of "
           "type []string"},
    {CMS, "{'metadata':{'name':'x','ownerReferences':[{'name':5}]}}",
     CM_IN "json: cannot unmarshal number into Go struct field "
           "OwnerReference.metadata.ownerReferences.name of type string"},
    {CMS, "{'metadata':{'name':'x','generation':'1'}}",
     CM_IN "json: cannot unmarshal string into Go struct field ObjectMeta.metadata.generation of "
           "type int64"},
    {CMS, "{'metadata':{'name':'x','generation':1.5}}",
     CM_IN "json: cannot unmarshal number 1.5 into Go struct field ObjectMeta.metadata.generation "
           "of type int64"},
    {CMS, "{'metadata':{'name':'x','resourceVersion':5}}",
     CM_IN "json: cannot unmarshal number into Go struct field "
           "ObjectMeta.metadata.resourceVersion of type string"},
    {CMS, "{'metadata':{'name':'x','creationTimestamp':5}}",
     CM_IN "json: cannot unmarshal number into Go value of type string"},
    {SECRETS, "{'metadata':{'name':'x'},'data':{'k':'abc'}}",
     "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input byte 0"},
    {SECRETS, "{'metadata':{'name':'x'},'type':5}",
     "Secret in version \"v1\" cannot be handled as a Secret: json: cannot unmarshal number into "
     "Go struct field Secret.type of type v1.SecretType"},
    {"/api/v1/namespaces/default/pods", "{'metadata':{'name':'x'},'spec':'x'}",
     "Pod in version \"v1\" cannot be handled as a Pod: json: cannot unmarshal string into Go "
     "struct field Pod.spec of type v1.PodSpec"},
    {DEPLOYS, "{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':'x'},'status':[]}",
     "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal "
     "array into Go struct field Deployment.status of type v1.DeploymentStatus"},
    {"/apis/coordination.k8s.io/v1/namespaces/default/leases",
     "{'metadata':{'name':'x'},'spec':{'leaseDurationSeconds':'15'}}",
     "Lease in version \"v1\" cannot be handled as a Lease: json: cannot unmarshal string into Go "
     "struct field LeaseSpec.spec.leaseDurationSeconds of type int32"},
    {"/api/v1/namespaces", "{'metadata':{'name':'x'},'spec':{'finalizers':'kubernetes'}}",
     "Namespace in version \"v1\" cannot be handled as a Namespace: json: cannot unmarshal string "
     "into Go struct field NamespaceSpec.spec.finalizers of type []v1.FinalizerName"},
};

static bool listed_empty(const char *path)
{
    json_t *l = req(200, "GET", path, NULL);
    bool empty = json_array_size(jget(l, "items")) == 0;
    json_decref(l);
    return empty;
}

Test(decode, create_type_errors)
{
    unsigned long long before = rev();
    for (size_t i = 0; i < sizeof bad_bodies / sizeof bad_bodies[0]; i++) {
        const bad_body *b = &bad_bodies[i];
        json_t *st = req_fail(400, "BadRequest", "POST", b->path, b->body);
        cr_assert_str_eq(jstr(st, "message"), b->message, "case %zu", i);
        json_decref(st);
    }
    cr_assert_eq(rev(), before, "nothing was written");
    cr_assert(listed_empty(CMS));
    cr_assert(listed_empty(SECRETS));
    cr_assert(listed_empty("/api/v1/namespaces/default/pods"));
    cr_assert(gone("/api/v1/namespaces/x"));

    /* apiVersion and kind are read first, into an unnamed struct. */
    json_t *st = req_fail(400, "BadRequest", "POST", CMS, "{'kind':7,'metadata':{'name':'x'}}");
    cr_assert_str_eq(
        jstr(st, "message"),
        "the object provided is unrecognized (must be of type ConfigMap): couldn't "
        "get version/kind; json parse error: json: cannot unmarshal number into Go "
        "struct field .kind of type string ({\"kind\":7,\"metadata\":{\"name\":\" ...)");
    json_decref(st);
    cr_assert(gone(CMX));

    /* What decodes is still accepted: null, base64 with newlines, stringData. */
    json_decref(req(201, "POST", CMS,
                    "{'metadata':{'name':'ok','labels':null},'data':null,"
                    "'binaryData':{'b':'aGk=','e':''},'immutable':false}"));
    json_t *s = req(201, "POST", SECRETS,
                    "{'metadata':{'name':'ok'},'data':{'k':'aGVs\\nbG8='},"
                    "'stringData':{'s':'t'},'type':'Opaque'}");
    cr_assert_str_eq(jstr(s, "data.k"), "aGVs\nbG8=");
    json_decref(s);
}

Test(decode, custom_resource_metadata)
{
    json_decref(mk_crd());
    json_t *st = req_fail(400, "BadRequest", "POST", WIDGETS,
                          "{'apiVersion':'example.com/v1','kind':'Widget',"
                          "'metadata':{'name':'w','labels':{'a':true}},'spec':{'color':'red'}}");
    cr_assert_str_eq(jstr(st, "message"),
                     "Widget in version \"v1\" cannot be handled as a Widget: json: cannot "
                     "unmarshal bool into Go struct field ObjectMeta.metadata.labels of type "
                     "string");
    json_decref(st);
    cr_assert(gone(WIDGETS "/w"));
}

Test(decode, update_type_errors)
{
    json_t *cur = mk_cm("default", "x", NULL);
    unsigned long long before = rev();
    json_t *st = req_fail(400, "BadRequest", "PUT", CMX, "{'metadata':{'name':'x'},'data':'x'}");
    cr_assert_str_eq(jstr(st, "message"),
                     CM_IN "json: cannot unmarshal string into Go struct field ConfigMap.data of "
                           "type map[string]string");
    json_decref(st);
    cr_assert_eq(rev(), before);
    /* A status write decodes the whole body too. */
    json_decref(req(201, "POST", DEPLOYS, deploy_body("d")));
    before = rev();
    json_decref(req_fail(400, "BadRequest", "PUT", DEPLOYS "/d/status",
                         "{'apiVersion':'apps/v1','kind':'Deployment',"
                         "'metadata':{'name':'d','labels':{'a':[]}},'status':{}}"));
    cr_assert_eq(rev(), before);
    json_t *g = req(200, "GET", CMX, NULL);
    cr_assert(json_equal(g, cur));
    json_decref(g);
    json_decref(cur);
}

typedef struct bad_patch {
    const char *ctype;
    const char *body;
    long code;
    const char *reason;
    const char *prefix; /* the message starts so */
    const char *suffix; /* and ends so */
} bad_patch;

#define PATCH_IS " \"\" is invalid: patch: Invalid value: "

static const bad_patch bad_patches[] = {
    {MERGE, "{'data':'x'}", 422, "Invalid", PATCH_IS "\"{\\\"",
     "\": json: cannot unmarshal string into Go struct field ConfigMap.data of type "
     "map[string]string"},
    {JSONP, "[{'op':'replace','path':'/data','value':'x'}]", 422, "Invalid", PATCH_IS "\"{\\\"",
     "\": json: cannot unmarshal string into Go struct field ConfigMap.data of type "
     "map[string]string"},
    {JSONP, "[{'op':'add','path':'/immutable','value':'yes'}]", 422, "Invalid", PATCH_IS,
     "json: cannot unmarshal string into Go struct field ConfigMap.immutable of type bool"},
    {MERGE, "{'binaryData':{'b':'%%%'}}", 422, "Invalid", PATCH_IS,
     "\": illegal base64 data at input byte 0"},
    {MERGE, "{'kind':7}", 422, "Invalid", PATCH_IS,
     "\": couldn't get version/kind; json parse error: json: cannot unmarshal number into Go "
     "struct field .kind of type string"},
    {MERGE, "{'metadata':{'labels':{'a':1}}}", 422, "Invalid", PATCH_IS,
     "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type "
     "string"},
    {SMP, "{'data':'x'}", 422, "Invalid",
     PATCH_IS "\"map[data:x]\": cannot restore map from string", NULL},
    {SMP, "{'immutable':'yes'}", 422, "Invalid",
     PATCH_IS "\"map[immutable:yes]\": unrecognized type: bool", NULL},
    {SMP, "{'metadata':{'labels':{'a':1}}}", 422, "Invalid",
     PATCH_IS "\"map[metadata:map[labels:map[a:1]]]\": cannot convert int64 to string", NULL},
    {SMP, "{'binaryData':{'b':'abc'}}", 422, "Invalid",
     PATCH_IS "\"map[binaryData:map[b:abc]]\": error decoding from json: illegal base64 data at "
              "input byte 0",
     NULL},
    {APPLY, "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'x'},'data':'x'}", 400,
     "BadRequest",
     "failed to create typed patch object (default/x; /v1, Kind=ConfigMap): .data: expected map, "
     "got &{x}",
     NULL},
    {APPLY, "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'x','labels':{'a':1}}}", 400,
     "BadRequest",
     "failed to create typed patch object (default/x; /v1, Kind=ConfigMap): "
     ".metadata.labels.a: expected string, got &{1}",
     NULL},
};

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

Test(decode, patch_type_errors)
{
    json_t *cur = mk_cm("default", "x", NULL);
    unsigned long long before = rev();
    for (size_t i = 0; i < sizeof bad_patches / sizeof bad_patches[0]; i++) {
        const bad_patch *p = &bad_patches[i];
        const char *path = !strcmp(p->ctype, APPLY) ? CMX "?fieldManager=t" : CMX;
        json_t *st = req_fail_ct(p->code, p->reason, "PATCH", path, p->ctype, p->body);
        const char *m = jstr(st, "message");
        cr_assert(!strncmp(m, p->prefix, strlen(p->prefix)), "case %zu: %s", i, m);
        cr_assert(!p->suffix || ends_with(m, p->suffix), "case %zu: %s", i, m);
        if (p->code == 422) {
            /* No kind, no name; one cause at "patch" (the message after "patch: "). */
            cr_assert_null(jget(st, "details.kind"));
            cr_assert_str_eq(jstr(st, "details.causes.0.field"), "patch");
            cr_assert_str_eq(jstr(st, "details.causes.0.reason"), "FieldValueInvalid");
            cr_assert_str_eq(jstr(st, "details.causes.0.message"),
                             m + strlen(" \"\" is invalid: patch: "));
        }
        json_decref(st);
    }
    cr_assert_eq(rev(), before, "nothing was written");
    json_t *g = req(200, "GET", CMX, NULL);
    cr_assert(json_equal(g, cur));
    json_decref(g);
    json_decref(cur);

    /* Server-side apply of a missing object creates nothing either. */
    json_decref(req_fail_ct(400, "BadRequest", "PATCH", CMS "/new?fieldManager=t", APPLY,
                            "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'new'},"
                            "'immutable':'yes'}"));
    cr_assert(gone(CMS "/new"));

    /* A Secret's data must stay base64 whatever the patch type. */
    json_decref(req(201, "POST", SECRETS, "{'metadata':{'name':'s'},'data':{'k':'aGk='}}"));
    before = rev();
    const char *types[] = {MERGE, SMP};
    for (size_t i = 0; i < 2; i++) {
        json_t *st = req_fail_ct(422, "Invalid", "PATCH", SECRETS "/s", types[i],
                                 "{'data':{'k':'not-base64'}}");
        cr_assert(strstr(jstr(st, "message"), "illegal base64 data at input byte 3"), "%s",
                  jstr(st, "message"));
        json_decref(st);
    }
    json_decref(req_fail_ct(422, "Invalid", "PATCH", SECRETS "/s", JSONP,
                            "[{'op':'replace','path':'/data/k','value':'***'}]"));
    cr_assert_eq(rev(), before);
}

Test(decode, generate_name)
{
    json_t *st = req_fail(422, "Invalid", "POST", CMS, "{'metadata':{'generateName':'a/b'}}");
    cr_assert_str_eq(jstr(st, "message"),
                     "ConfigMap \"\" is invalid: metadata.generateName: Invalid value: \"a/b\": a "
                     "lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                     "characters, '-' or '.', and must start and end with an alphanumeric "
                     "character (e.g. 'example.com', regex used for validation is "
                     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
    cr_assert_str_eq(jstr(st, "details.causes.0.field"), "metadata.generateName");
    cr_assert_str_eq(jstr(st, "details.causes.0.reason"), "FieldValueInvalid");
    json_decref(st);
    const char *bad[] = {"Web-", "-", "a.", "x_"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        json_decref(
            req_fail(422, "Invalid", "POST", CMS, S("{'metadata':{'generateName':'%s'}}", bad[i])));
    /* Even with a name: both are validated. */
    json_decref(
        req_fail(422, "Invalid", "POST", CMS, "{'metadata':{'name':'n','generateName':'A'}}"));
    cr_assert(listed_empty(CMS));

    /* The trailing part may be what a name could not end with. */
    json_t *o = req(201, "POST", CMS, "{'metadata':{'generateName':'web-'}}");
    cr_assert(!strncmp(jstr(o, "metadata.name"), "web-", 4));
    json_decref(o);
    json_decref(req(201, "POST", CMS, "{'metadata':{'generateName':'a.b'}}"));

    /* Namespaces are labels; RBAC names are path segments. */
    st = req_fail(422, "Invalid", "POST", "/api/v1/namespaces",
                  "{'metadata':{'generateName':'a.b-'}}");
    cr_assert(strstr(jstr(st, "message"), "metadata.generateName: Invalid value: \"a.b-\": a "
                                          "lowercase RFC 1123 label"),
              "%s", jstr(st, "message"));
    json_decref(st);
    const char *roles = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles";
    st = req_fail(422, "Invalid", "POST", roles, "{'metadata':{'generateName':'a%b'}}");
    cr_assert(strstr(jstr(st, "message"), "Invalid value: \"a%b\": may not contain '%'"), "%s",
              jstr(st, "message"));
    json_decref(st);
    json_decref(req(201, "POST", roles, "{'metadata':{'generateName':'system:'}}"));
}

Test(decode, patch_cannot_rename)
{
    json_t *cur = mk_cm("default", "x", NULL);
    mk_ns("other");
    const char *want = "the name of the object (y) does not match the name on the URL (x)";
    struct {
        const char *ctype, *body;
    } renames[] = {
        {MERGE, "{'metadata':{'name':'y'}}"},
        {JSONP, "[{'op':'replace','path':'/metadata/name','value':'y'}]"},
        {SMP, "{'metadata':{'name':'y'}}"},
        {APPLY, "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'y'}}"},
    };
    for (size_t i = 0; i < sizeof renames / sizeof renames[0]; i++) {
        const char *path = !strcmp(renames[i].ctype, APPLY) ? CMX "?fieldManager=t" : CMX;
        json_t *st =
            req_fail_ct(400, "BadRequest", "PATCH", path, renames[i].ctype, renames[i].body);
        cr_assert_str_eq(jstr(st, "message"), want, "case %zu", i);
        json_decref(st);
    }
    json_t *st = req_fail_ct(400, "BadRequest", "PATCH", CMX, MERGE, "{'metadata':{'name':null}}");
    cr_assert_str_eq(jstr(st, "message"),
                     "the name of the object () does not match the name on the URL (x)");
    json_decref(st);
    st = req_fail_ct(400, "BadRequest", "PATCH", CMX, MERGE, "{'metadata':{'namespace':'other'}}");
    cr_assert_str_eq(jstr(st, "message"),
                     "the namespace of the provided object does not match the namespace sent on "
                     "the request");
    json_decref(st);
    st = req_fail(400, "BadRequest", "PUT", CMX, "{'metadata':{'name':'y'}}");
    cr_assert_str_eq(jstr(st, "message"), want);
    json_decref(st);

    /* The status subresource too. */
    json_decref(req(201, "POST", DEPLOYS, deploy_body("d")));
    unsigned long long after_deploy = rev();
    json_decref(req_fail_ct(400, "BadRequest", "PATCH", DEPLOYS "/d/status", MERGE,
                            "{'metadata':{'name':'e'},'status':{'replicas':1}}"));
    json_decref(req_fail_ct(400, "BadRequest", "PATCH", DEPLOYS "/d/status", MERGE,
                            "{'metadata':{'namespace':'other'},'status':{'replicas':1}}"));
    cr_assert_eq(rev(), after_deploy);

    cr_assert(gone(CMS "/y"));
    cr_assert(gone("/api/v1/namespaces/other/configmaps/x"));
    json_t *g = req(200, "GET", CMX, NULL);
    cr_assert(json_equal(g, cur));
    json_decref(g);
    json_decref(cur);
}

/* A JSON patch of n "test" operations, as a malloc'ed string. */
static char *many_ops(size_t n)
{
    const char *op = "{\"op\":\"test\",\"path\":\"/data/a\",\"value\":\"1\"}";
    size_t len = strlen(op) + 1;
    char *b = malloc(n * len + 3), *p = b;
    cr_assert_not_null(b);
    *p++ = '[';
    for (size_t i = 0; i < n; i++) {
        if (i)
            *p++ = ',';
        memcpy(p, op, len - 1);
        p += len - 1;
    }
    *p++ = ']';
    *p = '\0';
    return b;
}

Test(decode, json_patch_operation_limit)
{
    json_decref(req(201, "POST", CMS, "{'metadata':{'name':'x'},'data':{'a':'1'}}"));
    unsigned long long before = rev();
    char *over = many_ops(10001), *limit = many_ops(10000);
    json_t *st = req_fail_ct(413, "RequestEntityTooLarge", "PATCH", CMX, JSONP, over);
    cr_assert_str_eq(jstr(st, "message"),
                     "The allowed maximum operations in a JSON patch is 10000, got 10001");
    json_decref(st);
    /* 10,000 passing tests are a no-op patch. */
    json_decref(req_ct(200, "PATCH", CMX, JSONP, limit));
    cr_assert_eq(rev(), before);
    free(over);
    free(limit);
}

/* An immutable ConfigMap or Secret keeps its data and stays immutable, on
 * every write path (found by fuzz_http: a patch changed it). */
Test(decode, immutable_configmaps_and_secrets_keep_their_data)
{
    const char *cm = "/api/v1/namespaces/default/configmaps";
    json_decref(req(201, "POST", cm,
                    "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'frozen'},"
                    "'data':{'a':'1'},'immutable':true}"));
    unsigned long long before = rev();
    json_t *st = req_fail_ct(422, "Invalid", "PATCH", S("%s/frozen", cm),
                             "application/merge-patch+json", "{'data':{'a':'2'}}");
    cr_assert_str_eq(jstr(st, "details.causes.0.field"), "data");
    cr_assert(strstr(jstr(st, "message"), "field is immutable when `immutable` is set"));
    json_decref(st);
    json_decref(req_fail_ct(422, "Invalid", "PATCH", S("%s/frozen?fieldManager=t", cm),
                            "application/apply-patch+yaml",
                            "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'frozen'},"
                            "'binaryData':{'b':'AAE='}}"));
    st = req_fail(422, "Invalid", "PUT", S("%s/frozen", cm),
                  "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'frozen'},"
                  "'data':{'a':'1'},'immutable':false}");
    cr_assert_str_eq(jstr(st, "details.causes.0.field"), "immutable");
    json_decref(st);
    cr_assert_eq(rev(), before, "a refused write was stored");
    /* Its metadata may still change. */
    json_decref(req_ct(200, "PATCH", S("%s/frozen", cm), "application/merge-patch+json",
                       "{'metadata':{'labels':{'x':'y'}}}"));

    const char *sec = "/api/v1/namespaces/default/secrets";
    json_decref(req(201, "POST", sec,
                    "{'apiVersion':'v1','kind':'Secret','metadata':{'name':'frozen'},"
                    "'data':{'a':'MQ=='},'immutable':true}"));
    json_decref(req_fail_ct(422, "Invalid", "PATCH", S("%s/frozen", sec),
                            "application/strategic-merge-patch+json", "{'stringData':{'a':'2'}}"));
    json_decref(req_fail_ct(422, "Invalid", "PATCH", S("%s/frozen", sec),
                            "application/json-patch+json",
                            "[{'op':'replace','path':'/immutable','value':false}]"));
}

/* stringData is write-only: merged into data as base64, never stored. */
Test(decode, secret_string_data_goes_into_data)
{
    const char *sec = "/api/v1/namespaces/default/secrets";
    json_t *s = req(201, "POST", sec,
                    "{'apiVersion':'v1','kind':'Secret','metadata':{'name':'sd'},"
                    "'data':{'a':'MQ==','b':'Mg=='},'stringData':{'b':'two','c':''}}");
    cr_assert_null(jget(s, "stringData"));
    cr_assert_str_eq(jstr(s, "data.a"), "MQ==");
    cr_assert_str_eq(jstr(s, "data.b"), "dHdv", "stringData wins over data");
    cr_assert_str_eq(jstr(s, "data.c"), "");
    json_decref(s);
    s = req_ct(200, "PATCH", S("%s/sd", sec), "application/merge-patch+json",
               "{'stringData':{'d':'four'}}");
    cr_assert_str_eq(jstr(s, "data.d"), "Zm91cg==");
    cr_assert_null(jget(s, "stringData"));
    json_decref(s);
    s = req(200, "GET", S("%s/sd", sec), NULL);
    cr_assert_null(jget(s, "stringData"));
    cr_assert_str_eq(jstr(s, "data.a"), "MQ==");
    json_decref(s);
}
