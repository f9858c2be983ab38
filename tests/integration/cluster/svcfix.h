/*
 * svcfix.h - the fixture of the service controllers' integration tests
 * (endpoints, endpointslice, serviceaccount, satoken, rootca, disruption):
 * fakeapi in-process with the named built-in controllers running against
 * it over HTTP, and small helpers to make objects and wait for state.
 *
 * Threads: the test's thread only.
 */
#ifndef SVCFIX_H
#define SVCFIX_H

#include <stdbool.h>
#include <jansson.h>

#include "fakeapi/fakeapi.h"
#include "kc/cluster.h"

extern fakeapi_server *fx_api;
extern kc_cluster *fx_cluster;

/* Start fakeapi and a cluster running the controllers of doc (a JSON
 * cluster document, e.g. {"controllers":["endpoints"],"nodes":0}). */
void fx_start(const char *doc);
/* The same with fakeapi options (tls). */
void fx_start_with(const fakeapi_options *o, const char *doc);
void fx_stop(void);

/* A request in-process: asserts the status is want (0 = any 2xx); the
 * answer is a new reference (NULL when unparsable). body may be NULL. */
json_t *fx_req(int want, const char *method, const char *path, const char *body);
/* The HTTP status of a request (the answer dropped). */
int fx_status(const char *method, const char *path, const char *body);
/* GET path: the object, or NULL when 404. */
json_t *fx_get(const char *path);
/* A printf into a ring of static buffers. */
const char *fx_s(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Poll fn(user) every 5 ms until it is true or timeout_ms passes. */
bool fx_wait(bool (*fn)(void *user), void *user, int timeout_ms);
/* Poll GET path until its value at the dotted path field equals want (JSON
 * text; "null" = absent), or timeout_ms passes; returns the last object
 * seen (new reference, may be NULL). */
json_t *fx_wait_field(const char *path, const char *field, const char *want, int timeout_ms);
/* A member by dotted path ("metadata.labels.app", "subsets.0.ports"). */
json_t *fx_at(const json_t *v, const char *path);
void fx_sleep_ms(int ms);

/* Create a pod in ns with labels (JSON object text) and containers' ports
 * (JSON array text of container ports, may be NULL), extra spec members
 * (JSON object text merged into spec, may be NULL); then set its status:
 * phase Running, podIP ip (NULL = none), Ready ready with the given
 * lastTransitionTime (NULL = a fixed time). Returns the pod's uid (static
 * ring buffer). */
const char *fx_pod(const char *ns, const char *name, const char *labels, const char *ports,
                   const char *spec, const char *ip, bool ready, const char *ready_since);
/* Set a pod's Ready condition (and time). */
void fx_pod_ready(const char *ns, const char *name, bool ready, const char *since);

/* Decode standard base64: a new string (static ring buffer), asserting it is valid. */
const char *fx_b64dec(const char *s);

#endif
