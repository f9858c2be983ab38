/*
 * health.h - /livez, /readyz and /healthz as kube-apiserver serves them: a
 * list of named checks, each run per request; the endpoint itself (plain
 * text "ok", or with ?verbose one "[+]name ok" line per check and
 * "<endpoint> check passed"; ?exclude=NAME skips one) and one path per check
 * (/readyz/etcd). A failing check makes the endpoint 500 with the list and
 * "<endpoint> check failed"; /readyz fails its "shutdown" check once the
 * server is stopping. Runs on the caller's (connection) thread; takes the
 * store lock for the etcd checks.
 */
#ifndef FAKEAPI_HEALTH_H
#define FAKEAPI_HEALTH_H

#include "http.h"
#include "router.h"
#include "server_int.h"

/* Answer a FAKEAPI__RT_HEALTH route (rt->resource the endpoint, rt->name a
 * check or ""): 200 or 500 in text/plain, 404 for a check the endpoint does
 * not have. */
void fakeapi__health_serve(fakeapi_server *srv, const fakeapi__req *req, const fakeapi__route *rt,
                           fakeapi__resp *resp);

#endif
