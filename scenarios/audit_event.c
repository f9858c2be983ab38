/*
 * audit_event.c - reading audit.k8s.io/v1 Events (see audit_event.h):
 * JSON lines or EventLists, each event checked, stages collapsed by
 * auditID (ResponseComplete and Panic over ResponseStarted over
 * RequestReceived).
 *
 * One thread at a time, on whatever thread reads the log.
 */
#include "audit_event.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kh/yaml.h"

#define MAX_EVENTS 10000000

static int fail(scn_error *err, const char *file, int line, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int fail(scn_error *err, const char *file, int line, const char *field, const char *fmt, ...)
{
    va_list ap;

    if (err) {
        memset(err, 0, sizeof *err);
        err->code = SCN_ERR_INPUT;
        snprintf(err->file, sizeof err->file, "%s", file);
        err->line = line;
        snprintf(err->field, sizeof err->field, "%s", field ? field : "");
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return SCN_ERR_INPUT;
}

bool scn__audit_is_write(const char *verb)
{
    return verb && (!strcmp(verb, "create") || !strcmp(verb, "update") || !strcmp(verb, "patch") ||
                    !strcmp(verb, "delete") || !strcmp(verb, "deletecollection"));
}

static int digits(const char *s, int n)
{
    int v = 0;

    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

int64_t scn__parse_rfc3339(const char *s)
{
    struct tm tm = {0};
    int64_t frac = 0, scale = 1000000000;
    long off = 0;
    const char *p;

    if (!s || strlen(s) < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') ||
        s[13] != ':' || s[16] != ':')
        return -1;
    tm.tm_year = digits(s, 4) - 1900;
    tm.tm_mon = digits(s + 5, 2) - 1;
    tm.tm_mday = digits(s + 8, 2);
    tm.tm_hour = digits(s + 11, 2);
    tm.tm_min = digits(s + 14, 2);
    tm.tm_sec = digits(s + 17, 2);
    if (tm.tm_year < 0 || tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
        tm.tm_hour < 0 || tm.tm_hour > 23 || tm.tm_min < 0 || tm.tm_min > 59 || tm.tm_sec < 0 ||
        tm.tm_sec > 60)
        return -1;
    p = s + 19;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return -1;
        for (; isdigit((unsigned char)*p); p++) {
            if (scale > 1) {
                scale /= 10;
                frac += (*p - '0') * scale;
            }
        }
    }
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':') {
        int h = digits(p + 1, 2), m = digits(p + 4, 2);
        if (h < 0 || m < 0)
            return -1;
        off = (h * 60L + m) * 60L * (*p == '-' ? -1 : 1);
        p += 6;
    } else {
        return -1;
    }
    if (*p)
        return -1;
    return ((int64_t)timegm(&tm) - off) * 1000000000 + frac;
}

static const char *str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static int stage_rank(const char *stage)
{
    if (!strcmp(stage, "ResponseComplete") || !strcmp(stage, "Panic"))
        return 3;
    if (!strcmp(stage, "ResponseStarted"))
        return 2;
    return 1; /* RequestReceived */
}

/* A required string field of ev, or an error naming it. */
static int need(const json_t *ev, const char *key, const char *file, int line, scn_error *err,
                const char **out)
{
    json_t *v = json_object_get(ev, key);

    if (!v)
        return fail(err, file, line, key, "required field is missing");
    if (!json_is_string(v) || json_string_length(v) == 0)
        return fail(err, file, line, key, "expected a non-empty string");
    *out = json_string_value(v);
    return 0;
}

/* Check one Event and fill e (its strings borrowed from ev). */
static int check_event(json_t *ev, const char *file, int line, scn_error *err, scn__audit_event *e)
{
    static const char *const stages[] = {"RequestReceived", "ResponseStarted", "ResponseComplete",
                                         "Panic", NULL};
    static const char *const levels[] = {"Metadata", "Request", "RequestResponse", NULL};
    const char *kind = str(ev, "kind"), *av = str(ev, "apiVersion"), *ts;
    json_t *ref, *user, *rs;
    int rc;
    bool ok = false;

    if (!json_is_object(ev))
        return fail(err, file, line, "", "not an audit Event: expected a JSON object");
    if (!kind || strcmp(kind, "Event") != 0)
        return fail(err, file, line, "kind", "not an audit Event: kind is %s%s%s", kind ? "\"" : "",
                    kind ? kind : "missing", kind ? "\"" : "");
    if (!av || strcmp(av, "audit.k8s.io/v1") != 0)
        return fail(err, file, line, "apiVersion", "expected audit.k8s.io/v1, found %s%s%s",
                    av ? "\"" : "", av ? av : "nothing", av ? "\"" : "");
    memset(e, 0, sizeof *e);
    if ((rc = need(ev, "level", file, line, err, &e->level)) != 0 ||
        (rc = need(ev, "auditID", file, line, err, &e->audit_id)) != 0 ||
        (rc = need(ev, "stage", file, line, err, &e->stage)) != 0 ||
        (rc = need(ev, "requestURI", file, line, err, &e->uri)) != 0 ||
        (rc = need(ev, "verb", file, line, err, &e->verb)) != 0 ||
        (rc = need(ev, "requestReceivedTimestamp", file, line, err, &ts)) != 0)
        return rc;
    for (size_t i = 0; stages[i]; i++)
        ok = ok || !strcmp(e->stage, stages[i]);
    if (!ok)
        return fail(err, file, line, "stage", "unknown stage \"%s\"", e->stage);
    ok = false;
    for (size_t i = 0; levels[i]; i++)
        ok = ok || !strcmp(e->level, levels[i]);
    if (!ok)
        return fail(err, file, line, "level", "unknown level \"%s\"", e->level);
    e->received_ns = scn__parse_rfc3339(ts);
    if (e->received_ns < 0)
        return fail(err, file, line, "requestReceivedTimestamp", "not an RFC 3339 time: \"%s\"",
                    ts);
    user = json_object_get(ev, "user");
    if (user && !json_is_object(user))
        return fail(err, file, line, "user", "expected an object");
    e->username = str(user, "username");
    /* an impersonated request acts as the user it impersonates */
    json_t *imp = json_object_get(ev, "impersonatedUser");
    if (json_is_object(imp) && str(imp, "username"))
        e->username = str(imp, "username");
    e->user_agent = str(ev, "userAgent");
    ref = json_object_get(ev, "objectRef");
    if (ref && !json_is_object(ref))
        return fail(err, file, line, "objectRef", "expected an object");
    if (scn__audit_is_write(e->verb) && !ref)
        return fail(err, file, line, "objectRef", "required for a %s: what was written", e->verb);
    if (ref && scn__audit_is_write(e->verb) && !json_is_string(json_object_get(ref, "resource")))
        return fail(err, file, line, "objectRef.resource", "required field is missing");
    e->group = str(ref, "apiGroup");
    e->version = str(ref, "apiVersion");
    e->resource = str(ref, "resource");
    e->subresource = str(ref, "subresource");
    e->ns = str(ref, "namespace");
    e->name = str(ref, "name");
    rs = json_object_get(ev, "responseStatus");
    if (rs && (!json_is_object(rs) || !json_is_integer(json_object_get(rs, "code"))))
        return fail(err, file, line, "responseStatus.code", "expected an integer");
    e->code = rs ? (int)json_integer_value(json_object_get(rs, "code")) : 0;
    if (!strcmp(e->stage, "ResponseComplete") && scn__audit_is_write(e->verb) && !rs)
        return fail(err, file, line, "responseStatus",
                    "required at ResponseComplete: the write's outcome");
    e->ev = json_incref(ev);
    e->file = file;
    e->line = line;
    return 0;
}

static int add_event(scn__audit_log *log, json_t *ev, const char *file, int line, scn_error *err)
{
    scn__audit_event e;
    json_t *at;
    int rc = check_event(ev, file, line, err, &e);

    if (rc != 0)
        return rc;
    if (log->raw == 0 || e.received_ns < log->first_ns)
        log->first_ns = e.received_ns;
    log->raw++;
    /* lean: a read that shows no object (a watch, a Metadata-level list) is
     * counted, not kept */
    if (log->lean && !scn__audit_is_write(e.verb) && !json_object_get(e.ev, "responseObject")) {
        if (!log->skipped && !(log->skipped = json_object())) {
            json_decref(e.ev);
            return SCN_ERR_NOMEM;
        }
        json_object_set_new(log->skipped, e.audit_id, json_true());
        json_decref(e.ev);
        return 0;
    }
    at = json_object_get(log->ids, e.audit_id);
    if (at) {
        scn__audit_event *old = &log->ev[json_integer_value(at)];
        if (stage_rank(e.stage) >= stage_rank(old->stage)) {
            e.seq = old->seq;
            json_decref(old->ev);
            *old = e;
        } else {
            json_decref(e.ev);
        }
        return 0;
    }
    if (log->n >= MAX_EVENTS) {
        json_decref(e.ev);
        return fail(err, file, line, "", "more than %d events", MAX_EVENTS);
    }
    if (log->n == log->cap) {
        size_t cap = log->cap ? log->cap * 2 : 1024;
        scn__audit_event *p = realloc(log->ev, cap * sizeof *p);
        if (!p) {
            json_decref(e.ev);
            return SCN_ERR_NOMEM;
        }
        log->ev = p;
        log->cap = cap;
    }
    e.seq = log->n;
    if (json_object_set_new(log->ids, e.audit_id, json_integer((json_int_t)log->n)) != 0) {
        json_decref(e.ev);
        return SCN_ERR_NOMEM;
    }
    log->ev[log->n++] = e;
    /* the id string lives in e.ev, which the log keeps */
    return 0;
}

/* An EventList: its items, with the lines kh_yaml found for them. */
static int add_list(scn__audit_log *log, json_t *list, const kh_yaml_marks *marks, const char *file,
                    int line, scn_error *err)
{
    json_t *items = json_object_get(list, "items"), *item;
    size_t i;
    const char *av = str(list, "apiVersion");

    if (!av || strcmp(av, "audit.k8s.io/v1") != 0)
        return fail(err, file, line, "apiVersion", "expected audit.k8s.io/v1, found %s%s%s",
                    av ? "\"" : "", av ? av : "nothing", av ? "\"" : "");
    if (!json_is_array(items))
        return fail(err, file, line, "items", "an EventList needs items (a list of Events)");
    json_array_foreach(items, i, item)
    {
        int l = kh_yaml_mark_line(marks, item);
        char field[32];
        int rc;
        /* an Event inside a list may leave kind and apiVersion out */
        if (json_is_object(item) && !json_object_get(item, "kind"))
            json_object_set_new(item, "kind", json_string("Event"));
        if (json_is_object(item) && !json_object_get(item, "apiVersion"))
            json_object_set_new(item, "apiVersion", json_string(av));
        rc = add_event(log, item, file, l ? l : line, err);
        if (rc == SCN_ERR_INPUT && err && !l) {
            snprintf(field, sizeof field, "items[%zu]", i);
            if (err->field[0]) {
                char f[sizeof err->field + sizeof field + 2];
                snprintf(f, sizeof f, "%s.%s", field, err->field);
                snprintf(err->field, sizeof err->field, "%.*s", (int)sizeof err->field - 1, f);
            } else {
                snprintf(err->field, sizeof err->field, "%s", field);
            }
        }
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int read_all(const char *path, char **buf, size_t *len, scn_error *err)
{
    FILE *f = fopen(path, "rbe");
    size_t cap = 0, n;

    *buf = NULL;
    *len = 0;
    if (!f) {
        if (err) {
            memset(err, 0, sizeof *err);
            err->code = SCN_ERR_IO;
            snprintf(err->file, sizeof err->file, "%s", path);
            snprintf(err->message, sizeof err->message, "cannot read: %s", strerror(errno));
        }
        return SCN_ERR_IO;
    }
    do {
        if (*len + 1 >= cap) {
            char *p;
            cap = cap ? cap * 2 : 65536;
            p = cap > (size_t)2 << 30 ? NULL : realloc(*buf, cap);
            if (!p) {
                fclose(f);
                free(*buf);
                *buf = NULL;
                return fail(err, path, 0, "", "too large to read");
            }
            *buf = p;
        }
        n = fread(*buf + *len, 1, cap - *len - 1, f);
        *len += n;
    } while (n > 0);
    fclose(f);
    (*buf)[*len] = '\0';
    return 0;
}

/* A document that is not one JSON value per line: one EventList (or an
 * Event) spread over lines, read with positions. */
static int read_document(scn__audit_log *log, const char *path, const char *buf, size_t len,
                         scn_error *err)
{
    kh_yaml_error yerr = {0};
    kh_yaml_marks *marks = NULL;
    json_t *docs = NULL, *doc;
    size_t i;
    int rc = 0;

    if (kh_yaml_load_marked(buf, len, &docs, &marks, &yerr) != 0)
        return fail(err, path, yerr.line, "", "not JSON: %s", yerr.message);
    json_array_foreach(docs, i, doc)
    {
        int line = kh_yaml_mark_line(marks, doc);
        const char *kind = str(doc, "kind");
        if (kind && !strcmp(kind, "EventList"))
            rc = add_list(log, doc, marks, path, line ? line : 1, err);
        else
            rc = add_event(log, doc, path, line ? line : 1, err);
        if (rc != 0)
            break;
    }
    json_decref(docs);
    kh_yaml_marks_free(marks);
    return rc;
}

int scn__audit_read(scn__audit_log *log, const char *path, scn_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    int rc;

    if ((rc = read_all(path, &buf, &len, err)) != 0)
        return rc;
    rc = scn__audit_read_buf(log, path, buf, len, err);
    free(buf);
    return rc;
}

int scn__audit_read_buf(scn__audit_log *log, const char *path, const char *buf, size_t len,
                        scn_error *err)
{
    int rc, line = 0;
    const char *p, *end;
    bool lines = true;

    if (!log->ids && !(log->ids = json_object()))
        return SCN_ERR_NOMEM;
    /* JSON lines: every non-blank line is a whole JSON object. */
    for (p = buf; lines && p < buf + len; p = end + 1) {
        end = memchr(p, '\n', (size_t)(buf + len - p));
        if (!end)
            end = buf + len;
        const char *q = p;
        while (q < end && isspace((unsigned char)*q))
            q++;
        if (q == end)
            continue;
        if (*q != '{' || end[-1 - (end > p && end[-1] == '\r')] != '}') {
            lines = false;
            break;
        }
        break; /* decided by the first line; checked line by line below */
    }
    if (!lines) {
        return read_document(log, path, buf, len, err);
    }
    for (p = buf; p < buf + len; p = end + 1) {
        json_error_t jerr;
        json_t *ev;
        end = memchr(p, '\n', (size_t)(buf + len - p));
        if (!end)
            end = buf + len;
        line++;
        const char *q = p;
        while (q < end && isspace((unsigned char)*q))
            q++;
        if (q == end)
            continue;
        ev = json_loadb(p, (size_t)(end - p), 0, &jerr);
        if (!ev) {
            /* the first line is a whole object but the file is one document */
            if (line == 1 || (log->raw == 0 && line > 1))
                rc = read_document(log, path, buf, len, err);
            else
                rc = fail(err, path, line, "", "not JSON: %s", jerr.text);
            return rc;
        }
        if (json_is_object(ev) && str(ev, "kind") && !strcmp(str(ev, "kind"), "EventList"))
            rc = add_list(log, ev, NULL, path, line, err);
        else
            rc = add_event(log, ev, path, line, err);
        json_decref(ev);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int by_time(const void *a, const void *b)
{
    const scn__audit_event *x = a, *y = b;

    if (x->received_ns != y->received_ns)
        return x->received_ns < y->received_ns ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void scn__audit_sort(scn__audit_log *log)
{
    if (log->n > 1)
        qsort(log->ev, log->n, sizeof *log->ev, by_time);
    for (size_t i = 0; i < log->n; i++)
        json_object_set_new(log->ids, log->ev[i].audit_id, json_integer((json_int_t)i));
}

size_t scn__audit_requests(const scn__audit_log *log)
{
    const char *id;
    json_t *v;
    size_t n = log->n;
    json_object_foreach(log->skipped, id, v)
    {
        n += json_object_get(log->ids, id) == NULL;
    }
    return n;
}

void scn__audit_log_free(scn__audit_log *log)
{
    if (!log)
        return;
    for (size_t i = 0; i < log->n; i++)
        json_decref(log->ev[i].ev);
    free(log->ev);
    json_decref(log->ids);
    json_decref(log->skipped);
    memset(log, 0, sizeof *log);
}
