/*
 * httpserver_int.h - the manager's small HTTP servers (metrics, health
 * probes) on libmicrohttpd.
 *
 * Threads: a server runs libmicrohttpd's internal polling thread; the
 * handler is called on it, one request at a time. _start and _stop from
 * one thread.
 */
#ifndef CTRL_HTTPSERVER_INT_H
#define CTRL_HTTPSERVER_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "ctrl/manager.h"

typedef struct ctrl__httpserver ctrl__httpserver;

/* What a handler answers: body is malloc'ed (taken over; NULL = empty),
 * content_type static (NULL = text/plain). */
typedef struct ctrl__http_reply {
    int status;
    char *body;
    const char *content_type;
} ctrl__http_reply;

/* A request: path without the query; query(qctx, key) is the value of a
 * query parameter ("" for a bare "?verbose"), NULL when absent. */
typedef void (*ctrl__http_fn)(void *ud, const char *method, const char *path,
                              const char *(*query)(void *qctx, const char *key), void *qctx,
                              ctrl__http_reply *out);

/*
 * Listen on addr ("host:port", ":port" = every IPv4 address, "[::1]:port";
 * port 0 picks a free one) and serve fn. Errors: CTRL_ERR_ARG (address
 * malformed), CTRL_ERR_IO (cannot listen: in use, no permission). On an
 * error, why (may be NULL) says what failed with the address and the
 * system's reason ("listen tcp 127.0.0.1:8080: bind: Address already in use").
 */
int ctrl__httpserver_start(const char *addr, ctrl__http_fn fn, void *ud, ctrl__httpserver **out,
                           char *why, size_t why_len);
/* The port listened on. */
int ctrl__httpserver_port(const ctrl__httpserver *s);
/* Stop (waits for the request being served) and free. NULL does nothing. */
void ctrl__httpserver_stop(ctrl__httpserver *s);

#endif
