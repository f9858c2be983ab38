/*
 * inproc.h - a scenario's managers reach its fakeapi in-process.
 *
 * A libctrl round-tripper (ctrl_roundtripper, ctrl/config.h) that serves
 * each request with fakeapi_exchange on the calling thread, watch streams
 * included: no socket, no libcurl, no server thread. The manager thread
 * that sends a request holds the scheduler's turn while the server works
 * on it, as it did while waiting on a socket, and a watch's reader waits
 * in fakeapi_stream_read where it waited in libcurl; so the scheduler's
 * accounting (scheduler.h) and the trace are the same as over HTTP.
 *
 * Threads: any manager thread, many at once. The server must outlive every
 * client configured with the round-tripper (the runner stops its managers
 * before the server).
 */
#ifndef SCN_INPROC_H
#define SCN_INPROC_H

#include "ctrl/roundtrip.h"
#include "fakeapi/fakeapi.h"

/* Fill rt with the round-tripper that serves requests from srv. */
void scn__inproc_roundtripper(fakeapi_server *srv, ctrl_roundtripper *rt);

#endif
