/*
 * webhook_int.h - what webhook_server.c (HTTP, registration) and
 * webhook_review.c (the reviews) share.
 *
 * A handler is written at registration, before the server starts, and only
 * read after: any server thread may answer with it.
 */
#ifndef CTRL_WEBHOOK_INT_H
#define CTRL_WEBHOOK_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "ctrl/webhook.h"

/* One registered path: exactly one of validate, mutate, convert is set. */
typedef struct ctrl__webhook_handler {
    char *path;
    ctrl_validate_fn validate;
    ctrl_default_fn mutate;
    ctrl_convert_fn convert;
    void *user;
    char *api_version, *kind; /* set when registered by kind */
} ctrl__webhook_handler;

/*
 * Answer the review in (borrowed) with h: an AdmissionReview v1 for a
 * validator or defaulter, a ConversionReview for a converter (new
 * reference, or NULL on ENOMEM). Calls the user's function on this thread.
 */
json_t *ctrl__webhook_answer(const ctrl__webhook_handler *h, const json_t *in);

/*
 * The i-th handler of s (webhook_install.c): api_version and kind are NULL
 * unless it was registered by kind; *mutating for a defaulter. Returns the
 * number of handlers, 0 when i is past the last one (outputs untouched).
 */
size_t ctrl__webhook_server_kinds(const ctrl_webhook_server *s, size_t i, const char **api_version,
                                  const char **kind, const char **path, bool *mutating);

/* n bytes as standard base64 with padding: a new NUL-terminated string,
 * NULL on ENOMEM. */
char *ctrl__webhook_b64(const char *in, size_t n);

#endif
