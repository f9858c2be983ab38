/*
 * test_hunt_gen.c - the CRD input generator (scenarios/hunt_gen.h): each
 * schema construct yields valid and invalid changes of the right kind,
 * instances are minimal and valid, output is deterministic and bounded, and
 * odd schemas neither crash nor run away.
 */
#include <criterion/criterion.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hunt_gen.h"
#include "hunt_gen_int.h"

/* JSON with ' for " (no test string needs a '). */
static json_t *J(const char *text)
{
    char *buf = strdup(text);
    for (char *p = buf; *p; p++)
        if (*p == '\'')
            *p = '"';
    json_error_t e;
    json_t *v = json_loads(buf, JSON_DECODE_ANY, &e);
    cr_assert_not_null(v, "bad test JSON: %s: %s", e.text, buf);
    free(buf);
    return v;
}

typedef struct {
    scn_gen_change *c;
    size_t n;
} changes;

static changes gen(const char *schema, const char *base, bool no_invalid)
{
    json_t *s = J(schema), *b = J(base);
    scn_gen_options o = {.no_invalid = no_invalid};
    scn_error err;
    changes ch = {0};
    int rc = scn_gen_changes(s, b, &o, &ch.c, &ch.n, &err);
    cr_assert_eq(rc, 0, "scn_gen_changes: %s", err.message);
    json_decref(s);
    json_decref(b);
    return ch;
}

/* The change of field with this value (JSON text; "-" = removal) and class, or NULL. */
static const scn_gen_change *find(const changes *ch, const char *field, const char *value,
                                  bool valid)
{
    json_t *want = strcmp(value, "-") ? J(value) : NULL;
    const scn_gen_change *found = NULL;
    for (size_t i = 0; i < ch->n && !found; i++) {
        const scn_gen_change *c = &ch->c[i];
        if (strcmp(c->field, field) || c->valid != valid)
            continue;
        if ((!want && !c->value) || (want && c->value && json_equal(want, c->value)))
            found = c;
    }
    json_decref(want);
    return found;
}

static size_t count(const changes *ch, const char *field, bool valid)
{
    size_t n = 0;
    for (size_t i = 0; i < ch->n; i++)
        n += !strcmp(ch->c[i].field, field) && ch->c[i].valid == valid;
    return n;
}

static void dump(const changes *ch)
{
    for (size_t i = 0; i < ch->n; i++) {
        char *v = ch->c[i].value ? json_dumps(ch->c[i].value, JSON_ENCODE_ANY | JSON_COMPACT)
                                 : strdup("-");
        fprintf(stderr, "  %s %s %s = %s (%s)\n", ch->c[i].valid ? "valid  " : "invalid",
                ch->c[i].field, ch->c[i].path, v, ch->c[i].why);
        free(v);
    }
}

static void expect(const changes *ch, const char *field, const char *value, bool valid,
                   const char *why)
{
    const scn_gen_change *c = find(ch, field, value, valid);
    if (!c)
        dump(ch);
    cr_assert_not_null(c, "no %s change of %s to %s", valid ? "valid" : "invalid", field, value);
    if (why)
        cr_assert_str_eq(c->why, why, "%s = %s", field, value);
}

static void expect_none(const changes *ch, const char *field, const char *value, bool valid)
{
    cr_assert_null(find(ch, field, value, valid), "unexpected %s change of %s to %s",
                   valid ? "valid" : "invalid", field, value);
}

#define SPEC(props) "{'type':'object','properties':{'spec':{'type':'object'," props "}}}"

Test(hunt_gen, minimum_gives_the_bound_valid_and_one_below_invalid)
{
    changes ch =
        gen(SPEC("'properties':{'n':{'type':'integer','minimum':3}}"), "{'spec':{'n':5}}", false);
    expect(&ch, "spec.n", "3", true, "minimum");
    expect(&ch, "spec.n", "2", false, "below minimum");
    expect(&ch, "spec.n", "6", true, "increase");
    expect(&ch, "spec.n", "'1'", false, "string for integer");
    expect(&ch, "spec.n", "1.5", false, "number for integer");
    expect(&ch, "spec.n", "-", true, "remove optional");
    expect_none(&ch, "spec.n", "0", true); /* zero is below the minimum */
    scn_gen_changes_free(ch.c, ch.n);
}

Test(hunt_gen, maximum_and_exclusive_bounds)
{
    changes ch = gen(SPEC("'properties':{'n':{'type':'integer','minimum':1,'exclusiveMinimum':true,"
                          "'maximum':5,'exclusiveMaximum':true}}"),
                     "{'spec':{'n':3}}", false);
    expect(&ch, "spec.n", "2", true, "exclusive minimum, just above");
    expect(&ch, "spec.n", "4", true, "exclusive maximum, just below");
    expect(&ch, "spec.n", "1", false, "exclusive minimum itself");
    expect(&ch, "spec.n", "5", false, "exclusive maximum itself");
    scn_gen_changes_free(ch.c, ch.n);
}

Test(hunt_gen, multiple_of)
{
    changes ch = gen(SPEC("'properties':{'n':{'type':'integer','multipleOf':3,'minimum':1}}"),
                     "{'spec':{'n':6}}", false);
    expect(&ch, "spec.n", "3", true, "minimum");
    expect(&ch, "spec.n", "9", true, "increase");
    expect(&ch, "spec.n", "4", false, "not a multiple");
    for (size_t i = 0; i < ch.n; i++)
        if (ch.c[i].valid && json_is_integer(ch.c[i].value))
            cr_assert_eq(json_integer_value(ch.c[i].value) % 3, 0, "%s", ch.c[i].why);
    scn_gen_changes_free(ch.c, ch.n);
}

Test(hunt_gen, number_bounds)
{
    changes ch = gen(SPEC("'properties':{'x':{'type':'number','minimum':0.5,'maximum':2}}"),
                     "{'spec':{}}", false);
    expect(&ch, "spec.x", "0.5", true, "minimum");
    expect(&ch, "spec.x", "2", true, "maximum");
    expect(&ch, "spec.x", "3", false, "above maximum");
    expect(&ch, "spec.x", "-0.5", false, "below minimum");
    scn_gen_changes_free(ch.c, ch.n);
}

Test(hunt_gen, enum_gives_each_member_and_a_non_member)
{
    changes ch = gen(SPEC("'properties':{'c':{'type':'string','enum':['a','b','c']}}"),
                     "{'spec':{'c':'a'}}", false);
    expect(&ch, "spec.c", "'b'", true, "enum value 2 of 3");
    expect(&ch, "spec.c", "'c'", true, "enum value 3 of 3");
    expect_none(&ch, "spec.c", "'a'", true); /* the value it has: no change */
    expect(&ch, "spec.c", "'hunt-not-in-enum'", false, "not in enum");
    expect(&ch, "spec.c", "1", false, "another type");
    scn_gen_changes_free(ch.c, ch.n);

    ch = gen(SPEC("'properties':{'c':{'type':'integer','enum':[1,2]}}"), "{'spec':{}}", false);
    expect(&ch, "spec.c", "1", true, "enum value 1 of 2");
    expect(&ch, "spec.c", "2", true, "enum value 2 of 2");
    expect(&ch, "spec.c", "3", false, "not in enum");
    scn_gen_changes_free(ch.c, ch.n);
}

/* POSIX ERE is enough for the test patterns (no RE2 shorthands). */
static bool matches(const char *pattern, const char *s)
{
    regex_t re;
    cr_assert_eq(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
    bool ok = regexec(&re, s, 0, NULL, 0) == 0;
    regfree(&re);
    return ok;
}

Test(hunt_gen, pattern_gives_matching_and_non_matching_strings)
{
    const char *pat = "^[a-z]+-[0-9]{2}(x|yz)?$";
    char schema[256];
    snprintf(schema, sizeof schema, SPEC("'properties':{'s':{'type':'string','pattern':'%s'}}"),
             pat);
    changes ch = gen(schema, "{'spec':{}}", false);
    size_t good = 0, bad = 0;
    for (size_t i = 0; i < ch.n; i++) {
        if (strcmp(ch.c[i].field, "spec.s") || !json_is_string(ch.c[i].value))
            continue;
        const char *v = json_string_value(ch.c[i].value);
        if (ch.c[i].valid) {
            cr_assert(matches(pat, v), "valid %s does not match", v);
            good++;
        } else {
            cr_assert(!matches(pat, v), "invalid %s matches", v);
            cr_assert_str_eq(ch.c[i].why, "does not match pattern");
            bad++;
        }
    }
    cr_assert_geq(good, 2, "matching strings");
    cr_assert_eq(bad, 1, "one non-matching string");
    scn_gen_changes_free(ch.c, ch.n);
}

Test(hunt_gen, pattern_with_re2_shorthands_and_lengths)
{
    changes ch = gen(SPEC("'properties':{'id':{'type':'string','pattern':'^(?:\\\\w+)-[\\\\d.]+$',"
                          "'minLength':4,'maxLength':6}}"),
                     "{'spec':{}}", false);
    size_t good = 0;
    for (size_t i = 0; i < ch.n; i++) {
        if (!ch.c[i].valid || !json_is_string(ch.c[i].value))
            continue;
        const char *v = json_string_value(ch.c[i].value);
        cr_assert(matches("^[[:alnum:]_]+-[0-9.]+$", v), "%s", v);
        cr_assert(strlen(v) >= 4 && strlen(v) <= 6, "%s", v);
        good++;
    }
    cr_assert_geq(good, 2);
    expect(&ch, "spec.id", "'aaaa-0'", true, "matches pattern, maxLength");
    expect(&ch, "spec.id", "'aaaaa-0'", false, "above maxLength, matches pattern");
    scn_gen_changes_free(ch.c, ch.n);
}

Test(hunt_gen, string_lengths)
{
    changes ch = gen(SPEC("'properties':{'s':{'type':'string','minLength':2,'maxLength':5}}"),
                     "{'spec':{'s':'abc'}}", false);
    expect(&ch, "spec.s", "'hu'", true, "minLength");
    expect(&ch, "spec.s", "'hunta'", true, "maxLength");
    expect(&ch, "spec.s", "'h'", false, "below minLength");
    expect(&ch, "spec.s", "'huntaa'", false, "above maxLength");
    expect(&ch, "spec.s", "'abc-x'", true, "changed");
    expect(&ch, "spec.s", "1", false, "integer for string");
    scn_gen_changes_free(ch.c, ch.n);

    ch = gen(SPEC("'properties':{'s':{'type':'string'}}"), "{'spec':{'s':'abc'}}", false);
    expect(&ch, "spec.s", "''", true, "empty");
    scn_gen_changes_free(ch.c, ch.n);
}

Test(hunt_gen, required_removal_is_invalid_optional_valid)
{
    changes ch = gen(SPEC("'required':['r','d'],'properties':{'r':{'type':'string'},"
                          "'o':{'type':'string'},'d':{'type':'integer','default':4}}"),
                     "{'spec':{'r':'x','o':'y','d':2}}", false);
    expect(&ch, "spec.r", "-", false, "remove required");
    expect(&ch, "spec.o", "-", true, "remove optional");
    expect(&ch, "spec.d", "-", true, "remove required (defaulted)");
    expect(&ch, "spec.r", "null", false, "null for required");
    expect(&ch, "spec.o", "null", true, "null (pruned)");
    expect(&ch, "spec.d", "null", true, "null (defaulted)");
    scn_gen_changes_free(ch.c, ch.n);
}

Test(hunt_gen, nullable)
{
    changes ch = gen(SPEC("'properties':{'n':{'type':'string','nullable':true}}"),
                     "{'spec':{'n':'a'}}", false);
    expect(&ch, "spec.n", "null", true, "null (nullable)");
    scn_gen_changes_free(ch.c, ch.n);
}

Test(hunt_gen, int_or_string_gives_both_kinds)
{
    changes ch = gen(SPEC("'properties':{'p':{'x-kubernetes-int-or-string':true}}"),
                     "{'spec':{'p':1}}", false);
    expect(&ch, "spec.p", "0", true, "zero");
    expect(&ch, "spec.p", "'50%'", true, "string for int-or-string");
    expect(&ch, "spec.p", "true", false, "boolean for int-or-string");
    expect(&ch, "spec.p", "1.5", false, "number for int-or-string");
    expect_none(&ch, "spec.p", "'1'", false); /* a string is fine here */
    scn_gen_changes_free(ch.c, ch.n);
}

Test(hunt_gen, preserve_unknown_fields)
{
    changes ch = gen(SPEC("'x-kubernetes-preserve-unknown-fields':true,'properties':{"
                          "'any':{'x-kubernetes-preserve-unknown-fields':true}}"),
                     "{'spec':{}}", false);
    expect(&ch, "spec.huntExtra", "'hunt'", true, "unknown field kept");
    expect(&ch, "spec.any", "{'hunt':1}", true, "any value: an object");
    expect(&ch, "spec.any", "1", true, "any value: an integer");
    cr_assert_eq(count(&ch, "spec.any", false), 0, "anything goes");
    scn_gen_changes_free(ch.c, ch.n);
}

Test(hunt_gen, nested_object_added_whole_at_its_missing_parent)
{
    changes ch = gen(SPEC("'properties':{'a':{'type':'object','required':['b'],'properties':{"
                          "'b':{'type':'integer','minimum':1},'c':{'type':'string'}}}}"),
                     "{'spec':{}}", false);
    const scn_gen_change *c = find(&ch, "spec.a.b", "{'b':2}", true);
    if (!c)
        dump(&ch);
    cr_assert_not_null(c);
    cr_assert_str_eq(c->path, "/spec/a");
    cr_assert_str_eq(c->why, "increase");
    expect(&ch, "spec.a", "{'b':1}", true, "add field");
    expect(&ch, "spec.a.b", "{'b':0}", false, "below minimum");
    expect(&ch, "spec.a", "{}", false, "empty object, missing required");
    expect(&ch, "spec.a.c", "{'b':1,'c':''}", true, "empty");
    scn_gen_changes_free(ch.c, ch.n);

    /* two levels missing, each required by the one above */
    ch = gen(SPEC("'properties':{'a':{'type':'object','required':['b'],'properties':{"
                  "'b':{'type':'object','required':['c','l'],'properties':{'c':{'type':"
                  "'integer','maximum':0},'l':{'type':'array','minItems':1,'items':{'type':"
                  "'integer'}}}}}}}"),
             "{'spec':{}}", false);
    expect(&ch, "spec.a.b.c", "{'b':{'c':-1,'l':[0]}}", true, "decrease");
    expect(&ch, "spec.a.b.c", "{'b':{'c':1,'l':[0]}}", false, "above maximum");
    expect(&ch, "spec.a.b.l[1]", "{'b':{'c':0,'l':[0,1]}}", true, "one");
    expect(&ch, "spec.a.b", "{'b':{}}", false, "empty object, missing required");
    scn_gen_changes_free(ch.c, ch.n);
}

Test(hunt_gen, arrays_of_objects)
{
    changes ch = gen(SPEC("'properties':{'l':{'type':'array','minItems':1,'maxItems':3,'items':{"
                          "'type':'object','required':['name'],'properties':{"
                          "'name':{'type':'string','minLength':1},'port':{'type':'integer'}}}}}"),
                     "{'spec':{'l':[{'name':'a'}]}}", false);
    expect(&ch, "spec.l[1]", "{'name':'hunt'}", true, "add item");
    expect(&ch, "spec.l[0]", "-", false, "remove item, below minItems");
    expect(&ch, "spec.l", "[]", false, "empty list, below minItems");
    expect(&ch, "spec.l[0].name", "''", false, "below minLength");
    expect(&ch, "spec.l[0].name", "-", false, "remove required");
    expect(&ch, "spec.l[0].port", "0", true, "zero");
    expect(&ch, "spec.l[1].port", "{'name':'hunt','port':0}", true, "zero");
    expect(&ch, "spec.l[0]", "null", false, "null item");
    const scn_gen_change *max = NULL;
    for (size_t i = 0; i < ch.n; i++)
        if (!strcmp(ch.c[i].why, "maxItems items"))
            max = &ch.c[i];
    cr_assert_not_null(max);
    cr_assert_eq(json_array_size(max->value), 3);
    cr_assert(max->valid);
    expect(&ch, "spec.l", "[{'name':'a'},{'name':'hunt'},{'name':'h'},{'name':'huntaaaa'}]", false,
           "above maxItems");
    scn_gen_changes_free(ch.c, ch.n);
}

Test(hunt_gen, maps_via_additional_properties)
{
    changes ch = gen(SPEC("'properties':{'m':{'type':'object','maxProperties':2,"
                          "'additionalProperties':{'type':'string','maxLength':3}}}"),
                     "{'spec':{'m':{'a':'x'}}}", false);
    expect(&ch, "spec.m.k1", "'hun'", true, "maxLength");
    expect(&ch, "spec.m.k1", "'hunt'", false, "above maxLength");
    expect(&ch, "spec.m.a", "-", true, "remove optional");
    expect(&ch, "spec.m.a", "'hunt'", false, "above maxLength");
    scn_gen_changes_free(ch.c, ch.n);
}

Test(hunt_gen, booleans_and_formats)
{
    changes ch = gen(SPEC("'properties':{'b':{'type':'boolean'},'t':{'type':'string','format':"
                          "'date-time'},'u':{'type':'string','format':'uuid'}}"),
                     "{'spec':{'b':false}}", false);
    expect(&ch, "spec.b", "true", true, "true");
    expect(&ch, "spec.b", "'true'", false, "string for boolean");
    expect(&ch, "spec.t", "'2024-01-02T03:04:05Z'", true, "format example");
    expect(&ch, "spec.t", "'not-a-date'", false, "not a date");
    expect(&ch, "spec.u", "'0e3f9a86-1f0c-4d2b-9c52-3b7f2f1b5c1e'", true, "format example");
    cr_assert_eq(count(&ch, "spec.u", true), 1, "only the example for a format we cannot check");
    scn_gen_changes_free(ch.c, ch.n);
}

Test(hunt_gen, no_invalid_and_root_fields_left_alone)
{
    changes ch = gen("{'type':'object','properties':{'metadata':{'type':'object'},'status':{"
                     "'type':'object','properties':{'r':{'type':'integer'}}},'spec':{'type':"
                     "'object','properties':{'n':{'type':'integer','minimum':0}}}}}",
                     "{'metadata':{'name':'x'},'spec':{'n':1},'status':{'r':1}}", true);
    cr_assert_gt(ch.n, 2);
    for (size_t i = 0; i < ch.n; i++) {
        cr_assert(ch.c[i].valid, "%s %s", ch.c[i].field, ch.c[i].why);
        cr_assert(!strncmp(ch.c[i].path, "/spec", 5), "%s", ch.c[i].path);
    }
    scn_gen_changes_free(ch.c, ch.n);
}

Test(hunt_gen, instance_is_minimal_and_valid)
{
    json_t *s = J(SPEC("'required':['n','l','s','e'],'properties':{'n':{'type':'integer',"
                       "'minimum':2},'l':{'type':'array','minItems':2,'items':{'type':'string',"
                       "'pattern':'^x[0-9]$'}},'s':{'type':'string','minLength':6},'e':{'enum':"
                       "['b','c'],'type':'string'},'d':{'type':'integer','default':7},"
                       "'o':{'type':'string'}}"));
    json_t *inst = NULL, *want = J("{'spec':{'n':2,'l':['x0','x1'],'s':'huntaa','e':'b','d':7}}");
    scn_error err;
    cr_assert_eq(scn_gen_instance(s, &inst, &err), 0, "%s", err.message);
    char *got = json_dumps(inst, JSON_COMPACT | JSON_SORT_KEYS);
    cr_assert(json_equal(inst, want), "got %s", got);
    free(got);
    cr_assert(scn_gen_check(s, inst, NULL, 0));
    json_decref(inst);
    json_decref(want);
    json_decref(s);
}

Test(hunt_gen, unsatisfiable_schema_is_an_input_error)
{
    json_t *s = J(SPEC("'required':['n'],'properties':{'n':{'type':'integer','minimum':5,"
                       "'maximum':3}}"));
    json_t *inst = NULL;
    scn_error err;
    cr_assert_eq(scn_gen_instance(s, &inst, &err), SCN_ERR_INPUT);
    cr_assert_null(inst);
    cr_assert(strstr(err.message, "spec.n"), "%s", err.message);
    json_decref(s);

    /* an invalid base: an error naming the field, nothing generated */
    s = J(SPEC("'properties':{'n':{'type':'integer'}}"));
    json_t *b = J("{'spec':{'n':'x'}}");
    scn_gen_change *c = NULL;
    size_t n = 7;
    cr_assert_eq(scn_gen_changes(s, b, NULL, &c, &n, &err), SCN_ERR_INPUT);
    cr_assert_null(c);
    cr_assert_eq(n, 7);
    cr_assert(strstr(err.message, "spec.n: Invalid value"), "%s", err.message);
    cr_assert(strstr(err.message, "must be of type integer"), "%s", err.message);
    json_decref(s);
    json_decref(b);
}

Test(hunt_gen, deterministic)
{
    const char *schema = SPEC("'properties':{'n':{'type':'integer','minimum':0,'maximum':9},"
                              "'s':{'type':'string','pattern':'^[a-c]{1,3}$'},'l':{'type':'array',"
                              "'items':{'type':'integer'}}}");
    json_t *s = J(schema), *b = J("{'spec':{'n':1,'l':[1]}}");
    scn_gen_options o = {.seed = 42, .seq_len = 3, .max_seqs = 5};
    scn_gen_seq *a = NULL, *c = NULL;
    size_t na = 0, nc = 0;
    cr_assert_eq(scn_gen_sequences(s, b, &o, &a, &na, NULL), 0);
    cr_assert_eq(scn_gen_sequences(s, b, &o, &c, &nc, NULL), 0);
    cr_assert_eq(na, 5);
    cr_assert_eq(na, nc);
    for (size_t i = 0; i < na; i++) {
        cr_assert_eq(a[i].n, 3);
        cr_assert_eq(a[i].n, c[i].n);
        for (size_t j = 0; j < a[i].n; j++) {
            cr_assert_str_eq(a[i].changes[j].path, c[i].changes[j].path);
            cr_assert_str_eq(a[i].changes[j].why, c[i].changes[j].why);
            cr_assert_eq(a[i].changes[j].valid, c[i].changes[j].valid);
            cr_assert(!a[i].changes[j].value == !c[i].changes[j].value);
            if (a[i].changes[j].value)
                cr_assert(json_equal(a[i].changes[j].value, c[i].changes[j].value));
        }
    }
    scn_gen_seqs_free(a, na);
    scn_gen_seqs_free(c, nc);

    /* max_seqs 0: one sequence starting with each change, in order */
    scn_gen_change *all = NULL;
    size_t nall = 0;
    o.max_seqs = 0;
    o.seq_len = 1;
    cr_assert_eq(scn_gen_changes(s, b, &o, &all, &nall, NULL), 0);
    cr_assert_eq(scn_gen_sequences(s, b, &o, &a, &na, NULL), 0);
    cr_assert_eq(na, nall);
    for (size_t i = 0; i < na; i++) {
        cr_assert_eq(a[i].n, 1);
        cr_assert_str_eq(a[i].changes[0].why, all[i].why);
    }
    scn_gen_seqs_free(a, na);
    scn_gen_changes_free(all, nall);
    json_decref(s);
    json_decref(b);
}

Test(hunt_gen, sequences_follow_the_object)
{
    /* after a valid change the next ones are made against the new object */
    json_t *s = J(SPEC("'properties':{'n':{'type':'integer','minimum':0,'maximum':3}}"));
    json_t *b = J("{'spec':{'n':0}}");
    scn_gen_options o = {.seed = 3, .seq_len = 4};
    scn_gen_seq *q = NULL;
    size_t nq = 0;
    cr_assert_eq(scn_gen_sequences(s, b, &o, &q, &nq, NULL), 0);
    cr_assert_gt(nq, 0);
    for (size_t i = 0; i < nq; i++) {
        json_t *cur = json_deep_copy(b);
        for (size_t j = 0; j < q[i].n; j++) {
            json_t *after = NULL;
            bool valid = false;
            cr_assert_eq(scn_gen_apply(s, cur, &q[i].changes[j], &after, &valid), 0);
            cr_assert_eq(valid, q[i].changes[j].valid, "seq %zu change %zu", i, j);
            if (valid) {
                cr_assert(!json_equal(after, cur), "a valid change changes something");
                json_decref(cur);
                cur = after;
            } else {
                json_decref(after);
            }
        }
        json_decref(cur);
    }
    scn_gen_seqs_free(q, nq);
    json_decref(s);
    json_decref(b);
}

/* Odd schemas: no crash, bounded output. */
Test(hunt_gen, odd_schemas)
{
    static const char *const odd[] = {
        "{}",
        "{'properties':{'spec':{}}}",
        "{'properties':{'spec':{'properties':{'a':{'minimum':'x','maxLength':-5,'enum':3,"
        "'pattern':'([','items':7,'required':'a'}}}}}",
        "{'properties':{'spec':{'type':'array','items':{'type':'array'}}}}",
        "{'properties':{'spec':{'type':'object','properties':{'a':{'type':'array','minItems':"
        "1000000000,'maxItems':1e300}}}}}",
        "{'properties':{'spec':{'type':'string','pattern':'(?=x)a\\\\1\\\\p{L}[z-a]{3,1}'}}}",
        "{'properties':{'spec':{'type':'integer','minimum':-9223372036854775808,"
        "'maximum':9223372036854775807}}}",
        "{'properties':{'spec':{'type':'number','minimum':1e308,'multipleOf':1e-300}}}",
        "{'properties':{'spec':{'type':'object','additionalProperties':{'type':'object',"
        "'additionalProperties':{'type':'array','items':{'type':'object',"
        "'additionalProperties':true}}}}}}",
        "{'properties':{'spec':{'type':'string','pattern':'^(a|b|c|d|e){1000}$','maxLength':"
        "100000}}}",
        "{'properties':{'spec':{'type':'unknown-type','nullable':'yes'}}}",
    };
    for (size_t k = 0; k < sizeof odd / sizeof odd[0]; k++) {
        json_t *s = J(odd[k]), *inst = NULL;
        scn_error err;
        if (scn_gen_instance(s, &inst, &err) == 0) {
            scn_gen_change *c = NULL;
            size_t n = 0;
            int rc = scn_gen_changes(s, inst, NULL, &c, &n, &err);
            cr_assert(rc == 0 || rc == SCN_ERR_INPUT, "schema %zu: %d", k, rc);
            cr_assert_leq(n, SCN_GEN_MAX_CHANGES);
            scn_gen_changes_free(c, n);
            json_decref(inst);
        }
        json_decref(s);
    }
}

Test(hunt_gen, deep_and_wide_schemas_are_bounded)
{
    /* 60 levels of nested objects */
    json_t *s = json_pack("{s:s}", "type", "integer");
    for (int i = 0; i < 60; i++)
        s = json_pack("{s:s, s:{s:o}}", "type", "object", "properties", "a", s);
    json_t *inst = NULL;
    scn_gen_change *c = NULL;
    size_t n = 0;
    cr_assert_eq(scn_gen_instance(s, &inst, NULL), 0);
    cr_assert_eq(scn_gen_changes(s, inst, NULL, &c, &n, NULL), 0);
    cr_assert_gt(n, 0);
    scn_gen_changes_free(c, n);
    json_decref(inst);
    json_decref(s);

    /* 600 fields of 20 values each: capped in total and per field */
    json_t *props = json_object();
    for (int i = 0; i < 600; i++) {
        char k[16];
        snprintf(k, sizeof k, "f%d", i);
        json_object_set_new(props, k,
                            json_pack("{s:s, s:[iiiiiiiiiiiiiiiiiiii]}", "type", "integer", "enum",
                                      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
                                      19, 20));
    }
    s = json_pack("{s:s, s:{s:{s:s, s:o}}}", "type", "object", "properties", "spec", "type",
                  "object", "properties", props);
    json_t *b = json_pack("{s:{}}", "spec");
    cr_assert_eq(scn_gen_changes(s, b, NULL, &c, &n, NULL), 0);
    cr_assert_eq(n, SCN_GEN_MAX_CHANGES);
    changes ch = {c, n};
    cr_assert_eq(count(&ch, "spec.f0", true) + count(&ch, "spec.f0", false), SCN_GEN_MAX_PER_FIELD);
    scn_gen_changes_free(c, n);
    json_decref(b);
    json_decref(s);
}

Test(hunt_gen, pattern_strings)
{
    static const struct {
        const char *pattern, *ere;
    } cases[] = {
        {"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"},
        {"^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$",
         "^([0-9]+|\\*)(/[0-9]+)?([[:space:]]+([0-9]+|\\*)(/[0-9]+)?){4}$"},
        {"^[A-Z][a-z]{2,4}\\.v[0-9]+$", "^[A-Z][a-z]{2,4}\\.v[0-9]+$"},
        {"^[^/]+$", "^[^/]+$"},
        {"(?:ab|cd)+e?", "(ab|cd)+e?"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        json_t *out = json_array(), *v;
        size_t want[2] = {3, 12}, i;
        scn__gen_re_strings(cases[k].pattern, want, 2, out, 10);
        cr_assert_geq(json_array_size(out), 2, "%s", cases[k].pattern);
        json_array_foreach(out, i, v)
        {
            cr_assert(matches(cases[k].ere, json_string_value(v)), "%s: %s", cases[k].pattern,
                      json_string_value(v));
            cr_assert_eq(scn__gen_re_match(cases[k].pattern, json_string_value(v)), 1);
        }
        json_decref(out);
    }
    cr_assert_eq(scn__gen_re_match("([", "x"), -1);
}

Test(hunt_gen, list_types_keep_items_unique)
{
    changes ch = gen(SPEC("'properties':{'s':{'type':'array','x-kubernetes-list-type':'set',"
                          "'items':{'type':'string'}},'m':{'type':'array','x-kubernetes-list-type':"
                          "'map','x-kubernetes-list-map-keys':['name'],'items':{'type':'object',"
                          "'required':['name'],'properties':{'name':{'type':'string'},"
                          "'port':{'type':'integer'}}}}}"),
                     "{'spec':{'s':['hunt'],'m':[{'name':'hunt','port':1}]}}", false);
    expect(&ch, "spec.s", "['hunt','hunt']", false, "duplicate item");
    expect(&ch, "spec.m", "[{'name':'hunt','port':1},{'name':'hunt','port':1}]", false,
           "duplicate key");
    expect(&ch, "spec.m[1]", "{'name':''}", true, "add item");
    expect_none(&ch, "spec.s[1]", "'hunt'", true);
    for (size_t i = 0; i < ch.n; i++) {
        /* every valid list of either kind has distinct items (keys) */
        json_t *after = NULL;
        bool valid = false;
        json_t *b = J("{'spec':{'s':['hunt'],'m':[{'name':'hunt','port':1}]}}");
        json_t *s = J(SPEC("'properties':{'s':{'type':'array','x-kubernetes-list-type':'set',"
                           "'items':{'type':'string'}},'m':{'type':'array',"
                           "'x-kubernetes-list-type':'map','x-kubernetes-list-map-keys':['name'],"
                           "'items':{'type':'object','required':['name'],'properties':{'name':"
                           "{'type':'string'},'port':{'type':'integer'}}}}}"));
        cr_assert_eq(scn_gen_apply(s, b, &ch.c[i], &after, &valid), 0);
        if (valid) {
            const json_t *m = json_object_get(json_object_get(after, "spec"), "m");
            for (size_t x = 0; x < json_array_size(m); x++)
                for (size_t y = 0; y < x; y++)
                    cr_assert(!json_equal(json_object_get(json_array_get(m, x), "name"),
                                          json_object_get(json_array_get(m, y), "name")),
                              "%s %s", ch.c[i].field, ch.c[i].why);
        }
        json_decref(after);
        json_decref(b);
        json_decref(s);
    }
    scn_gen_changes_free(ch.c, ch.n);
}
