/*
 * error_int.h - filling a ctrl_error inside libctrl.
 *
 * Every function accepts err == NULL (the caller did not ask for details)
 * and returns the code it was given, so that `return ctrl__error_set(...)`
 * reads naturally. Reentrant.
 */
#ifndef CTRL_ERROR_INT_H
#define CTRL_ERROR_INT_H

#include <stddef.h>

#include "ctrl/error.h"

/* Release what err held, then record a non-API error with a message. */
int ctrl__error_set(ctrl_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Record the server's error answer: body (len bytes, may be NULL) is parsed
 * as a Status when it is one; otherwise a Status is built from the HTTP
 * status and the body's first bytes, as client-go does. retry_after is the
 * Retry-After header in seconds (0 if none). Returns the ctrl code
 * (ctrl_err_from_status), or CTRL_ERR_NOMEM.
 */
int ctrl__error_from_response(ctrl_error *err, int http_status, const char *body, size_t len,
                              int retry_after);

/*
 * Record an API error from a Status object already parsed (a watch ERROR
 * event). status is borrowed. Returns the ctrl code.
 */
int ctrl__error_from_status(ctrl_error *err, json_t *status);

/*
 * The last failed request made on this thread (thread-local): what the
 * controller logs when a reconcile returns that code ("Reconciler error"
 * with the server's message, the verb and the object), since a reconcile
 * returns only the code. verb is Kubernetes' (get, list, create, update,
 * patch, delete, deletecollection, watch), object "namespace/name" or
 * "name" (or the resource for collections).
 */
typedef struct ctrl__failure {
    int code; /* 0 = none */
    char verb[24];
    char resource[128];
    char object[512];
    char reason[64];
    char message[1024];
} ctrl__failure;

/* Record a failed request (method, path with query) with its details. */
void ctrl__failure_note(const char *method, const char *path, const ctrl_error *e);
/* Forget this thread's last failure. */
void ctrl__failure_clear(void);
/* This thread's last failure (code 0 when none). */
const ctrl__failure *ctrl__failure_last(void);

#endif
