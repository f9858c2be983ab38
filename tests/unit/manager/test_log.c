/*
 * test_log.c - the structured logger: logfmt and JSON lines, quoting, the
 * level filter (arguments not evaluated), the sink, the length cap, typed
 * values (ctrl_kv_*) in both formats.
 */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "../../../manager/log_int.h"

typedef struct sink {
    char lines[8][CTRL__LOG_LINE_MAX + 8];
    int n;
} sink;

static void to_sink(const char *line, void *user)
{
    sink *s = user;
    cr_assert_lt(s->n, 8);
    cr_assert_lt(strlen(line), sizeof(s->lines[0]));
    strcpy(s->lines[s->n++], line);
}

static int64_t fixed_now(void *ud)
{
    (void)ud;
    return 1700000000LL * CTRL_SECOND + 123 * CTRL_MILLISECOND; /* 2023-11-14T22:13:20.123Z */
}

static const ctrl_clock fixed = {.now_ns = fixed_now};

static ctrl__logger *new_logger(sink *s, ctrl_log_level level, ctrl_log_format f)
{
    ctrl__logger *l = NULL;
    cr_assert_eq(ctrl__logger_new(
                     &(ctrl__log_options){
                         .level = level, .format = f, .sink = to_sink, .user = s, .clock = &fixed},
                     &l),
                 0);
    return l;
}

Test(log, text_lines)
{
    static sink s;
    s.n = 0;
    ctrl__logger *l = new_logger(&s, CTRL_LOG_INFO, CTRL_LOG_TEXT);
    CTRL__LOG(l, CTRL_LOG_INFO, "controller", "Starting workers", "controller", "rs",
              "worker count", "2", "empty", "", "quote", "say \"hi\"\nbye");
    cr_assert_eq(s.n, 1);
    cr_assert_str_eq(s.lines[0], "ts=2023-11-14T22:13:20.123Z level=info logger=controller "
                                 "msg=\"Starting workers\" controller=rs worker count=2 empty=\"\" "
                                 "quote=\"say \\\"hi\\\"\\nbye\"");
    ctrl__logger_free(l);
}

Test(log, json_lines)
{
    static sink s;
    s.n = 0;
    ctrl__logger *l = new_logger(&s, CTRL_LOG_DEBUG, CTRL_LOG_JSON);
    ctrl__log(l, CTRL_LOG_ERROR, NULL, "Reconciler error", "error", "tab\there", (const char *)0);
    cr_assert_eq(s.n, 1);
    cr_assert_str_eq(s.lines[0], "{\"ts\":\"2023-11-14T22:13:20.123Z\",\"level\":\"error\","
                                 "\"msg\":\"Reconciler error\",\"error\":\"tab\\there\"}");
    json_error_t e;
    json_t *j = json_loads(s.lines[0], 0, &e);
    cr_assert_not_null(j, "valid JSON: %s", e.text);
    json_decref(j);
    ctrl__logger_free(l);
}

static int evaluated;

static const char *expensive(void)
{
    evaluated++;
    return "v";
}

Test(log, level_filter_skips_argument_evaluation)
{
    static sink s;
    s.n = 0;
    evaluated = 0;
    ctrl__logger *l = new_logger(&s, CTRL_LOG_WARN, CTRL_LOG_TEXT);
    CTRL__LOG(l, CTRL_LOG_INFO, "x", "dropped", "k", expensive());
    CTRL__LOG(l, CTRL_LOG_DEBUG, "x", "dropped", "k", expensive());
    cr_assert_eq(evaluated, 0);
    cr_assert_eq(s.n, 0);
    CTRL__LOG(l, CTRL_LOG_WARN, "x", "kept", "k", expensive());
    cr_assert_eq(evaluated, 1);
    cr_assert_eq(s.n, 1);
    cr_assert_not_null(strstr(s.lines[0], "level=warn"));
    cr_assert_not(ctrl__log_enabled(NULL, CTRL_LOG_ERROR), "a NULL logger writes nothing");
    CTRL__LOG(NULL, CTRL_LOG_ERROR, "x", "nowhere");
    ctrl__logger_free(l);
}

Test(log, long_values_are_cut_and_json_stays_valid)
{
    static sink s;
    s.n = 0;
    ctrl__logger *l = new_logger(&s, CTRL_LOG_DEBUG, CTRL_LOG_JSON);
    size_t n = 3 * CTRL__LOG_LINE_MAX;
    char *big = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        big[i] = i % 50 == 0 ? '\n' : 'x';
    big[n] = '\0';
    ctrl__log(l, CTRL_LOG_INFO, "t", "big", "a", big, "b", "after", (const char *)0);
    cr_assert_eq(s.n, 1);
    cr_assert_lt(strlen(s.lines[0]), CTRL__LOG_LINE_MAX);
    json_error_t e;
    json_t *j = json_loads(s.lines[0], 0, &e);
    cr_assert_not_null(j, "a cut line is still JSON: %s", e.text);
    cr_assert_gt(strlen(json_string_value(json_object_get(j, "a"))), 1000);
    json_decref(j);
    free(big);
    ctrl__logger_free(l);
}

Test(log, typed_values_in_text)
{
    static sink s;
    s.n = 0;
    ctrl__logger *l = new_logger(&s, CTRL_LOG_DEBUG, CTRL_LOG_TEXT);
    json_t *spec = json_pack("{s:i,s:[s,b]}", "replicas", 3, "tags", "a b", 1);
    json_t *str = json_string("plain");
    CTRL__LOG(l, CTRL_LOG_INFO, "t", "typed", ctrl_kv_int("n", -42), "s", "x",
              ctrl_kv_bool("ok", 7), ctrl_kv_bool("no", 0), ctrl_kv_float("ratio", 0.1),
              ctrl_kv_int("big", 9007199254740993LL), ctrl_kv_json("spec", spec),
              ctrl_kv_json("str", str), ctrl_kv_json("none", NULL), ctrl_kv_str("after", "end"));
    cr_assert_eq(s.n, 1);
    cr_assert_str_eq(s.lines[0],
                     "ts=2023-11-14T22:13:20.123Z level=info logger=t msg=typed n=-42 s=x ok=true "
                     "no=false ratio=0.1 big=9007199254740993 "
                     "spec=\"{\\\"replicas\\\":3,\\\"tags\\\":[\\\"a b\\\",true]}\" str=plain "
                     "none=null after=end");
    json_decref(spec);
    json_decref(str);
    ctrl__logger_free(l);
}

Test(log, typed_values_in_json)
{
    static sink s;
    s.n = 0;
    ctrl__logger *l = new_logger(&s, CTRL_LOG_DEBUG, CTRL_LOG_JSON);
    json_t *spec = json_pack("{s:i,s:{s:n}}", "replicas", 3, "nested", "x");
    json_t *arr = json_pack("[i,s]", 1, "two");
    json_t *str = json_string("q\"uote");
    ctrl__log(l, CTRL_LOG_WARN, "t", "typed", ctrl_kv_int("n", 5), ctrl_kv_bool("ok", true),
              ctrl_kv_float("half", 0.5), ctrl_kv_float("nan", 0.0 / 0.0),
              ctrl_kv_json("spec", spec), ctrl_kv_json("arr", arr), ctrl_kv_json("str", str),
              ctrl_kv_json("null", NULL), "plain", "p", (const char *)0);
    cr_assert_eq(s.n, 1);
    json_error_t e;
    json_t *j = json_loads(s.lines[0], 0, &e);
    cr_assert_not_null(j, "valid JSON: %s (%s)", e.text, s.lines[0]);
    cr_assert(json_is_integer(json_object_get(j, "n")), "%s", s.lines[0]);
    cr_assert_eq(json_integer_value(json_object_get(j, "n")), 5);
    cr_assert(json_is_true(json_object_get(j, "ok")), "%s", s.lines[0]);
    cr_assert(json_is_real(json_object_get(j, "half")), "%s", s.lines[0]);
    cr_assert_float_eq(json_real_value(json_object_get(j, "half")), 0.5, 1e-12);
    cr_assert_str_eq(json_string_value(json_object_get(j, "nan")), "NaN");
    cr_assert(json_equal(json_object_get(j, "spec"), spec), "%s", s.lines[0]);
    cr_assert(json_equal(json_object_get(j, "arr"), arr), "%s", s.lines[0]);
    cr_assert_str_eq(json_string_value(json_object_get(j, "str")), "q\"uote");
    cr_assert(json_is_null(json_object_get(j, "null")), "%s", s.lines[0]);
    cr_assert_str_eq(json_string_value(json_object_get(j, "plain")), "p");
    /* The keys keep their order. */
    cr_assert(strstr(s.lines[0], "\"n\":5,\"ok\":true,\"half\":0.5,"), "%s", s.lines[0]);
    json_decref(j);
    json_decref(spec);
    json_decref(arr);
    json_decref(str);
    ctrl__logger_free(l);
}

Test(log, typed_value_too_long_is_cut_and_json_stays_valid)
{
    static sink s;
    s.n = 0;
    ctrl__logger *l = new_logger(&s, CTRL_LOG_DEBUG, CTRL_LOG_JSON);
    json_t *big = json_array();
    for (int i = 0; i < 4000; i++)
        json_array_append_new(big, json_string("xxxxxxxx"));
    ctrl__log(l, CTRL_LOG_INFO, "t", "big", ctrl_kv_json("a", big), ctrl_kv_int("b", 1),
              (const char *)0);
    cr_assert_eq(s.n, 1);
    cr_assert_lt(strlen(s.lines[0]), CTRL__LOG_LINE_MAX);
    json_error_t e;
    json_t *j = json_loads(s.lines[0], 0, &e);
    cr_assert_not_null(j, "a cut line is still JSON: %s", e.text);
    cr_assert(json_is_string(json_object_get(j, "a")), "written as a cut string");
    cr_assert_gt(strlen(json_string_value(json_object_get(j, "a"))), 1000);
    json_decref(j);
    json_decref(big);
    ctrl__logger_free(l);
}
