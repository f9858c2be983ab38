/*
 * transport.h - HTTP for libctrl: a pool of reusable curl handles, TLS and
 * credentials from a ctrl_config, timeouts, retries with backoff, the
 * client-side rate limiter, and cancellable streaming for watches. With a
 * round-tripper on the config (ctrl/roundtrip.h), exchanges go through it
 * instead of curl and everything else stays.
 *
 * A ctrl__transport is reference-counted: a client and its children
 * (ctrl_client_new_for) share one. Every function is thread-safe.
 */
#ifndef CTRL_TRANSPORT_H
#define CTRL_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctrl/client.h"

typedef struct ctrl__transport ctrl__transport;

/* A cancellation switch for streaming requests (see ctrl_watch). */
typedef struct ctrl__cancel ctrl__cancel;

/*
 * Streaming sink: called with each chunk of a 2xx answer's body. Return 0
 * to go on, non-zero to end the transfer (then ctrl__transport_do returns
 * 0 with resp->stopped_by_sink set).
 */
typedef int (*ctrl__sink_fn)(const char *data, size_t len, void *ud);

typedef struct ctrl__request {
    const char *method;       /* "GET", "POST", ... */
    const char *path;         /* path and query, appended to the server URL */
    const char *content_type; /* of body; NULL when there is none */
    const char *body;
    size_t body_len;
    const char *user_agent;
    bool idempotent;    /* may be retried on 429/5xx/dropped connections */
    bool no_retry;      /* never retried (watches) */
    ctrl__sink_fn sink; /* NULL = buffer the answer in resp */
    void *sink_ud;
    ctrl__cancel *cancel; /* NULL = not cancellable */
    /* Called once when a 2xx answer's headers have arrived, before any body
     * (a watch is established); NULL = not told. */
    void (*on_open)(void *ud);
    void *on_open_ud;
    int timeout_ms;       /* 0 = the transport's; < 0 = none */
} ctrl__request;

typedef struct ctrl__response {
    int status; /* HTTP status */
    char *body; /* malloc'ed, NUL-terminated (NULL with a sink) */
    size_t len;
    bool stopped_by_sink;
} ctrl__response;

/* Resolve options (defaults filled) and set up TLS and credentials from cfg. */
int ctrl__transport_new(const ctrl_config *cfg, const ctrl_client_options *opts,
                        ctrl__transport **out, ctrl_error *err);
ctrl__transport *ctrl__transport_ref(ctrl__transport *t);
void ctrl__transport_unref(ctrl__transport *t);

/* The default User-Agent and server URL (borrowed). */
const char *ctrl__transport_user_agent(const ctrl__transport *t);
const char *ctrl__transport_server(const ctrl__transport *t);
const char *ctrl__transport_namespace(const ctrl__transport *t);

/*
 * Perform req, retrying as its flags allow. 0 for a 2xx answer (resp
 * filled; free with ctrl__response_deinit). Otherwise a negative code with
 * err filled (API errors keep the server's Status), resp left empty.
 */
int ctrl__transport_do(ctrl__transport *t, const ctrl__request *req, ctrl__response *resp,
                       ctrl_error *err);

void ctrl__response_deinit(ctrl__response *resp);

/* Cancellation switches. */
int ctrl__cancel_new(ctrl__cancel **out);
void ctrl__cancel_fire(ctrl__cancel *c); /* any thread */
bool ctrl__cancel_fired(ctrl__cancel *c);
void ctrl__cancel_free(ctrl__cancel *c);

/* The transport's clock (for callers that wait, such as discovery). */
int64_t ctrl__transport_now_ns(ctrl__transport *t);

#endif
