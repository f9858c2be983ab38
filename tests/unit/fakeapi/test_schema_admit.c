/*
 * Tests for the public custom resource schema functions (fakeapi.h:
 * fakeapi_schema_store, fakeapi_schema_validate, fakeapi_schema_admit,
 * fakeapi_schema_pattern_match): what a write of a custom resource does,
 * without a server. Only the public header is used.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "fakeapi/fakeapi.h"

/* JSON with ' for " so schemas stay readable; no test string needs a '. */
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

/* A CronTab-like schema: a required spec with a defaulted, bounded size and
 * a patterned name. */
#define SCHEMA                                                                                     \
    "{'type':'object','properties':{'spec':{'type':'object','required':['size'],"                  \
    "'properties':{'size':{'type':'integer','minimum':1,'maximum':10},"                            \
    "'mode':{'type':'string','default':'fast'},"                                                   \
    "'name':{'type':'string','pattern':'^[a-z]\\\\d+$'}}}},'required':['spec']}"

static void assert_cause(const json_t *causes, size_t i, const char *field, const char *reason,
                         const char *message)
{
    const json_t *c = json_array_get(causes, i);
    cr_assert_not_null(c, "no cause %zu", i);
    cr_assert_str_eq(json_string_value(json_object_get(c, "field")), field);
    cr_assert_str_eq(json_string_value(json_object_get(c, "reason")), reason);
    cr_assert_str_eq(json_string_value(json_object_get(c, "message")), message);
}

Test(schema_admit, valid_object_is_pruned_and_defaulted)
{
    json_t *s = J(SCHEMA);
    json_t *obj = J("{'apiVersion':'x/v1','kind':'CronTab','metadata':{'name':'a'},"
                    "'spec':{'size':3,'name':'a12','extra':1,'mode':null},'junk':true}");
    json_t *causes = json_string("untouched");
    cr_assert_eq(fakeapi_schema_admit(s, obj, &causes), 0);
    cr_assert_null(causes, "no causes for a valid object");
    /* unknown fields pruned, the null defaulted, metadata kept */
    json_t *want = J("{'apiVersion':'x/v1','kind':'CronTab','metadata':{'name':'a'},"
                     "'spec':{'size':3,'name':'a12','mode':'fast'}}");
    cr_assert(json_equal(obj, want), "%s", json_dumps(obj, JSON_COMPACT));
    json_decref(want);
    json_decref(obj);
    json_decref(s);
}

Test(schema_admit, invalid_object_gets_the_servers_causes)
{
    json_t *s = J(SCHEMA);
    json_t *obj = J("{'spec':{'size':11,'name':'A1'}}");
    json_t *causes = NULL;
    cr_assert_eq(fakeapi_schema_admit(s, obj, &causes), FAKEAPI_ERR_INVALID);
    cr_assert(json_is_array(causes));
    cr_assert_eq(json_array_size(causes), 2, "%s", json_dumps(causes, JSON_COMPACT));
    assert_cause(causes, 0, "spec.size", "FieldValueInvalid",
                 "Invalid value: 11: spec.size in body should be less than or equal to 10");
    assert_cause(causes, 1, "spec.name", "FieldValueInvalid",
                 "Invalid value: \"A1\": spec.name in body should match '^[a-z]\\d+$'");
    /* defaults were applied before validation, as the server does */
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(obj, "spec"), "mode")),
                     "fast");
    json_decref(causes);

    /* a missing required field; without causes_out, only the code */
    json_t *empty = J("{'spec':{}}");
    cr_assert_eq(fakeapi_schema_admit(s, empty, NULL), FAKEAPI_ERR_INVALID);
    cr_assert_eq(fakeapi_schema_validate(s, empty, &causes), FAKEAPI_ERR_INVALID);
    cr_assert_eq(json_array_size(causes), 1);
    assert_cause(causes, 0, "spec.size", "FieldValueRequired", "Required value");
    json_decref(causes);
    json_decref(empty);
    json_decref(obj);
    json_decref(s);
}

Test(schema_admit, store_and_validate_separately)
{
    json_t *s = J(SCHEMA);
    json_t *obj = J("{'spec':{'size':0,'unknown':'x'}}");
    /* validate alone neither prunes nor defaults */
    json_t *causes = NULL;
    cr_assert_eq(fakeapi_schema_validate(s, obj, &causes), FAKEAPI_ERR_INVALID);
    cr_assert_eq(json_array_size(causes), 1);
    assert_cause(causes, 0, "spec.size", "FieldValueInvalid",
                 "Invalid value: 0: spec.size in body should be greater than or equal to 1");
    json_decref(causes);
    cr_assert_not_null(json_object_get(json_object_get(obj, "spec"), "unknown"));
    /* store alone does not validate: the bad size stays */
    cr_assert_eq(fakeapi_schema_store(s, obj), 0);
    json_t *want = J("{'spec':{'size':0,'mode':'fast'}}");
    cr_assert(json_equal(obj, want), "%s", json_dumps(obj, JSON_COMPACT));
    json_decref(want);
    /* any value can be validated against a sub-schema */
    json_t *sub = J("{'type':'integer','maximum':3}"), *four = json_integer(4);
    cr_assert_eq(fakeapi_schema_validate(sub, four, NULL), FAKEAPI_ERR_INVALID);
    json_integer_set(four, 3);
    cr_assert_eq(fakeapi_schema_validate(sub, four, NULL), 0);
    json_decref(four);
    json_decref(sub);
    json_decref(obj);
    json_decref(s);
}

Test(schema_admit, bad_arguments)
{
    json_t *s = J(SCHEMA), *obj = J("{'spec':{'size':3,'x':1}}"), *arr = json_array();
    json_t *causes = json_string("untouched");
    cr_assert_eq(fakeapi_schema_admit(NULL, obj, &causes), FAKEAPI_ERR_INVALID);
    cr_assert_null(causes);
    cr_assert_eq(fakeapi_schema_admit(arr, obj, &causes), FAKEAPI_ERR_INVALID);
    cr_assert_null(causes);
    cr_assert_eq(fakeapi_schema_admit(s, NULL, &causes), FAKEAPI_ERR_INVALID);
    cr_assert_null(causes);
    cr_assert_eq(fakeapi_schema_validate(NULL, obj, NULL), FAKEAPI_ERR_INVALID);
    cr_assert_eq(fakeapi_schema_store(s, NULL), FAKEAPI_ERR_INVALID);
    cr_assert_eq(fakeapi_schema_store(NULL, obj), FAKEAPI_ERR_INVALID);
    /* nothing was pruned by the refused calls */
    cr_assert_not_null(json_object_get(json_object_get(obj, "spec"), "x"));
    json_decref(arr);
    json_decref(obj);
    json_decref(s);
}

Test(schema_admit, pattern_match)
{
    cr_assert_eq(fakeapi_schema_pattern_match("^[a-z]\\d+$", "a12"), 1);
    cr_assert_eq(fakeapi_schema_pattern_match("^[a-z]\\d+$", "a1b"), 0);
    cr_assert_eq(fakeapi_schema_pattern_match("(?:ab)+", "xxabab"), 1, "searched, not anchored");
    cr_assert_eq(fakeapi_schema_pattern_match("^\\w+\\s\\S$", "a_1 z"), 1);
    cr_assert_eq(fakeapi_schema_pattern_match("([", "x"), FAKEAPI_ERR_INVALID);
    cr_assert_eq(fakeapi_schema_pattern_match(NULL, "x"), FAKEAPI_ERR_INVALID);
    cr_assert_eq(fakeapi_schema_pattern_match("x", NULL), FAKEAPI_ERR_INVALID);
}
