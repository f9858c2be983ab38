/*
 * gc.h - the server's background controllers: owner-reference garbage
 * collection (background, foreground, orphan) and namespace deletion.
 *
 * DESIGN: one thread, started by fakeapi_start and joined by fakeapi_stop.
 * It sleeps until fakeapi__gc_wake() (called after any commit that deleted an
 * object or started deleting one), then sweeps until nothing more changes.
 * Each step is its own transaction (txn.h), so other requests interleave with
 * the collector as they would with the real one.
 */
#ifndef FAKEAPI_GC_H
#define FAKEAPI_GC_H

#include "server_int.h"

int fakeapi__gc_start(fakeapi_server *srv);
void fakeapi__gc_stop(fakeapi_server *srv);
/* Ask for a sweep; never blocks for long (takes gc_mu only). */
void fakeapi__gc_wake(fakeapi_server *srv);
/* Run one full sweep now on the calling thread (tests, deterministic runs).
 * Returns the number of objects changed. */
int fakeapi__gc_sweep(fakeapi_server *srv);

#endif
