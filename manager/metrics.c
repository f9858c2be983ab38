/*
 * metrics.c - a small Prometheus registry and its text exposition format.
 *
 * DESIGN
 * - No threads of its own. One mutex (ctrl_metrics.mu) protects every
 *   metric, every series and every value; it is a leaf lock: nothing else
 *   is taken while it is held, so callers may hold their own locks.
 * - Metrics are kept in declaration order and written sorted by name;
 *   series are kept in creation order and written sorted by label string,
 *   so that two scrapes of the same state are byte-identical.
 * - Bounds: at most MAX_METRICS metrics, MAX_SERIES series per metric,
 *   MAX_BUCKETS buckets, label strings of MAX_LABELS bytes. Updates past a
 *   bound are dropped (a counter that stops growing is better than a
 *   process that runs out of memory because of one bad label value).
 * - Histogram buckets count observations <= bound (Prometheus' "le");
 *   each bucket is stored on its own and made cumulative when written.
 */
#include "ctrl/metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/error.h"

#define MAX_METRICS 1024
#define MAX_SERIES 10000
#define MAX_BUCKETS 64
#define MAX_LABELS 1024
#define MAX_TEXT (64u << 20)

enum mtype { MT_COUNTER, MT_GAUGE, MT_HISTOGRAM };

typedef struct series {
    char *labels;
    double value;    /* counter, gauge */
    uint64_t *count; /* histogram: per bucket, not cumulative */
    uint64_t total;  /* histogram: _count */
    double sum;      /* histogram: _sum */
} series;

typedef struct metric {
    char *name;
    char *help;
    enum mtype type;
    double *buckets;
    size_t nbuckets;
    series *series;
    size_t n, cap;
} metric;

struct ctrl_metrics {
    pthread_mutex_t mu;
    metric *metrics;
    size_t n, cap;
};

/* Prometheus' default buckets (client_golang prometheus.DefBuckets). */
static const double def_buckets[] = {.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10};

int ctrl_metrics_new(ctrl_metrics **out)
{
    if (!out)
        return CTRL_ERR_ARG;
    ctrl_metrics *m = calloc(1, sizeof(*m));
    if (!m)
        return CTRL_ERR_NOMEM;
    pthread_mutex_init(&m->mu, NULL);
    *out = m;
    return 0;
}

static void metric_deinit(metric *mt)
{
    for (size_t i = 0; i < mt->n; i++) {
        free(mt->series[i].labels);
        free(mt->series[i].count);
    }
    free(mt->series);
    free(mt->name);
    free(mt->help);
    free(mt->buckets);
}

void ctrl_metrics_free(ctrl_metrics *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++)
        metric_deinit(&m->metrics[i]);
    free(m->metrics);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

static int valid_name(const char *s)
{
    if (!s || !*s)
        return 0;
    for (const char *p = s; *p; p++) {
        char c = *p;
        int alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
        if (!alpha && !(p > s && c >= '0' && c <= '9'))
            return 0;
    }
    return 1;
}

/* Under mu. */
static metric *find_metric(ctrl_metrics *m, const char *name)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->metrics[i].name, name) == 0)
            return &m->metrics[i];
    return NULL;
}

/* Under mu. Declares name, or checks an earlier declaration agrees. */
static int declare(ctrl_metrics *m, const char *name, const char *help, enum mtype type,
                   const double *buckets, size_t nb, metric **out)
{
    metric *mt = find_metric(m, name);
    if (mt) {
        if (mt->type != type)
            return CTRL_ERR_ARG;
        if (out)
            *out = mt;
        return 0;
    }
    if (m->n >= MAX_METRICS)
        return CTRL_ERR_ARG;
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 16;
        metric *grown = realloc(m->metrics, cap * sizeof(*grown));
        if (!grown)
            return CTRL_ERR_NOMEM;
        m->metrics = grown;
        m->cap = cap;
    }
    metric nm = {.type = type};
    nm.name = strdup(name);
    nm.help = strdup(help ? help : "");
    if (type == MT_HISTOGRAM) {
        nm.nbuckets = nb;
        nm.buckets = malloc((nb ? nb : 1) * sizeof(double));
    }
    if (!nm.name || !nm.help || (type == MT_HISTOGRAM && !nm.buckets)) {
        metric_deinit(&nm);
        return CTRL_ERR_NOMEM;
    }
    if (type == MT_HISTOGRAM && nb)
        memcpy(nm.buckets, buckets, nb * sizeof(double));
    m->metrics[m->n] = nm;
    if (out)
        *out = &m->metrics[m->n];
    m->n++;
    return 0;
}

static int declare_locked(ctrl_metrics *m, const char *name, const char *help, enum mtype type,
                          const double *buckets, size_t nb)
{
    if (!m || !valid_name(name))
        return CTRL_ERR_ARG;
    if (type == MT_HISTOGRAM) {
        if (!buckets) {
            buckets = def_buckets;
            nb = sizeof(def_buckets) / sizeof(def_buckets[0]);
        }
        if (nb > MAX_BUCKETS)
            return CTRL_ERR_ARG;
        for (size_t i = 0; i < nb; i++)
            if (isnan(buckets[i]) || (i > 0 && !(buckets[i] > buckets[i - 1])))
                return CTRL_ERR_ARG;
        /* +Inf is implicit: drop an explicit one at the end. */
        if (nb && isinf(buckets[nb - 1]) && buckets[nb - 1] > 0)
            nb--;
    }
    pthread_mutex_lock(&m->mu);
    int rc = declare(m, name, help, type, buckets, nb, NULL);
    pthread_mutex_unlock(&m->mu);
    return rc;
}

int ctrl_metrics_counter(ctrl_metrics *m, const char *name, const char *help)
{
    return declare_locked(m, name, help, MT_COUNTER, NULL, 0);
}

int ctrl_metrics_gauge(ctrl_metrics *m, const char *name, const char *help)
{
    return declare_locked(m, name, help, MT_GAUGE, NULL, 0);
}

int ctrl_metrics_histogram(ctrl_metrics *m, const char *name, const char *help,
                           const double *buckets, size_t n)
{
    return declare_locked(m, name, help, MT_HISTOGRAM, buckets, n);
}

/* Under mu. The series of mt with these labels, created if missing. */
static series *get_series(metric *mt, const char *labels, int create)
{
    if (!labels)
        labels = "";
    for (size_t i = 0; i < mt->n; i++)
        if (strcmp(mt->series[i].labels, labels) == 0)
            return &mt->series[i];
    if (!create || mt->n >= MAX_SERIES || strlen(labels) > MAX_LABELS)
        return NULL;
    if (mt->n == mt->cap) {
        size_t cap = mt->cap ? mt->cap * 2 : 8;
        series *grown = realloc(mt->series, cap * sizeof(*grown));
        if (!grown)
            return NULL;
        mt->series = grown;
        mt->cap = cap;
    }
    series s = {0};
    s.labels = strdup(labels);
    if (mt->type == MT_HISTOGRAM)
        s.count = calloc(mt->nbuckets + 1, sizeof(uint64_t));
    if (!s.labels || (mt->type == MT_HISTOGRAM && !s.count)) {
        free(s.labels);
        free(s.count);
        return NULL;
    }
    mt->series[mt->n] = s;
    return &mt->series[mt->n++];
}

/*
 * Under mu. The metric for an update: an undeclared name is declared on
 * first use with an empty help (counter for add, gauge for set, histogram
 * with the default buckets for observe), so that a typo shows up in the
 * output rather than vanishing.
 */
static metric *metric_for(ctrl_metrics *m, const char *name, enum mtype type)
{
    metric *mt = find_metric(m, name);
    if (mt)
        return mt->type == type || (type == MT_GAUGE && mt->type == MT_COUNTER) ? mt : NULL;
    if (!valid_name(name))
        return NULL;
    size_t nb = type == MT_HISTOGRAM ? sizeof(def_buckets) / sizeof(def_buckets[0]) : 0;
    if (declare(m, name, "", type, def_buckets, nb, &mt) < 0)
        return NULL;
    return mt;
}

void ctrl_metrics_add(ctrl_metrics *m, const char *name, const char *labels, double v)
{
    if (!m || !name)
        return;
    pthread_mutex_lock(&m->mu);
    metric *mt = find_metric(m, name);
    if (!mt)
        mt = metric_for(m, name, MT_COUNTER);
    if (mt && mt->type != MT_HISTOGRAM) {
        series *s = get_series(mt, labels, 1);
        /* A counter only goes up (Prometheus: Add panics on a negative value). */
        if (s && (mt->type == MT_GAUGE || v >= 0))
            s->value += v;
    }
    pthread_mutex_unlock(&m->mu);
}

void ctrl_metrics_set(ctrl_metrics *m, const char *name, const char *labels, double v)
{
    if (!m || !name)
        return;
    pthread_mutex_lock(&m->mu);
    metric *mt = metric_for(m, name, MT_GAUGE);
    if (mt) {
        series *s = get_series(mt, labels, 1);
        if (s)
            s->value = v;
    }
    pthread_mutex_unlock(&m->mu);
}

void ctrl_metrics_observe(ctrl_metrics *m, const char *name, const char *labels, double v)
{
    if (!m || !name || isnan(v))
        return;
    pthread_mutex_lock(&m->mu);
    metric *mt = metric_for(m, name, MT_HISTOGRAM);
    series *s = mt ? get_series(mt, labels, 1) : NULL;
    if (s) {
        size_t i = 0;
        while (i < mt->nbuckets && v > mt->buckets[i])
            i++;
        s->count[i]++; /* i == nbuckets: only in +Inf */
        s->total++;
        s->sum += v;
    }
    pthread_mutex_unlock(&m->mu);
}

double ctrl_metrics_value(ctrl_metrics *m, const char *name, const char *labels)
{
    if (!m || !name)
        return 0;
    double v = 0;
    pthread_mutex_lock(&m->mu);
    metric *mt = find_metric(m, name);
    series *s = mt ? get_series(mt, labels, 0) : NULL;
    if (s)
        v = mt->type == MT_HISTOGRAM ? (double)s->total : s->value;
    pthread_mutex_unlock(&m->mu);
    return v;
}

double ctrl_metrics_sum(ctrl_metrics *m, const char *name)
{
    if (!m || !name)
        return 0;
    double v = 0;
    pthread_mutex_lock(&m->mu);
    metric *mt = find_metric(m, name);
    for (size_t i = 0; mt && i < mt->n; i++)
        v += mt->type == MT_HISTOGRAM ? (double)mt->series[i].total : mt->series[i].value;
    pthread_mutex_unlock(&m->mu);
    return v;
}

/* ---- text format ---- */

typedef struct buf {
    char *p;
    size_t len, cap;
    int failed;
} buf;

static void buf_put(buf *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *grown = cap <= MAX_TEXT ? realloc(b->p, cap) : NULL;
        if (!grown) {
            b->failed = 1;
            return;
        }
        b->p = grown;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void buf_str(buf *b, const char *s)
{
    buf_put(b, s, strlen(s));
}

__attribute__((format(printf, 2, 3))) static void buf_fmt(buf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(tmp)) {
        b->failed = 1;
        return;
    }
    buf_put(b, tmp, (size_t)n);
}

/* A float as Prometheus writes it: shortest form that reads back exactly. */
static void fmt_double(char *out, size_t size, double v)
{
    if (isnan(v)) {
        snprintf(out, size, "NaN");
        return;
    }
    if (isinf(v)) {
        snprintf(out, size, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(out, size, "%.*g", prec, v);
        if (strtod(out, NULL) == v)
            return;
    }
}

/* HELP text escapes backslash and newline. */
static void put_help(buf *b, const char *help)
{
    for (const char *p = help; *p; p++) {
        if (*p == '\\')
            buf_str(b, "\\\\");
        else if (*p == '\n')
            buf_str(b, "\\n");
        else
            buf_put(b, p, 1);
    }
}

static int cmp_metric(const void *a, const void *b)
{
    const metric *x = *(const metric *const *)a, *y = *(const metric *const *)b;
    return strcmp(x->name, y->name);
}

static int cmp_series(const void *a, const void *b)
{
    const series *x = *(const series *const *)a, *y = *(const series *const *)b;
    return strcmp(x->labels, y->labels);
}

/* name{labels[,extra]} value */
static void put_sample(buf *b, const char *name, const char *suffix, const char *labels,
                       const char *extra, const char *value)
{
    buf_str(b, name);
    buf_str(b, suffix);
    if (*labels || extra) {
        buf_str(b, "{");
        buf_str(b, labels);
        if (extra) {
            if (*labels)
                buf_str(b, ",");
            buf_str(b, extra);
        }
        buf_str(b, "}");
    }
    buf_str(b, " ");
    buf_str(b, value);
    buf_str(b, "\n");
}

static void put_metric(buf *b, const metric *mt)
{
    static const char *const types[] = {"counter", "gauge", "histogram"};
    buf_fmt(b, "# HELP %s ", mt->name);
    put_help(b, mt->help);
    buf_fmt(b, "\n# TYPE %s %s\n", mt->name, types[mt->type]);
    const series **order = malloc((mt->n ? mt->n : 1) * sizeof(*order));
    if (!order) {
        b->failed = 1;
        return;
    }
    for (size_t i = 0; i < mt->n; i++)
        order[i] = &mt->series[i];
    qsort(order, mt->n, sizeof(*order), cmp_series);
    char num[64], le[96];
    for (size_t i = 0; i < mt->n; i++) {
        const series *s = order[i];
        if (mt->type != MT_HISTOGRAM) {
            fmt_double(num, sizeof(num), s->value);
            put_sample(b, mt->name, "", s->labels, NULL, num);
            continue;
        }
        uint64_t cum = 0;
        for (size_t k = 0; k <= mt->nbuckets; k++) {
            cum += s->count[k];
            if (k < mt->nbuckets) {
                fmt_double(num, sizeof(num), mt->buckets[k]);
                snprintf(le, sizeof(le), "le=\"%s\"", num);
            } else {
                snprintf(le, sizeof(le), "le=\"+Inf\"");
            }
            snprintf(num, sizeof(num), "%llu", (unsigned long long)cum);
            put_sample(b, mt->name, "_bucket", s->labels, le, num);
        }
        fmt_double(num, sizeof(num), s->sum);
        put_sample(b, mt->name, "_sum", s->labels, NULL, num);
        snprintf(num, sizeof(num), "%llu", (unsigned long long)s->total);
        put_sample(b, mt->name, "_count", s->labels, NULL, num);
    }
    free(order);
}

char *ctrl_metrics_text(ctrl_metrics *m)
{
    if (!m)
        return NULL;
    buf b = {0};
    buf_put(&b, "", 0);
    pthread_mutex_lock(&m->mu);
    const metric **order = malloc((m->n ? m->n : 1) * sizeof(*order));
    if (order) {
        for (size_t i = 0; i < m->n; i++)
            order[i] = &m->metrics[i];
        qsort(order, m->n, sizeof(*order), cmp_metric);
        for (size_t i = 0; i < m->n && !b.failed; i++)
            put_metric(&b, order[i]);
        free(order);
    } else {
        b.failed = 1;
    }
    pthread_mutex_unlock(&m->mu);
    if (b.failed) {
        free(b.p);
        return NULL;
    }
    return b.p;
}
