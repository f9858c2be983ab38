/*
 * test_patch.c - JSON patch, JSON merge patch and strategic merge patch.
 *
 * Mostly data-driven: tables of {doc, patch, expected} run through one
 * checker that also asserts the input document is never modified and that
 * *out is left alone on error. To keep the tables readable, JSON in them is
 * written with single quotes; load() turns them into double quotes.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "patch.h"
#include "types.h"

typedef struct {
    const char *name;
    const char *doc;
    const char *patch;
    const char *want; /* the expected document when rc == 0 */
    int rc;
    const char *msg; /* a substring of the error message, or NULL */
} patch_case;

typedef int (*apply_fn)(const json_t *doc, const json_t *patch, json_t **out, char *err,
                        size_t errlen);

static char sentinel;
#define UNTOUCHED ((json_t *)&sentinel)

static json_t *load(const char *text)
{
    json_error_t e;
    char *s = strdup(text);
    json_t *j;
    cr_assert_not_null(s);
    for (char *p = s; *p; p++) {
        if (*p == '\'')
            *p = '"';
    }
    j = json_loads(s, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &e);
    cr_assert_not_null(j, "bad JSON in test: %s (%s)", s, e.text);
    free(s);
    return j;
}

static void assert_json(const json_t *got, const char *want, const char *name)
{
    json_t *w = load(want);
    char *g = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY);
    cr_assert(json_equal(got, w), "%s:\n got  %s\n want %s", name, g, want);
    free(g);
    json_decref(w);
}

static void check_case(const patch_case *c, apply_fn fn)
{
    json_t *doc = load(c->doc), *patch = load(c->patch);
    json_t *doc0 = json_deep_copy(doc), *patch0 = json_deep_copy(patch), *out = UNTOUCHED;
    char err[512] = "";
    int rc = fn(doc, patch, &out, err, sizeof err);
    cr_assert_eq(rc, c->rc, "%s: rc %d, want %d (%s)", c->name, rc, c->rc, err);
    cr_assert(json_equal(doc, doc0), "%s: the input document was modified", c->name);
    cr_assert(json_equal(patch, patch0), "%s: the patch was modified", c->name);
    if (rc == 0) {
        assert_json(out, c->want, c->name);
        json_decref(out);
    } else {
        cr_assert_eq(out, UNTOUCHED, "%s: *out set on error", c->name);
        cr_assert_neq(err[0], '\0', "%s: no error message", c->name);
    }
    if (c->msg)
        cr_assert(strstr(err, c->msg), "%s: message \"%s\" lacks \"%s\"", c->name, err, c->msg);
    json_decref(doc);
    json_decref(doc0);
    json_decref(patch);
    json_decref(patch0);
}

/* One test per theme runs a small table: a process per case would make the
 * suite slow (Criterion forks per test). Messages name the failing case. */
static void run_table(const patch_case *cases, size_t n, apply_fn fn)
{
    for (size_t i = 0; i < n; i++)
        check_case(&cases[i], fn);
}

/* Every case of a table, each asserted by check_case; an empty table (a
 * test that would check nothing) fails here. */
#define RUN(table, fn)                                                                             \
    do {                                                                                           \
        size_t n_ = sizeof table / sizeof table[0];                                                \
        cr_assert_gt(n_, 0, "an empty case table checks nothing");                                 \
        run_table(table, n_, fn);                                                                  \
    } while (0)

static int merge_adapter(const json_t *doc, const json_t *patch, json_t **out, char *err,
                         size_t errlen)
{
    (void)err;
    (void)errlen;
    return fakeapi__merge_patch(doc, patch, out);
}

/* The message of doc's kind ("kind" with "apiVersion", default v1); a Pod without one. */
static const fakeapi__tmsg *doc_type(const json_t *doc)
{
    const char *kind = json_string_value(json_object_get(doc, "kind"));
    const char *gv = json_string_value(json_object_get(doc, "apiVersion"));
    if (!kind)
        return fakeapi__type_of_kind("v1", "Pod");
    if (!gv)
        gv = !strcmp(kind, "Deployment") ? "apps/v1" : "v1";
    const fakeapi__tmsg *m = fakeapi__type_of_kind(gv, kind);
    cr_assert_not_null(m, "no type for %s %s", gv, kind);
    return m;
}

/* Strategic merge with the merge keys the type tables give doc's kind. */
static int smp_builtin(const json_t *doc, const json_t *patch, json_t **out, char *err,
                       size_t errlen)
{
    fakeapi__smp_types types = {.root = doc_type(doc)};
    return fakeapi__smp_patch(doc, patch, fakeapi__smp_type_key, &types, out, err, errlen);
}

static int smp_service_fn(const json_t *doc, const json_t *patch, json_t **out, char *err,
                          size_t errlen)
{
    fakeapi__smp_types types = {.root = fakeapi__type_of_kind("v1", "Service")};
    return fakeapi__smp_patch(doc, patch, fakeapi__smp_type_key, &types, out, err, errlen);
}

/* A typed key lookup: the key for path in kind (group-version gv). */
static const char *type_key(const char *gv, const char *kind, const char *path, bool apply)
{
    static fakeapi__smp_types types;
    memset(&types, 0, sizeof types);
    types.root = fakeapi__type_of_kind(gv, kind);
    types.apply = apply;
    cr_assert_not_null(types.root, "no type for %s %s", gv, kind);
    return fakeapi__smp_type_key(path, &types);
}

/* ---- RFC 6902 ---------------------------------------------------------- */

static const patch_case jp_appendix_a[] = {
    /* RFC 6902 appendix A */
    {"A.1 add member", "{'foo':'bar'}", "[{'op':'add','path':'/baz','value':'qux'}]",
     "{'baz':'qux','foo':'bar'}", 0, NULL},
    {"A.2 add element", "{'foo':['bar','baz']}", "[{'op':'add','path':'/foo/1','value':'qux'}]",
     "{'foo':['bar','qux','baz']}", 0, NULL},
    {"A.3 remove member", "{'baz':'qux','foo':'bar'}", "[{'op':'remove','path':'/baz'}]",
     "{'foo':'bar'}", 0, NULL},
    {"A.4 remove element", "{'foo':['bar','qux','baz']}", "[{'op':'remove','path':'/foo/1'}]",
     "{'foo':['bar','baz']}", 0, NULL},
    {"A.5 replace", "{'baz':'qux','foo':'bar'}", "[{'op':'replace','path':'/baz','value':'boo'}]",
     "{'baz':'boo','foo':'bar'}", 0, NULL},
    {"A.6 move value", "{'foo':{'bar':'baz','waldo':'fred'},'qux':{'corge':'grault'}}",
     "[{'op':'move','from':'/foo/waldo','path':'/qux/thud'}]",
     "{'foo':{'bar':'baz'},'qux':{'corge':'grault','thud':'fred'}}", 0, NULL},
    {"A.7 move element", "{'foo':['all','grass','cows','eat']}",
     "[{'op':'move','from':'/foo/1','path':'/foo/3'}]", "{'foo':['all','cows','eat','grass']}", 0,
     NULL},
    {"A.8 test success", "{'baz':'qux','foo':['a',2,'c']}",
     "[{'op':'test','path':'/baz','value':'qux'},{'op':'test','path':'/foo/1','value':2}]",
     "{'baz':'qux','foo':['a',2,'c']}", 0, NULL},
    {"A.10 add nested member", "{'foo':'bar'}",
     "[{'op':'add','path':'/child','value':{'grandchild':{}}}]",
     "{'foo':'bar','child':{'grandchild':{}}}", 0, NULL},
    {"A.11 ignore unknown members", "{'foo':'bar'}",
     "[{'op':'add','path':'/baz','value':'qux','xyz':123}]", "{'foo':'bar','baz':'qux'}", 0, NULL},
    {"A.14 ~ escape ordering", "{'/':9,'~1':10}", "[{'op':'test','path':'/~01','value':10}]",
     "{'/':9,'~1':10}", 0, NULL},
    {"A.16 add array value", "{'foo':['bar']}",
     "[{'op':'add','path':'/foo/-','value':['abc','def']}]", "{'foo':['bar',['abc','def']]}", 0,
     NULL},
};

Test(json_patch, rfc6902_appendix_a)
{
    RUN(jp_appendix_a, fakeapi__json_patch);
}

static const patch_case jp_add[] = {
    /* edges */
    {"add at index == size appends", "{'a':[1,2]}", "[{'op':'add','path':'/a/2','value':3}]",
     "{'a':[1,2,3]}", 0, NULL},
    {"add at index 0 of empty array", "{'a':[]}", "[{'op':'add','path':'/a/0','value':1}]",
     "{'a':[1]}", 0, NULL},
    {"add replaces an existing member", "{'a':1}", "[{'op':'add','path':'/a','value':2}]",
     "{'a':2}", 0, NULL},
    {"add null value", "{}", "[{'op':'add','path':'/a','value':null}]", "{'a':null}", 0, NULL},
};

Test(json_patch, add_semantics)
{
    RUN(jp_add, fakeapi__json_patch);
}

static const patch_case jp_root[] = {
    {"add at root replaces the document", "{'a':1}", "[{'op':'add','path':'','value':[1]}]", "[1]",
     0, NULL},
    {"replace root", "{'a':1}", "[{'op':'replace','path':'','value':{'b':2}}]", "{'b':2}", 0, NULL},
};

Test(json_patch, whole_document)
{
    RUN(jp_root, fakeapi__json_patch);
}

static const patch_case jp_escapes[] = {
    {"~1 addresses a slash in a key", "{'a/b':1}", "[{'op':'replace','path':'/a~1b','value':2}]",
     "{'a/b':2}", 0, NULL},
    {"~0 addresses a tilde in a key", "{'m~n':1}", "[{'op':'remove','path':'/m~0n'}]", "{}", 0,
     NULL},
    {"'/' addresses the empty key", "{'':1}", "[{'op':'replace','path':'/','value':2}]", "{'':2}",
     0, NULL},
    {"digits address object members", "{'0':'x'}", "[{'op':'remove','path':'/0'}]", "{}", 0, NULL},
};

Test(json_patch, pointer_escapes)
{
    RUN(jp_escapes, fakeapi__json_patch);
}

static const patch_case jp_move_copy[] = {
    {"copy deep-copies", "{'a':{'b':[1]}}",
     "[{'op':'copy','from':'/a','path':'/c'},{'op':'add','path':'/c/b/-','value':2}]",
     "{'a':{'b':[1]},'c':{'b':[1,2]}}", 0, NULL},
    {"move to the same path is a no-op", "{'a':1}", "[{'op':'move','from':'/a','path':'/a'}]",
     "{'a':1}", 0, NULL},
    {"move element backwards", "{'a':[1,2,3]}", "[{'op':'move','from':'/a/2','path':'/a/0'}]",
     "{'a':[3,1,2]}", 0, NULL},
    {"move to a sibling prefix is not a child", "{'a':1,'ab':{}}",
     "[{'op':'move','from':'/a','path':'/ab/x'}]", "{'ab':{'x':1}}", 0, NULL},
};

Test(json_patch, move_and_copy)
{
    RUN(jp_move_copy, fakeapi__json_patch);
}

static const patch_case jp_test_eq[] = {
    {"test: objects equal whatever the key order", "{'a':{'x':1,'y':[1,{'z':null}]}}",
     "[{'op':'test','path':'/a','value':{'y':[1,{'z':null}],'x':1}}]",
     "{'a':{'x':1,'y':[1,{'z':null}]}}", 0, NULL},
    {"test: 1 equals 1.0", "{'a':1}", "[{'op':'test','path':'/a','value':1.0}]", "{'a':1}", 0,
     NULL},
    {"test: whole document", "{'a':1}", "[{'op':'test','path':'','value':{'a':1}}]", "{'a':1}", 0,
     NULL},
};

Test(json_patch, test_uses_deep_equality)
{
    RUN(jp_test_eq, fakeapi__json_patch);
}

static const patch_case jp_sequence[] = {
    {"operations apply in sequence", "{}",
     "[{'op':'add','path':'/a','value':{}},{'op':'add','path':'/a/b','value':[]},"
     "{'op':'add','path':'/a/b/-','value':1},{'op':'move','from':'/a/b','path':'/c'}]",
     "{'a':{},'c':[1]}", 0, NULL},
    {"empty patch", "{'a':1}", "[]", "{'a':1}", 0, NULL},
    {"remove the last element", "{'a':[1,2]}", "[{'op':'remove','path':'/a/1'}]", "{'a':[1]}", 0,
     NULL},
};

Test(json_patch, sequencing)
{
    RUN(jp_sequence, fakeapi__json_patch);
}

static const patch_case jp_appendix_a_err[] = {
    {"A.9 test failure", "{'baz':'qux','foo':['a',2,'c']}",
     "[{'op':'test','path':'/baz','value':'bar'}]", NULL, -2, "test operation failed at /baz"},
    {"A.12 add to a missing parent", "{'foo':'bar'}",
     "[{'op':'add','path':'/baz/bat','value':'qux'}]", NULL, -1, "not found"},
    {"A.15 string is not a number", "{'/':9,'~1':10}", "[{'op':'test','path':'/~01','value':'10'}]",
     NULL, -2, "test operation failed"},
};

Test(json_patch_errors, rfc6902_appendix_a)
{
    RUN(jp_appendix_a_err, fakeapi__json_patch);
}

static const patch_case jp_test_fail[] = {
    {"test on a missing path", "{'a':1}", "[{'op':'test','path':'/b','value':1}]", NULL, -2, "/b"},
    {"test fails after earlier ops applied", "{'a':1}",
     "[{'op':'replace','path':'/a','value':2},{'op':'test','path':'/a','value':1}]", NULL, -2,
     NULL},
};

Test(json_patch_errors, failed_test_is_minus_two)
{
    RUN(jp_test_fail, fakeapi__json_patch);
}

static const patch_case jp_bad_index[] = {
    {"leading zero index", "{'a':[1,2]}", "[{'op':'replace','path':'/a/01','value':0}]", NULL, -1,
     NULL},
    {"add past the end", "{'a':[1]}", "[{'op':'add','path':'/a/2','value':0}]", NULL, -1,
     "out of bounds"},
    {"negative index", "{'a':[1]}", "[{'op':'add','path':'/a/-1','value':0}]", NULL, -1, NULL},
    {"index with a sign", "{'a':[1]}", "[{'op':'remove','path':'/a/+0'}]", NULL, -1, NULL},
    {"remove at index == size", "{'a':[1]}", "[{'op':'remove','path':'/a/1'}]", NULL, -1,
     "not found"},
    {"remove '-'", "{'a':[1]}", "[{'op':'remove','path':'/a/-'}]", NULL, -1, NULL},
    {"replace '-'", "{'a':[1]}", "[{'op':'replace','path':'/a/-','value':2}]", NULL, -1, NULL},
};

Test(json_patch_errors, bad_array_indices)
{
    RUN(jp_bad_index, fakeapi__json_patch);
}

static const patch_case jp_missing[] = {
    {"replace a missing member", "{'a':1}", "[{'op':'replace','path':'/b','value':2}]", NULL, -1,
     "path /b not found"},
    {"remove a missing member", "{'a':1}", "[{'op':'remove','path':'/b'}]", NULL, -1,
     "path /b not found"},
    {"remove the document", "{'a':1}", "[{'op':'remove','path':''}]", NULL, -1, "whole"},
};

Test(json_patch_errors, missing_targets)
{
    RUN(jp_missing, fakeapi__json_patch);
}

static const patch_case jp_move_err[] = {
    {"move into its own child", "{'a':{'b':{}}}", "[{'op':'move','from':'/a','path':'/a/b/c'}]",
     NULL, -1, "own child"},
    {"move the root into a child", "{'a':{}}", "[{'op':'move','from':'','path':'/a/x'}]", NULL, -1,
     "own child"},
    {"move from a missing path", "{'a':1}", "[{'op':'move','from':'/x','path':'/y'}]", NULL, -1,
     "/x"},
    {"copy from a missing path", "{'a':1}", "[{'op':'copy','from':'/x','path':'/y'}]", NULL, -1,
     "/x"},
};

Test(json_patch_errors, move_and_copy)
{
    RUN(jp_move_err, fakeapi__json_patch);
}

static const patch_case jp_bad_ptr[] = {
    {"add below a scalar", "{'a':1}", "[{'op':'add','path':'/a/b','value':2}]", NULL, -1, NULL},
    {"pointer without a leading slash", "{'a':1}", "[{'op':'remove','path':'a'}]", NULL, -1,
     "must start with '/'"},
    {"bad ~ escape", "{'a~2':1}", "[{'op':'remove','path':'/a~2'}]", NULL, -1, "~"},
    {"~ at the end", "{'a~':1}", "[{'op':'remove','path':'/a~'}]", NULL, -1, "~"},
};

Test(json_patch_errors, bad_pointers)
{
    RUN(jp_bad_ptr, fakeapi__json_patch);
}

static const patch_case jp_malformed[] = {
    {"patch is not an array", "{'a':1}", "{'op':'remove','path':'/a'}", NULL, -1, "array"},
    {"operation is not an object", "{'a':1}", "['remove']", NULL, -1, "operation 0"},
    {"missing op", "{'a':1}", "[{'path':'/a'}]", NULL, -1, "\"op\""},
    {"op is not a string", "{'a':1}", "[{'op':1,'path':'/a'}]", NULL, -1, "\"op\""},
    {"missing path", "{'a':1}", "[{'op':'remove'}]", NULL, -1, "\"path\""},
    {"path is not a string", "{'a':1}", "[{'op':'remove','path':['a']}]", NULL, -1, "\"path\""},
    {"add without value", "{'a':1}", "[{'op':'add','path':'/b'}]", NULL, -1, "\"value\""},
    {"replace without value", "{'a':1}", "[{'op':'replace','path':'/a'}]", NULL, -1, "\"value\""},
    {"test without value", "{'a':1}", "[{'op':'test','path':'/a'}]", NULL, -1, "\"value\""},
    {"move without from", "{'a':1}", "[{'op':'move','path':'/b'}]", NULL, -1, "\"from\""},
    {"copy with a non-string from", "{'a':1}", "[{'op':'copy','from':1,'path':'/b'}]", NULL, -1,
     "\"from\""},
    {"unknown op", "{'a':1}", "[{'op':'frobnicate','path':'/a'}]", NULL, -1, "frobnicate"},
    {"the failing op is numbered", "{'a':1}",
     "[{'op':'add','path':'/b','value':1},{'op':'nope','path':'/a'}]", NULL, -1, "operation 1"},
};

Test(json_patch_errors, malformed_operations)
{
    RUN(jp_malformed, fakeapi__json_patch);
}

static const patch_case jp_atomic[] = {
    {"no partial result when a later op fails", "{'a':1}",
     "[{'op':'remove','path':'/a'},{'op':'remove','path':'/a'}]", NULL, -1, NULL},
};

Test(json_patch_errors, no_partial_result)
{
    RUN(jp_atomic, fakeapi__json_patch);
}

Test(json_patch, result_shares_nothing_with_input)
{
    json_t *doc = load("{'a':{'b':1}}"), *patch = load("[]"), *out = NULL;
    cr_assert_eq(fakeapi__json_patch(doc, patch, &out, NULL, 0), 0);
    json_object_set_new(json_object_get(out, "a"), "b", json_integer(2));
    assert_json(doc, "{'a':{'b':1}}", "input after changing the output");
    json_decref(out);
    json_decref(doc);
    json_decref(patch);
}

Test(json_patch, null_error_buffer_is_allowed)
{
    json_t *doc = load("{}"), *patch = load("[{'op':'remove','path':'/x'}]"), *out = UNTOUCHED;
    cr_assert_eq(fakeapi__json_patch(doc, patch, &out, NULL, 0), -1);
    cr_assert_eq(out, UNTOUCHED);
    json_decref(doc);
    json_decref(patch);
}

Test(json_patch, long_message_is_truncated_not_overflowed)
{
    json_t *doc = load("{}"), *patch = load("[{'op':'remove','path':'/a-rather-long-path'}]");
    json_t *out = UNTOUCHED;
    char err[8];
    memset(err, 'x', sizeof err);
    cr_assert_eq(fakeapi__json_patch(doc, patch, &out, err, sizeof err), -1);
    cr_assert_eq(strlen(err), sizeof err - 1);
    json_decref(doc);
    json_decref(patch);
}

/* ---- RFC 7386 ---------------------------------------------------------- */

static const patch_case mp_appendix_a[] = {
    /* RFC 7386 appendix A */
    {"A 1", "{'a':'b'}", "{'a':'c'}", "{'a':'c'}", 0, NULL},
    {"A 2", "{'a':'b'}", "{'b':'c'}", "{'a':'b','b':'c'}", 0, NULL},
    {"A 3", "{'a':'b'}", "{'a':null}", "{}", 0, NULL},
    {"A 4", "{'a':'b','b':'c'}", "{'a':null}", "{'b':'c'}", 0, NULL},
    {"A 5", "{'a':['b']}", "{'a':'c'}", "{'a':'c'}", 0, NULL},
    {"A 6", "{'a':'c'}", "{'a':['b']}", "{'a':['b']}", 0, NULL},
    {"A 7", "{'a':{'b':'c'}}", "{'a':{'b':'d','c':null}}", "{'a':{'b':'d'}}", 0, NULL},
    {"A 8", "{'a':[{'b':'c'}]}", "{'a':[1]}", "{'a':[1]}", 0, NULL},
    {"A 9", "['a','b']", "['c','d']", "['c','d']", 0, NULL},
    {"A 10", "{'a':'b'}", "['c']", "['c']", 0, NULL},
    {"A 11", "{'a':'foo'}", "null", "null", 0, NULL},
    {"A 12", "{'a':'foo'}", "'bar'", "'bar'", 0, NULL},
    {"A 13", "{'e':null}", "{'a':1}", "{'e':null,'a':1}", 0, NULL},
    {"A 14", "[1,2]", "{'a':'b','c':null}", "{'a':'b'}", 0, NULL},
    {"A 15", "{}", "{'a':{'bb':{'ccc':null}}}", "{'a':{'bb':{}}}", 0, NULL},
};

Test(merge_patch, rfc7386_appendix_a)
{
    RUN(mp_appendix_a, merge_adapter);
}

static const patch_case mp_edges[] = {
    /* edges */
    {"empty patch", "{'a':1}", "{}", "{'a':1}", 0, NULL},
    {"null for a missing key", "{'a':1}", "{'b':null}", "{'a':1}", 0, NULL},
    {"scalar replaced by object", "{'a':1}", "{'a':{'b':null,'c':2}}", "{'a':{'c':2}}", 0, NULL},
    {"deep merge keeps siblings", "{'m':{'l':{'x':'1','y':'2'},'n':3}}",
     "{'m':{'l':{'y':null,'z':'3'}}}", "{'m':{'l':{'x':'1','z':'3'},'n':3}}", 0, NULL},
};

Test(merge_patch, edges)
{
    RUN(mp_edges, merge_adapter);
}

Test(merge_patch, result_shares_nothing_with_input)
{
    json_t *doc = load("{'a':{'b':{'c':1}},'d':[1]}"), *patch = load("{'a':{'x':1}}");
    json_t *out = NULL;
    cr_assert_eq(fakeapi__merge_patch(doc, patch, &out), 0);
    json_object_set_new(json_object_get(json_object_get(out, "a"), "b"), "c", json_integer(9));
    json_array_append_new(json_object_get(out, "d"), json_integer(2));
    assert_json(doc, "{'a':{'b':{'c':1}},'d':[1]}", "input after changing the output");
    json_decref(out);
    json_decref(doc);
    json_decref(patch);
}

Test(merge_patch, null_patch_pointer_is_an_error)
{
    json_t *doc = load("{}"), *out = UNTOUCHED;
    cr_assert_eq(fakeapi__merge_patch(doc, NULL, &out), -1);
    cr_assert_eq(out, UNTOUCHED);
    json_decref(doc);
}

/* ---- strategic merge patch --------------------------------------------- */

#define POD_AB                                                                                     \
    "{'spec':{'containers':[{'name':'a','image':'nginx:1'},{'name':'b','image':'redis'}]}}"

static const patch_case smp_kubectl[] = {
    {"kubectl example (K8S-API.md 55)", POD_AB,
     "{'spec':{'$setElementOrder/containers':[{'name':'a'}],'containers':[{'image':'nginx:2',"
     "'name':'a'},{'$patch':'delete','name':'b'}]}}",
     "{'spec':{'containers':[{'name':'a','image':'nginx:2'}]}}", 0, NULL},
    {"kubectl example in a Deployment",
     "{'kind':'Deployment','metadata':{'name':'d'},'spec':{'replicas':1,'template':{'spec':{"
     "'containers':[{'name':'a','image':'nginx:1'},{'name':'b','image':'redis'}]}}}}",
     "{'spec':{'template':{'spec':{'$setElementOrder/containers':[{'name':'a'}],'containers':"
     "[{'image':'nginx:2','name':'a'},{'$patch':'delete','name':'b'}]}}}}",
     "{'kind':'Deployment','metadata':{'name':'d'},'spec':{'replicas':1,'template':{'spec':{"
     "'containers':[{'name':'a','image':'nginx:2'}]}}}}",
     0, NULL},
};

Test(smp, kubectl_example)
{
    RUN(smp_kubectl, smp_builtin);
}

static const patch_case smp_maps[] = {
    {"maps merge recursively", "{'metadata':{'labels':{'a':'1'},'name':'x'}}",
     "{'metadata':{'labels':{'b':'2'}}}", "{'metadata':{'labels':{'a':'1','b':'2'},'name':'x'}}", 0,
     NULL},
    {"null deletes a key", "{'metadata':{'labels':{'a':'1','b':'2'}}}",
     "{'metadata':{'labels':{'a':null}}}", "{'metadata':{'labels':{'b':'2'}}}", 0, NULL},
    {"null for a missing key is dropped", "{'a':1}", "{'b':null}", "{'a':1}", 0, NULL},
    {"nulls inside new maps are dropped", "{}", "{'a':{'b':null,'c':1}}", "{'a':{'c':1}}", 0, NULL},
    {"scalar replaces map", "{'a':{'b':1}}", "{'a':'x'}", "{'a':'x'}", 0, NULL},
    {"map replaces scalar", "{'a':'x'}", "{'a':{'b':1}}", "{'a':{'b':1}}", 0, NULL},
};

Test(smp, maps_and_nulls)
{
    RUN(smp_maps, smp_builtin);
}

static const patch_case smp_containers[] = {
    {"containers merge by name in place", POD_AB,
     "{'spec':{'containers':[{'name':'b','image':'redis:7'}]}}",
     "{'spec':{'containers':[{'name':'a','image':'nginx:1'},{'name':'b','image':'redis:7'}]}}", 0,
     NULL},
};

Test(smp, containers_by_name)
{
    RUN(smp_containers, smp_builtin);
}

static const patch_case smp_order[] = {
    /* apimachinery puts elements the document did not have in front */
    {"new container goes first", "{'spec':{'containers':[{'name':'a'}]}}",
     "{'spec':{'containers':[{'name':'c','image':'x'}]}}",
     "{'spec':{'containers':[{'name':'c','image':'x'},{'name':'a'}]}}", 0, NULL},
    /* apimachinery's 'preserve the order from the patch in a merging list 2' */
    {"patch order wins over document order",
     "{'spec':{'containers':[{'name':'1'},{'name':'2','value':'b'},{'name':'3'}]}}",
     "{'spec':{'containers':[{'name':'3','value':'c'},{'name':'1','value':'a'}]}}",
     "{'spec':{'containers':[{'name':'2','value':'b'},{'name':'3','value':'c'},{'name':'1',"
     "'value':'a'}]}}",
     0, NULL},
};

Test(smp, list_order_follows_apimachinery)
{
    RUN(smp_order, smp_builtin);
}

static const patch_case smp_ports[] = {
    {"container ports by containerPort",
     "{'spec':{'containers':[{'name':'a','ports':[{'containerPort':80,'protocol':'TCP'},"
     "{'containerPort':443}]}]}}",
     "{'spec':{'containers':[{'name':'a','ports':[{'containerPort':80,'name':'http'}]}]}}",
     "{'spec':{'containers':[{'name':'a','ports':[{'containerPort':80,'protocol':'TCP','name':"
     "'http'},{'containerPort':443}]}]}}",
     0, NULL},
    {"initContainer ports by containerPort",
     "{'spec':{'initContainers':[{'name':'i','ports':[{'containerPort':1,'name':'x'}]}]}}",
     "{'spec':{'initContainers':[{'name':'i','ports':[{'containerPort':1,'name':'y'}]}]}}",
     "{'spec':{'initContainers':[{'name':'i','ports':[{'containerPort':1,'name':'y'}]}]}}", 0,
     NULL},
};

Test(smp, container_ports_by_containerPort)
{
    RUN(smp_ports, smp_builtin);
}

static const patch_case smp_env[] = {
    {"env by name",
     "{'spec':{'containers':[{'name':'a','env':[{'name':'X','value':'1'},{'name':'Y','value':"
     "'2'}]}]}}",
     "{'spec':{'containers':[{'name':'a','env':[{'name':'Y','value':'3'}]}]}}",
     "{'spec':{'containers':[{'name':'a','env':[{'name':'X','value':'1'},{'name':'Y','value':"
     "'3'}]}]}}",
     0, NULL},
    {"env element deleted",
     "{'spec':{'containers':[{'name':'a','env':[{'name':'X','value':'1'},{'name':'Y'}]}]}}",
     "{'spec':{'containers':[{'name':'a','env':[{'$patch':'delete','name':'X'}]}]}}",
     "{'spec':{'containers':[{'name':'a','env':[{'name':'Y'}]}]}}", 0, NULL},
    {"deleting an absent element is a no-op", "{'spec':{'containers':[{'name':'a'}]}}",
     "{'spec':{'containers':[{'$patch':'delete','name':'zz'}]}}",
     "{'spec':{'containers':[{'name':'a'}]}}", 0, NULL},
};

Test(smp, env_by_name)
{
    RUN(smp_env, smp_builtin);
}

static const patch_case smp_volumes[] = {
    {"volumeMounts by mountPath",
     "{'spec':{'containers':[{'name':'a','volumeMounts':[{'mountPath':'/a','name':'v1'},"
     "{'mountPath':'/b','name':'v2'}]}]}}",
     "{'spec':{'containers':[{'name':'a','volumeMounts':[{'mountPath':'/b','readOnly':true}]}]}}",
     "{'spec':{'containers':[{'name':'a','volumeMounts':[{'mountPath':'/a','name':'v1'},"
     "{'mountPath':'/b','name':'v2','readOnly':true}]}]}}",
     0, NULL},
    {"volumes by name with $retainKeys in the element",
     "{'spec':{'volumes':[{'name':'v','emptyDir':{}},{'name':'w','emptyDir':{}}]}}",
     "{'spec':{'volumes':[{'$retainKeys':['configMap','name'],'name':'v','configMap':{'name':"
     "'c'}}]}}",
     "{'spec':{'volumes':[{'name':'v','configMap':{'name':'c'}},{'name':'w','emptyDir':{}}]}}", 0,
     NULL},
    {"imagePullSecrets by name", "{'spec':{'imagePullSecrets':[{'name':'a'}]}}",
     "{'spec':{'imagePullSecrets':[{'name':'a'},{'name':'b'}]}}",
     "{'spec':{'imagePullSecrets':[{'name':'a'},{'name':'b'}]}}", 0, NULL},
};

Test(smp, volumes_mounts_and_pull_secrets)
{
    RUN(smp_volumes, smp_builtin);
}

static const patch_case smp_finalizers[] = {
    {"finalizers: set union", "{'metadata':{'finalizers':['a','b']}}",
     "{'metadata':{'finalizers':['b','c']}}", "{'metadata':{'finalizers':['a','b','c']}}", 0, NULL},
    {"finalizers: a new value goes first", "{'metadata':{'finalizers':['a']}}",
     "{'metadata':{'finalizers':['b']}}", "{'metadata':{'finalizers':['b','a']}}", 0, NULL},
    {"finalizers: duplicates collapse", "{'metadata':{'finalizers':['a','a']}}",
     "{'metadata':{'finalizers':['a','a']}}", "{'metadata':{'finalizers':['a']}}", 0, NULL},
    {"finalizers: added to an object without any", "{'metadata':{'name':'x'}}",
     "{'metadata':{'finalizers':['f']}}", "{'metadata':{'name':'x','finalizers':['f']}}", 0, NULL},
};

Test(smp, finalizers_are_a_set)
{
    RUN(smp_finalizers, smp_builtin);
}

static const patch_case smp_owner_refs[] = {
    {"ownerReferences by uid",
     "{'metadata':{'ownerReferences':[{'uid':'u1','name':'x','controller':false}]}}",
     "{'metadata':{'ownerReferences':[{'uid':'u1','controller':true},{'uid':'u2','name':'y'}]}}",
     "{'metadata':{'ownerReferences':[{'uid':'u1','name':'x','controller':true},{'uid':'u2',"
     "'name':'y'}]}}",
     0, NULL},
};

Test(smp, owner_references_by_uid)
{
    RUN(smp_owner_refs, smp_builtin);
}

static const patch_case smp_service[] = {
    {"Service ports by port", "{'spec':{'ports':[{'port':80,'targetPort':8080},{'port':443}]}}",
     "{'spec':{'ports':[{'port':80,'targetPort':9090}]}}",
     "{'spec':{'ports':[{'port':80,'targetPort':9090},{'port':443}]}}", 0, NULL},
    {"conditions by type",
     "{'status':{'conditions':[{'type':'Ready','status':'False'},{'type':'Synced','status':"
     "'True'}]}}",
     "{'status':{'conditions':[{'type':'Ready','status':'True'}]}}",
     "{'status':{'conditions':[{'type':'Ready','status':'True'},{'type':'Synced','status':"
     "'True'}]}}",
     0, NULL},
};

Test(smp, service_ports_and_conditions)
{
    RUN(smp_service, smp_service_fn);
}

/* Keys and strategies that only the type tables know, walked from each document's kind. */
static const patch_case smp_typed[] = {
    {"Deployment strategy keeps only $retainKeys",
     "{'kind':'Deployment','spec':{'strategy':{'type':'RollingUpdate','rollingUpdate':"
     "{'maxSurge':1}}}}",
     "{'spec':{'strategy':{'$retainKeys':['type'],'type':'Recreate'}}}",
     "{'kind':'Deployment','spec':{'strategy':{'type':'Recreate'}}}", 0, NULL},
    {"Deployment template tolerations have no merge key: replaced",
     "{'kind':'Deployment','spec':{'template':{'spec':{'tolerations':[{'key':'a'},{'key':'b'}]}}}}",
     "{'spec':{'template':{'spec':{'tolerations':[{'key':'c'}]}}}}",
     "{'kind':'Deployment','spec':{'template':{'spec':{'tolerations':[{'key':'c'}]}}}}", 0, NULL},
    {"Deployment template containers and their env merge by name",
     "{'kind':'Deployment','spec':{'template':{'spec':{'containers':[{'name':'a','env':"
     "[{'name':'X','value':'1'},{'name':'Y','value':'2'}]},{'name':'b'}]}}}}",
     "{'spec':{'template':{'spec':{'containers':[{'name':'a','env':[{'name':'Y','value':'3'}]}]}}}}",
     "{'kind':'Deployment','spec':{'template':{'spec':{'containers':[{'name':'a','env':"
     "[{'name':'X','value':'1'},{'name':'Y','value':'3'}]},{'name':'b'}]}}}}",
     0, NULL},
    {"Deployment template volumes by name",
     "{'kind':'Deployment','spec':{'template':{'spec':{'volumes':[{'name':'v','emptyDir':{}}]}}}}",
     "{'spec':{'template':{'spec':{'volumes':[{'name':'w','emptyDir':{}}]}}}}",
     "{'kind':'Deployment','spec':{'template':{'spec':{'volumes':[{'name':'w','emptyDir':{}},"
     "{'name':'v','emptyDir':{}}]}}}}",
     0, NULL},
    {"CronJob job template containers by name, four levels down",
     "{'kind':'CronJob','apiVersion':'batch/v1','spec':{'jobTemplate':{'spec':{'template':"
     "{'spec':{'containers':[{'name':'a','image':'x'},{'name':'b'}]}}}}}}",
     "{'spec':{'jobTemplate':{'spec':{'template':{'spec':{'containers':[{'name':'a','image':"
     "'y'}]}}}}}}",
     "{'kind':'CronJob','apiVersion':'batch/v1','spec':{'jobTemplate':{'spec':{'template':"
     "{'spec':{'containers':[{'name':'a','image':'y'},{'name':'b'}]}}}}}}",
     0, NULL},
    {"CRD conditions have no patch strategy: replaced, not merged by type",
     "{'kind':'CustomResourceDefinition','apiVersion':'apiextensions.k8s.io/v1','status':"
     "{'conditions':[{'type':'Established','status':'True'},{'type':'NamesAccepted'}]}}",
     "{'status':{'conditions':[{'type':'Established','status':'False'}]}}",
     "{'kind':'CustomResourceDefinition','apiVersion':'apiextensions.k8s.io/v1','status':"
     "{'conditions':[{'type':'Established','status':'False'}]}}",
     0, NULL},
    {"ConfigMap data is a map: keys merge",
     "{'kind':'ConfigMap','data':{'a':'1'}}", "{'data':{'b':'2'}}",
     "{'kind':'ConfigMap','data':{'a':'1','b':'2'}}", 0, NULL},
};

Test(smp, keys_from_the_type_tables)
{
    RUN(smp_typed, smp_builtin);
}

static const patch_case smp_replaced[] = {
    {"lists without a merge key are replaced", "{'spec':{'tolerations':[{'key':'a'}],'x':[1,2]}}",
     "{'spec':{'tolerations':[{'key':'b'}],'x':[3]}}",
     "{'spec':{'tolerations':[{'key':'b'}],'x':[3]}}", 0, NULL},
    {"envFrom is replaced", "{'spec':{'containers':[{'name':'a','envFrom':[{'prefix':'A'}]}]}}",
     "{'spec':{'containers':[{'name':'a','envFrom':[{'prefix':'B'}]}]}}",
     "{'spec':{'containers':[{'name':'a','envFrom':[{'prefix':'B'}]}]}}", 0, NULL},
    {"an empty merge list changes nothing", "{'spec':{'containers':[{'name':'a'}]}}",
     "{'spec':{'containers':[]}}", "{'spec':{'containers':[{'name':'a'}]}}", 0, NULL},
    {"an empty replace list empties", "{'spec':{'tolerations':[{'key':'a'}]}}",
     "{'spec':{'tolerations':[]}}", "{'spec':{'tolerations':[]}}", 0, NULL},
    {"a merge list where the document has a scalar", "{'spec':{'containers':'oops'}}",
     "{'spec':{'containers':[{'name':'a'},{'$patch':'delete','name':'b'}]}}",
     "{'spec':{'containers':[{'name':'a'}]}}", 0, NULL},
};

Test(smp, lists_without_key_are_replaced)
{
    RUN(smp_replaced, smp_builtin);
}

static const patch_case smp_delete_elem[] = {
    /* apimachinery's 'delete all duplicate entries in a merging list' */
    {"delete removes every duplicate",
     "{'spec':{'containers':[{'name':'1'},{'name':'1'},{'name':'2','value':'a'},{'name':'3'},"
     "{'name':'3'}]}}",
     "{'spec':{'containers':[{'name':'1','$patch':'delete'},{'name':'3','$patch':'delete'}]}}",
     "{'spec':{'containers':[{'name':'2','value':'a'}]}}", 0, NULL},
};

Test(smp, delete_element_directive)
{
    RUN(smp_delete_elem, smp_builtin);
}

static const patch_case smp_retain[] = {
    {"$retainKeys drops unlisted fields",
     "{'spec':{'strategy':{'type':'RollingUpdate','rollingUpdate':{'maxSurge':1}}}}",
     "{'spec':{'strategy':{'$retainKeys':['type'],'type':'Recreate'}}}",
     "{'spec':{'strategy':{'type':'Recreate'}}}", 0, NULL},
    {"$retainKeys keeps listed fields", "{'s':{'type':'R','x':1,'y':2}}",
     "{'s':{'$retainKeys':['type','x']}}", "{'s':{'type':'R','x':1}}", 0, NULL},
    {"$retainKeys allows null for unlisted fields", "{'s':{'a':1,'b':2}}",
     "{'s':{'$retainKeys':['a'],'b':null}}", "{'s':{'a':1}}", 0, NULL},
};

Test(smp, retain_keys)
{
    RUN(smp_retain, smp_builtin);
}

static const patch_case smp_delprim[] = {
    {"$deleteFromPrimitiveList", "{'metadata':{'finalizers':['a','b','c','b']}}",
     "{'metadata':{'$deleteFromPrimitiveList/finalizers':['b','zz']}}",
     "{'metadata':{'finalizers':['a','c']}}", 0, NULL},
    {"$deleteFromPrimitiveList on a missing list", "{'metadata':{}}",
     "{'metadata':{'$deleteFromPrimitiveList/finalizers':['b']}}", "{'metadata':{}}", 0, NULL},
    {"kubectl primitive list diff", "{'metadata':{'finalizers':['a','b']}}",
     "{'metadata':{'$setElementOrder/finalizers':['a','c'],'$deleteFromPrimitiveList/"
     "finalizers':['b'],'finalizers':['c']}}",
     "{'metadata':{'finalizers':['a','c']}}", 0, NULL},
};

Test(smp, delete_from_primitive_list)
{
    RUN(smp_delprim, smp_builtin);
}

static const patch_case smp_replace[] = {
    {"$patch replace in a list", POD_AB,
     "{'spec':{'containers':[{'$patch':'replace'},{'name':'c','image':'x'}]}}",
     "{'spec':{'containers':[{'name':'c','image':'x'}]}}", 0, NULL},
    {"$patch replace alone empties a list", POD_AB,
     "{'spec':{'containers':[{'$patch':'replace'}]}}", "{'spec':{'containers':[]}}", 0, NULL},
    {"$patch replace in a set", "{'metadata':{'finalizers':['a','b']}}",
     "{'metadata':{'finalizers':[{'$patch':'replace'},'c']}}", "{'metadata':{'finalizers':['c']}}",
     0, NULL},
    {"$patch replace in a replace list is dropped", "{'spec':{'tolerations':[{'key':'a'}]}}",
     "{'spec':{'tolerations':[{'$patch':'replace'},{'key':'b'}]}}",
     "{'spec':{'tolerations':[{'key':'b'}]}}", 0, NULL},
    {"$patch replace on a map", "{'spec':{'selector':{'a':'1','b':'2'},'x':1}}",
     "{'spec':{'selector':{'$patch':'replace','c':'3'}}}", "{'spec':{'selector':{'c':'3'},'x':1}}",
     0, NULL},
};

Test(smp, patch_replace)
{
    RUN(smp_replace, smp_builtin);
}

static const patch_case smp_map_dirs[] = {
    {"$patch delete on a map", "{'spec':{'selector':{'a':'1'},'x':1}}",
     "{'spec':{'selector':{'$patch':'delete'}}}", "{'spec':{'x':1}}", 0, NULL},
    {"$patch delete on a missing map", "{'spec':{}}", "{'spec':{'selector':{'$patch':'delete'}}}",
     "{'spec':{}}", 0, NULL},
    {"$patch delete at the top", "{'a':1}", "{'$patch':'delete'}", "{}", 0, NULL},
    {"$patch merge on a map is the default", "{'a':{'b':1}}", "{'a':{'$patch':'merge','c':2}}",
     "{'a':{'b':1,'c':2}}", 0, NULL},
};

Test(smp, patch_delete_and_merge_on_maps)
{
    RUN(smp_map_dirs, smp_builtin);
}

static const patch_case smp_set_order[] = {
    {"$setElementOrder alone reorders",
     "{'spec':{'containers':[{'name':'a'},{'name':'b'},"
     "{'name':'c'}]}}",
     "{'spec':{'$setElementOrder/containers':[{'name':'c'},{'name':'a'},{'name':'b'}]}}",
     "{'spec':{'containers':[{'name':'c'},{'name':'a'},{'name':'b'}]}}", 0, NULL},
    {"$setElementOrder naming some elements",
     "{'spec':{'containers':[{'name':'a'},{'name':'b'},{'name':'c'}]}}",
     "{'spec':{'$setElementOrder/containers':[{'name':'c'},{'name':'a'}]}}",
     "{'spec':{'containers':[{'name':'b'},{'name':'c'},{'name':'a'}]}}", 0, NULL},
    {"$setElementOrder puts a new element last", "{'spec':{'containers':[{'name':'a'}]}}",
     "{'spec':{'$setElementOrder/containers':[{'name':'a'},{'name':'b'}],'containers':[{'name':"
     "'b','image':'x'}]}}",
     "{'spec':{'containers':[{'name':'a'},{'name':'b','image':'x'}]}}", 0, NULL},
    /* apimachinery's '$setElementOrder contains item that is not present' */
    {"$setElementOrder naming an absent element",
     "{'spec':{'containers':[{'name':'1'},"
     "{'name':'3'}]}}",
     "{'spec':{'$setElementOrder/containers':[{'name':'3'},{'name':'2'},{'name':'1'}],"
     "'containers':[{'name':'3','value':'3'},{'name':'1','value':'1'}]}}",
     "{'spec':{'containers':[{'name':'3','value':'3'},{'name':'1','value':'1'}]}}", 0, NULL},
    {"$setElementOrder for a set", "{'metadata':{'finalizers':['a','b']}}",
     "{'metadata':{'$setElementOrder/finalizers':['b','a']}}",
     "{'metadata':{'finalizers':['b','a']}}", 0, NULL},
    {"$setElementOrder for a missing list", "{'spec':{}}",
     "{'spec':{'$setElementOrder/containers':[{'name':'a'}]}}", "{'spec':{}}", 0, NULL},
    {"$setElementOrder on a replace list is ignored", "{'spec':{'tolerations':[{'key':'a'}]}}",
     "{'spec':{'$setElementOrder/tolerations':[{'key':'b'}],'tolerations':[{'key':'b'}]}}",
     "{'spec':{'tolerations':[{'key':'b'}]}}", 0, NULL},
};

Test(smp, set_element_order)
{
    RUN(smp_set_order, smp_builtin);
}

static const patch_case smp_misc[] = {
    {"directives never reach the output", "{}",
     "{'spec':{'selector':{'$patch':'replace','a':'1'},'containers':[{'name':'a','env':[{'name':"
     "'X'},{'$patch':'delete','name':'Y'}]}],'$setElementOrder/volumes':[],"
     "'$deleteFromPrimitiveList/args':['x']}}",
     "{'spec':{'selector':{'a':'1'},'containers':[{'name':'a','env':[{'name':'X'}]}]}}", 0, NULL},
    {"other $-fields are ordinary data", "{'schema':{'$ref':'a'}}", "{'schema':{'$ref':'b'}}",
     "{'schema':{'$ref':'b'}}", 0, NULL},
    {"numbers match as keys whatever their spelling", "{'spec':{'ports':[{'port':80,'name':'a'}]}}",
     "{'spec':{'ports':[{'port':80.0,'name':'b'}]}}",
     "{'spec':{'ports':[{'port':80.0,'name':'b'}]}}", 0, NULL},
};

Test(smp, directives_and_dollar_fields)
{
    RUN(smp_misc, smp_builtin);
}

static const patch_case smp_err_dir[] = {
    {"unknown $patch value", "{}", "{'spec':{'$patch':'explode'}}", NULL, -1, "explode"},
    {"$patch is not a string", "{}", "{'spec':{'$patch':1}}", NULL, -1, "$patch"},
    {"$patch delete on a list without a merge key", "{'spec':{'tolerations':[{'key':'a'}]}}",
     "{'spec':{'tolerations':[{'$patch':'delete','key':'a'}]}}", NULL, -1,
     "$patch delete on a list without a merge key"},
};

Test(smp_errors, patch_directive)
{
    RUN(smp_err_dir, smp_builtin);
}

static const patch_case smp_err_keys[] = {
    {"$patch delete element without the merge key", POD_AB,
     "{'spec':{'containers':[{'$patch':'delete','image':'x'}]}}", NULL, -1, "\"name\""},
    {"patch element without the merge key", POD_AB, "{'spec':{'containers':[{'image':'x'}]}}", NULL,
     -1, "no merge key \"name\""},
    {"the message names the list", POD_AB,
     "{'spec':{'containers':[{'name':'a','ports':[{'name':'p'}]}]}}", NULL, -1,
     "spec.containers.ports: "},
    {"patch element not an object", POD_AB, "{'spec':{'containers':['a']}}", NULL, -1,
     "not an object"},
    {"document element without the merge key", "{'spec':{'containers':[{'image':'x'}]}}",
     "{'spec':{'containers':[{'name':'a'}]}}", NULL, -1, "existing list"},
};

Test(smp_errors, merge_keys)
{
    RUN(smp_err_keys, smp_builtin);
}

static const patch_case smp_err_sets[] = {
    {"object in a set", "{'metadata':{'finalizers':['a']}}",
     "{'metadata':{'finalizers':[{'a':1}]}}", NULL, -1, "not a primitive"},
    {"$patch delete in a set", "{'metadata':{'finalizers':['a']}}",
     "{'metadata':{'finalizers':[{'$patch':'delete'}]}}", NULL, -1, "$deleteFromPrimitiveList"},
};

Test(smp_errors, sets)
{
    RUN(smp_err_sets, smp_builtin);
}

static const patch_case smp_err_list_dir[] = {
    {"$patch merge in a list", POD_AB, "{'spec':{'containers':[{'$patch':'merge','name':'a'}]}}",
     NULL, -1, "merge"},
    {"unknown $patch in a list", POD_AB, "{'spec':{'containers':[{'$patch':'x','name':'a'}]}}",
     NULL, -1, "unknown $patch"},
};

Test(smp_errors, list_directives)
{
    RUN(smp_err_list_dir, smp_builtin);
}

static const patch_case smp_err_retain[] = {
    {"$retainKeys not a list", "{}", "{'spec':{'$retainKeys':'type'}}", NULL, -1, "$retainKeys"},
    {"$retainKeys with a non-string", "{}", "{'spec':{'$retainKeys':[1]}}", NULL, -1,
     "$retainKeys"},
    {"patch sets a field not in $retainKeys", "{}", "{'spec':{'$retainKeys':['type'],'other':1}}",
     NULL, -1, "\"other\""},
};

Test(smp_errors, retain_keys)
{
    RUN(smp_err_retain, smp_builtin);
}

static const patch_case smp_err_order[] = {
    {"$setElementOrder not a list", POD_AB, "{'spec':{'$setElementOrder/containers':{'name':'a'}}}",
     NULL, -1, "must be a list"},
    /* apimachinery's 'should check if order in $setElementOrder and patch list match' */
    {"$setElementOrder contradicts the patch",
     "{'spec':{'containers':[{'name':'1'},{'name':'3'},{'name':'2'}]}}",
     "{'spec':{'$setElementOrder/containers':[{'name':'1'},{'name':'2'},{'name':'3'}],"
     "'containers':[{'name':'3','value':'3'},{'name':'1','value':'1'}]}}",
     NULL, -1, "does not match"},
    {"$setElementOrder missing a patch element", POD_AB,
     "{'spec':{'$setElementOrder/containers':[{'name':'a'}],'containers':[{'name':'c'}]}}", NULL,
     -1, "does not match"},
    {"$setElementOrder element without the key", POD_AB,
     "{'spec':{'$setElementOrder/containers':[{'image':'x'}]}}", NULL, -1, "$setElementOrder"},
    {"$setElementOrder/ without a name", "{}", "{'spec':{'$setElementOrder/':[]}}", NULL, -1,
     "no list name"},
    {"$setElementOrder for a field that is not a list", POD_AB,
     "{'spec':{'$setElementOrder/containers':[{'name':'a'}],'containers':{'name':'a'}}}", NULL, -1,
     "not a list"},
};

Test(smp_errors, set_element_order)
{
    RUN(smp_err_order, smp_builtin);
}

static const patch_case smp_err_delprim[] = {
    {"$deleteFromPrimitiveList not a list", "{}",
     "{'metadata':{'$deleteFromPrimitiveList/finalizers':'a'}}", NULL, -1, "list of primitives"},
    {"$deleteFromPrimitiveList with an object", "{}",
     "{'metadata':{'$deleteFromPrimitiveList/finalizers':[{}]}}", NULL, -1, "list of primitives"},
    {"$deleteFromPrimitiveList/ without a name", "{}",
     "{'metadata':{'$deleteFromPrimitiveList/':[]}}", NULL, -1, "no list name"},
};

Test(smp_errors, delete_from_primitive_list)
{
    RUN(smp_err_delprim, smp_builtin);
}

static const patch_case smp_err_types[] = {
    {"patch is not an object", "{}", "[{'op':'add'}]", NULL, -1, "JSON object"},
    {"document is not an object", "[]", "{}", NULL, -1, "not a JSON object"},
};

Test(smp_errors, not_objects)
{
    RUN(smp_err_types, smp_builtin);
}

static const patch_case smp_err_atomic[] = {
    {"no partial result after a late error", "{'a':1,'b':{'c':1}}", "{'a':2,'b':{'$patch':'nope'}}",
     NULL, -1, "b: "},
};

Test(smp_errors, no_partial_result)
{
    RUN(smp_err_atomic, smp_builtin);
}

Test(smp, without_key_fn_every_list_is_replaced)
{
    json_t *doc = load(POD_AB), *out = NULL;
    json_t *patch = load("{'spec':{'containers':[{'name':'c'}]}}");
    char err[128] = "";
    cr_assert_eq(fakeapi__smp_patch(doc, patch, NULL, NULL, &out, err, sizeof err), 0, "%s", err);
    assert_json(out, "{'spec':{'containers':[{'name':'c'}]}}", "no key_fn");
    json_decref(out);
    json_decref(doc);
    json_decref(patch);
}

typedef struct {
    char seen[8][64];
    int n;
} path_log;

static const char *logging_key(const char *path, void *ud)
{
    path_log *log = ud;
    if (log->n < 8)
        snprintf(log->seen[log->n++], sizeof log->seen[0], "%s", path);
    fakeapi__smp_types types = {.root = fakeapi__type_of_kind("apps/v1", "Deployment")};
    return fakeapi__smp_type_key(path, &types);
}

Test(smp, key_fn_sees_field_paths_without_positions)
{
    path_log log = {.n = 0};
    json_t *doc = load("{'spec':{'template':{'spec':{'containers':[{'name':'a','ports':[]}]}}}}");
    json_t *patch = load("{'spec':{'template':{'spec':{'containers':[{'name':'a','ports':[{'"
                         "containerPort':1}]}]}}}}");
    json_t *out = NULL;
    cr_assert_eq(fakeapi__smp_patch(doc, patch, logging_key, &log, &out, NULL, 0), 0);
    cr_assert_eq(log.n, 2);
    cr_assert_str_eq(log.seen[0], "spec.template.spec.containers");
    cr_assert_str_eq(log.seen[1], "spec.template.spec.containers.ports");
    assert_json(out,
                "{'spec':{'template':{'spec':{'containers':[{'name':'a','ports':"
                "[{'containerPort':1}]}]}}}}",
                "nested merge");
    json_decref(out);
    json_decref(doc);
    json_decref(patch);
}

static const char *always_name(const char *path, void *ud)
{
    (void)path;
    (void)ud;
    return "name";
}

Test(smp, key_fn_decides_for_any_list)
{
    json_t *doc = load("{'items':[{'name':'a','v':1}]}"), *out = NULL;
    json_t *patch = load("{'items':[{'name':'a','v':2}]}");
    cr_assert_eq(fakeapi__smp_patch(doc, patch, always_name, NULL, &out, NULL, 0), 0);
    assert_json(out, "{'items':[{'name':'a','v':2}]}", "custom key");
    json_decref(out);
    json_decref(doc);
    json_decref(patch);
}

Test(smp, result_shares_nothing_with_input)
{
    json_t *doc = load(POD_AB), *out = NULL;
    json_t *patch = load("{'spec':{'containers':[{'name':'a','env':[{'name':'X'}]}]}}");
    fakeapi__smp_types types = {.root = fakeapi__type_of_kind("v1", "Pod")};
    cr_assert_eq(fakeapi__smp_patch(doc, patch, fakeapi__smp_type_key, &types, &out, NULL, 0), 0);
    json_t *c0 = json_array_get(json_object_get(json_object_get(out, "spec"), "containers"), 0);
    json_object_set_new(c0, "image", json_string("changed"));
    json_array_append_new(json_object_get(c0, "env"), json_string("changed"));
    assert_json(doc, POD_AB, "document after changing the output");
    assert_json(patch, "{'spec':{'containers':[{'name':'a','env':[{'name':'X'}]}]}}",
                "patch after changing the output");
    json_decref(out);
    json_decref(doc);
    json_decref(patch);
}

Test(smp, deep_field_path_is_refused_not_overflowed)
{
    char key[1500];
    json_t *doc = json_object(), *patch = json_object(), *inner = json_object(), *out = UNTOUCHED;
    char err[128] = "";
    memset(key, 'k', sizeof key - 1);
    key[sizeof key - 1] = '\0';
    /* three levels of 1.5 kB names exceed the 4 kB path buffer */
    json_object_set_new(inner, key, json_integer(1));
    json_t *mid = json_object();
    json_object_set_new(mid, key, inner);
    json_object_set_new(patch, key, mid);
    cr_assert_eq(fakeapi__smp_patch(doc, patch, NULL, NULL, &out, err, sizeof err), -1);
    cr_assert_eq(out, UNTOUCHED);
    cr_assert(strstr(err, "field path longer than"), "%s", err);
    json_decref(doc);
    json_decref(patch);
}

/* ---- merge keys from the type tables ------------------------------------ */

typedef struct {
    const char *gv, *kind, *path;
    const char *key; /* NULL: replaced */
} key_case;

/* Every key here comes from the tables' +patchMergeKey/+patchStrategy, walked by kind. */
static const key_case key_cases[] = {
    {"v1", "Pod", "spec.containers", "name"},
    {"v1", "Pod", "spec.initContainers", "name"},
    {"v1", "Pod", "spec.ephemeralContainers", "name"},
    {"v1", "Pod", "spec.volumes", "name"},
    {"v1", "Pod", "spec.containers.env", "name"},
    {"v1", "Pod", "spec.containers.ports", "containerPort"},
    {"v1", "Pod", "spec.initContainers.ports", "containerPort"},
    {"v1", "Pod", "spec.containers.volumeMounts", "mountPath"},
    {"v1", "Pod", "spec.imagePullSecrets", "name"},
    {"v1", "Pod", "status.conditions", "type"},
    {"v1", "Pod", "metadata.ownerReferences", "uid"},
    {"v1", "Pod", "metadata.finalizers", ""},
    {"v1", "Pod", "spec.tolerations", NULL},
    {"v1", "Pod", "spec.containers.envFrom", NULL},
    {"v1", "Pod", "spec.containers.args", NULL},
    {"v1", "Pod", "spec.containers.image", NULL},
    {"v1", "Pod", "metadata.labels", NULL},
    {"v1", "Pod", "metadata.labels.app.kubernetes.io/name", NULL},
    {"v1", "Pod", "spec.xcontainers", NULL},
    {"v1", "Pod", "spec.ports", NULL},
    {"v1", "Pod", "", NULL},
    {"v1", "Service", "spec.ports", "port"},
    {"v1", "Service", "spec.containers", NULL},
    {"v1", "Namespace", "spec.finalizers", NULL},
    {"apps/v1", "Deployment", "spec.template.spec.containers", "name"},
    {"apps/v1", "Deployment", "spec.template.spec.containers.env", "name"},
    {"apps/v1", "Deployment", "spec.template.spec.volumes", "name"},
    {"apps/v1", "Deployment", "spec.template.spec.tolerations", NULL},
    {"apps/v1", "Deployment", "spec.template.metadata.ownerReferences", "uid"},
    {"apps/v1", "Deployment", "spec.template.spec.ports", NULL},
    {"apps/v1", "Deployment", "spec.containers", NULL},
    {"apps/v1", "Deployment", "status.conditions", "type"},
    {"batch/v1", "CronJob", "spec.jobTemplate.spec.template.spec.initContainers", "name"},
    {"apiextensions.k8s.io/v1", "CustomResourceDefinition", "status.conditions", NULL},
};

Test(type_key, table)
{
    for (size_t i = 0; i < sizeof key_cases / sizeof key_cases[0]; i++) {
        const key_case *c = &key_cases[i];
        const char *got = type_key(c->gv, c->kind, c->path, false);
        if (!c->key)
            cr_assert_null(got, "%s %s: got \"%s\", want NULL", c->kind, c->path, got);
        else
            cr_assert(got && strcmp(got, c->key) == 0, "%s %s: got %s%s%s, want \"%s\"", c->kind,
                      c->path, got ? "\"" : "", got ? got : "NULL", got ? "\"" : "", c->key);
    }
}

/* Server-side apply: +listType first, the patch strategy only without one. */
static const key_case apply_cases[] = {
    /* +listType=map +listMapKey=type, no patch strategy: merged only by apply */
    {"apiextensions.k8s.io/v1", "CustomResourceDefinition", "status.conditions", "type"},
    {"v1", "Pod", "spec.containers", "name"},
    {"v1", "Pod", "spec.containers.ports", "containerPort"},
    {"v1", "Pod", "spec.tolerations", NULL},
    {"v1", "Pod", "metadata.finalizers", ""},
    {"v1", "Service", "spec.ports", "port"},
};

Test(type_key, apply_uses_list_type)
{
    for (size_t i = 0; i < sizeof apply_cases / sizeof apply_cases[0]; i++) {
        const key_case *c = &apply_cases[i];
        const char *got = type_key(c->gv, c->kind, c->path, true);
        if (!c->key)
            cr_assert_null(got, "%s %s: got \"%s\", want NULL", c->kind, c->path, got);
        else
            cr_assert(got && strcmp(got, c->key) == 0, "%s %s: got %s%s%s, want \"%s\"", c->kind,
                      c->path, got ? "\"" : "", got ? got : "NULL", got ? "\"" : "", c->key);
    }
}

Test(type_key, without_a_type_every_list_is_replaced)
{
    fakeapi__smp_types none = {.root = NULL};
    cr_assert_null(fakeapi__smp_type_key("spec.containers", &none));
    cr_assert_null(fakeapi__smp_type_key("spec.containers", NULL));
    fakeapi__smp_types pod = {.root = fakeapi__type_of_kind("v1", "Pod")};
    cr_assert_null(fakeapi__smp_type_key(NULL, &pod));
}

