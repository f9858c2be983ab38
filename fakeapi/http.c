#include "http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void fakeapi__resp_deinit(fakeapi__resp *resp)
{
    free(resp->body);
    resp->body = NULL;
    resp->body_len = 0;
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

bool fakeapi__q_bool(const fakeapi__req *req, const char *name)
{
    const char *v = fakeapi__q(req, name);
    return v && (!strcasecmp(v, "true") || !strcmp(v, "1"));
}

long long fakeapi__q_int(const fakeapi__req *req, const char *name, long long def)
{
    const char *v = fakeapi__q(req, name);
    if (!v || !*v)
        return def;
    char *end;
    long long n = strtoll(v, &end, 10);
    return (*end || n < 0) ? -1 : n;
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
