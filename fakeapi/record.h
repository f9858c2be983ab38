/*
 * record.h - the server's audit log: every request as one audit.k8s.io/v1
 * Event (RequestResponse level) on its own line, as kube-apiserver's log
 * backend writes them, so that `scenario import audit` turns a session
 * against the server into a scenario.
 *
 * A request is written once, at ResponseComplete (a watch at
 * ResponseStarted, without bodies), with the server's clock. Secrets' data
 * and stringData values are redacted unless asked. Callable from any
 * thread; one mutex serialises lines. When nothing is recorded,
 * fakeapi__recording is one atomic load and nothing else runs.
 */
#ifndef FAKEAPI_RECORD_H
#define FAKEAPI_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fault.h"
#include "http.h"
#include "router.h"
#include "server_int.h"

/* path NULL stops recording. 0, or -1 with the reason in err. */
int fakeapi__record_open(fakeapi_server *srv, const char *path, bool secrets, const char *user,
                         char *err, size_t errlen);
void fakeapi__record_close(fakeapi_server *srv);

static inline bool fakeapi__recording(fakeapi_server *srv)
{
    return atomic_load_explicit(&srv->recording, memory_order_relaxed);
}

/* What the front end knows of a request besides the request itself. */
typedef struct fakeapi__record_info {
    const char *target;    /* the request target as sent: path and query */
    const char *source_ip; /* may be NULL */
    bool tls_client;       /* a client certificate signed by the server's CA */
    int64_t received_ns;   /* when it arrived (server clock) */
} fakeapi__record_info;

/* Write the Event of one answered request (resp->watch: a watch started). */
void fakeapi__record(fakeapi_server *srv, const fakeapi__record_info *info, const fakeapi__req *req,
                     const fakeapi__route *rt, const fakeapi__reqinfo *ri,
                     const fakeapi__resp *resp);

#endif
