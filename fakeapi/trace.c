#include "trace.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

#include "jsonscan.h"
#include "kh/jsonfast.h"

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
 * JSON_ESCAPE_SLASH: quotes, backslashes and control characters escaped.
 * Writes at most 6 bytes a byte of s, plus 2; returns the end. */
static char *put_string(char *o, const char *s)
{
    static const char hexd[] = "0123456789ABCDEF";
    *o++ = '"';
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c != '"' && c != '\\') {
            *o++ = (char)c;
            continue;
        }
        *o++ = '\\';
        switch (c) {
        case '"':
        case '\\':
            *o++ = (char)c;
            break;
        case '\b':
            *o++ = 'b';
            break;
        case '\f':
            *o++ = 'f';
            break;
        case '\n':
            *o++ = 'n';
            break;
        case '\r':
            *o++ = 'r';
            break;
        case '\t':
            *o++ = 't';
            break;
        default: /* \u00XX, upper-case hex as jansson writes it */
            *o++ = 'u';
            *o++ = '0';
            *o++ = '0';
            *o++ = hexd[c >> 4];
            *o++ = hexd[c & 15];
            break;
        }
    }
    *o++ = '"';
    return o;
}

/* An integer as "%lld" writes it (at most 20 bytes); returns the end. */
static char *put_int(char *o, long long v)
{
    char tmp[24];
    int n = 0;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *o++ = '-';
    while (n)
        *o++ = tmp[--n];
    return o;
}

char *fakeapi__trace_line(const fakeapi__trace_field *f, size_t n)
{
    size_t cap = 3;
    for (size_t i = 0; i < n; i++) {
        size_t klen = strlen(f[i].key);
        cap += 6 * klen + 4;
        if (f[i].is_int) {
            cap += 21;
            continue;
        }
        if (!f[i].str)
            return NULL;
        size_t len = strlen(f[i].str);
        if (!kh_json_utf8_ok(f[i].str, len))
            return NULL;
        cap += 6 * len + 2;
    }
    char *line = malloc(cap), *o = line;
    if (!line)
        return NULL;
    *o++ = '{';
    for (size_t i = 0; i < n; i++) {
        if (i)
            *o++ = ',';
        o = put_string(o, f[i].key);
        *o++ = ':';
        o = f[i].is_int ? put_int(o, f[i].num) : put_string(o, f[i].str);
    }
    *o++ = '}';
    *o = '\0';
    return line;
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
