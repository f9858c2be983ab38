/*
 * waker.h - wakes suspended connections: at a time on the server's clock,
 * or when their client hangs up. A connection is libmicrohttpd's (the
 * waker's own suspend and resume functions) or, for a request served
 * in-process (inproc.c), a caller's thread parked on a condition variable
 * (the sleeper's own functions, fakeapi__conn_ops).
 *
 * libmicrohttpd serves every connection from a few event-loop threads
 * (front.c), so nothing may block in a request: a watch with nothing to send
 * and a request held back by a delay fault suspend their connection instead,
 * and arm a sleeper here. Whoever has something for a sleeping connection
 * (a writer publishing an event, a release, a close) disarms it and resumes
 * the connection itself; the waker's thread does the same when a sleeper's
 * time comes or its client's socket reports a hang-up.
 *
 * DESIGN
 *  - One thread, started by fakeapi__waker_new, waits in epoll on an eventfd
 *    (kicks: an earlier deadline, a clock that moved, stop) and on the
 *    sockets of the connections watched for hang-ups, with a timeout to the
 *    earliest armed deadline (at most a second of real time, so a virtual
 *    clock that jumps is looked at again).
 *  - One lock, the waker's own, guards the set of armed sleepers and each
 *    sleeper's waker-owned fields. It is taken after a watch's lock and
 *    before libmicrohttpd's; the connection is resumed outside it.
 *  - Exactly one party resumes a suspended connection: the one that
 *    disarms its sleeper under the waker's lock (fakeapi__waker_wake, or the
 *    waker's thread). Until then the connection cannot end, so the
 *    sleeper (embedded in the connection's state) stays valid.
 */
#ifndef FAKEAPI_WAKER_H
#define FAKEAPI_WAKER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct fakeapi__waker fakeapi__waker;

/* How one kind of connection is suspended and resumed (see
 * fakeapi__waker_new for when each is called). */
typedef struct fakeapi__conn_ops {
    void (*suspend)(void *conn);
    void (*resume)(void *conn);
} fakeapi__conn_ops;

typedef struct fakeapi__sleeper {
    /* Set by the owner before arming. */
    void *conn;                   /* handed to the resume function */
    const fakeapi__conn_ops *ops; /* the connection's functions; NULL = the waker's */
    int64_t until;                /* server clock, ns; INT64_MAX = no deadline */
    bool reported;                /* counts in fakeapi__waker_next (fault delays do) */
    bool holdable; /* while the waker holds (fakeapi__waker_hold), wait for a release */
    /* The waker's own (under its lock). */
    bool armed;
    bool held;           /* armed, and resumed only by fakeapi__waker_release */
    atomic_bool hung_up; /* the client went away (set before the resume) */
    atomic_bool dropped; /* released to be dropped: applied never, answered never */
    uint64_t id;
    int watch_fd; /* our duplicate of the client's socket, -1 if none */
    struct fakeapi__sleeper *prev, *next;
} fakeapi__sleeper;

/* The clock to read and the functions that suspend a connection (called
 * by fakeapi__waker_arm, on the connection's own thread) and resume it
 * (on the waker's thread, by whoever wakes it, or by fakeapi__waker_arm
 * after stop). The waker is how the layers below the front end reach a
 * connection without knowing what serves it. NULL on failure. */
fakeapi__waker *fakeapi__waker_new(int64_t (*now)(void *), void *now_ud,
                                   void (*suspend)(void *conn), void (*resume)(void *conn));
/* Stop first (fakeapi__waker_stop); free(NULL) does nothing. */
void fakeapi__waker_free(fakeapi__waker *wk);

/* Set up a sleeper (once, before first use); ops NULL for a connection the
 * waker's own functions serve; fd is the client's socket to watch for
 * hang-ups while the connection lives, or -1. Any thread. */
void fakeapi__sleeper_init(fakeapi__waker *wk, fakeapi__sleeper *s, void *conn,
                           const fakeapi__conn_ops *ops, int fd);
/* Stop watching the socket: call while the connection still holds it (the
 * last read of a stream), and at the latest before the sleeper's memory goes. */
void fakeapi__sleeper_deinit(fakeapi__waker *wk, fakeapi__sleeper *s);

/* Suspend s->conn (the owner calls this from the connection's own
 * callback, with nothing to send) and resume it at s->until or on a
 * hang-up; or, when s is holdable and the waker holds, only when released
 * (fakeapi__waker_release by s->id). Returns FAKEAPI__ARMED or
 * FAKEAPI__HELD; after stop, resumes it at once instead and returns
 * FAKEAPI__RESUMED. */
enum { FAKEAPI__RESUMED = 0, FAKEAPI__ARMED = 1, FAKEAPI__HELD = 2 };
int fakeapi__waker_arm(fakeapi__waker *wk, fakeapi__sleeper *s);
/* Hold holdable sleepers from now on (hold) or stop holding: then every
 * held one is resumed at once. Any thread. */
void fakeapi__waker_hold(fakeapi__waker *wk, bool hold);
/* Resume the held sleeper with this id: 0, or -1 if none is held. With
 * drop, its dropped flag is set first (the owner then drops the request). */
int fakeapi__waker_release(fakeapi__waker *wk, uint64_t id, bool drop);
/* If s is armed, disarm it and resume s->conn (returns true). Any thread. */
bool fakeapi__waker_wake(fakeapi__waker *wk, fakeapi__sleeper *s);
/* The clock moved: look at the deadlines again, if one has come. Any
 * thread. */
void fakeapi__waker_kick(fakeapi__waker *wk);
/* The earliest deadline among armed reported sleepers, INT64_MAX if none. */
int64_t fakeapi__waker_next(fakeapi__waker *wk);
/* Resume every armed sleeper and every later arm; ends the thread. */
void fakeapi__waker_stop(fakeapi__waker *wk);

#endif
