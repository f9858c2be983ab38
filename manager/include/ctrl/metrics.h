/*
 * ctrl/metrics.h - a small Prometheus registry: counters, gauges and
 * histograms with labels, written as the Prometheus text format.
 *
 * Series are identified by a metric name and a label string in Prometheus
 * syntax without braces ('controller="rs",result="success"'). A metric's
 * type and help are declared once; histograms use the buckets given at
 * declaration.
 *
 * Threads: thread-safe (one mutex).
 */
#ifndef CTRL_METRICS_H
#define CTRL_METRICS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ctrl_metrics ctrl_metrics;

int ctrl_metrics_new(ctrl_metrics **out);
void ctrl_metrics_free(ctrl_metrics *m);

/* Declare a metric (idempotent). buckets: for histograms, ascending upper
 * bounds (NULL = Prometheus' defaults). */
int ctrl_metrics_counter(ctrl_metrics *m, const char *name, const char *help);
int ctrl_metrics_gauge(ctrl_metrics *m, const char *name, const char *help);
int ctrl_metrics_histogram(ctrl_metrics *m, const char *name, const char *help,
                           const double *buckets, size_t n);

void ctrl_metrics_add(ctrl_metrics *m, const char *name, const char *labels, double v);
void ctrl_metrics_set(ctrl_metrics *m, const char *name, const char *labels, double v);
void ctrl_metrics_observe(ctrl_metrics *m, const char *name, const char *labels, double v);
/* The value of a counter or gauge series (0 if absent), for tests. */
double ctrl_metrics_value(ctrl_metrics *m, const char *name, const char *labels);
/* The sum over every series of a counter or gauge (a histogram's: their
 * observation counts); 0 if the metric is absent. */
double ctrl_metrics_sum(ctrl_metrics *m, const char *name);

/* The whole registry in the text format: a malloc'ed string. */
char *ctrl_metrics_text(ctrl_metrics *m);

#ifdef __cplusplus
}
#endif

#endif
