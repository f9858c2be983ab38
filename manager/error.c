/*
 * error.c - libctrl error codes, the Go-style predicates, and turning the
 * server's answers into a ctrl_error with the Status kept whole.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error_int.h"

/* Kubernetes Status reasons (apimachinery metav1.StatusReason*) we tell apart. */
static const struct {
    const char *reason;
    int code;
} reasons[] = {
    {"BadRequest", CTRL_ERR_BAD_REQUEST},
    {"Unauthorized", CTRL_ERR_UNAUTHORIZED},
    {"Forbidden", CTRL_ERR_FORBIDDEN},
    {"NotFound", CTRL_ERR_NOT_FOUND},
    {"MethodNotAllowed", CTRL_ERR_METHOD_NOT_ALLOWED},
    {"NotAcceptable", CTRL_ERR_NOT_ACCEPTABLE},
    {"AlreadyExists", CTRL_ERR_ALREADY_EXISTS},
    {"Conflict", CTRL_ERR_CONFLICT},
    {"Gone", CTRL_ERR_GONE},
    {"Expired", CTRL_ERR_EXPIRED},
    {"RequestEntityTooLarge", CTRL_ERR_TOO_LARGE},
    {"UnsupportedMediaType", CTRL_ERR_UNSUPPORTED_MEDIA},
    {"Invalid", CTRL_ERR_INVALID},
    {"TooManyRequests", CTRL_ERR_TOO_MANY_REQUESTS},
    {"InternalError", CTRL_ERR_INTERNAL_ERROR},
    {"ServerTimeout", CTRL_ERR_SERVER_TIMEOUT},
    {"ServiceUnavailable", CTRL_ERR_SERVICE_UNAVAILABLE},
    {"Timeout", CTRL_ERR_API_TIMEOUT},
};

/* What to call an HTTP status when the server sent no Status body. */
static const struct {
    int http;
    int code;
    const char *reason;
    const char *message;
} statuses[] = {
    {400, CTRL_ERR_BAD_REQUEST, "BadRequest",
     "the server rejected our request for an unknown reason"},
    {401, CTRL_ERR_UNAUTHORIZED, "Unauthorized",
     "the server has asked for the client to provide credentials"},
    {403, CTRL_ERR_FORBIDDEN, "Forbidden",
     "the server does not allow access to the requested resource"},
    {404, CTRL_ERR_NOT_FOUND, "NotFound", "the server could not find the requested resource"},
    {405, CTRL_ERR_METHOD_NOT_ALLOWED, "MethodNotAllowed",
     "the server does not allow this method on the requested resource"},
    {406, CTRL_ERR_NOT_ACCEPTABLE, "NotAcceptable",
     "the server was unable to respond with a content type that the client supports"},
    {409, CTRL_ERR_CONFLICT, "Conflict", "the server reported a conflict"},
    {410, CTRL_ERR_GONE, "Gone", "the server no longer has the requested resource"},
    {413, CTRL_ERR_TOO_LARGE, "RequestEntityTooLarge",
     "the server has rejected the request because it is too large"},
    {415, CTRL_ERR_UNSUPPORTED_MEDIA, "UnsupportedMediaType",
     "the server was unable to handle the media type requested"},
    {422, CTRL_ERR_INVALID, "Invalid",
     "the server rejected our request due to an error in our request"},
    {429, CTRL_ERR_TOO_MANY_REQUESTS, "TooManyRequests",
     "the server has received too many requests and has asked us to try again later"},
    {500, CTRL_ERR_INTERNAL_ERROR, "InternalError",
     "an error on the server has prevented the request from succeeding"},
    {503, CTRL_ERR_SERVICE_UNAVAILABLE, "ServiceUnavailable",
     "the server is currently unable to handle the request"},
    {504, CTRL_ERR_API_TIMEOUT, "Timeout",
     "the server was unable to return a response in the time allotted"},
};

const char *ctrl_strerror(int code)
{
    switch (code) {
    case CTRL_OK:
        return "success";
    case CTRL_ERR_NOMEM:
        return "out of memory";
    case CTRL_ERR_ARG:
        return "invalid argument";
    case CTRL_ERR_CONFIG:
        return "invalid or missing configuration";
    case CTRL_ERR_IO:
        return "file could not be read";
    case CTRL_ERR_TRANSPORT:
        return "could not reach the API server";
    case CTRL_ERR_TIMEOUT:
        return "request timed out";
    case CTRL_ERR_PROTOCOL:
        return "unreadable answer from the API server";
    case CTRL_ERR_NO_MATCH:
        return "no matching kind or resource on the server";
    case CTRL_ERR_CANCELLED:
        return "cancelled";
    case CTRL_ERR_UNSUPPORTED:
        return "not supported";
    case CTRL_ERR_LEADERSHIP_LOST:
        return "leadership lost";
    case CTRL_ERR_ALREADY_OWNED:
        return "already owned by another controller";
    case CTRL_ERR_INTERNAL:
        return "internal error in libctrl";
    case CTRL_ERR_BAD_REQUEST:
        return "bad request";
    case CTRL_ERR_UNAUTHORIZED:
        return "unauthorized";
    case CTRL_ERR_FORBIDDEN:
        return "forbidden";
    case CTRL_ERR_NOT_FOUND:
        return "not found";
    case CTRL_ERR_METHOD_NOT_ALLOWED:
        return "method not allowed";
    case CTRL_ERR_NOT_ACCEPTABLE:
        return "not acceptable";
    case CTRL_ERR_ALREADY_EXISTS:
        return "already exists";
    case CTRL_ERR_CONFLICT:
        return "conflict";
    case CTRL_ERR_GONE:
        return "gone";
    case CTRL_ERR_EXPIRED:
        return "resource version expired";
    case CTRL_ERR_TOO_LARGE:
        return "request entity too large";
    case CTRL_ERR_UNSUPPORTED_MEDIA:
        return "unsupported media type";
    case CTRL_ERR_INVALID:
        return "invalid";
    case CTRL_ERR_TOO_MANY_REQUESTS:
        return "too many requests";
    case CTRL_ERR_INTERNAL_ERROR:
        return "internal server error";
    case CTRL_ERR_SERVER_TIMEOUT:
        return "server timeout";
    case CTRL_ERR_SERVICE_UNAVAILABLE:
        return "service unavailable";
    case CTRL_ERR_API_TIMEOUT:
        return "timeout";
    case CTRL_ERR_API_OTHER:
        return "error answer from the API server";
    default:
        return "unknown error";
    }
}

void ctrl_error_deinit(ctrl_error *err)
{
    if (!err)
        return;
    json_decref(err->status);
    memset(err, 0, sizeof *err);
}

bool ctrl_err_is_api(int code)
{
    return code <= CTRL_ERR_API_FIRST && code >= CTRL_ERR_API_LAST;
}

bool ctrl_err_is_transport(int code)
{
    return code == CTRL_ERR_TRANSPORT || code == CTRL_ERR_TIMEOUT;
}

bool ctrl_err_is_bad_request(int code)
{
    return code == CTRL_ERR_BAD_REQUEST;
}
bool ctrl_err_is_unauthorized(int code)
{
    return code == CTRL_ERR_UNAUTHORIZED;
}
bool ctrl_err_is_forbidden(int code)
{
    return code == CTRL_ERR_FORBIDDEN;
}
bool ctrl_err_is_not_found(int code)
{
    return code == CTRL_ERR_NOT_FOUND;
}
bool ctrl_err_is_method_not_supported(int code)
{
    return code == CTRL_ERR_METHOD_NOT_ALLOWED;
}
bool ctrl_err_is_not_acceptable(int code)
{
    return code == CTRL_ERR_NOT_ACCEPTABLE;
}
bool ctrl_err_is_already_exists(int code)
{
    return code == CTRL_ERR_ALREADY_EXISTS;
}
bool ctrl_err_is_conflict(int code)
{
    return code == CTRL_ERR_CONFLICT;
}
bool ctrl_err_is_gone(int code)
{
    return code == CTRL_ERR_GONE || code == CTRL_ERR_EXPIRED;
}
bool ctrl_err_is_resource_expired(int code)
{
    return code == CTRL_ERR_EXPIRED;
}
bool ctrl_err_is_request_entity_too_large(int code)
{
    return code == CTRL_ERR_TOO_LARGE;
}
bool ctrl_err_is_unsupported_media_type(int code)
{
    return code == CTRL_ERR_UNSUPPORTED_MEDIA;
}
bool ctrl_err_is_invalid(int code)
{
    return code == CTRL_ERR_INVALID;
}
bool ctrl_err_is_too_many_requests(int code)
{
    return code == CTRL_ERR_TOO_MANY_REQUESTS;
}
bool ctrl_err_is_internal_error(int code)
{
    return code == CTRL_ERR_INTERNAL_ERROR;
}
bool ctrl_err_is_server_timeout(int code)
{
    return code == CTRL_ERR_SERVER_TIMEOUT;
}
bool ctrl_err_is_service_unavailable(int code)
{
    return code == CTRL_ERR_SERVICE_UNAVAILABLE;
}
bool ctrl_err_is_timeout(int code)
{
    return code == CTRL_ERR_API_TIMEOUT || code == CTRL_ERR_TIMEOUT;
}
bool ctrl_err_is_no_match(int code)
{
    return code == CTRL_ERR_NO_MATCH;
}

int ctrl_err_from_status(int http_status, const char *reason)
{
    if (reason && *reason) {
        for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
            if (!strcmp(reasons[i].reason, reason))
                return reasons[i].code;
    }
    if (http_status >= 200 && http_status < 300)
        return 0;
    for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++)
        if (statuses[i].http == http_status)
            return statuses[i].code;
    return CTRL_ERR_API_OTHER;
}

int ctrl__error_set(ctrl_error *err, int code, const char *fmt, ...)
{
    if (!err)
        return code;
    ctrl_error_deinit(err);
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}

/* Copy at most cap-1 bytes, cutting on a UTF-8 character boundary. */
static void copy_text(char *dst, size_t cap, const char *src, size_t len)
{
    if (len >= cap) {
        len = cap - 1;
        while (len > 0 && ((unsigned char)src[len] & 0xC0) == 0x80)
            len--;
    }
    memcpy(dst, src, len);
    dst[len] = '\0';
}

/* Fill err's summary fields from a Status it now owns. */
static void adopt_status(ctrl_error *err, json_t *status, int http_status, int retry_after)
{
    const char *reason = json_string_value(json_object_get(status, "reason"));
    const char *message = json_string_value(json_object_get(status, "message"));
    json_int_t scode = json_integer_value(json_object_get(status, "code"));
    err->status = status;
    err->http_status = http_status ? http_status : (int)scode;
    copy_text(err->reason, sizeof err->reason, reason ? reason : "", reason ? strlen(reason) : 0);
    copy_text(err->message, sizeof err->message, message ? message : "",
              message ? strlen(message) : 0);
    err->details = json_object_get(status, "details");
    if (!json_is_object(err->details))
        err->details = NULL;
    err->causes = err->details ? json_object_get(err->details, "causes") : NULL;
    if (!json_is_array(err->causes))
        err->causes = NULL;
    err->retry_after_seconds = retry_after;
    if (!retry_after && err->details) {
        json_int_t ra = json_integer_value(json_object_get(err->details, "retryAfterSeconds"));
        if (ra > 0 && ra < 86400)
            err->retry_after_seconds = (int)ra;
    }
}

/* The code for a Status: its reason, else its code, else the HTTP status. */
static int status_code(json_t *status, int http_status)
{
    const char *reason = json_string_value(json_object_get(status, "reason"));
    json_int_t scode = json_integer_value(json_object_get(status, "code"));
    int code = ctrl_err_from_status(scode ? (int)scode : http_status, reason);
    return code ? code : CTRL_ERR_API_OTHER;
}

int ctrl__error_from_status(ctrl_error *err, json_t *status)
{
    int code = status_code(status, 0);
    if (!err)
        return code;
    ctrl_error_deinit(err);
    err->code = code;
    adopt_status(err, json_incref(status), 0, 0);
    return code;
}

int ctrl__error_from_response(ctrl_error *err, int http_status, const char *body, size_t len,
                              int retry_after)
{
    json_t *status = NULL;
    if (body && len) {
        json_t *doc = json_loadb(body, len, 0, NULL);
        const char *kind = json_string_value(json_object_get(doc, "kind"));
        if (kind && !strcmp(kind, "Status"))
            status = doc;
        else
            json_decref(doc);
    }
    if (!status) {
        /* No Status: build one as client-go does, keeping the body's start. */
        const char *reason = "", *message = "unknown error";
        for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
            if (statuses[i].http == http_status) {
                reason = statuses[i].reason;
                message = statuses[i].message;
            }
        }
        char text[512];
        if (body && len) {
            char snippet[256];
            copy_text(snippet, sizeof snippet, body, len);
            snprintf(text, sizeof text, "%s (%s)", message, snippet);
        } else {
            snprintf(text, sizeof text, "%s (HTTP %d)", message, http_status);
        }
        status = json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:i}", "kind", "Status", "apiVersion",
                           "v1", "metadata", "status", "Failure", "message", text, "reason", reason,
                           "code", http_status);
        if (!status)
            return ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory building a Status");
    }
    int code = status_code(status, http_status);
    if (!err) {
        json_decref(status);
        return code;
    }
    ctrl_error_deinit(err);
    err->code = code;
    adopt_status(err, status, http_status, retry_after);
    return code;
}

/* ---- the last failure of this thread ---- */

static _Thread_local ctrl__failure last_failure;

void ctrl__failure_clear(void)
{
    last_failure.code = 0;
}

const ctrl__failure *ctrl__failure_last(void)
{
    return &last_failure;
}

/* Copy the n bytes of s into dst (cap bytes), cut if need be. */
static void copy_n(char *dst, size_t cap, const char *s, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

void ctrl__failure_note(const char *method, const char *path, const ctrl_error *e)
{
    ctrl__failure *f = &last_failure;
    memset(f, 0, sizeof *f);
    f->code = e && e->code ? e->code : CTRL_ERR_INTERNAL;
    if (e) {
        snprintf(f->reason, sizeof f->reason, "%s", e->reason);
        snprintf(f->message, sizeof f->message, "%s", e->message);
    }
    if (!f->message[0])
        snprintf(f->message, sizeof f->message, "%s", ctrl_strerror(f->code));
    /* Segments of "/api/v1/..." or "/apis/group/version/...", query cut. */
    const char *seg[8];
    size_t len[8], n = 0;
    const char *p = path ? path : "";
    size_t plen = strcspn(p, "?");
    bool watch = strstr(p + plen, "watch=true") || strstr(p + plen, "watch=1");
    for (size_t i = 0; i < plen && n < 8;) {
        while (i < plen && p[i] == '/')
            i++;
        if (i >= plen)
            break;
        size_t j = i;
        while (j < plen && p[j] != '/')
            j++;
        seg[n] = p + i;
        len[n++] = j - i;
        i = j;
    }
    size_t r = n > 0 && len[0] == 3 && !strncmp(seg[0], "api", 3) ? 2 : 3; /* after the version */
    const char *ns = NULL, *res = NULL, *name = NULL;
    size_t nsl = 0, resl = 0, namel = 0;
    if (r < n && len[r] == 10 && !strncmp(seg[r], "namespaces", 10) && r + 2 < n) {
        ns = seg[r + 1], nsl = len[r + 1];
        r += 2;
    }
    if (r < n) {
        res = seg[r], resl = len[r];
        if (r + 1 < n)
            name = seg[r + 1], namel = len[r + 1];
    }
    const char *m = method ? method : "";
    const char *verb = !strcmp(m, "POST")    ? "create"
                       : !strcmp(m, "PUT")   ? "update"
                       : !strcmp(m, "PATCH") ? "patch"
                       : !strcmp(m, "DELETE") ? (name ? "delete" : "deletecollection")
                       : watch               ? "watch"
                       : name                ? "get"
                                             : "list";
    snprintf(f->verb, sizeof f->verb, "%s", verb);
    if (res)
        copy_n(f->resource, sizeof f->resource, res, resl);
    char nsbuf[256] = "", namebuf[256] = "";
    if (ns)
        copy_n(nsbuf, sizeof nsbuf, ns, nsl);
    if (name)
        copy_n(namebuf, sizeof namebuf, name, namel);
    if (name && ns)
        snprintf(f->object, sizeof f->object, "%s/%s", nsbuf, namebuf);
    else if (name)
        snprintf(f->object, sizeof f->object, "%s", namebuf);
    else if (ns)
        snprintf(f->object, sizeof f->object, "%s/", nsbuf);
}
