/*
 * inproc.h - in-process exchanges (fakeapi_exchange and its streams,
 * inproc.c): the server object's side of them.
 *
 * Threads: fakeapi__inproc_new from fakeapi_start; fakeapi__inproc_stop
 * from fakeapi_stop only.
 */
#ifndef FAKEAPI_INPROC_H
#define FAKEAPI_INPROC_H

#include "server_int.h"

/* The set of open in-process streams; NULL on ENOMEM. */
struct fakeapi__inproc *fakeapi__inproc_new(void);

/*
 * End in-process work for fakeapi_stop, after the hub has closed every
 * watch and the waker has stopped (so delayed and held calls have been
 * woken): waits for the fakeapi_exchange calls in progress, then ends every
 * open stream (its reader, if blocked, returns 0; it is waited for), frees
 * their watches and lets go of the set (streams freed later only drop
 * their reference). NULL set: nothing.
 */
void fakeapi__inproc_stop(fakeapi_server *srv);

#endif
