/*
 * ctrl/error.h - error codes of libctrl and the details behind them.
 *
 * Every libctrl function returns 0 or a negative ctrl_errcode. Codes below
 * CTRL_ERR_API_FIRST come from this side of the wire (arguments, memory,
 * configuration, the connection); codes from CTRL_ERR_API_FIRST down mean
 * the API server answered with an error, one code per Kubernetes Status
 * reason, so that a return code alone reads like Go's apierrors helpers:
 *
 *     if (ctrl_err_is_not_found(rc)) ...   (apierrors.IsNotFound(err))
 *
 * The optional, caller-owned ctrl_error keeps the whole story: the HTTP
 * status, the reason and message, and the server's Status body itself.
 *
 * Ownership: a ctrl_error must start zeroed (`ctrl_error err = {0};`). A
 * function that fills it first releases what it held, so one ctrl_error can
 * be reused across calls; release it at the end with ctrl_error_deinit().
 *
 * Threads: every function here is reentrant; a ctrl_error belongs to one
 * thread at a time.
 */
#ifndef CTRL_ERROR_H
#define CTRL_ERROR_H

#include <stdbool.h>
#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ctrl_errcode {
    CTRL_OK = 0,
    /* This side of the wire. */
    CTRL_ERR_NOMEM = -1,        /* out of memory */
    CTRL_ERR_ARG = -2,          /* bad argument (NULL, missing name or namespace, bad object) */
    CTRL_ERR_CONFIG = -3,       /* configuration missing or malformed (kubeconfig, in-cluster) */
    CTRL_ERR_IO = -4,           /* a file could not be read */
    CTRL_ERR_TRANSPORT = -5,    /* connection refused, reset, TLS failure: no HTTP answer */
    CTRL_ERR_TIMEOUT = -6,      /* the request's own timeout elapsed */
    CTRL_ERR_PROTOCOL = -7,     /* the server answered something unreadable */
    CTRL_ERR_NO_MATCH = -8,     /* discovery knows no such kind or resource (meta.NoKindMatch) */
    CTRL_ERR_CANCELLED = -9,    /* stopped by the caller (ctrl_watch_stop) */
    CTRL_ERR_UNSUPPORTED = -10, /* a feature libctrl does not implement (exec plugins) */
    CTRL_ERR_INTERNAL = -11,    /* a bug in libctrl: please report */
    CTRL_ERR_LEADERSHIP_LOST = -12, /* the manager's Lease was lost (ctrl_manager_start) */
    CTRL_ERR_ALREADY_OWNED = -13,   /* another controller owns the object (controllerutil) */

    /* The server answered with an error: one code per Status reason. */
    CTRL_ERR_API_FIRST = -100,
    CTRL_ERR_BAD_REQUEST = -100,         /* 400 BadRequest */
    CTRL_ERR_UNAUTHORIZED = -101,        /* 401 Unauthorized */
    CTRL_ERR_FORBIDDEN = -102,           /* 403 Forbidden */
    CTRL_ERR_NOT_FOUND = -103,           /* 404 NotFound */
    CTRL_ERR_METHOD_NOT_ALLOWED = -104,  /* 405 MethodNotAllowed */
    CTRL_ERR_NOT_ACCEPTABLE = -105,      /* 406 NotAcceptable */
    CTRL_ERR_ALREADY_EXISTS = -106,      /* 409 AlreadyExists */
    CTRL_ERR_CONFLICT = -107,            /* 409 Conflict */
    CTRL_ERR_GONE = -108,                /* 410 Gone */
    CTRL_ERR_EXPIRED = -109,             /* 410 Expired (too old resourceVersion) */
    CTRL_ERR_TOO_LARGE = -110,           /* 413 RequestEntityTooLarge */
    CTRL_ERR_UNSUPPORTED_MEDIA = -111,   /* 415 UnsupportedMediaType */
    CTRL_ERR_INVALID = -112,             /* 422 Invalid */
    CTRL_ERR_TOO_MANY_REQUESTS = -113,   /* 429 TooManyRequests */
    CTRL_ERR_INTERNAL_ERROR = -114,      /* 500 InternalError */
    CTRL_ERR_SERVER_TIMEOUT = -115,      /* 500 ServerTimeout */
    CTRL_ERR_SERVICE_UNAVAILABLE = -116, /* 503 ServiceUnavailable */
    CTRL_ERR_API_TIMEOUT = -117,         /* 504 Timeout */
    CTRL_ERR_API_OTHER = -118,           /* any other non-2xx answer */
    CTRL_ERR_API_LAST = -118,
} ctrl_errcode;

/* A static description of a code ("not found"). Never NULL. */
const char *ctrl_strerror(int code);

/*
 * What went wrong. Zero it before first use (see the file comment).
 *
 * For an API error, http_status, reason and message are the server's and
 * status is the Status body as sent (a new reference, owned by this struct)
 * or, when the server sent no Status, one built from the HTTP status as
 * client-go does. causes and details are borrowed from status (NULL when
 * absent); retry_after_seconds is the server's hint (Retry-After header or
 * details.retryAfterSeconds), 0 when none.
 *
 * For an error on this side, http_status is 0, reason "" and message says
 * what failed (for transport errors, libcurl's text).
 */
typedef struct ctrl_error {
    int code;        /* ctrl_errcode */
    int http_status; /* 0 when no HTTP answer */
    char reason[64]; /* Kubernetes Status reason, e.g. "NotFound" */
    char message[1024];
    json_t *status;  /* owned: the whole Status; NULL for non-API errors */
    json_t *details; /* borrowed from status: details, or NULL */
    json_t *causes;  /* borrowed from status: details.causes array, or NULL */
    int retry_after_seconds;
} ctrl_error;

/* Release what err holds and zero it. NULL does nothing. */
void ctrl_error_deinit(ctrl_error *err);

/* True for codes that mean the server answered with an error Status. */
bool ctrl_err_is_api(int code);
/* True for failures to get an answer at all: CTRL_ERR_TRANSPORT, CTRL_ERR_TIMEOUT. */
bool ctrl_err_is_transport(int code);

/* The Go-style predicates (k8s.io/apimachinery/pkg/api/errors). */
bool ctrl_err_is_bad_request(int code);
bool ctrl_err_is_unauthorized(int code);
bool ctrl_err_is_forbidden(int code);
bool ctrl_err_is_not_found(int code);
bool ctrl_err_is_method_not_supported(int code);
bool ctrl_err_is_not_acceptable(int code);
bool ctrl_err_is_already_exists(int code);
bool ctrl_err_is_conflict(int code);
/* True for both 410 reasons (Gone and Expired): either way, relist. */
bool ctrl_err_is_gone(int code);
bool ctrl_err_is_resource_expired(int code);
bool ctrl_err_is_request_entity_too_large(int code);
bool ctrl_err_is_unsupported_media_type(int code);
bool ctrl_err_is_invalid(int code);
bool ctrl_err_is_too_many_requests(int code);
bool ctrl_err_is_internal_error(int code);
bool ctrl_err_is_server_timeout(int code);
bool ctrl_err_is_service_unavailable(int code);
/* 504 Timeout from the server, or this side's own request timeout. */
bool ctrl_err_is_timeout(int code);
/* meta.IsNoMatchError: discovery does not know the kind. */
bool ctrl_err_is_no_match(int code);

/*
 * The code for an HTTP answer: the reason decides when it is one of the
 * known Status reasons, else the HTTP status does (as client-go's
 * ReasonForError then code fallback). 0 for a 2xx status.
 */
int ctrl_err_from_status(int http_status, const char *reason);

#ifdef __cplusplus
}
#endif

#endif
