/*
 * test_selector.c - label and field selectors: grammar, errors, matching.
 */
#include "selector.h"
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers --------------------------------------------------------------- */

static fakeapi__labelsel *lparse(const char *s)
{
    fakeapi__labelsel *sel = NULL;
    char err[512] = "";
    cr_assert_eq(fakeapi__labelsel_parse(s, &sel, err, sizeof err), 0, "parse '%s': %s", s, err);
    cr_assert_not_null(sel);
    return sel;
}

/* Does selector s match the labels given as JSON text (or NULL for none)? */
static bool lmatch(const char *s, const char *labels_json)
{
    fakeapi__labelsel *sel = lparse(s);
    json_t *labels = NULL;
    if (labels_json) {
        labels = json_loads(labels_json, 0, NULL);
        cr_assert_not_null(labels, "bad test JSON %s", labels_json);
    }
    bool m = fakeapi__labelsel_match(sel, labels);
    json_decref(labels);
    fakeapi__labelsel_free(sel);
    return m;
}

/* Parse must fail, leave *out alone and say something containing needle. */
static void lbad(const char *s, const char *needle)
{
    static int sentinel;
    fakeapi__labelsel *sel = (fakeapi__labelsel *)&sentinel;
    char err[512] = "";
    cr_assert_eq(fakeapi__labelsel_parse(s, &sel, err, sizeof err), -1, "'%s' parsed", s);
    cr_assert_eq((void *)sel, (void *)&sentinel, "out changed on error for '%s'", s);
    cr_assert(strstr(err, needle) != NULL, "'%s': error '%s' lacks '%s'", s, err, needle);
}

static fakeapi__fieldsel *fparse(const char *s)
{
    fakeapi__fieldsel *sel = NULL;
    char err[512] = "";
    cr_assert_eq(fakeapi__fieldsel_parse(s, &sel, err, sizeof err), 0, "parse '%s': %s", s, err);
    cr_assert_not_null(sel);
    return sel;
}

static bool fmatch(const char *s, const char *obj_json)
{
    fakeapi__fieldsel *sel = fparse(s);
    json_t *obj = json_loads(obj_json, 0, NULL);
    cr_assert_not_null(obj, "bad test JSON %s", obj_json);
    bool m = fakeapi__fieldsel_match(sel, obj);
    json_decref(obj);
    fakeapi__fieldsel_free(sel);
    return m;
}

static void fbad(const char *s, const char *needle)
{
    static int sentinel;
    fakeapi__fieldsel *sel = (fakeapi__fieldsel *)&sentinel;
    char err[512] = "";
    cr_assert_eq(fakeapi__fieldsel_parse(s, &sel, err, sizeof err), -1, "'%s' parsed", s);
    cr_assert_eq((void *)sel, (void *)&sentinel, "out changed on error for '%s'", s);
    cr_assert(strstr(err, needle) != NULL, "'%s': error '%s' lacks '%s'", s, err, needle);
}

/* A string of n copies of c, to build long keys and values. */
static char *repeat(char c, size_t n)
{
    char *s = malloc(n + 1);
    cr_assert_not_null(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

static const char *const pod_fields[] = {"metadata.name", "metadata.namespace", "spec.nodeName",
                                         "status.phase", NULL};

#define POD_RUNNING                                                                                \
    "{\"metadata\":{\"name\":\"web-1\",\"namespace\":\"prod\"},"                                   \
    "\"spec\":{\"nodeName\":\"node-a\",\"replicas\":3,\"unschedulable\":true,"                     \
    "\"ratio\":0.5,\"containers\":[{\"name\":\"c\"}]},"                                            \
    "\"status\":{\"phase\":\"Running\"}}"
#define POD_PENDING                                                                                \
    "{\"metadata\":{\"name\":\"web-2\",\"namespace\":\"dev\"},\"status\":{\"phase\":\"Pending\"}}"

/* ---- label selectors: matching ------------------------------------------- */

Test(labelsel, empty_and_null_select_everything)
{
    const char *empties[] = {"", "   ", " \t\r\n ", NULL};
    for (size_t i = 0; i < sizeof empties / sizeof *empties; i++) {
        fakeapi__labelsel *sel = lparse(empties[i]);
        cr_assert(fakeapi__labelsel_empty(sel));
        cr_assert(fakeapi__labelsel_match(sel, NULL));
        json_t *l = json_pack("{ss}", "a", "b");
        cr_assert(fakeapi__labelsel_match(sel, l));
        json_decref(l);
        fakeapi__labelsel_free(sel);
    }
}

Test(labelsel, non_empty_is_not_empty)
{
    fakeapi__labelsel *sel = lparse("a");
    cr_assert_not(fakeapi__labelsel_empty(sel));
    fakeapi__labelsel_free(sel);
}

Test(labelsel, free_null_is_noop)
{
    fakeapi__labelsel_free(NULL);
    fakeapi__fieldsel_free(NULL);
}

Test(labelsel, equals)
{
    cr_assert(lmatch("a=b", "{\"a\":\"b\",\"x\":\"y\"}"));
    cr_assert_not(lmatch("a=b", "{\"a\":\"c\"}"));
    cr_assert_not(lmatch("a=b", "{}"));
    cr_assert_not(lmatch("a=b", NULL));
    cr_assert_not(lmatch("a=b", "{\"a\":\"bb\"}"));
}

Test(labelsel, double_equals)
{
    cr_assert(lmatch("a==b", "{\"a\":\"b\"}"));
    cr_assert_not(lmatch("a==b", "{\"a\":\"c\"}"));
    cr_assert_not(lmatch("a==b", "{}"));
}

Test(labelsel, not_equals_matches_missing_key)
{
    cr_assert(lmatch("a!=b", "{\"a\":\"c\"}"));
    cr_assert(lmatch("a!=b", "{}"));
    cr_assert(lmatch("a!=b", NULL));
    cr_assert_not(lmatch("a!=b", "{\"a\":\"b\"}"));
}

Test(labelsel, in)
{
    cr_assert(lmatch("env in (prod,staging)", "{\"env\":\"prod\"}"));
    cr_assert(lmatch("env in (prod,staging)", "{\"env\":\"staging\"}"));
    cr_assert_not(lmatch("env in (prod,staging)", "{\"env\":\"dev\"}"));
    cr_assert_not(lmatch("env in (prod,staging)", "{}"));
    cr_assert(lmatch("env in (prod)", "{\"env\":\"prod\"}"));
}

Test(labelsel, notin_matches_missing_key)
{
    cr_assert(lmatch("env notin (prod,staging)", "{\"env\":\"dev\"}"));
    cr_assert(lmatch("env notin (prod,staging)", "{}"));
    cr_assert_not(lmatch("env notin (prod,staging)", "{\"env\":\"prod\"}"));
    cr_assert_not(lmatch("env notin (prod,staging)", "{\"env\":\"staging\"}"));
}

Test(labelsel, exists_and_does_not_exist)
{
    cr_assert(lmatch("a", "{\"a\":\"\"}"));
    cr_assert(lmatch("a", "{\"a\":\"x\"}"));
    cr_assert_not(lmatch("a", "{\"b\":\"x\"}"));
    cr_assert_not(lmatch("a", NULL));
    cr_assert(lmatch("!a", "{\"b\":\"x\"}"));
    cr_assert(lmatch("!a", NULL));
    cr_assert_not(lmatch("!a", "{\"a\":\"\"}"));
    cr_assert(lmatch(" ! a ", "{}"));
}

Test(labelsel, greater_and_less_than)
{
    cr_assert(lmatch("n>5", "{\"n\":\"6\"}"));
    cr_assert_not(lmatch("n>5", "{\"n\":\"5\"}"));
    cr_assert_not(lmatch("n>5", "{\"n\":\"4\"}"));
    cr_assert(lmatch("n<5", "{\"n\":\"4\"}"));
    cr_assert_not(lmatch("n<5", "{\"n\":\"5\"}"));
    cr_assert(lmatch("n < 10", "{\"n\":\"9\"}"));
    /* numeric, not lexical, comparison */
    cr_assert(lmatch("n>9", "{\"n\":\"10\"}"));
}

Test(labelsel, greater_than_needs_integer_label)
{
    cr_assert_not(lmatch("n>5", "{}"));
    cr_assert_not(lmatch("n<5", "{}"));
    cr_assert_not(lmatch("n>5", "{\"n\":\"x\"}"));
    cr_assert_not(lmatch("n<5", "{\"n\":\"1.5\"}"));
    cr_assert_not(lmatch("n<5", "{\"n\":\"\"}"));
    cr_assert_not(lmatch("n>5", "{\"n\":\"99999999999999999999\"}"));
    cr_assert(lmatch("n<5", "{\"n\":\"-3\"}"));
}

Test(labelsel, terms_are_anded)
{
    const char *s = "app=web,tier in (front,back),!canary,env!=prod";
    cr_assert(lmatch(s, "{\"app\":\"web\",\"tier\":\"front\"}"));
    cr_assert(lmatch(s, "{\"app\":\"web\",\"tier\":\"back\",\"env\":\"dev\"}"));
    cr_assert_not(lmatch(s, "{\"app\":\"web\",\"tier\":\"front\",\"canary\":\"1\"}"));
    cr_assert_not(lmatch(s, "{\"app\":\"web\",\"tier\":\"db\"}"));
    cr_assert_not(lmatch(s, "{\"app\":\"api\",\"tier\":\"front\"}"));
    cr_assert_not(lmatch(s, "{\"app\":\"web\",\"tier\":\"front\",\"env\":\"prod\"}"));
}

Test(labelsel, whitespace_around_tokens)
{
    const char *s = "  a  =  b ,\tc notin ( d , e ) ,  f  ,\n!g , n>1  ";
    cr_assert(lmatch(s, "{\"a\":\"b\",\"c\":\"x\",\"f\":\"\",\"n\":\"2\"}"));
    cr_assert_not(lmatch(s, "{\"a\":\"b\",\"c\":\"e\",\"f\":\"\",\"n\":\"2\"}"));
    cr_assert(lmatch("a in(b,c)", "{\"a\":\"c\"}"));
}

Test(labelsel, prefixed_keys)
{
    cr_assert(lmatch("app.kubernetes.io/name=web", "{\"app.kubernetes.io/name\":\"web\"}"));
    cr_assert_not(lmatch("app.kubernetes.io/name=web", "{\"name\":\"web\"}"));
    cr_assert(lmatch("!example.com/x", "{\"x\":\"1\"}"));
    cr_assert(lmatch("k8s.io/My_Name.x-1 in (a)", "{\"k8s.io/My_Name.x-1\":\"a\"}"));
}

Test(labelsel, empty_exact_value_means_empty_label)
{
    /* apimachinery reads "a=" and "a==" as "a equals the empty value" */
    cr_assert(lmatch("a=", "{\"a\":\"\"}"));
    cr_assert(lmatch("a==", "{\"a\":\"\"}"));
    cr_assert(lmatch("a= ,b=c", "{\"a\":\"\",\"b\":\"c\"}"));
    cr_assert_not(lmatch("a=", "{\"a\":\"x\"}"));
    cr_assert_not(lmatch("a=", "{}"));
    cr_assert(lmatch("a!=", "{}"));
    cr_assert_not(lmatch("a!=", "{\"a\":\"\"}"));
}

Test(labelsel, empty_items_in_a_set)
{
    cr_assert(lmatch("a in (b,)", "{\"a\":\"\"}"));
    cr_assert(lmatch("a in (,b)", "{\"a\":\"b\"}"));
    cr_assert(lmatch("a in (b,,c)", "{\"a\":\"\"}"));
    cr_assert_not(lmatch("a notin (b,)", "{\"a\":\"\"}"));
}

Test(labelsel, keywords_are_plain_words_outside_operator_position)
{
    cr_assert(lmatch("in=notin", "{\"in\":\"notin\"}"));
    cr_assert(lmatch("a in (in,notin)", "{\"a\":\"notin\"}"));
    cr_assert(lmatch("notin notin (in)", "{\"notin\":\"x\"}"));
    cr_assert(lmatch("inx", "{\"inx\":\"1\"}"));
}

Test(labelsel, odd_label_values)
{
    cr_assert(lmatch("a", "{\"a\":1}"));
    cr_assert_not(lmatch("a=1", "{\"a\":1}"));
    cr_assert(lmatch("a!=1", "{\"a\":1}"));
    cr_assert_not(lmatch("a>0", "{\"a\":1}"));
    json_t *arr = json_array();
    fakeapi__labelsel *sel = lparse("!a");
    cr_assert(fakeapi__labelsel_match(sel, arr));
    fakeapi__labelsel_free(sel);
    json_decref(arr);
}

Test(labelsel, matching_is_repeatable)
{
    fakeapi__labelsel *sel = lparse("a in (b,c)");
    json_t *yes = json_pack("{ss}", "a", "c");
    json_t *no = json_pack("{ss}", "a", "d");
    for (int i = 0; i < 3; i++) {
        cr_assert(fakeapi__labelsel_match(sel, yes));
        cr_assert_not(fakeapi__labelsel_match(sel, no));
    }
    json_decref(yes);
    json_decref(no);
    fakeapi__labelsel_free(sel);
}

/* ---- label selectors: errors ------------------------------------------------ */

Test(labelsel_err, unclosed_set)
{
    lbad("a in (b", "unable to parse requirement: found 'end of string', expected: ',' or ')'");
    lbad("a in (b,", "expected: ',', ')' or identifier");
    lbad("a in (b c)", "found 'c', expected: ',' or ')'");
    lbad("a in (b=c)", "found '=', expected: ',' or ')'");
}

Test(labelsel_err, set_without_parentheses)
{
    lbad("a in b", "unable to parse requirement: found 'b', expected: '('");
    lbad("a notin", "found 'end of string', expected: '('");
}

Test(labelsel_err, empty_set)
{
    lbad("a in ()", "values set can't be empty");
    lbad("a notin ( )", "values set can't be empty");
}

Test(labelsel_err, missing_key)
{
    lbad("=x", "found '=', expected: !, identifier, or 'end of string'");
    lbad("==x", "found '==', expected: !, identifier");
    lbad("!=x", "found '!=', expected: !, identifier");
    lbad("(a)", "found '(', expected: !, identifier");
    lbad(",a", "found ',', expected: !, identifier");
}

Test(labelsel_err, bare_bang)
{
    lbad("!", "unable to parse requirement: found 'end of string', expected: identifier");
    lbad("!,a", "found ',', expected: identifier");
    lbad("!!a", "found '!', expected: identifier");
}

Test(labelsel_err, not_exists_takes_no_operator)
{
    lbad("!a=b", "found '=', expected: ',' or 'end of string'");
    lbad("!a in (b)", "found 'in', expected: ',' or 'end of string'");
}

Test(labelsel_err, unknown_operator)
{
    lbad("a b", "found 'b', expected: in, notin, =, ==, !=, gt, lt");
    lbad("a ! b", "found '!', expected: in, notin");
    lbad("a (b)", "found '(', expected: in, notin");
    lbad("a>=1", "found '=', expected: identifier");
}

Test(labelsel_err, gt_lt_need_integer)
{
    lbad("a>b", "for 'Gt', 'Lt' operators, the value must be an integer");
    lbad("a<1.5", "must be an integer");
    lbad("a>", "must be an integer");
    lbad("a>99999999999999999999", "must be an integer");
    /* an integer still has to be a valid label value, as in apimachinery */
    lbad("a>-1", "a valid label must be an empty string");
}

Test(labelsel_err, doubled_and_trailing_commas)
{
    lbad("a,,b", "found ',', expected: identifier after ','");
    lbad("a=b,", "found 'end of string', expected: identifier after ','");
    lbad("a=b, ", "identifier after ','");
}

Test(labelsel_err, junk_after_a_term)
{
    lbad("a=b c", "found 'c', expected: ',' or 'end of string'");
    lbad("a=b=c", "found '=', expected: ',' or 'end of string'");
    lbad("x==a==b", "found '==', expected: ',' or 'end of string'");
    lbad("a=(b)", "unable to parse requirement: found '(', expected: identifier");
    lbad("a in (b))", "found ')', expected: ',' or 'end of string'");
}

Test(labelsel_err, invalid_key_characters)
{
    lbad("a$b=c", "unable to parse requirement: <nil>: Invalid value: \"a$b\": name part must "
                  "consist of alphanumeric characters");
    lbad("-a", "Invalid value: \"-a\": name part must consist");
    lbad("a.", "Invalid value: \"a.\": name part must consist");
    lbad("caf\xc3\xa9=x", "name part must consist");
}

Test(labelsel_err, invalid_value_characters)
{
    lbad("a=b$c", "<nil>: Invalid value: \"b$c\": a valid label must be an empty string or "
                  "consist of alphanumeric characters");
    lbad("a=-b", "Invalid value: \"-b\"");
    lbad("a in (ok,b_)", "Invalid value: \"b_\"");
    lbad("a!=b.", "Invalid value: \"b.\"");
}

Test(labelsel_err, name_part_length)
{
    char *name63 = repeat('n', 63), *name64 = repeat('n', 64);
    fakeapi__labelsel_free(lparse(name63));
    lbad(name64, "name part must be no more than 63 characters");
    free(name63);
    free(name64);
}

Test(labelsel_err, value_length)
{
    char sel[128];
    char *v63 = repeat('v', 63), *v64 = repeat('v', 64);
    snprintf(sel, sizeof sel, "a=%s", v63);
    fakeapi__labelsel_free(lparse(sel));
    snprintf(sel, sizeof sel, "a=%s", v64);
    lbad(sel, "must be no more than 63 characters");
    free(v63);
    free(v64);
}

Test(labelsel_err, bad_prefixes)
{
    lbad("/a", "prefix part must be non-empty");
    lbad("example.com/", "name part must be non-empty");
    lbad("Example.com/a", "prefix part a lowercase RFC 1123 subdomain");
    lbad("ex_ample.com/a", "RFC 1123 subdomain");
    lbad("example..com/a", "RFC 1123 subdomain");
    lbad("-example.com/a", "RFC 1123 subdomain");
    lbad("example-.com/a", "RFC 1123 subdomain");
    lbad("a/b/c", "a qualified name must consist");
}

Test(labelsel_err, prefix_length)
{
    /* 3 labels of 63, one of 61 and 3 dots: exactly 253 */
    char key[400];
    char *l63 = repeat('p', 63), *l61 = repeat('q', 61);
    snprintf(key, sizeof key, "%s.%s.%s.%s/name", l63, l63, l63, l61);
    cr_assert_eq(strchr(key, '/') - key, 253);
    fakeapi__labelsel_free(lparse(key));
    snprintf(key, sizeof key, "%s.%s.%s.%sq/name", l63, l63, l63, l61);
    lbad(key, "prefix part must be no more than 253 characters");
    free(l63);
    free(l61);
}

Test(labelsel_err, selector_length_limit)
{
    /* 16384 terms "k=v," with the last comma made a blank: exactly 64 KiB */
    size_t limit = 64 * 1024;
    char *s = malloc(limit + 2);
    cr_assert_not_null(s);
    for (size_t i = 0; i < limit; i += 4)
        memcpy(s + i, "k=v,", 4);
    s[limit - 1] = ' ';
    s[limit] = '\0';
    fakeapi__labelsel *sel = lparse(s);
    json_t *kv = json_pack("{ss}", "k", "v"), *kw = json_pack("{ss}", "k", "w");
    cr_assert(fakeapi__labelsel_match(sel, kv));
    cr_assert_not(fakeapi__labelsel_match(sel, kw));
    json_decref(kv);
    json_decref(kw);
    fakeapi__labelsel_free(sel);
    s[limit] = 'v';
    s[limit + 1] = '\0';
    lbad(s, "selector too long");
    free(s);
}

Test(labelsel_err, null_or_small_error_buffer)
{
    fakeapi__labelsel *sel = NULL;
    cr_assert_eq(fakeapi__labelsel_parse("a in (b", &sel, NULL, 0), -1);
    cr_assert_null(sel);
    char tiny[8];
    memset(tiny, 'x', sizeof tiny);
    cr_assert_eq(fakeapi__labelsel_parse("a in (b", &sel, tiny, sizeof tiny), -1);
    cr_assert_eq(strlen(tiny), sizeof tiny - 1);
    cr_assert_str_eq(tiny, "unable ");
    char one[1] = {'x'};
    cr_assert_eq(fakeapi__labelsel_parse("=", &sel, one, sizeof one), -1);
    cr_assert_eq(one[0], '\0');
}

Test(labelsel_err, error_after_good_terms_leaks_nothing)
{
    /* ASan build: the earlier, already parsed terms must be freed */
    lbad("a=b,c in (d,e),f=,", "identifier after ','");
    lbad("a=b,c in (d,e", "expected: ',' or ')'");
}

/* ---- field selectors ------------------------------------------------------- */

Test(fieldsel, empty_selects_everything)
{
    const char *empties[] = {"", NULL, ",", ",,"};
    for (size_t i = 0; i < sizeof empties / sizeof *empties; i++) {
        fakeapi__fieldsel *sel = fparse(empties[i]);
        cr_assert(fakeapi__fieldsel_empty(sel));
        json_t *obj = json_loads(POD_RUNNING, 0, NULL);
        cr_assert(fakeapi__fieldsel_match(sel, obj));
        cr_assert(fakeapi__fieldsel_match(sel, NULL));
        cr_assert_null(fakeapi__fieldsel_name(sel));
        json_decref(obj);
        fakeapi__fieldsel_free(sel);
    }
}

Test(fieldsel, metadata_name)
{
    cr_assert(fmatch("metadata.name=web-1", POD_RUNNING));
    cr_assert(fmatch("metadata.name==web-1", POD_RUNNING));
    cr_assert_not(fmatch("metadata.name=web-2", POD_RUNNING));
    cr_assert(fmatch("metadata.name!=web-2", POD_RUNNING));
    cr_assert_not(fmatch("metadata.name!=web-1", POD_RUNNING));
    cr_assert_not(fmatch("metadata.name=web", POD_RUNNING));
}

Test(fieldsel, metadata_namespace)
{
    cr_assert(fmatch("metadata.namespace=prod", POD_RUNNING));
    cr_assert_not(fmatch("metadata.namespace=prod", POD_PENDING));
    cr_assert(fmatch("metadata.namespace!=prod", POD_PENDING));
}

Test(fieldsel, node_name_missing_reads_as_empty)
{
    cr_assert(fmatch("spec.nodeName=", POD_PENDING));
    cr_assert_not(fmatch("spec.nodeName=", POD_RUNNING));
    cr_assert(fmatch("spec.nodeName!=", POD_RUNNING));
    cr_assert_not(fmatch("spec.nodeName!=", POD_PENDING));
    cr_assert(fmatch("spec.nodeName=node-a", POD_RUNNING));
    cr_assert(fmatch("spec.nodeName!=node-a", POD_PENDING));
}

Test(fieldsel, status_phase)
{
    cr_assert(fmatch("status.phase=Running", POD_RUNNING));
    cr_assert(fmatch("status.phase!=Running", POD_PENDING));
    cr_assert_not(fmatch("status.phase=running", POD_RUNNING));
}

Test(fieldsel, terms_are_anded)
{
    const char *s = "metadata.namespace=prod,status.phase!=Pending,spec.nodeName=node-a";
    cr_assert(fmatch(s, POD_RUNNING));
    cr_assert_not(fmatch(s, POD_PENDING));
    cr_assert_not(fmatch("metadata.namespace=prod,status.phase=Pending", POD_RUNNING));
    cr_assert(fmatch("metadata.name=web-1,,status.phase=Running,", POD_RUNNING));
}

Test(fieldsel, booleans_integers_and_other_types)
{
    cr_assert(fmatch("spec.unschedulable=true", POD_RUNNING));
    cr_assert(fmatch("spec.unschedulable!=false", POD_RUNNING));
    cr_assert(fmatch("spec.replicas=3", POD_RUNNING));
    cr_assert_not(fmatch("spec.replicas=03", POD_RUNNING));
    cr_assert(fmatch("spec.flag=false", "{\"spec\":{\"flag\":false}}"));
    cr_assert(fmatch("spec.n=-7", "{\"spec\":{\"n\":-7}}"));
    cr_assert(fmatch("spec.x=", "{\"spec\":{\"x\":null}}"));
    /* floats, arrays and objects equal nothing, so != always holds */
    cr_assert_not(fmatch("spec.ratio=0.5", POD_RUNNING));
    cr_assert_not(fmatch("spec.containers=", POD_RUNNING));
    cr_assert(fmatch("spec.containers!=", POD_RUNNING));
    cr_assert_not(fmatch("spec=", POD_RUNNING));
}

Test(fieldsel, path_through_non_object_is_missing)
{
    cr_assert(fmatch("metadata.name.first=", POD_RUNNING));
    cr_assert(fmatch("spec.containers.name=", POD_RUNNING));
    cr_assert(fmatch("a.b.c=", "{}"));
    cr_assert(fmatch("metadata..name=", POD_RUNNING));
}

Test(fieldsel, escapes_in_values)
{
    cr_assert(fmatch("metadata.name=a\\,b", "{\"metadata\":{\"name\":\"a,b\"}}"));
    cr_assert(fmatch("metadata.name=a\\=b", "{\"metadata\":{\"name\":\"a=b\"}}"));
    cr_assert(fmatch("metadata.name=a\\\\b", "{\"metadata\":{\"name\":\"a\\\\b\"}}"));
    cr_assert(fmatch("metadata.name=x\\,y,status.phase=z",
                     "{\"metadata\":{\"name\":\"x,y\"},\"status\":{\"phase\":\"z\"}}"));
    cr_assert_not(fmatch("metadata.name=a\\,b", "{\"metadata\":{\"name\":\"a\\\\,b\"}}"));
}

Test(fieldsel, operator_is_the_first_one)
{
    /* "a=!b" is a = "!b", "a==b" is a == "b", "a!=b" is a != "b" */
    cr_assert(fmatch("spec.a=!b", "{\"spec\":{\"a\":\"!b\"}}"));
    cr_assert(fmatch("spec.a==b", "{\"spec\":{\"a\":\"b\"}}"));
    cr_assert(fmatch("spec.a!=b", "{\"spec\":{\"a\":\"c\"}}"));
    cr_assert(fmatch("spec.a!b=c", "{\"spec\":{\"a!b\":\"c\"}}"));
}

Test(fieldsel, value_is_not_trimmed)
{
    cr_assert(fmatch("status.phase= Running", "{\"status\":{\"phase\":\" Running\"}}"));
    cr_assert_not(fmatch("status.phase= Running", POD_RUNNING));
}

Test(fieldsel_err, missing_operator)
{
    fbad("metadata.name", "can't understand 'metadata.name'");
    fbad("metadata.name=x,status.phase", "can't understand 'status.phase'");
    fbad("a!b", "can't understand 'a!b'");
}

Test(fieldsel_err, empty_field)
{
    fbad("=x", "no field name in '=x'");
    fbad("==x", "no field name");
    fbad("!=x", "no field name");
    fbad("metadata.name=a,=b", "no field name in '=b'");
}

Test(fieldsel_err, bad_escapes)
{
    fbad("metadata.name=a\\xb", "invalid escape sequence: '\\x'");
    fbad("metadata.name=ab\\", "invalid escape sequence: '\\'");
    fbad("metadata.name=ab\\,status.phase=x", "unescaped character '='");
}

Test(fieldsel_err, unescaped_equals_in_value)
{
    fbad("metadata.name=a=b", "unescaped character '=' in value");
    fbad("metadata.name==a==b", "unescaped character '='");
}

Test(fieldsel_err, selector_length_limit)
{
    char *s = repeat('x', 64 * 1024 + 1);
    memcpy(s, "a=", 2);
    fbad(s, "selector too long");
    s[64 * 1024] = '\0';
    fakeapi__fieldsel_free(fparse(s));
    free(s);
}

Test(fieldsel_err, null_error_buffer)
{
    fakeapi__fieldsel *sel = NULL;
    cr_assert_eq(fakeapi__fieldsel_parse("nope", &sel, NULL, 0), -1);
    cr_assert_null(sel);
}

Test(fieldsel_err, error_after_good_terms_leaks_nothing)
{
    fbad("metadata.name=a,status.phase=b,c", "can't understand 'c'");
}

Test(fieldsel, check_allows_listed_fields)
{
    char err[256] = "";
    fakeapi__fieldsel *sel = fparse("metadata.name=a,spec.nodeName!=,status.phase=Running");
    cr_assert_eq(fakeapi__fieldsel_check(sel, pod_fields, err, sizeof err), 0, "%s", err);
    fakeapi__fieldsel_free(sel);
}

Test(fieldsel, check_rejects_unlisted_field)
{
    char err[256] = "";
    fakeapi__fieldsel *sel = fparse("metadata.name=a,spec.hostNetwork=true");
    cr_assert_eq(fakeapi__fieldsel_check(sel, pod_fields, err, sizeof err), -1);
    cr_assert_str_eq(err, "field label not supported: spec.hostNetwork");
    fakeapi__fieldsel_free(sel);
}

Test(fieldsel, check_is_exact_not_prefix)
{
    char err[256] = "";
    fakeapi__fieldsel *sel = fparse("metadata.nam=a");
    cr_assert_eq(fakeapi__fieldsel_check(sel, pod_fields, err, sizeof err), -1);
    cr_assert_str_eq(err, "field label not supported: metadata.nam");
    fakeapi__fieldsel_free(sel);
}

Test(fieldsel, check_with_empty_or_null_list)
{
    const char *const none[] = {NULL};
    char err[256] = "";
    fakeapi__fieldsel *empty = fparse("");
    cr_assert_eq(fakeapi__fieldsel_check(empty, none, err, sizeof err), 0);
    cr_assert_eq(fakeapi__fieldsel_check(empty, NULL, err, sizeof err), 0);
    fakeapi__fieldsel_free(empty);
    fakeapi__fieldsel *sel = fparse("metadata.name=a");
    cr_assert_eq(fakeapi__fieldsel_check(sel, none, err, sizeof err), -1);
    cr_assert_eq(fakeapi__fieldsel_check(sel, NULL, NULL, 0), -1);
    fakeapi__fieldsel_free(sel);
}

Test(fieldsel, name_fast_path)
{
    const struct {
        const char *sel, *name;
    } cases[] = {
        {"metadata.name=web-1", "web-1"},
        {"metadata.name==web-1", "web-1"},
        {"metadata.name=a\\,b", "a,b"},
        {"metadata.name=web-1,", "web-1"},
        {"metadata.name=", ""},
        {"metadata.name!=web-1", NULL},
        {"metadata.name=a,metadata.namespace=b", NULL},
        {"metadata.namespace=web-1", NULL},
        {"metadata.names=web-1", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        fakeapi__fieldsel *sel = fparse(cases[i].sel);
        const char *got = fakeapi__fieldsel_name(sel);
        if (cases[i].name)
            cr_assert_str_eq(got, cases[i].name, "%s", cases[i].sel);
        else
            cr_assert_null(got, "%s gave %s", cases[i].sel, got);
        fakeapi__fieldsel_free(sel);
    }
}

Test(fieldsel, match_null_object_reads_every_field_as_empty)
{
    fakeapi__fieldsel *sel = fparse("metadata.name=");
    cr_assert(fakeapi__fieldsel_match(sel, NULL));
    fakeapi__fieldsel_free(sel);
    sel = fparse("metadata.name!=");
    cr_assert_not(fakeapi__fieldsel_match(sel, NULL));
    fakeapi__fieldsel_free(sel);
}
