/*
 * watch.h - watch streams: the hub that fans events out, and one watch.
 *
 * DESIGN
 *  - Writers (txn.c) publish events while holding the store lock, so the
 *    hub sees them in revision order. Publishing never blocks on a reader:
 *    each watch has a bounded queue; a watch whose queue is full is marked
 *    too slow and closed (the client resumes from its last resourceVersion)
 *    and counted.
 *  - Each watch is read by exactly one thread: the HTTP connection thread,
 *    which blocks in fakeapi__watch_read() until an event, a bookmark, the
 *    timeout, a close or server shutdown.
 *  - Locks: hub->mu (the list of watches) then watch->mu (its queue). The
 *    store lock, when held, is always taken before both.
 *  - Events are immutable and reference-counted; one event is shared by
 *    every watch it goes to.
 */
#ifndef FAKEAPI_WATCH_H
#define FAKEAPI_WATCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "http.h"
#include "registry.h"
#include "server_int.h"

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
/* Wake readers so they re-read the clock. */
void fakeapi__hub_tick(fakeapi__hub *hub);

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

/*
 * Copy the next bytes of the stream into buf (at most max). Blocks until
 * there is something to send. Returns the byte count, or 0 when the stream
 * has ended (timeout, close, shutdown).
 */
size_t fakeapi__watch_read(struct fakeapi__watch *w, char *buf, size_t max);

/* Tell the watch its client's socket, so a hang-up ends it at once. */
void fakeapi__watch_set_socket(struct fakeapi__watch *w, int fd);

/* Hold (hold = 1), free (0) or leave (-1) a watch's delivery, and allow
 * release more lines through while held. -1 if no watch has that id. */
int fakeapi__hub_control(fakeapi__hub *hub, uint64_t id, int hold, size_t release);

/* Snapshot of the open watches (see fakeapi_watches); *next_deadline gets
 * the earliest watch timer (timeout or bookmark), INT64_MAX if none. */
int fakeapi__hub_list(fakeapi__hub *hub, fakeapi_watch_info **out, size_t *n,
                      int64_t *next_deadline);

/* End the watches whose client contains client; returns how many. */
int fakeapi__hub_close_client(fakeapi__hub *hub, const char *client);

/* Unregister and free a watch (the connection is gone). */
void fakeapi__watch_free(struct fakeapi__watch *w);

#endif
