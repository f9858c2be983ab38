#include "http.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void fakeapi__resp_deinit(fakeapi__resp *resp)
{
    free(resp->body);
    resp->body = NULL;
    resp->body_len = 0;
    free(resp->warnings);
    resp->warnings = NULL;
}

void fakeapi__resp_warn(fakeapi__resp *resp, const char *text)
{
    /* A warning is one header line: newlines in the text become spaces. */
    size_t had = resp->warnings ? strlen(resp->warnings) : 0, n = strlen(text);
    if (had + n > (64u << 10))
        return;
    char *w = realloc(resp->warnings, had + n + 2);
    if (!w)
        return;
    for (size_t i = 0; i < n; i++)
        w[had + i] = text[i] == '\n' || text[i] == '\r' ? ' ' : text[i];
    w[had + n] = '\n';
    w[had + n + 1] = '\0';
    resp->warnings = w;
}

void fakeapi__resp_take(fakeapi__resp *resp, int status, char *body, size_t len)
{
    free(resp->body);
    resp->status = status;
    resp->body = body;
    resp->body_len = len;
}

void fakeapi__resp_json(fakeapi__resp *resp, int status, json_t *body)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    if (!text) {
        static const char oom[] = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                                  "\"status\":\"Failure\",\"message\":\"out of memory\","
                                  "\"reason\":\"InternalError\",\"code\":500}";
        fakeapi__resp_take(resp, 500, strdup(oom), sizeof oom - 1);
        return;
    }
    fakeapi__resp_take(resp, status, text, strlen(text));
}

const char *fakeapi__reason_for(int status)
{
    switch (status) {
    case 400:
        return "BadRequest";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "NotFound";
    case 405:
        return "MethodNotAllowed";
    case 406:
        return "NotAcceptable";
    case 409:
        return "Conflict";
    case 410:
        return "Expired";
    case 413:
        return "RequestEntityTooLarge";
    case 415:
        return "UnsupportedMediaType";
    case 422:
        return "Invalid";
    case 429:
        return "TooManyRequests";
    case 503:
        return "ServiceUnavailable";
    case 504:
        return "Timeout";
    default:
        return status >= 500 ? "InternalError" : "BadRequest";
    }
}

json_t *fakeapi__status_new(int status, const char *reason, const char *message, json_t *details)
{
    json_t *st = json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:i}", "kind", "Status", "apiVersion",
                           "v1", "metadata", "status", "Failure", "message", message, "reason",
                           reason ? reason : fakeapi__reason_for(status), "code", status);
    if (st && details)
        json_object_set(st, "details", details);
    json_decref(details);
    return st;
}

void fakeapi__resp_verror(fakeapi__resp *resp, int status, const char *reason, json_t *details,
                          const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    fakeapi__resp_json(resp, status, fakeapi__status_new(status, reason, msg, details));
}

void fakeapi__resp_error(fakeapi__resp *resp, int status, const char *reason, json_t *details,
                         const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fakeapi__resp_verror(resp, status, reason, details, fmt, ap);
    va_end(ap);
}

const char *fakeapi__q(const fakeapi__req *req, const char *name)
{
    return json_string_value(json_object_get(req->query, name));
}

int fakeapi__parse_bool(const char *v, bool *out)
{
    /* strconv.ParseBool's words, any case (Python sends "True"), and the
     * empty value, which kube-apiserver takes as true ("?watch"). */
    static const char *const yes[] = {"", "1", "t", "true", NULL};
    static const char *const no[] = {"0", "f", "false", NULL};
    for (const char *const *w = yes; *w; w++)
        if (!strcasecmp(v, *w))
            return *out = true, 0;
    for (const char *const *w = no; *w; w++)
        if (!strcasecmp(v, *w))
            return *out = false, 0;
    return -1;
}

int fakeapi__parse_int(const char *v, long long *out)
{
    const char *p = v;
    bool neg = *p == '-';
    if (*p == '-' || *p == '+')
        p++;
    if (!*p)
        return -1;
    unsigned long long n = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1; /* no spaces, no hex, no trailing text (strtoll takes some) */
        if (n > ((unsigned long long)LLONG_MAX + 1 - (unsigned)(*p - '0')) / 10)
            return -1;
        n = n * 10 + (unsigned)(*p - '0');
    }
    if (!neg && n > (unsigned long long)LLONG_MAX)
        return -1;
    *out = neg ? (long long)(0 - n) : (long long)n;
    return 0;
}

bool fakeapi__q_bool(const fakeapi__req *req, const char *name)
{
    const char *v = fakeapi__q(req, name);
    bool b = false;
    return v && fakeapi__parse_bool(v, &b) == 0 && b;
}

long long fakeapi__q_int(const fakeapi__req *req, const char *name, long long def)
{
    const char *v = fakeapi__q(req, name);
    if (!v || !*v)
        return def;
    long long n;
    return fakeapi__parse_int(v, &n) < 0 || n < 0 ? -1 : n;
}

bool fakeapi__media_is(const char *content_type, const char *type)
{
    if (!content_type)
        return false;
    size_t n = strcspn(content_type, ";");
    while (n > 0 && content_type[n - 1] == ' ')
        n--;
    return strlen(type) == n && !strncasecmp(content_type, type, n);
}
