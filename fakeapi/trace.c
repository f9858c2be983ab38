#include "trace.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

#include "jsonscan.h"
#include "strbuf.h"

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

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A string as jansson's dumper writes it without JSON_ENSURE_ASCII or
 * JSON_ESCAPE_SLASH: quotes, backslashes and control characters escaped. */
static void put_string(fakeapi__strbuf *b, const char *s)
{
    fakeapi__strbuf_add(b, "\"", 1);
    const char *run = s;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        fakeapi__strbuf_add(b, run, (size_t)(s - run));
        run = s + 1;
        switch (c) {
        case '"':
            fakeapi__strbuf_add(b, "\\\"", 2);
            break;
        case '\\':
            fakeapi__strbuf_add(b, "\\\\", 2);
            break;
        case '\b':
            fakeapi__strbuf_add(b, "\\b", 2);
            break;
        case '\f':
            fakeapi__strbuf_add(b, "\\f", 2);
            break;
        case '\n':
            fakeapi__strbuf_add(b, "\\n", 2);
            break;
        case '\r':
            fakeapi__strbuf_add(b, "\\r", 2);
            break;
        case '\t':
            fakeapi__strbuf_add(b, "\\t", 2);
            break;
        default:
            fakeapi__strbuf_addf(b, "\\u%04X", (unsigned)c);
            break;
        }
    }
    fakeapi__strbuf_add(b, run, (size_t)(s - run));
    fakeapi__strbuf_add(b, "\"", 1);
}

char *fakeapi__trace_line(const fakeapi__trace_field *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!f[i].is_int && (!f[i].str || !fakeapi__json_utf8_ok(f[i].str, strlen(f[i].str))))
            return NULL;
    fakeapi__strbuf b = {0};
    fakeapi__strbuf_add(&b, "{", 1);
    for (size_t i = 0; i < n; i++) {
        if (i)
            fakeapi__strbuf_add(&b, ",", 1);
        put_string(&b, f[i].key);
        fakeapi__strbuf_add(&b, ":", 1);
        if (f[i].is_int)
            fakeapi__strbuf_addf(&b, "%lld", f[i].num);
        else
            put_string(&b, f[i].str);
    }
    fakeapi__strbuf_add(&b, "}", 1);
    if (b.failed) {
        fakeapi__strbuf_deinit(&b);
        return NULL;
    }
    return fakeapi__strbuf_take(&b, NULL);
}

/* Write one line of the members f (sorted by key, "t" among them: the
 * clock's time is read under the trace lock, as the line is written). */
static void emit(fakeapi_server *srv, fakeapi__trace_field *f, size_t n)
{
    pthread_mutex_lock(&srv->trace_mu);
    if (srv->trace) {
        int64_t t0 = mono_ns();
        for (size_t i = 0; i < n; i++)
            if (!strcmp(f[i].key, "t"))
                f[i].num = (long long)fakeapi__srv_now(srv);
        char *line = fakeapi__trace_line(f, n);
        if (line) {
            fputs(line, srv->trace);
            fputc('\n', srv->trace);
            if (!srv->opts.trace_buffered)
                fflush(srv->trace);
            free(line);
            srv->trace_writes++;
            srv->trace_write_ns += mono_ns() - t0;
        }
    }
    pthread_mutex_unlock(&srv->trace_mu);
}

#define TSTR(k, v)                                                                                 \
    {                                                                                              \
        .key = (k), .str = (v)                                                                     \
    }
#define TINT(k, v)                                                                                 \
    {                                                                                              \
        .key = (k), .is_int = true, .num = (long long)(v)                                          \
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
    fakeapi__trace_field f[] = {
        TSTR("client", ri->user_agent),
        TINT("code", status),
        TSTR("kind", "request"),
        TSTR("method", method),
        TSTR("path", path),
        TSTR("rv", rv ? rv : ""),
        TINT("t", 0),
        TSTR("verb", ri->verb),
    };
    emit(srv, f, sizeof f / sizeof *f);
}

void fakeapi__trace_fault(fakeapi_server *srv, const fakeapi__reqinfo *ri, uint64_t rule,
                          const char *what)
{
    if (!fakeapi__tracing(srv))
        return;
    fakeapi__trace_field f[] = {
        TSTR("action", what),           TSTR("client", ri->user_agent),
        TSTR("kind", "fault"),          TSTR("name", ri->name),
        TSTR("namespace", ri->ns),      TSTR("resource", ri->resource),
        TINT("rule", (json_int_t)rule), TINT("t", 0),
        TSTR("verb", ri->verb),
    };
    emit(srv, f, sizeof f / sizeof *f);
}

void fakeapi__trace_event(fakeapi_server *srv, uint64_t watch, const char *client, const char *type,
                          const char *key, const char *ns, const char *name, uint64_t rv)
{
    if (!fakeapi__tracing(srv))
        return;
    fakeapi__trace_field f[] = {
        TSTR("client", client), TSTR("kind", "event"), TSTR("name", name),
        TSTR("namespace", ns),  TSTR("resource", key), TINT("rv", (json_int_t)rv),
        TINT("t", 0),           TSTR("type", type),    TINT("watch", (json_int_t)watch),
    };
    emit(srv, f, sizeof f / sizeof *f);
}
