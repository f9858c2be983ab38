/*
 * watch.h - watch streams: the hub that fans events out, and one watch.
 *
 * DESIGN
 *  - Writers (txn.c) publish events while holding the store lock, so the
 *    hub sees them in revision order. Publishing never blocks on a reader:
 *    each watch has a bounded queue; a watch whose queue is full is marked
 *    too slow and closed (the client resumes from its last resourceVersion)
 *    and counted.
 *  - A watch is read by its connection's event-loop thread, one call at a
 *    time. With nothing to send, fakeapi__watch_read() suspends the
 *    connection and arms the watch's sleeper (waker.h) with its next timer
 *    (bookmark, timeout, delayed event); whoever then gives it output (a
 *    publish, a release, a close, a timer that fired in fakeapi_watches)
 *    resumes it, and the waker's thread does so at the timer or when the
 *    client hangs up. Nothing is ever waited for on a loop thread.
 *  - Locks: hub->mu (the list of watches) then watch->mu (its queue), then
 *    the waker's lock, then libmicrohttpd's. The store lock, when held, is
 *    always taken before all of them.
 *  - Events are immutable and reference-counted; one event is shared by
 *    every watch it goes to.
 */
#ifndef FAKEAPI_WATCH_H
#define FAKEAPI_WATCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#include "http.h"
#include "registry.h"
#include "server_int.h"
#include "waker.h"

typedef struct fakeapi__event fakeapi__event;

struct fakeapi__event {
    atomic_int refs;
    uint64_t rv;
    int type; /* FAKEAPI__EV_* */
    char *key, *ns, *name;
    char *text; /* the object (last state for DELETED), compact JSON */
    size_t len;
    json_t *obj;  /* the same, parsed; never modified */
    json_t *prev; /* state before the event, or NULL */
    int64_t ts;   /* server clock at the write (event-delay faults) */
};

/* A new event holding references to obj and prev (either may be NULL only as
 * documented above) and a copy of text. NULL on ENOMEM. */
fakeapi__event *fakeapi__event_new(uint64_t rv, int type, const char *key, const char *ns,
                                   const char *name, const char *text, size_t len, json_t *obj,
                                   json_t *prev);
fakeapi__event *fakeapi__event_ref(fakeapi__event *ev);
void fakeapi__event_unref(fakeapi__event *ev);

fakeapi__hub *fakeapi__hub_new(void);
/* Close every watch (their readers see the end) and free the hub once none
 * remains registered. */
void fakeapi__hub_free(fakeapi__hub *hub);
/* Wake every reader to end its stream (server shutdown), without freeing. */
void fakeapi__hub_close_all(fakeapi__hub *hub);

/* Hand an event to every matching watch. Call with the store lock held. */
void fakeapi__hub_publish(fakeapi__hub *hub, fakeapi__event *ev);

/* Counters for metrics and tests. */
size_t fakeapi__hub_watch_count(fakeapi__hub *hub);
unsigned long fakeapi__hub_slow_closed(fakeapi__hub *hub);

/*
 * Start a watch for a list request (ctx in handler). On success sets
 * resp->watch and resp->status 200. On error fills resp with a Status.
 * Called without the store lock.
 */
void fakeapi__watch_start(fakeapi_server *srv, const fakeapi__req *req,
                          const fakeapi__resource *res, const char *ns, fakeapi__resp *resp);

enum { FAKEAPI__WATCH_END = -1, FAKEAPI__WATCH_GONE = -2 };

/*
 * Copy the next bytes of the stream into buf (at most max); never blocks.
 * Returns the byte count; 0 when there is nothing yet (the connection has
 * been suspended, and will be resumed when there is); FAKEAPI__WATCH_END
 * when the stream has ended (timeout, close, shutdown); FAKEAPI__WATCH_GONE
 * when the client has hung up. Called from the connection's thread only.
 */
ssize_t fakeapi__watch_read(struct fakeapi__watch *w, char *buf, size_t max);

/* Give the watch its connection (suspended and resumed through
 * the waker, with ops: NULL for the waker's own functions) and its client's
 * socket, watched so that a hang-up ends it at once (fd -1: not watched).
 * Once, before the first read. */
void fakeapi__watch_attach(struct fakeapi__watch *w, void *conn, const fakeapi__conn_ops *ops,
                           int fd);

/* The client hung up (an in-process stream cancelled): the watch is no
 * longer listed, and its next read returns FAKEAPI__WATCH_GONE. Sets a flag
 * only (takes no lock); any thread while the watch lives. */
void fakeapi__watch_hang_up(struct fakeapi__watch *w);

/* The reader stops waiting for a resume after a read returned 0: if the
 * sleeper is still armed it is disarmed and the connection resumed here;
 * if not, whoever disarmed it resumes it. Reader's thread. */
void fakeapi__watch_unpark(struct fakeapi__watch *w);

/* Hold (hold = 1), free (0) or leave (-1) a watch's delivery, and allow
 * release more lines through while held. -1 if no watch has that id. */
int fakeapi__hub_control(fakeapi__hub *hub, uint64_t id, int hold, size_t release);

/* Snapshot of the open watches (see fakeapi_watches); *next_deadline gets
 * the earliest watch timer (timeout or bookmark), INT64_MAX if none. */
int fakeapi__hub_list(fakeapi__hub *hub, fakeapi_watch_info **out, size_t *n,
                      int64_t *next_deadline);
/* The same into *buf, *cap entries, grown (realloc) when the watches do
 * not fit; on failure *buf stays as it was. */
int fakeapi__hub_list_into(fakeapi__hub *hub, fakeapi_watch_info **buf, size_t *cap, size_t *n,
                           int64_t *next_deadline);

/* End the watches of client (fakeapi__agent_is); returns how many. */
int fakeapi__hub_close_client(fakeapi__hub *hub, const char *client);

/* Unregister and free a watch (the connection is gone). */
void fakeapi__watch_free(struct fakeapi__watch *w);

#endif
