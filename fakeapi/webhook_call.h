/*
 * webhook_call.h - one call of an admission webhook: POST a review to
 * where a webhook's clientConfig points (a url, or a Service resolved
 * through the store), over HTTPS verified with its caBundle, within its
 * timeoutSeconds, and read the JSON answer (admission.c decides what the
 * answer means).
 *
 * Any thread, never with the store lock held (resolving a Service takes it).
 */
#ifndef FAKEAPI_WEBHOOK_CALL_H
#define FAKEAPI_WEBHOOK_CALL_H

#include <stddef.h>
#include <jansson.h>

#include "server_int.h"

/* Why a webhook could not be used: the text kube-apiserver puts after
 * "failed calling webhook \"<name>\": ". */
typedef struct fakeapi__webhook_err {
    char msg[1200];
} fakeapi__webhook_err;

void fakeapi__webhook_fail(fakeapi__webhook_err *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * POST review (borrowed) to the webhook hook (borrowed) names. 0 with the
 * answer's body, a JSON object, in *out (new reference); -1 with e filled in
 * (unreachable, timed out, TLS refused, non-2xx, not JSON, too large, the
 * server stopping). Blocks for at most the webhook's timeout.
 */
int fakeapi__webhook_post(fakeapi_server *srv, const json_t *hook, const json_t *review,
                          json_t **out, fakeapi__webhook_err *e);

/* Standard base64 (padding optional, line breaks skipped) into a new
 * NUL-terminated buffer of *len bytes. NULL on bad input or ENOMEM. */
char *fakeapi__b64_decode(const char *in, size_t *len);

#endif
