#include "trace.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int fakeapi__trace_open(fakeapi_server *srv, const char *path, char *err, size_t errlen)
{
    FILE *f = NULL;
    if (path && !(f = fopen(path, "w"))) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (f && srv->opts.trace_buffered)
        setvbuf(f, NULL, _IOFBF, 64 * 1024);
    pthread_mutex_lock(&srv->trace_mu);
    FILE *old = srv->trace;
    srv->trace = f;
    pthread_mutex_unlock(&srv->trace_mu);
    if (old)
        fclose(old);
    return 0;
}

void fakeapi_trace_stats(fakeapi_server *srv, unsigned long *lines, int64_t *ns)
{
    pthread_mutex_lock(&srv->trace_mu);
    *lines = srv->trace_writes;
    *ns = srv->trace_write_ns;
    pthread_mutex_unlock(&srv->trace_mu);
}

void fakeapi_trace_flush(fakeapi_server *srv)
{
    pthread_mutex_lock(&srv->trace_mu);
    if (srv->trace)
        fflush(srv->trace);
    pthread_mutex_unlock(&srv->trace_mu);
}

void fakeapi__trace_close(fakeapi_server *srv)
{
    char err[8];
    fakeapi__trace_open(srv, NULL, err, sizeof err);
}

/* Write one line: the fields object is stolen. */
static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void emit(fakeapi_server *srv, const char *kind, json_t *fields)
{
    pthread_mutex_lock(&srv->trace_mu);
    if (srv->trace && fields) {
        int64_t t0 = mono_ns();
        json_object_set_new(fields, "t", json_integer((json_int_t)fakeapi__srv_now(srv)));
        json_object_set_new(fields, "kind", json_string(kind));
        char *line = json_dumps(fields, JSON_COMPACT | JSON_SORT_KEYS);
        if (line) {
            fputs(line, srv->trace);
            fputc('\n', srv->trace);
            if (!srv->opts.trace_buffered)
                fflush(srv->trace);
        }
        free(line);
        srv->trace_writes++;
        srv->trace_write_ns += mono_ns() - t0;
    }
    pthread_mutex_unlock(&srv->trace_mu);
    json_decref(fields);
}

bool fakeapi__tracing(fakeapi_server *srv)
{
    pthread_mutex_lock(&srv->trace_mu);
    bool on = srv->trace != NULL;
    pthread_mutex_unlock(&srv->trace_mu);
    return on;
}

void fakeapi__trace_request(fakeapi_server *srv, const fakeapi__reqinfo *ri, const char *method,
                            const char *path, int status, const char *rv)
{
    if (!fakeapi__tracing(srv))
        return;
    emit(srv, "request",
         json_pack("{s:s, s:s, s:s, s:s, s:i, s:s}", "client", ri->user_agent, "verb", ri->verb,
                   "method", method, "path", path, "code", status, "rv", rv ? rv : ""));
}

void fakeapi__trace_fault(fakeapi_server *srv, const fakeapi__reqinfo *ri, uint64_t rule,
                          const char *what)
{
    if (!fakeapi__tracing(srv))
        return;
    emit(srv, "fault",
         json_pack("{s:I, s:s, s:s, s:s, s:s, s:s, s:s}", "rule", (json_int_t)rule, "action", what,
                   "client", ri->user_agent, "verb", ri->verb, "resource", ri->resource,
                   "namespace", ri->ns, "name", ri->name));
}

void fakeapi__trace_event(fakeapi_server *srv, uint64_t watch, const char *client, const char *type,
                          const char *key, const char *ns, const char *name, uint64_t rv)
{
    if (!fakeapi__tracing(srv))
        return;
    emit(srv, "event",
         json_pack("{s:I, s:s, s:s, s:s, s:s, s:s, s:I}", "watch", (json_int_t)watch, "client",
                   client, "type", type, "resource", key, "namespace", ns, "name", name, "rv",
                   (json_int_t)rv));
}
