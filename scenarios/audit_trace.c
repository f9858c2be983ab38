/*
 * audit_trace.c - a run's trace as an audit log and back (scn/audit.h).
 *
 * A trace (fakeapi's, docs/faults.md) has three kinds of lines: request
 * (client, verb, method, path, code, rv, t), fault (a rule fired on a
 * request) and event (a watch event delivered). Each request becomes one
 * audit.k8s.io/v1 Event at level Metadata, stage ResponseComplete, with
 * userAgent, verb, requestURI, objectRef (from the path), responseStatus
 * and both timestamps at t (nanoseconds kept); what an Event has no field
 * for (the method, the answer's resourceVersion, the fault lines of that
 * request) goes into its annotations, so audit-to-trace gives back the same
 * lines, byte for byte. Watch-event lines have no place in an audit log and
 * are counted, not converted; so are fault lines that belong to no request
 * (a fault fired on a watch stream).
 *
 * One thread, the caller's.
 */
#include "scn/audit.h"
#include "audit_event.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ANN_METHOD "kube-harness.dev/trace-method"
#define ANN_RV "kube-harness.dev/trace-rv"
#define ANN_FAULTS "kube-harness.dev/trace-faults"

static int fail(scn_error *err, int code, const char *file, int line, const char *field,
                const char *msg)
{
    if (err) {
        memset(err, 0, sizeof *err);
        err->code = code;
        snprintf(err->file, sizeof err->file, "%s", file);
        err->line = line;
        snprintf(err->field, sizeof err->field, "%s", field);
        snprintf(err->message, sizeof err->message, "%s", msg);
    }
    return code;
}

static void fmt_time(int64_t ns, char *buf, size_t len)
{
    time_t s = (time_t)(ns / 1000000000);
    struct tm tm;
    int64_t frac = ns % 1000000000;

    if (frac < 0) {
        frac += 1000000000;
        s--;
    }
    gmtime_r(&s, &tm);
    snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%09" PRId64 "Z", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
}

/* objectRef from a path: /api/v1/[namespaces/NS/]RES[/NAME[/SUB]] or
 * /apis/GROUP/VERSION/...; NULL for paths that name no resource. */
static json_t *object_ref(const char *path)
{
    char buf[2048], *seg[16], *save = NULL;
    size_t n = 0, i;
    json_t *ref;

    snprintf(buf, sizeof buf, "%s", path);
    for (char *t = strtok_r(buf, "/", &save); t && n < 16; t = strtok_r(NULL, "/", &save))
        seg[n++] = t;
    if (n >= 3 && !strcmp(seg[0], "api")) {
        ref = json_pack("{s:s, s:s}", "apiGroup", "", "apiVersion", seg[1]);
        i = 2;
    } else if (n >= 4 && !strcmp(seg[0], "apis")) {
        ref = json_pack("{s:s, s:s}", "apiGroup", seg[1], "apiVersion", seg[2]);
        i = 3;
    } else {
        return NULL;
    }
    if (n > i + 1 && !strcmp(seg[i], "namespaces") && n > i + 2) {
        json_object_set_new(ref, "namespace", json_string(seg[i + 1]));
        i += 2;
    }
    json_object_set_new(ref, "resource", json_string(seg[i]));
    if (n > i + 1)
        json_object_set_new(ref, "name", json_string(seg[i + 1]));
    if (n > i + 2)
        json_object_set_new(ref, "subresource", json_string(seg[i + 2]));
    return ref;
}

#define MAX_OUT ((size_t)1 << 30)

static int append(char **out, size_t *len, size_t *cap, const char *s)
{
    size_t n = strlen(s);
    if (*len + n + 2 > MAX_OUT)
        return -1;
    if (*len + n + 2 > *cap) {
        size_t c = *cap ? *cap * 2 : 65536;
        while (c < *len + n + 2)
            c *= 2;
        char *p = realloc(*out, c);
        if (!p)
            return -1;
        *out = p;
        *cap = c;
    }
    memcpy(*out + *len, s, n);
    *len += n;
    (*out)[(*len)++] = '\n';
    (*out)[*len] = '\0';
    return 0;
}

static const char *jstr(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

int scn_trace_to_audit(const char *trace_path, char **out, size_t *skipped, scn_error *err)
{
    FILE *f = fopen(trace_path, "r");
    char *line = NULL, *text = NULL;
    size_t cap = 0, len = 0, tcap = 0, skip = 0;
    long n = 0;
    json_t *pending = json_array(); /* fault lines waiting for their request */
    int rc = 0;

    if (!f) {
        json_decref(pending);
        return fail(err, SCN_ERR_IO, trace_path, 0, "", strerror(errno));
    }
    if (!(text = strdup(""))) {
        rc = SCN_ERR_NOMEM;
        goto out;
    }
    while (getline(&line, &cap, f) > 0) {
        json_error_t jerr;
        json_t *j;
        const char *kind;
        n++;
        if (line[strspn(line, " \t\r\n")] == '\0')
            continue;
        j = json_loads(line, 0, &jerr);
        kind = jstr(j, "kind");
        if (!j || !kind || !json_is_integer(json_object_get(j, "t"))) {
            json_decref(j);
            rc = fail(err, SCN_ERR_INPUT, trace_path, (int)n, j ? (kind ? "t" : "kind") : "",
                      j ? "not a trace line (kind and t)" : "not JSON");
            goto out;
        }
        if (!strcmp(kind, "fault") && jstr(j, "verb") && strcmp(jstr(j, "verb"), "watch") != 0) {
            json_array_append_new(pending, j);
            continue;
        }
        if (strcmp(kind, "request") != 0) {
            skip++;
            json_decref(j);
            continue;
        }
        const char *client = jstr(j, "client"), *verb = jstr(j, "verb"), *path = jstr(j, "path"),
                   *method = jstr(j, "method"), *rv = jstr(j, "rv");
        if (!client || !verb || !path || !method || !json_is_integer(json_object_get(j, "code"))) {
            json_decref(j);
            rc = fail(err, SCN_ERR_INPUT, trace_path, (int)n, "",
                      "a request line needs client, verb, method, path and code");
            goto out;
        }
        char ts[64], id[64];
        fmt_time((int64_t)json_integer_value(json_object_get(j, "t")), ts, sizeof ts);
        snprintf(id, sizeof id, "00000000-0000-4000-8000-%012ld", n);
        json_t *ann = json_pack("{s:s, s:s}", ANN_METHOD, method, ANN_RV, rv ? rv : "");
        /* the faults fired on this request: the pending ones of its client and verb */
        json_t *mine = json_array();
        for (size_t i = 0; i < json_array_size(pending);) {
            json_t *fl = json_array_get(pending, i);
            if (jstr(fl, "client") && !strcmp(jstr(fl, "client"), client) && jstr(fl, "verb") &&
                !strcmp(jstr(fl, "verb"), verb)) {
                json_array_append(mine, fl);
                json_array_remove(pending, i);
            } else {
                i++;
            }
        }
        if (json_array_size(mine)) {
            char *ft = json_dumps(mine, JSON_COMPACT | JSON_SORT_KEYS);
            json_object_set_new(ann, ANN_FAULTS, json_string(ft ? ft : "[]"));
            free(ft);
        }
        json_decref(mine);
        json_t *ev =
            json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:{}, s:s, s:{s:{}, s:I}, "
                      "s:s, s:s, s:o}",
                      "kind", "Event", "apiVersion", "audit.k8s.io/v1", "level", "Metadata",
                      "auditID", id, "stage", "ResponseComplete", "requestURI", path, "verb", verb,
                      "user", "userAgent", client, "responseStatus", "metadata", "code",
                      json_integer_value(json_object_get(j, "code")), "requestReceivedTimestamp",
                      ts, "stageTimestamp", ts, "annotations", ann);
        json_t *ref = object_ref(path);
        if (ref)
            json_object_set_new(ev, "objectRef", ref);
        char *s = ev ? json_dumps(ev, JSON_COMPACT) : NULL;
        json_decref(ev);
        json_decref(j);
        if (!s || append(&text, &len, &tcap, s) < 0) {
            free(s);
            rc = SCN_ERR_NOMEM;
            goto out;
        }
        free(s);
    }
    skip += json_array_size(pending);
    if (skipped)
        *skipped = skip;
    *out = text;
    text = NULL;
out:
    free(text);
    free(line);
    fclose(f);
    json_decref(pending);
    return rc;
}

static const char *method_of(const char *verb)
{
    if (!strcmp(verb, "create"))
        return "POST";
    if (!strcmp(verb, "update"))
        return "PUT";
    if (!strcmp(verb, "patch"))
        return "PATCH";
    if (!strcmp(verb, "delete") || !strcmp(verb, "deletecollection"))
        return "DELETE";
    return "GET";
}

static int by_seq(const void *a, const void *b)
{
    const scn__audit_event *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int scn_audit_to_trace(const char *audit_path, char **out, scn_error *err)
{
    scn__audit_log log = {0};
    char *text = strdup("");
    size_t len = 0, cap = 0;
    int rc;

    if (!text)
        return SCN_ERR_NOMEM;
    if ((rc = scn__audit_read(&log, audit_path, err)) != 0)
        goto out;
    if (log.n > 1)
        qsort(log.ev, log.n, sizeof *log.ev, by_seq);
    for (size_t i = 0; i < log.n && rc == 0; i++) {
        const scn__audit_event *e = &log.ev[i];
        const json_t *ann = json_object_get(e->ev, "annotations");
        const char *st = jstr(e->ev, "stageTimestamp"), *faults = jstr(ann, ANN_FAULTS);
        int64_t t = scn__parse_rfc3339(st);
        char path[2048];
        if (!e->user_agent) {
            rc = fail(err, SCN_ERR_INPUT, e->file, e->line, "userAgent",
                      "required for a trace line (its client)");
            break;
        }
        if (t < 0) {
            rc = fail(err, SCN_ERR_INPUT, e->file, e->line, "stageTimestamp",
                      st ? "not an RFC 3339 time" : "required field is missing");
            break;
        }
        if (!json_object_get(e->ev, "responseStatus")) {
            rc = fail(err, SCN_ERR_INPUT, e->file, e->line, "responseStatus",
                      "required for a trace line (its code)");
            break;
        }
        if (faults) {
            json_t *arr = json_loads(faults, 0, NULL), *fl;
            size_t k;
            json_array_foreach(arr, k, fl)
            {
                char *s = json_dumps(fl, JSON_COMPACT | JSON_SORT_KEYS);
                if (!s || append(&text, &len, &cap, s) < 0)
                    rc = SCN_ERR_NOMEM;
                free(s);
            }
            json_decref(arr);
        }
        const char *rv = jstr(ann, ANN_RV);
        if (!rv)
            rv = jstr(json_object_get(json_object_get(e->ev, "responseObject"), "metadata"),
                      "resourceVersion");
        const char *method = jstr(ann, ANN_METHOD);
        snprintf(path, sizeof path, "%.*s", (int)strcspn(e->uri, "?"), e->uri);
        json_t *j =
            json_pack("{s:s, s:s, s:s, s:s, s:i, s:s, s:I, s:s}", "client", e->user_agent, "verb",
                      e->verb, "method", method ? method : method_of(e->verb), "path", path, "code",
                      e->code, "rv", rv ? rv : "", "t", (json_int_t)t, "kind", "request");
        char *s = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        json_decref(j);
        if (!s || append(&text, &len, &cap, s) < 0)
            rc = SCN_ERR_NOMEM;
        free(s);
    }
    if (rc == 0) {
        *out = text;
        text = NULL;
    }
out:
    free(text);
    scn__audit_log_free(&log);
    return rc;
}
