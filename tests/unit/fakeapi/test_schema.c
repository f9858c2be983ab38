/*
 * Tests for fakeapi/schema.c: validation messages as the API server words
 * them, defaulting and pruning, on a CronTab-like CRD plus small schemas per
 * keyword; and its public face in fakeapi.h (fakeapi_schema_store,
 * fakeapi_schema_validate, fakeapi_schema_admit,
 * fakeapi_schema_pattern_match), at the end.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "fakeapi/fakeapi.h"
#include "schema.h"

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

/* Validate and return the causes (caller frees); checks the count agrees. */
static json_t *check(const char *schema_text, const char *obj_text)
{
    json_t *schema = J(schema_text), *obj = J(obj_text), *causes = json_array();
    int n = fakeapi__schema_validate(schema, obj, causes);
    cr_assert_eq((size_t)n, json_array_size(causes));
    json_decref(schema);
    json_decref(obj);
    return causes;
}

static void assert_cause(const json_t *causes, size_t i, const char *field, const char *reason,
                         const char *message)
{
    const json_t *c = json_array_get(causes, i);
    cr_assert_not_null(c, "no cause %zu", i);
    cr_assert_str_eq(json_string_value(json_object_get(c, "field")), field);
    cr_assert_str_eq(json_string_value(json_object_get(c, "reason")), reason);
    cr_assert_str_eq(json_string_value(json_object_get(c, "message")), message);
}

/* Exactly one cause, with these contents. */
static void expect_one(const char *schema, const char *obj, const char *field, const char *reason,
                       const char *message)
{
    json_t *causes = check(schema, obj);
    cr_assert_eq(json_array_size(causes), 1, "want 1 cause, got %zu", json_array_size(causes));
    assert_cause(causes, 0, field, reason, message);
    json_decref(causes);
}

static void expect_valid(const char *schema, const char *obj)
{
    json_t *causes = check(schema, obj);
    char *dump = json_dumps(causes, JSON_COMPACT);
    cr_assert_eq(json_array_size(causes), 0, "unexpected causes: %s", dump);
    free(dump);
    json_decref(causes);
}

static void expect_json(const json_t *got, const char *want_text)
{
    json_t *want = J(want_text);
    char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
    char *w = json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS);
    cr_assert(json_equal(got, want), "got %s, want %s", g, w);
    free(g);
    free(w);
    json_decref(want);
}

/* The CronTab CRD from the Kubernetes docs, grown a little. */
static const char CRONTAB[] =
    "{'type':'object','required':['spec'],'properties':{"
    " 'apiVersion':{'type':'string'},'kind':{'type':'string'},'metadata':{'type':'object'},"
    " 'spec':{'type':'object','required':['cronSpec','image'],'properties':{"
    "  'cronSpec':{'type':'string','pattern':'^(\\\\d+|\\\\*)(/\\\\d+)?(\\\\s+(\\\\d+|\\\\*)(/"
    "\\\\d+)?){4}$'},"
    "  'image':{'type':'string','maxLength':64},"
    "  'replicas':{'type':'integer','minimum':1,'maximum':10,'default':1},"
    "  'mode':{'type':'string','enum':['Always','OnFailure','Never'],'default':'Always'},"
    "  'containers':{'type':'array','maxItems':3,'items':{'type':'object','required':['name'],"
    "   'properties':{'name':{'type':'string','minLength':1},"
    "    'port':{'type':'integer','default':8080},"
    "    'tags':{'type':'array','items':{'type':'string'}}}}}}},"
    " 'status':{'type':'object','x-kubernetes-preserve-unknown-fields':true,"
    "  'properties':{'lastScheduleTime':{'type':'string','format':'date-time'}}}}}";

#define CT_HEAD "{'apiVersion':'stable.example.com/v1','kind':'CronTab','metadata':{'name':'c'},"

/* ---- CronTab ------------------------------------------------------------- */

Test(schema_crontab, valid_object_has_no_causes)
{
    expect_valid(CRONTAB, CT_HEAD "'spec':{'cronSpec':'*/5 * * * *','image':'img:1','replicas':3,"
                                  "'mode':'Never','containers':[{'name':'a','tags':['x']}]},"
                                  "'status':{'anything':[1,2]}}");
}

Test(schema_crontab, cron_pattern_with_backslash_d_and_s_matches)
{
    expect_valid(CRONTAB, CT_HEAD "'spec':{'cronSpec':'0 12 1/2 *  3','image':'i'}}");
}

Test(schema_crontab, wrong_type_is_type_invalid)
{
    expect_one(CRONTAB, CT_HEAD "'spec':{'cronSpec':'* * * * *','image':'i','replicas':'3'}}",
               "spec.replicas", "FieldValueTypeInvalid",
               "Invalid value: \"string\": spec.replicas in body must be of type integer: "
               "\"string\"");
}

Test(schema_crontab, missing_required_fields_in_order)
{
    json_t *causes = check(CRONTAB, CT_HEAD "'spec':{'replicas':2}}");
    cr_assert_eq(json_array_size(causes), 2);
    assert_cause(causes, 0, "spec.cronSpec", "FieldValueRequired", "Required value");
    assert_cause(causes, 1, "spec.image", "FieldValueRequired", "Required value");
    json_decref(causes);
}

Test(schema_crontab, missing_spec_at_root)
{
    expect_one(CRONTAB, CT_HEAD "'status':{}}", "spec", "FieldValueRequired", "Required value");
}

Test(schema_crontab, replicas_below_minimum)
{
    expect_one(CRONTAB, CT_HEAD "'spec':{'cronSpec':'* * * * *','image':'i','replicas':0}}",
               "spec.replicas", "FieldValueInvalid",
               "Invalid value: 0: spec.replicas in body should be greater than or equal to 1");
}

Test(schema_crontab, replicas_above_maximum)
{
    expect_one(CRONTAB, CT_HEAD "'spec':{'cronSpec':'* * * * *','image':'i','replicas':11}}",
               "spec.replicas", "FieldValueInvalid",
               "Invalid value: 11: spec.replicas in body should be less than or equal to 10");
}

Test(schema_crontab, mode_not_in_enum)
{
    expect_one(CRONTAB, CT_HEAD "'spec':{'cronSpec':'* * * * *','image':'i','mode':'Sometimes'}}",
               "spec.mode", "FieldValueNotSupported",
               "Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", "
               "\"Never\"");
}

Test(schema_crontab, cron_spec_fails_pattern)
{
    expect_one(CRONTAB, CT_HEAD "'spec':{'cronSpec':'every minute','image':'i'}}", "spec.cronSpec",
               "FieldValueInvalid",
               "Invalid value: \"every minute\": spec.cronSpec in body should match "
               "'^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$'");
}

Test(schema_crontab, image_too_long)
{
    char obj[512];
    snprintf(obj, sizeof obj, CT_HEAD "'spec':{'cronSpec':'* * * * *','image':'%065d'}}", 0);
    expect_one(CRONTAB, obj, "spec.image", "FieldValueTooLong",
               "Too long: may not be more than 64 bytes");
}

Test(schema_crontab, nested_array_paths_use_brackets)
{
    expect_one(CRONTAB,
               CT_HEAD "'spec':{'cronSpec':'* * * * *','image':'i','containers':"
                       "[{'name':'a'},{'name':'b','tags':['x','y',7]}]}}",
               "spec.containers[1].tags[2]", "FieldValueTypeInvalid",
               "Invalid value: \"integer\": spec.containers[1].tags[2] in body must be of type "
               "string: \"integer\"");
}

Test(schema_crontab, item_min_length_and_required_in_array)
{
    json_t *causes = check(CRONTAB, CT_HEAD "'spec':{'cronSpec':'* * * * *','image':'i',"
                                            "'containers':[{'name':''},{'port':80}]}}");
    cr_assert_eq(json_array_size(causes), 2);
    assert_cause(causes, 0, "spec.containers[0].name", "FieldValueInvalid",
                 "Invalid value: \"\": spec.containers[0].name in body should be at least 1 chars "
                 "long");
    assert_cause(causes, 1, "spec.containers[1].name", "FieldValueRequired", "Required value");
    json_decref(causes);
}

Test(schema_crontab, many_causes_in_one_object)
{
    json_t *causes = check(CRONTAB, CT_HEAD "'spec':{'cronSpec':'x','replicas':20,'mode':'No',"
                                            "'containers':[{'name':'a'},{'name':'b'},{'name':'c'},"
                                            "{'name':'d'}]}}");
    cr_assert_eq(json_array_size(causes), 5);
    assert_cause(causes, 0, "spec.image", "FieldValueRequired", "Required value");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(causes, 1), "field")),
                     "spec.cronSpec");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(causes, 2), "field")),
                     "spec.replicas");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(causes, 3), "field")),
                     "spec.mode");
    assert_cause(causes, 4, "spec.containers", "FieldValueTooMany",
                 "Too many: 4: must have at most 3 items");
    json_decref(causes);
}

Test(schema_crontab, status_keeps_checking_declared_fields)
{
    expect_one(CRONTAB,
               CT_HEAD "'spec':{'cronSpec':'* * * * *','image':'i'},"
                       "'status':{'free':{'form':true},'lastScheduleTime':'yesterday'}}",
               "status.lastScheduleTime", "FieldValueTypeInvalid",
               "Invalid value: \"yesterday\": status.lastScheduleTime in body must be of type "
               "date-time: \"yesterday\"");
}

Test(schema_crontab, root_meta_fields_not_validated)
{
    expect_valid(CRONTAB, "{'apiVersion':5,'kind':[],'metadata':'x',"
                          "'spec':{'cronSpec':'* * * * *','image':'i'}}");
}

Test(schema_crontab, root_of_wrong_type)
{
    expect_one(CRONTAB, "'just a string'", "", "FieldValueTypeInvalid",
               "Invalid value: \"string\":  in body must be of type object: \"string\"");
}

Test(schema_crontab, default_prune_validate_pipeline)
{
    json_t *schema = J(CRONTAB);
    json_t *obj = J(CT_HEAD "'junk':1,'spec':{'cronSpec':'* * * * *','image':'i','extra':true,"
                            "'containers':[{'name':'a','x':1}]},'status':{'kept':1}}");
    fakeapi__schema_default(schema, obj);
    fakeapi__schema_prune(schema, obj);
    cr_assert_eq(fakeapi__schema_validate(schema, obj, NULL), 0);
    expect_json(obj, CT_HEAD "'spec':{'cronSpec':'* * * * *','image':'i','replicas':1,"
                             "'mode':'Always','containers':[{'name':'a','port':8080}]},"
                             "'status':{'kept':1}}");
    json_decref(schema);
    json_decref(obj);
}

/* ---- types and null ------------------------------------------------------ */

Test(schema_types, integer_is_a_number_but_real_is_not_an_integer)
{
    expect_valid("{'properties':{'n':{'type':'number'}}}", "{'n':3}");
    expect_valid("{'properties':{'n':{'type':'number'}}}", "{'n':3.5}");
    expect_one("{'properties':{'n':{'type':'integer'}}}", "{'n':1.0}", "n", "FieldValueTypeInvalid",
               "Invalid value: \"number\": n in body must be of type integer: \"number\"");
}

Test(schema_types, boolean_object_array_mismatches)
{
    expect_one("{'properties':{'b':{'type':'boolean'}}}", "{'b':'true'}", "b",
               "FieldValueTypeInvalid",
               "Invalid value: \"string\": b in body must be of type boolean: \"string\"");
    expect_one("{'properties':{'o':{'type':'object'}}}", "{'o':[]}", "o", "FieldValueTypeInvalid",
               "Invalid value: \"array\": o in body must be of type object: \"array\"");
    expect_one("{'properties':{'a':{'type':'array'}}}", "{'a':{}}", "a", "FieldValueTypeInvalid",
               "Invalid value: \"object\": a in body must be of type array: \"object\"");
}

Test(schema_types, type_error_stops_other_checks_for_that_value)
{
    expect_one("{'properties':{'s':{'type':'string','enum':['a'],'minLength':3}}}", "{'s':1}", "s",
               "FieldValueTypeInvalid",
               "Invalid value: \"integer\": s in body must be of type string: \"integer\"");
}

Test(schema_types, null_where_not_nullable_is_a_type_error)
{
    expect_one("{'properties':{'s':{'type':'string'}}}", "{'s':null}", "s", "FieldValueTypeInvalid",
               "Invalid value: \"null\": s in body must be of type string: \"null\"");
}

Test(schema_types, null_allowed_when_nullable_or_defaulted_or_untyped)
{
    expect_valid("{'properties':{'s':{'type':'string','nullable':true,'enum':['a']}}}",
                 "{'s':null}");
    expect_valid("{'properties':{'s':{'type':'string','default':'x'}}}", "{'s':null}");
    expect_valid("{'properties':{'s':{'x-kubernetes-preserve-unknown-fields':true}}}",
                 "{'s':null}");
}

Test(schema_types, int_or_string)
{
    const char *s =
        "{'properties':{'p':{'x-kubernetes-int-or-string':true,'pattern':'^[0-9]+%$'}}}";
    expect_valid(s, "{'p':8080}");
    expect_valid(s, "{'p':'25%'}");
    expect_one(s, "{'p':true}", "p", "FieldValueTypeInvalid",
               "Invalid value: \"boolean\": p in body must be of type integer,string: "
               "\"boolean\"");
    expect_one(s, "{'p':1.5}", "p", "FieldValueTypeInvalid",
               "Invalid value: \"number\": p in body must be of type integer,string: \"number\"");
    expect_one(s, "{'p':'x'}", "p", "FieldValueInvalid",
               "Invalid value: \"x\": p in body should match '^[0-9]+%$'");
}

Test(schema_types, preserve_unknown_without_type_accepts_anything)
{
    const char *s = "{'properties':{'any':{'x-kubernetes-preserve-unknown-fields':true}}}";
    expect_valid(s, "{'any':'s'}");
    expect_valid(s, "{'any':[1,{'a':null}]}");
    expect_valid(s, "{'any':{'deep':{'x':1}}}");
    expect_valid(s, "{'any':2.5}");
}

Test(schema_types, no_schema_or_no_causes_array)
{
    json_t *obj = J("{'a':1}");
    json_t *schema = J("{'properties':{'a':{'type':'string'}}}");
    cr_assert_eq(fakeapi__schema_validate(NULL, obj, NULL), 0);
    cr_assert_eq(fakeapi__schema_validate(schema, obj, NULL), 1, "counts without a list");
    cr_assert_eq(fakeapi__schema_validate(schema, NULL, NULL), 0);
    json_decref(obj);
    json_decref(schema);
}

/* ---- numbers ------------------------------------------------------------- */

Test(schema_numbers, exclusive_bounds)
{
    const char *s = "{'properties':{'n':{'type':'integer','minimum':1,'exclusiveMinimum':true,"
                    "'maximum':5,'exclusiveMaximum':true}}}";
    expect_valid(s, "{'n':2}");
    expect_one(s, "{'n':1}", "n", "FieldValueInvalid",
               "Invalid value: 1: n in body should be greater than 1");
    expect_one(s, "{'n':5}", "n", "FieldValueInvalid",
               "Invalid value: 5: n in body should be less than 5");
}

Test(schema_numbers, bounds_print_like_go_floats)
{
    expect_one("{'properties':{'n':{'type':'number','minimum':1}}}", "{'n':0.5}", "n",
               "FieldValueInvalid",
               "Invalid value: 0.5: n in body should be greater than or equal to 1");
    expect_one("{'properties':{'n':{'type':'integer','maximum':1000000}}}", "{'n':5000000}", "n",
               "FieldValueInvalid",
               "Invalid value: 5e+06: n in body should be less than or equal to 1e+06");
    expect_one("{'properties':{'n':{'type':'number','maximum':0.05}}}", "{'n':0.1}", "n",
               "FieldValueInvalid",
               "Invalid value: 0.1: n in body should be less than or equal to 0.05");
}

Test(schema_numbers, multiple_of)
{
    const char *s = "{'properties':{'n':{'type':'number','multipleOf':0.5},"
                    "'i':{'type':'integer','multipleOf':3}}}";
    expect_valid(s, "{'n':1.5,'i':9}");
    expect_one(s, "{'i':10}", "i", "FieldValueInvalid",
               "Invalid value: 10: i in body should be a multiple of 3");
    expect_one(s, "{'n':0.3}", "n", "FieldValueInvalid",
               "Invalid value: 0.3: n in body should be a multiple of 0.5");
}

Test(schema_numbers, int32_format_range)
{
    const char *s = "{'properties':{'n':{'type':'integer','format':'int32'}}}";
    expect_valid(s, "{'n':2147483647}");
    expect_one(s, "{'n':2147483648}", "n", "FieldValueTypeInvalid",
               "Invalid value: 2147483648: n in body must be of type int32");
    expect_valid("{'properties':{'n':{'type':'integer','format':'int64'}}}",
                 "{'n':9223372036854775807}");
}

/* ---- strings ------------------------------------------------------------- */

Test(schema_strings, max_length_counts_characters_and_says_byte_for_one)
{
    const char *s = "{'properties':{'s':{'type':'string','maxLength':5}}}";
    expect_valid(s, "{'s':'h\\u00e9llo'}");
    expect_one(s, "{'s':'abcdef'}", "s", "FieldValueTooLong",
               "Too long: may not be more than 5 bytes");
    expect_one("{'properties':{'s':{'type':'string','maxLength':1}}}", "{'s':'ab'}", "s",
               "FieldValueTooLong", "Too long: may not be more than 1 byte");
}

Test(schema_strings, pattern_anchoring_and_translation)
{
    const char *s = "{'properties':{'name':{'type':'string','pattern':'^[a-z]+$'},"
                    "'id':{'type':'string','pattern':'^(?:\\\\w+)-[\\\\d.]+$'}}}";
    expect_valid(s, "{'name':'abc','id':'a_1-1.2'}");
    expect_one(s, "{'name':'ab1'}", "name", "FieldValueInvalid",
               "Invalid value: \"ab1\": name in body should match '^[a-z]+$'");
    expect_one(s, "{'id':'a-1x'}", "id", "FieldValueInvalid",
               "Invalid value: \"a-1x\": id in body should match '^(?:\\w+)-[\\d.]+$'");
}

Test(schema_strings, quoted_values_escape_like_go)
{
    expect_one("{'properties':{'s':{'type':'string','enum':['a']}}}", "{'s':'x\\\"y\\n'}", "s",
               "FieldValueNotSupported",
               "Unsupported value: \"x\\\"y\\n\": supported values: \"a\"");
}

Test(schema_strings, bad_pattern_is_an_internal_error)
{
    json_t *causes = check("{'properties':{'s':{'type':'string','pattern':'(['}}}", "{'s':'x'}");
    cr_assert_eq(json_array_size(causes), 1);
    const json_t *c = json_array_get(causes, 0);
    cr_assert_str_eq(json_string_value(json_object_get(c, "reason")), "InternalError");
    cr_assert_str_eq(json_string_value(json_object_get(c, "field")), "s");
    cr_assert(strstr(json_string_value(json_object_get(c, "message")), "invalid pattern '(['"));
    json_decref(causes);
}

Test(schema_strings, date_time_and_date_formats)
{
    const char *s = "{'properties':{'t':{'type':'string','format':'date-time'},"
                    "'d':{'type':'string','format':'date'},'u':{'type':'string','format':'x'}}}";
    expect_valid(s, "{'t':'2024-01-02T03:04:05Z','d':'2024-01-02','u':'anything'}");
    expect_valid(s, "{'t':'2024-01-02T03:04:05.123456+01:00'}");
    expect_one(s, "{'t':'2024-01-02T03:04:05'}", "t", "FieldValueTypeInvalid",
               "Invalid value: \"2024-01-02T03:04:05\": t in body must be of type date-time: "
               "\"2024-01-02T03:04:05\"");
    expect_one(s, "{'d':'2024-1-2'}", "d", "FieldValueTypeInvalid",
               "Invalid value: \"2024-1-2\": d in body must be of type date: \"2024-1-2\"");
}

Test(schema_strings, huge_values_give_bounded_valid_messages)
{
    /* 40000 two-byte characters: quoted twice they pass the message cap */
    size_t n = 40000;
    char *obj = malloc(n * 2 + 16);
    strcpy(obj, "{'s':'");
    for (size_t i = 0; i < n; i++)
        memcpy(obj + 6 + 2 * i, "\xc3\xa9", 2);
    strcpy(obj + 6 + 2 * n, "'}");
    json_t *causes =
        check("{'properties':{'s':{'type':'string','pattern':'^a','format':'date'}}}", obj);
    cr_assert_eq(json_array_size(causes), 2, "counted causes must all be in the list");
    const char *msg = json_string_value(json_object_get(json_array_get(causes, 1), "message"));
    cr_assert(strlen(msg) < 64 * 1024 && strlen(msg) > 60000);
    json_decref(causes);
    free(obj);
}

/* ---- enums, arrays, objects ---------------------------------------------- */

Test(schema_enum, non_string_values_are_quoted_json)
{
    expect_one("{'properties':{'n':{'type':'integer','enum':[1,2]}}}", "{'n':3}", "n",
               "FieldValueNotSupported", "Unsupported value: 3: supported values: \"1\", \"2\"");
    expect_valid("{'properties':{'o':{'type':'object','enum':[{'a':1}]}}}", "{'o':{'a':1}}");
}

Test(schema_arrays, min_and_max_items)
{
    const char *s = "{'properties':{'l':{'type':'array','minItems':2,'maxItems':3,"
                    "'items':{'type':'integer'}}}}";
    expect_valid(s, "{'l':[1,2]}");
    expect_one(s, "{'l':[1]}", "l", "FieldValueInvalid",
               "Invalid value: 1: l in body should have at least 2 items");
    expect_one(s, "{'l':[1,2,3,4]}", "l", "FieldValueTooMany",
               "Too many: 4: must have at most 3 items");
    expect_one("{'properties':{'l':{'type':'array','maxItems':1}}}", "{'l':[1,2]}", "l",
               "FieldValueTooMany", "Too many: 2: must have at most 1 item");
}

Test(schema_arrays, nested_arrays_of_arrays)
{
    expect_one("{'properties':{'m':{'type':'array','items':{'type':'array',"
               "'items':{'type':'object','properties':{'v':{'type':'integer','maximum':1}}}}}}}",
               "{'m':[[],[{'v':1},{'v':2}]]}", "m[1][1].v", "FieldValueInvalid",
               "Invalid value: 2: m[1][1].v in body should be less than or equal to 1");
}

Test(schema_objects, min_and_max_properties)
{
    const char *s = "{'properties':{'o':{'type':'object','minProperties':1,'maxProperties':2,"
                    "'additionalProperties':{'type':'string'}}}}";
    expect_valid(s, "{'o':{'a':'1'}}");
    expect_one(s, "{'o':{}}", "o", "FieldValueInvalid",
               "Invalid value: 0: o in body should have at least 1 properties");
    expect_one(s, "{'o':{'a':'1','b':'2','c':'3'}}", "o", "FieldValueTooMany",
               "Too many: 3: must have at most 2 items");
}

Test(schema_objects, additional_properties_schema_validates_values)
{
    expect_one("{'properties':{'labels':{'type':'object','additionalProperties':"
               "{'type':'string','maxLength':3}}}}",
               "{'labels':{'ok':'abc','bad':'abcd'}}", "labels.bad", "FieldValueTooLong",
               "Too long: may not be more than 3 bytes");
}

Test(schema_objects, additional_properties_false_forbids_unknown)
{
    expect_one("{'properties':{'o':{'type':'object','properties':{'a':{'type':'string'}},"
               "'additionalProperties':false}}}",
               "{'o':{'a':'x','zz':1}}", "o.zz", "FieldValueInvalid",
               "Invalid value: \"zz\": o.zz in body is a forbidden property");
}

Test(schema_objects, unknown_fields_are_not_validation_errors)
{
    expect_valid("{'properties':{'o':{'type':'object','properties':{'a':{'type':'string'}}}}}",
                 "{'o':{'a':'x','zz':1},'top':true}");
}

/* ---- composites ---------------------------------------------------------- */

static const char ALL_OF[] =
    "{'properties':{'n':{'type':'integer','allOf':[{'minimum':1},{'maximum':5}]}}}";

Test(schema_composite, all_of_reports_failing_branch_and_summary)
{
    expect_valid(ALL_OF, "{'n':3}");
    json_t *causes = check(ALL_OF, "{'n':9}");
    cr_assert_eq(json_array_size(causes), 2);
    assert_cause(causes, 0, "n", "FieldValueInvalid",
                 "Invalid value: 9: n in body should be less than or equal to 5");
    assert_cause(causes, 1, "n", "FieldValueInvalid",
                 "Invalid value: \"\": \"n\" must validate all the schemas (allOf)");
    json_decref(causes);
}

Test(schema_composite, all_of_none_validated)
{
    json_t *causes =
        check("{'properties':{'s':{'allOf':[{'minLength':5},{'pattern':'^x'}]}}}", "{'s':'ab'}");
    cr_assert_eq(json_array_size(causes), 3);
    assert_cause(
        causes, 2, "s", "FieldValueInvalid",
        "Invalid value: \"\": \"s\" must validate all the schemas (allOf). None validated");
    json_decref(causes);
}

static const char ANY_OF[] = "{'properties':{'v':{'x-kubernetes-int-or-string':true,'anyOf':["
                             "{'type':'integer','minimum':10},{'type':'string','minLength':3}]}}}";

Test(schema_composite, any_of_passes_when_one_branch_passes)
{
    expect_valid(ANY_OF, "{'v':12}");
    expect_valid(ANY_OF, "{'v':'abc'}");
}

Test(schema_composite, any_of_failure_reports_best_branch)
{
    json_t *causes = check(ANY_OF, "{'v':5}");
    cr_assert_eq(json_array_size(causes), 2);
    assert_cause(causes, 0, "v", "FieldValueInvalid",
                 "Invalid value: \"\": \"v\" must validate at least one schema (anyOf)");
    assert_cause(causes, 1, "v", "FieldValueInvalid",
                 "Invalid value: 5: v in body should be greater than or equal to 10");
    json_decref(causes);
}

Test(schema_composite, any_of_picks_the_branch_with_fewest_causes)
{
    json_t *causes = check("{'properties':{'o':{'type':'object','anyOf':["
                           "{'required':['a','b']},{'required':['c']}]}}}",
                           "{'o':{}}");
    cr_assert_eq(json_array_size(causes), 2);
    assert_cause(causes, 1, "o.c", "FieldValueRequired", "Required value");
    json_decref(causes);
}

static const char ONE_OF[] = "{'properties':{'o':{'type':'object','oneOf':["
                             "{'required':['a']},{'required':['b']}]}}}";

Test(schema_composite, one_of_exactly_one)
{
    expect_valid(ONE_OF, "{'o':{'a':1}}");
    expect_one(ONE_OF, "{'o':{'a':1,'b':2}}", "o", "FieldValueInvalid",
               "Invalid value: \"\": \"o\" must validate one and only one schema (oneOf). Found 2 "
               "valid alternatives");
}

Test(schema_composite, one_of_none_valid_includes_branch_causes)
{
    json_t *causes = check(ONE_OF, "{'o':{'c':1}}");
    cr_assert_eq(json_array_size(causes), 2);
    assert_cause(causes, 0, "o", "FieldValueInvalid",
                 "Invalid value: \"\": \"o\" must validate one and only one schema (oneOf). Found "
                 "none valid");
    assert_cause(causes, 1, "o.a", "FieldValueRequired", "Required value");
    json_decref(causes);
}

Test(schema_composite, not_rejects_matching_values)
{
    const char *s = "{'properties':{'s':{'type':'string','not':{'enum':['forbidden']}}}}";
    expect_valid(s, "{'s':'fine'}");
    expect_one(s, "{'s':'forbidden'}", "s", "FieldValueInvalid",
               "Invalid value: \"\": \"s\" must not validate the schema (not)");
}

/* ---- defaulting ---------------------------------------------------------- */

Test(schema_default, fills_absent_fields_only)
{
    json_t *schema = J(CRONTAB);
    json_t *obj = J("{'spec':{'replicas':4}}");
    fakeapi__schema_default(schema, obj);
    expect_json(obj, "{'spec':{'replicas':4,'mode':'Always'}}");
    json_decref(obj);
    json_decref(schema);
}

Test(schema_default, replaces_null_unless_nullable)
{
    json_t *schema = J("{'properties':{'a':{'type':'string','default':'x'},"
                       "'b':{'type':'string','nullable':true,'default':'y'},"
                       "'c':{'type':'string'}}}");
    json_t *obj = J("{'a':null,'b':null,'c':null}");
    fakeapi__schema_default(schema, obj);
    expect_json(obj, "{'a':'x','b':null,'c':null}");
    json_decref(obj);
    json_decref(schema);
}

Test(schema_default, into_arrays_of_objects)
{
    json_t *schema = J(CRONTAB);
    json_t *obj = J("{'spec':{'containers':[{'name':'a'},{'name':'b','port':1}]}}");
    fakeapi__schema_default(schema, obj);
    expect_json(obj, "{'spec':{'replicas':1,'mode':'Always',"
                     "'containers':[{'name':'a','port':8080},{'name':'b','port':1}]}}");
    json_decref(obj);
    json_decref(schema);
}

Test(schema_default, null_array_items_and_map_values)
{
    json_t *schema = J("{'properties':{'l':{'type':'array','items':{'type':'integer','default':7}},"
                       "'m':{'type':'object','additionalProperties':{'type':'object',"
                       "'default':{},'properties':{'x':{'type':'integer','default':1}}}}}}");
    json_t *obj = J("{'l':[1,null],'m':{'k':null,'j':{'x':2},'i':{}}}");
    fakeapi__schema_default(schema, obj);
    expect_json(obj, "{'l':[1,7],'m':{'k':{'x':1},'j':{'x':2},'i':{'x':1}}}");
    json_decref(obj);
    json_decref(schema);
}

Test(schema_default, recurses_into_defaulted_values)
{
    json_t *schema =
        J("{'properties':{'spec':{'type':'object','default':{},"
          "'properties':{'r':{'type':'integer','default':1},"
          "'o':{'type':'object','default':{'k':'v'},"
          "'properties':{'k':{'type':'string'},'z':{'type':'string','default':'d'}}}}}}}");
    json_t *obj = J("{}");
    fakeapi__schema_default(schema, obj);
    expect_json(obj, "{'spec':{'r':1,'o':{'k':'v','z':'d'}}}");
    json_decref(obj);
    json_decref(schema);
}

Test(schema_default, copies_are_deep)
{
    json_t *schema = J("{'properties':{'o':{'type':'object','default':{'k':[1]}}}}");
    json_t *a = J("{}"), *b = J("{}");
    fakeapi__schema_default(schema, a);
    json_array_append_new(json_object_get(json_object_get(a, "o"), "k"), json_integer(2));
    fakeapi__schema_default(schema, b);
    expect_json(b, "{'o':{'k':[1]}}");
    expect_json(schema, "{'properties':{'o':{'type':'object','default':{'k':[1]}}}}");
    json_decref(a);
    json_decref(b);
    json_decref(schema);
}

Test(schema_default, leaves_values_of_other_types_alone)
{
    json_t *schema = J(CRONTAB);
    json_t *obj = J("{'spec':'not an object'}");
    fakeapi__schema_default(schema, obj);
    expect_json(obj, "{'spec':'not an object'}");
    fakeapi__schema_default(NULL, obj);
    expect_json(obj, "{'spec':'not an object'}");
    json_decref(obj);
    json_decref(schema);
}

/* ---- pruning ------------------------------------------------------------- */

Test(schema_prune, keeps_root_meta_and_drops_unknown)
{
    json_t *schema = J("{'type':'object','properties':{'spec':{'type':'object',"
                       "'properties':{'a':{'type':'string'}}}}}");
    json_t *obj = J("{'apiVersion':'v','kind':'K','metadata':{'name':'n','x':1},"
                    "'spec':{'a':'1','b':2},'extra':{}}");
    fakeapi__schema_prune(schema, obj);
    expect_json(obj, "{'apiVersion':'v','kind':'K','metadata':{'name':'n','x':1},"
                     "'spec':{'a':'1'}}");
    json_decref(obj);
    json_decref(schema);
}

Test(schema_prune, nested_unknown_fields_in_array_items)
{
    json_t *schema = J(CRONTAB);
    json_t *obj = J("{'spec':{'containers':[{'name':'a','bogus':1,'tags':['t']},{'x':{}}]}}");
    fakeapi__schema_prune(schema, obj);
    expect_json(obj, "{'spec':{'containers':[{'name':'a','tags':['t']},{}]}}");
    json_decref(obj);
    json_decref(schema);
}

Test(schema_prune, preserve_unknown_keeps_unknown_but_prunes_known)
{
    json_t *schema = J("{'properties':{'status':{'type':'object',"
                       "'x-kubernetes-preserve-unknown-fields':true,'properties':{"
                       "'cond':{'type':'object','properties':{'ok':{'type':'boolean'}}}}}}}");
    json_t *obj = J("{'status':{'free':{'a':1},'cond':{'ok':true,'junk':1}}}");
    fakeapi__schema_prune(schema, obj);
    expect_json(obj, "{'status':{'free':{'a':1},'cond':{'ok':true}}}");
    json_decref(obj);
    json_decref(schema);
}

Test(schema_prune, embedded_resource_keeps_its_meta)
{
    json_t *schema = J("{'properties':{'template':{'type':'object',"
                       "'x-kubernetes-embedded-resource':true,'properties':{"
                       "'spec':{'type':'object','properties':{'n':{'type':'integer'}}}}},"
                       "'plain':{'type':'object','properties':{}}}}");
    json_t *obj = J("{'template':{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
                    "'spec':{'n':1,'m':2},'other':1},'plain':{'kind':'X'}}");
    fakeapi__schema_prune(schema, obj);
    expect_json(obj, "{'template':{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
                     "'spec':{'n':1}},'plain':{}}");
    json_decref(obj);
    json_decref(schema);
}

Test(schema_prune, additional_properties_schema_and_true)
{
    json_t *schema = J("{'properties':{'m':{'type':'object','additionalProperties':{"
                       "'type':'object','properties':{'a':{'type':'integer'}}}},"
                       "'free':{'type':'object','additionalProperties':true}}}");
    json_t *obj = J("{'m':{'k':{'a':1,'b':2}},'free':{'x':{'y':1}}}");
    fakeapi__schema_prune(schema, obj);
    expect_json(obj, "{'m':{'k':{'a':1}},'free':{'x':{'y':1}}}");
    json_decref(obj);
    json_decref(schema);
}

Test(schema_prune, preserve_at_root_keeps_everything)
{
    json_t *schema = J("{'type':'object','x-kubernetes-preserve-unknown-fields':true}");
    json_t *obj = J("{'a':{'b':[1,{'c':2}]},'kind':'K'}");
    fakeapi__schema_prune(schema, obj);
    expect_json(obj, "{'a':{'b':[1,{'c':2}]},'kind':'K'}");
    fakeapi__schema_prune(NULL, obj);
    expect_json(obj, "{'a':{'b':[1,{'c':2}]},'kind':'K'}");
    json_decref(obj);
    json_decref(schema);
}

Test(schema_prune, nulls_neither_nullable_nor_defaulted)
{
    json_t *schema =
        J("{'properties':{'a':{'type':'string'},'b':{'type':'string','nullable':true},"
          "'c':{'type':'string','default':'x'},'l':{'type':'array','items':"
          "{'type':'string'}},'o':{'type':'object','properties':{'d':{'type':"
          "'integer'}}},'m':{'type':'object','additionalProperties':{'type':'string'}},"
          "'free':{'x-kubernetes-preserve-unknown-fields':true}}}");
    json_t *obj = J("{'a':null,'b':null,'c':null,'l':[null],'o':{'d':null},'m':{'k':null},"
                    "'free':{'n':null},'unknown':null}");
    fakeapi__schema_prune_nulls(schema, obj);
    expect_json(obj, "{'b':null,'c':null,'l':[null],'o':{},'m':{},'free':{'n':null},"
                     "'unknown':null}");
    fakeapi__schema_prune_nulls(NULL, obj);
    json_decref(obj);
    json_decref(schema);
}

Test(schema_arrays, list_type_set_items_unique)
{
    const char *s = "{'properties':{'l':{'type':'array','x-kubernetes-list-type':'set',"
                    "'items':{'type':'string'}}}}";
    expect_valid(s, "{'l':['a','b','c']}");
    /* each duplicated value once, at its second appearance */
    json_t *causes = check(s, "{'l':['a','b','a','a','b']}");
    cr_assert_eq(json_array_size(causes), 2);
    assert_cause(causes, 0, "l[2]", "FieldValueDuplicate", "Duplicate value: \"a\"");
    assert_cause(causes, 1, "l[4]", "FieldValueDuplicate", "Duplicate value: \"b\"");
    json_decref(causes);
    expect_valid("{'properties':{'l':{'type':'array','items':{'type':'string'}}}}",
                 "{'l':['a','a']}");
}

Test(schema_arrays, list_type_map_keys_unique)
{
    const char *s = "{'properties':{'l':{'type':'array','x-kubernetes-list-type':'map',"
                    "'x-kubernetes-list-map-keys':['name'],'items':{'type':'object',"
                    "'properties':{'name':{'type':'string'},'port':{'type':'integer'}}}}}}";
    expect_valid(s, "{'l':[{'name':'a','port':1},{'name':'b','port':1}]}");
    expect_one(s, "{'l':[{'name':'a','port':1},{'name':'a','port':2}]}", "l[1]",
               "FieldValueDuplicate", "Duplicate value: {\"name\":\"a\"}");
}

/* ---- the public functions (fakeapi.h) ------------------------------------ */

/* A CronTab-like schema: a required spec with a defaulted, bounded size and
 * a patterned name. */
#define SCHEMA                                                                                     \
    "{'type':'object','properties':{'spec':{'type':'object','required':['size'],"                  \
    "'properties':{'size':{'type':'integer','minimum':1,'maximum':10},"                            \
    "'mode':{'type':'string','default':'fast'},"                                                   \
    "'name':{'type':'string','pattern':'^[a-z]\\\\d+$'}}}},'required':['spec']}"

/* fakeapi_schema_validate finds exactly one cause, with these contents. */
static void public_one(const json_t *schema, const json_t *obj, const char *field,
                       const char *reason, const char *message)
{
    json_t *causes = NULL;
    cr_assert_eq(fakeapi_schema_validate(schema, obj, &causes), FAKEAPI_ERR_INVALID);
    cr_assert_eq(json_array_size(causes), 1);
    assert_cause(causes, 0, field, reason, message);
    json_decref(causes);
}

Test(schema_public, valid_object_is_pruned_and_defaulted)
{
    json_t *s = J(SCHEMA);
    json_t *obj = J("{'apiVersion':'x/v1','kind':'CronTab','metadata':{'name':'a'},"
                    "'spec':{'size':3,'name':'a12','extra':1,'mode':null},'junk':true}");
    json_t *sentinel = json_string("untouched"), *causes = sentinel;
    cr_assert_eq(fakeapi_schema_admit(s, obj, &causes), 0);
    cr_assert_null(causes, "no causes for a valid object");
    /* unknown fields pruned, the null defaulted, metadata kept */
    expect_json(obj, "{'apiVersion':'x/v1','kind':'CronTab','metadata':{'name':'a'},"
                     "'spec':{'size':3,'name':'a12','mode':'fast'}}");
    json_decref(sentinel);
    json_decref(obj);
    json_decref(s);
}

Test(schema_public, invalid_object_gets_the_servers_causes)
{
    json_t *s = J(SCHEMA);
    json_t *obj = J("{'spec':{'size':11,'name':'A1'}}");
    json_t *causes = NULL;
    cr_assert_eq(fakeapi_schema_admit(s, obj, &causes), FAKEAPI_ERR_INVALID);
    cr_assert(json_is_array(causes));
    cr_assert_eq(json_array_size(causes), 2);
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
    public_one(s, empty, "spec.size", "FieldValueRequired", "Required value");
    json_decref(empty);
    json_decref(obj);
    json_decref(s);
}

Test(schema_public, store_and_validate_separately)
{
    json_t *s = J(SCHEMA);
    json_t *obj = J("{'spec':{'size':0,'unknown':'x'}}");
    /* validate alone neither prunes nor defaults */
    public_one(s, obj, "spec.size", "FieldValueInvalid",
               "Invalid value: 0: spec.size in body should be greater than or equal to 1");
    cr_assert_not_null(json_object_get(json_object_get(obj, "spec"), "unknown"));
    /* store alone does not validate: the bad size stays */
    cr_assert_eq(fakeapi_schema_store(s, obj), 0);
    expect_json(obj, "{'spec':{'size':0,'mode':'fast'}}");
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

Test(schema_public, bad_arguments)
{
    json_t *s = J(SCHEMA), *obj = J("{'spec':{'size':3,'x':1}}"), *arr = json_array();
    json_t *sentinel = json_string("untouched"), *causes = sentinel;
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
    expect_json(obj, "{'spec':{'size':3,'x':1}}");
    json_decref(sentinel);
    json_decref(arr);
    json_decref(obj);
    json_decref(s);
}

Test(schema_public, pattern_match)
{
    cr_assert_eq(fakeapi_schema_pattern_match("^[a-z]\\d+$", "a12"), 1);
    cr_assert_eq(fakeapi_schema_pattern_match("^[a-z]\\d+$", "a1b"), 0);
    cr_assert_eq(fakeapi_schema_pattern_match("(?:ab)+", "xxabab"), 1, "searched, not anchored");
    cr_assert_eq(fakeapi_schema_pattern_match("^\\w+\\s\\S$", "a_1 z"), 1);
    cr_assert_eq(fakeapi_schema_pattern_match("([", "x"), FAKEAPI_ERR_INVALID);
    cr_assert_eq(fakeapi_schema_pattern_match(NULL, "x"), FAKEAPI_ERR_INVALID);
    cr_assert_eq(fakeapi_schema_pattern_match("x", NULL), FAKEAPI_ERR_INVALID);
}
