/*
 * ctrl/roundtrip.h - send libctrl's HTTP exchanges through a function the
 * embedder gives instead of libcurl (client-go's rest.Config.Transport).
 *
 * A ctrl_roundtripper performs one HTTP exchange: libctrl hands it the
 * request (method, the path and query as sent on the wire, headers, body,
 * timeout) and the round-tripper reports the answer back through a
 * ctrl_roundtrip_io, as it arrives: the status line and headers once
 * (head), then the body in chunks of any size (body). Everything above
 * stays libctrl's and behaves as over libcurl: retries with backoff on
 * 429/5xx and failed connections, Retry-After, the rate limiter, Status
 * error decoding, watch streaming, on_open, cancellation, the response size
 * limit, the User-Agent and bearer token, on_response (metrics) and
 * ctrl_transport_totals.
 *
 * With a round-tripper, libctrl creates no curl handle: the config's TLS
 * settings (CA, client certificate and key, insecure, tls-server-name) and
 * basic-auth credentials are not used, nor is the connect timeout. The
 * server URL's scheme and host appear only in error messages and in
 * on_response's host; its path prefix, if any, starts every target. A
 * bearer token is handed over, as libcurl would send it, only when the
 * server URL is https (credentials never go out in clear): give the config
 * an "https://..." URL to have the round-tripper see it.
 *
 * Ownership: every pointer in a request and in an io is borrowed for the
 * call to roundtrip only. ud belongs to the embedder and must outlive every
 * client made from the config (and their children).
 * Threads: roundtrip is called from many threads at once, one exchange per
 * call; head and body are called on the calling thread only, cancelled
 * and on_cancel too; the wake function given to on_cancel may be called
 * from any thread.
 */
#ifndef CTRL_ROUNDTRIP_H
#define CTRL_ROUNDTRIP_H

#include <stdbool.h>
#include <stddef.h>

#include "ctrl/config.h"
#include "ctrl/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One HTTP exchange as libctrl asks it. All strings borrowed for the call. */
typedef struct ctrl_roundtrip_request {
    const char *method;       /* "GET", "POST", "PUT", "PATCH", "DELETE" */
    const char *target;       /* path and query as sent on the wire,
                               * e.g. "/api/v1/pods?watch=true&resourceVersion=5" */
    const char *content_type; /* of body, or NULL */
    const char *accept;       /* "application/json" */
    const char *user_agent;   /* never NULL */
    const char *bearer_token; /* NULL unless the server URL is https and a token is set */
    const char *body;         /* or NULL (then body_len is 0) */
    size_t body_len;
    int timeout_ms; /* whole exchange; <= 0 = none. The round-tripper enforces it */
    bool streaming; /* a watch: the body comes in chunks for a long time */
} ctrl_roundtrip_request;

/* How a connection failed, for ctrl_roundtrip_io.fail. */
typedef enum ctrl_roundtrip_failure {
    /* The request may have reached the server: a connection dropped before
     * an answer, or an answer cut short. Retried for idempotent requests only
     * (libcurl's send/receive errors, empty reply, partial file). */
    CTRL_ROUNDTRIP_DROPPED = 0,
    /* The request surely never reached the server: connection refused, no
     * such host. Always retried (libcurl's could-not-connect/resolve). */
    CTRL_ROUNDTRIP_NOTHING_SENT = 1,
} ctrl_roundtrip_failure;

/* What the round-tripper reports back, as the answer arrives. Every function
 * takes io (the member below) as its first argument. */
typedef struct ctrl_roundtrip_io {
    /* Once the status and headers are in, before any body. retry_after_s is
     * the Retry-After header in seconds, 0 = none. content_type may be NULL. */
    void (*head)(void *io, int status, int retry_after_s, const char *content_type);
    /* Body bytes in order (only after head); returns 0 to go on, non-zero to
     * end the exchange at once (the round-tripper then returns 0). */
    int (*body)(void *io, const char *data, size_t len);
    /* True once the request is cancelled (ctrl_watch_stop). A round-tripper
     * that blocks must also register wake to be called (from any thread) on
     * cancel: on_cancel(io, wake, wake_ud), at most once per exchange, before
     * blocking; wake is called at once (on this thread) if already cancelled.
     * on_cancel(io, NULL, NULL) unregisters it: once that returns, wake is
     * not called. Unregister before what wake_ud points to goes away (a
     * stream freed before roundtrip returns); libctrl unregisters what is
     * left when roundtrip returns. wake must not block nor call into libctrl
     * (libctrl calls it under a lock of its own), and on_cancel must be
     * called without holding a lock that wake takes. Requests that cannot be
     * cancelled never call wake. */
    bool (*cancelled)(void *io);
    void (*on_cancel)(void *io, void (*wake)(void *wake_ud), void *wake_ud);
    /* Before returning CTRL_ERR_TRANSPORT (or CTRL_ERR_TIMEOUT): how the
     * connection failed and why (reason copied; it ends libctrl's message
     * "METHOD URL: reason"). Not called = CTRL_ROUNDTRIP_DROPPED, "connection
     * failed" ("timed out" for CTRL_ERR_TIMEOUT). */
    void (*fail)(void *io, ctrl_roundtrip_failure how, const char *reason);
    /* After head: the server closes the connection once this answer is sent
     * (a "Connection: close" header). Only model_connections uses it. */
    void (*closes)(void *io);
    void *io;
} ctrl_roundtrip_io;

typedef struct ctrl_roundtripper {
    /*
     * Perform one exchange. Returns:
     *   0                   the answer was delivered: head, then its whole
     *                       body, or a body cut short by io->body returning
     *                       non-zero. Returning 0 without head is a
     *                       CTRL_ERR_PROTOCOL error (not retried).
     *   CTRL_ERR_TRANSPORT  the connection failed: nothing answered, or the
     *                       answer ended early (say which with io->fail);
     *   CTRL_ERR_TIMEOUT    timeout_ms elapsed (never retried, as libcurl's);
     *   CTRL_ERR_CANCELLED  io->cancelled() became true.
     * Any other code counts as CTRL_ERR_TRANSPORT, a dropped connection.
     */
    int (*roundtrip)(void *ud, const ctrl_roundtrip_request *req, const ctrl_roundtrip_io *io);
    void *ud;
    /*
     * Make the exchanges the same client makes over HTTP with libcurl,
     * which keeps connections alive between requests and, when an
     * idempotent request sent on a kept connection gets nothing back (a
     * server that dropped it), sends it again at once on another one
     * (libcurl's "Connection died, retrying a fresh connect"; Go's
     * net/http does the same). libctrl then models each pooled handle's
     * kept connections (at most 5, libcurl's default cache) and repeats
     * such an exchange as libcurl would: the server sees every request it
     * would have seen over HTTP. Round-trippers that stand for a server
     * (an in-process fake whose log must not depend on the transport) set
     * it, and report io->closes; others leave it false: one call, one
     * attempt.
     */
    bool model_connections;
} ctrl_roundtripper;

/*
 * Use rt for every request of clients made from cfg from now on (copied;
 * rt->ud must outlive them). NULL (or rt->roundtrip NULL) = libcurl again.
 * The setting travels with ctrl_config_copy, so a manager made from cfg
 * uses it for its client, its uncached reader, discovery and leader
 * election, and ctrl_client_new_for children share their parent's.
 * Returns 0, or CTRL_ERR_ARG when cfg is NULL. Needs exclusive access to cfg.
 */
int ctrl_config_set_roundtripper(ctrl_config *cfg, const ctrl_roundtripper *rt);

/* The round-tripper set on cfg (borrowed), or NULL for libcurl. */
const ctrl_roundtripper *ctrl_config_roundtripper(const ctrl_config *cfg);

#ifdef __cplusplus
}
#endif

#endif
