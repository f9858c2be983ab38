/*
 * http.h - one API request and its answer, independent of the HTTP library.
 *
 * front.c fills a fakeapi__req from libmicrohttpd and sends the
 * fakeapi__resp back; fakeapi_apply() and the other in-process calls build a
 * fakeapi__req by hand and read the fakeapi__resp, so both paths run the same
 * handlers.
 */
#ifndef FAKEAPI_HTTP_H
#define FAKEAPI_HTTP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

struct fakeapi__watch;
struct fakeapi__fault_plan;

typedef struct fakeapi__req {
    const char *method;       /* "GET", "POST", ... */
    const char *path;         /* without the query string */
    json_t *query;            /* object: parameter -> string (borrowed); never NULL */
    const char *content_type; /* may be NULL */
    const char *accept;       /* may be NULL */
    const char *user_agent;   /* may be NULL */
    const char *body;
    size_t body_len;
    const struct fakeapi__fault_plan *plan; /* faults that shape the answer, or NULL */
    const char *token;                      /* bearer token, or NULL */
} fakeapi__req;

typedef struct fakeapi__resp {
    int status; /* HTTP status */
    char *body; /* malloc'ed; owned by the response */
    size_t body_len;
    const char *content_type;     /* static string; NULL = application/json */
    int retry_after;              /* seconds, > 0 to send Retry-After */
    struct fakeapi__watch *watch; /* set when the answer is a watch stream */
    char *warnings;               /* malloc'ed: warning texts, each ending in '\n', or NULL */
} fakeapi__resp;

/* Add a warning (sent as a "Warning: 299 - ..." header); text is copied. */
void fakeapi__resp_warn(fakeapi__resp *resp, const char *text);

/* Free what a response owns (not the struct). */
void fakeapi__resp_deinit(fakeapi__resp *resp);

/* Answer with a JSON value (stolen), serialised compactly. */
void fakeapi__resp_json(fakeapi__resp *resp, int status, json_t *body);

/* Answer with text the response takes over. */
void fakeapi__resp_take(fakeapi__resp *resp, int status, char *body, size_t len);

/*
 * Answer with a Kubernetes Status error: kind Status, apiVersion v1,
 * status Failure, message, reason (NULL = the usual one for the code), code,
 * details (stolen; may be NULL).
 */
void fakeapi__resp_error(fakeapi__resp *resp, int status, const char *reason, json_t *details,
                         const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void fakeapi__resp_verror(fakeapi__resp *resp, int status, const char *reason, json_t *details,
                          const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

/* The conventional reason for an HTTP error code ("NotFound"). */
const char *fakeapi__reason_for(int status);

/* A Status error body as a new JSON object. */
json_t *fakeapi__status_new(int status, const char *reason, const char *message, json_t *details);

/*
 * Query helpers: a parameter's value or NULL; booleans as fakeapi__parse_bool
 * (garbage is false); integers return def when absent and -1 on garbage or
 * a negative value.
 */
const char *fakeapi__q(const fakeapi__req *req, const char *name);
bool fakeapi__q_bool(const fakeapi__req *req, const char *name);
long long fakeapi__q_int(const fakeapi__req *req, const char *name, long long def);

/* A query boolean: strconv.ParseBool's words in any case, or "" (true).
 * Returns 0, or -1 for anything else (*out untouched). */
int fakeapi__parse_bool(const char *v, bool *out);

/* A decimal integer as strconv.ParseInt reads it: an optional sign, digits,
 * nothing else, within long long. Returns 0, or -1 (*out untouched). */
int fakeapi__parse_int(const char *v, long long *out);

/* True when the Content-Type's media type (parameters ignored) equals type. */
bool fakeapi__media_is(const char *content_type, const char *type);

#endif
