/*
 * test_metrics.c - the Prometheus registry: values, label series, and the
 * text format parsed back line by line.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/error.h"
#include "ctrl/metrics.h"

/* A parsed sample: "name{labels} value". */
typedef struct sample {
    char name[512];
    char labels[512];
    char value[64];
} sample;

typedef struct parsed {
    sample s[256];
    size_t n;
    char help[16][512];
    char type[16][512];
    size_t nhelp, ntype;
} parsed;

static void parse(const char *text, parsed *p)
{
    memset(p, 0, sizeof *p);
    const char *line = text;
    while (*line) {
        const char *end = strchr(line, '\n');
        cr_assert(end, "every line ends with a newline: %s", line);
        char buf[512];
        size_t len = (size_t)(end - line);
        cr_assert_lt(len, sizeof buf);
        memcpy(buf, line, len);
        buf[len] = '\0';
        if (strncmp(buf, "# HELP ", 7) == 0) {
            cr_assert_lt(p->nhelp, 16);
            snprintf(p->help[p->nhelp++], 512, "%s", buf + 7);
        } else if (strncmp(buf, "# TYPE ", 7) == 0) {
            cr_assert_lt(p->ntype, 16);
            snprintf(p->type[p->ntype++], 512, "%s", buf + 7);
        } else {
            cr_assert_neq(buf[0], '#', "unknown comment: %s", buf);
            cr_assert_lt(p->n, 256);
            sample *s = &p->s[p->n++];
            char *sp = strrchr(buf, ' ');
            cr_assert(sp, "a sample has a value: %s", buf);
            *sp = '\0';
            snprintf(s->value, sizeof s->value, "%s", sp + 1);
            char *brace = strchr(buf, '{');
            if (brace) {
                cr_assert_eq(buf[strlen(buf) - 1], '}', "labels close: %s", buf);
                buf[strlen(buf) - 1] = '\0';
                *brace = '\0';
                snprintf(s->labels, sizeof s->labels, "%s", brace + 1);
            }
            snprintf(s->name, sizeof s->name, "%s", buf);
        }
        line = end + 1;
    }
}

static const char *find(const parsed *p, const char *name, const char *labels)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->s[i].name, name) == 0 && strcmp(p->s[i].labels, labels) == 0)
            return p->s[i].value;
    return NULL;
}

static int index_of(const parsed *p, const char *name, const char *labels)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->s[i].name, name) == 0 && strcmp(p->s[i].labels, labels) == 0)
            return (int)i;
    return -1;
}

Test(metrics, counters_and_gauges)
{
    ctrl_metrics *m;
    cr_assert_eq(ctrl_metrics_new(&m), 0);
    cr_assert_eq(ctrl_metrics_counter(m, "requests_total", "Requests."), 0);
    cr_assert_eq(ctrl_metrics_counter(m, "requests_total", "Requests."), 0, "idempotent");
    cr_assert_eq(ctrl_metrics_gauge(m, "requests_total", "x"), CTRL_ERR_ARG, "type clash");
    cr_assert_eq(ctrl_metrics_gauge(m, "bad name", "x"), CTRL_ERR_ARG);
    cr_assert_eq(ctrl_metrics_gauge(m, "temperature", "Degrees.\nSecond \\ line"), 0);

    ctrl_metrics_add(m, "requests_total", "code=\"200\"", 1);
    ctrl_metrics_add(m, "requests_total", "code=\"200\"", 2);
    ctrl_metrics_add(m, "requests_total", "code=\"500\"", 1);
    ctrl_metrics_add(m, "requests_total", "code=\"500\"", -5); /* counters never go down */
    ctrl_metrics_set(m, "temperature", NULL, 21.5);
    ctrl_metrics_add(m, "temperature", NULL, -0.25);
    cr_assert_float_eq(ctrl_metrics_value(m, "requests_total", "code=\"200\""), 3, 1e-9);
    cr_assert_float_eq(ctrl_metrics_value(m, "requests_total", "code=\"500\""), 1, 1e-9);
    cr_assert_float_eq(ctrl_metrics_value(m, "temperature", ""), 21.25, 1e-9);
    cr_assert_float_eq(ctrl_metrics_value(m, "absent", ""), 0, 1e-9);
    cr_assert_float_eq(ctrl_metrics_sum(m, "requests_total"), 4, 1e-9, "every series");
    cr_assert_float_eq(ctrl_metrics_sum(m, "temperature"), 21.25, 1e-9);
    cr_assert_float_eq(ctrl_metrics_sum(m, "absent"), 0, 1e-9);
    cr_assert_float_eq(ctrl_metrics_sum(NULL, "requests_total"), 0, 1e-9);

    char *text = ctrl_metrics_text(m);
    cr_assert(text);
    parsed p;
    parse(text, &p);
    cr_assert_eq(p.ntype, 2);
    cr_assert_str_eq(p.type[0], "requests_total counter", "sorted by name");
    cr_assert_str_eq(p.type[1], "temperature gauge");
    cr_assert_str_eq(p.help[1], "temperature Degrees.\\nSecond \\\\ line", "help escaped");
    cr_assert_str_eq(find(&p, "requests_total", "code=\"200\""), "3");
    cr_assert_str_eq(find(&p, "requests_total", "code=\"500\""), "1");
    cr_assert_str_eq(find(&p, "temperature", ""), "21.25");
    cr_assert_lt(index_of(&p, "requests_total", "code=\"200\""),
                 index_of(&p, "requests_total", "code=\"500\""), "series sorted");
    cr_assert(strstr(text, "temperature 21.25\n"), "no braces without labels:\n%s", text);
    free(text);
    ctrl_metrics_free(m);
}

Test(metrics, histogram)
{
    ctrl_metrics *m;
    cr_assert_eq(ctrl_metrics_new(&m), 0);
    const double b[] = {0.1, 0.5, 1};
    cr_assert_eq(ctrl_metrics_histogram(m, "latency_seconds", "Latency.", b, 3), 0);
    const double bad[] = {1, 0.5};
    cr_assert_eq(ctrl_metrics_histogram(m, "other", "x", bad, 2), CTRL_ERR_ARG, "not ascending");
    const char *l = "controller=\"rs\"";
    ctrl_metrics_observe(m, "latency_seconds", l, 0.05);
    ctrl_metrics_observe(m, "latency_seconds", l, 0.1); /* le is inclusive */
    ctrl_metrics_observe(m, "latency_seconds", l, 0.7);
    ctrl_metrics_observe(m, "latency_seconds", l, 3);
    cr_assert_float_eq(ctrl_metrics_value(m, "latency_seconds", l), 4, 1e-9, "count");
    ctrl_metrics_observe(m, "latency_seconds", "controller=\"ds\"", 0.2);
    cr_assert_float_eq(ctrl_metrics_sum(m, "latency_seconds"), 5, 1e-9, "counts of every series");

    char *text = ctrl_metrics_text(m);
    parsed p;
    parse(text, &p);
    cr_assert_str_eq(p.type[0], "latency_seconds histogram");
    cr_assert_str_eq(find(&p, "latency_seconds_bucket", "controller=\"rs\",le=\"0.1\""), "2");
    cr_assert_str_eq(find(&p, "latency_seconds_bucket", "controller=\"rs\",le=\"0.5\""), "2");
    cr_assert_str_eq(find(&p, "latency_seconds_bucket", "controller=\"rs\",le=\"1\""), "3");
    cr_assert_str_eq(find(&p, "latency_seconds_bucket", "controller=\"rs\",le=\"+Inf\""), "4");
    cr_assert_str_eq(find(&p, "latency_seconds_sum", l), "3.85");
    cr_assert_str_eq(find(&p, "latency_seconds_count", l), "4");
    /* Buckets in order, then sum, then count. */
    cr_assert_lt(index_of(&p, "latency_seconds_bucket", "controller=\"rs\",le=\"+Inf\""),
                 index_of(&p, "latency_seconds_sum", l));
    cr_assert_lt(index_of(&p, "latency_seconds_sum", l), index_of(&p, "latency_seconds_count", l));
    free(text);

    /* Default buckets, and no labels: le alone. */
    cr_assert_eq(ctrl_metrics_histogram(m, "d", "Default.", NULL, 0), 0);
    ctrl_metrics_observe(m, "d", NULL, 0.003);
    text = ctrl_metrics_text(m);
    parse(text, &p);
    cr_assert_str_eq(find(&p, "d_bucket", "le=\"0.005\""), "1");
    cr_assert_str_eq(find(&p, "d_bucket", "le=\"10\""), "1");
    cr_assert_str_eq(find(&p, "d_count", ""), "1");
    free(text);
    ctrl_metrics_free(m);
}

Test(metrics, undeclared_and_special_values)
{
    ctrl_metrics *m;
    cr_assert_eq(ctrl_metrics_new(&m), 0);
    ctrl_metrics_add(m, "implicit_total", "a=\"1\"", 1); /* declared on first use */
    ctrl_metrics_set(m, "g", NULL, INFINITY);
    ctrl_metrics_set(m, "small", NULL, 1e-7);
    ctrl_metrics_set(m, "third", NULL, 1.0 / 3.0);
    char *text = ctrl_metrics_text(m);
    parsed p;
    parse(text, &p);
    cr_assert_str_eq(find(&p, "implicit_total", "a=\"1\""), "1");
    cr_assert_str_eq(find(&p, "g", ""), "+Inf");
    cr_assert_float_eq(strtod(find(&p, "small", ""), NULL), 1e-7, 0);
    cr_assert(strtod(find(&p, "third", ""), NULL) == 1.0 / 3.0, "round-trips exactly");
    free(text);
    ctrl_metrics_free(m);
    ctrl_metrics_free(NULL);
}

static void *adder(void *arg)
{
    ctrl_metrics *m = arg;
    for (int i = 0; i < 10000; i++) {
        ctrl_metrics_add(m, "n_total", "x=\"y\"", 1);
        ctrl_metrics_observe(m, "h", NULL, 0.2);
    }
    return NULL;
}

Test(metrics, threads)
{
    ctrl_metrics *m;
    cr_assert_eq(ctrl_metrics_new(&m), 0);
    ctrl_metrics_counter(m, "n_total", "N.");
    ctrl_metrics_histogram(m, "h", "H.", NULL, 0);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, adder, m);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    cr_assert_float_eq(ctrl_metrics_value(m, "n_total", "x=\"y\""), 40000, 1e-9);
    cr_assert_float_eq(ctrl_metrics_value(m, "h", ""), 40000, 1e-9);
    ctrl_metrics_free(m);
}
