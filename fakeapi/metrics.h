/*
 * metrics.h - /metrics in the Prometheus text format: requests by verb,
 * group, resource and code; open watches; faults fired by rule; watchers
 * closed for being slow. One mutex guards the counters; any thread.
 */
#ifndef FAKEAPI_METRICS_H
#define FAKEAPI_METRICS_H

#include "fault.h"
#include "http.h"
#include "server_int.h"

typedef struct fakeapi__metrics fakeapi__metrics;

fakeapi__metrics *fakeapi__metrics_new(void);
void fakeapi__metrics_free(fakeapi__metrics *m);
void fakeapi__metrics_request(fakeapi__metrics *m, const fakeapi__reqinfo *ri, int code);
/* Answer GET /metrics. */
void fakeapi__metrics_serve(fakeapi_server *srv, fakeapi__resp *resp);

#endif
