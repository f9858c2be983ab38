/*
 * conns.h - keeps every HTTP connection's life bounded while it waits for a
 * request: the request must arrive whole (headers and body) within the
 * connection timeout of the connection's accept or of its previous answer
 * (so a client trickling its headers, or idle on a keep-alive connection,
 * is let go), a client that hangs up or half-closes is let go at once, and
 * when the connection limit comes near the oldest waiting connections make
 * room for new ones.
 *
 * Why not libmicrohttpd alone: its timeout is one of inactivity, which a
 * byte every few seconds defeats; and in epoll mode (edge-triggered) it can
 * miss a client's end of stream that arrived with the last bytes it read,
 * leaving the socket in CLOSE-WAIT until the timeout (forever without one).
 *
 * A connection is let go by shutting its socket down (shutdown(2) on our
 * own duplicate of it): libmicrohttpd's loop thread then sees the end of
 * the stream and closes the connection itself, as if the client had.
 *
 * DESIGN
 *  - One thread, started by fakeapi__conns_new, waits in epoll on the
 *    duplicates of the waiting connections' sockets (hang-ups) and an
 *    eventfd (stop), with a timeout to the earliest deadline (at most a
 *    second). Deadlines are on the real monotonic clock, never the
 *    server's (possibly virtual) one.
 *  - One lock, the tracker's own, guards every entry and the lists. It is
 *    a leaf: nothing else is taken under it (shutdown(2) is a system call).
 *  - The connections waiting for a request form one FIFO list; every
 *    entry's deadline is its start plus the same timeout, so the head is
 *    always the earliest and the oldest (the one shed first).
 *  - An entry is freed only by the tracker's thread (or fakeapi__conns_free),
 *    after the close that ended it, so an epoll event already returned for
 *    it never points at freed memory.
 *  - A connection whose request is in (being answered, delayed, a watch) is
 *    not timed here: libmicrohttpd's inactivity timeout covers a stalled
 *    answer, watches and delays have their own timers and hang-up
 *    detection (waker.h).
 */
#ifndef FAKEAPI_CONNS_H
#define FAKEAPI_CONNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct fakeapi__conns fakeapi__conns;
typedef struct fakeapi__conn fakeapi__conn;

/* A tracker: each request must arrive within timeout_ns (INT64_MAX: no
 * limit); past soft_limit open connections a new one sheds the oldest
 * waiting one. NULL on failure. */
fakeapi__conns *fakeapi__conns_new(int64_t timeout_ns, size_t soft_limit);
/* Stop the thread and free every entry; call once no connection is left
 * (after MHD_stop_daemon). free(NULL) does nothing. */
void fakeapi__conns_free(fakeapi__conns *cs);

/* A connection was accepted on socket fd (which stays the caller's): it
 * now waits for its first request. NULL if it cannot be tracked (out of
 * descriptors or memory; it is then only under libmicrohttpd's timeout).
 * Any thread. */
fakeapi__conn *fakeapi__conns_open(fakeapi__conns *cs, int fd);
/* The connection has closed (before its socket is closed). NULL: nothing. */
void fakeapi__conns_close(fakeapi__conns *cs, fakeapi__conn *c);
/* Its request is in: no deadline until fakeapi__conns_idle. NULL: nothing. */
void fakeapi__conns_busy(fakeapi__conns *cs, fakeapi__conn *c);
/* Its answer is out: it waits for the next request (let go at once if its
 * client hung up meanwhile). NULL: nothing. */
void fakeapi__conns_idle(fakeapi__conns *cs, fakeapi__conn *c);
/* Was it accepted past the soft limit with no waiting connection to shed
 * (every other one a watch or being answered)? Its requests are then
 * answered 429 at once: the room left up to the hard limit serves quick
 * refusals (and the control endpoint), not more clients. NULL: false. */
bool fakeapi__conns_crowded(fakeapi__conns *cs, const fakeapi__conn *c);
/* It serves a watch until it closes: never timed or shed here, and its
 * descriptor duplicate is given back (the watch watches the socket). */
void fakeapi__conns_release(fakeapi__conns *cs, fakeapi__conn *c);

#endif
