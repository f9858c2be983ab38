/*
 * test_log.c - the structured logger: logfmt and JSON lines, quoting, the
 * level filter (arguments not evaluated), the sink, the length cap.
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
