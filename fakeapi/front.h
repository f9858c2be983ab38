/*
 * front.h - the HTTP front end (front.c): libmicrohttpd's daemon, its
 * connections and their requests. It is the top layer of fakeapi: it calls
 * the handler (fakeapi__handle) and the layers below it, and nothing below
 * calls it; the waker reaches connections only through the suspend and
 * resume functions server.c gives it (see fakeapi/README.md).
 *
 * Threads: start and stop from fakeapi_start/fakeapi_stop only; suspend
 * from a connection's own libmicrohttpd callback (its loop thread), resume
 * from any thread.
 */
#ifndef FAKEAPI_FRONT_H
#define FAKEAPI_FRONT_H

#include "server_int.h"

/* Listen on srv->opts.host:port (TLS with srv->tls) and serve: sets
 * srv->mhd, srv->conns, srv->port and srv->url. -1 if it cannot listen. */
int fakeapi__front_start(fakeapi_server *srv);
/* Stop serving (libmicrohttpd joins its threads; no connection stays
 * suspended: wake them first) and free the connection tracker. */
void fakeapi__front_stop(fakeapi_server *srv);

/* Suspend and resume a libmicrohttpd connection (the waker's callbacks). */
void fakeapi__front_suspend(void *conn);
void fakeapi__front_resume(void *conn);

#endif
