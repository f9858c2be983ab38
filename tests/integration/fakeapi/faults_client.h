/*
 * faults_client.h - the client side shared by the fault tests: requests as
 * a chosen client, a streaming watch client, a virtual clock. The server is
 * apitest's (srv, start, setup, teardown); requests here replace apitest's
 * own (APITEST_OWN_REQUESTS), since they must see transport errors, send a
 * User-Agent or a token, and read Retry-After; the fc_ names keep them apart
 * from apitest's. Test thread only.
 */
#ifndef FAULTS_CLIENT_H
#define FAULTS_CLIENT_H

#define APITEST_OWN_REQUESTS /* requests go through hdo */

#include <curl/curl.h>
#include <stdint.h>

#include "apitest.h"
#include "fakeapi/fakeapi.h"

#define SEC 1000000000LL
#define CM(ns) "/api/v1/namespaces/" ns "/configmaps"

/* One request as a client sees it: the status, the body, the transport. */
typedef struct hres {
    CURLcode rc;
    long status;
    char *body;
    size_t len;
    char retry_after[32];
} hres;

void advance(int64_t ns);

/* Start the test server with seed on the virtual clock, at a fixed time. */
void start_vclock(uint64_t seed);
/* The same with other options (their clock is replaced). */
void start_vclock_with(const fakeapi_options *opts);

/* Criterion init: start_vclock(4242). */
void setup_vclock(void);

/*
 * Send method to path as client ua (NULL: "faults-test"), with a bearer
 * token (or NULL) and a body (JSON with single quotes for double quotes, or
 * NULL). ctype NULL means application/json when there is a body.
 */
hres hdo(const char *method, const char *path, const char *body, const char *ua, const char *token,
         const char *ctype);

/* A request as ua that must answer want; returns the parsed body (new ref, may be NULL). */
json_t *req_as(long want, const char *ua, const char *method, const char *path, const char *body);

json_t *fc_req(long want, const char *method, const char *path, const char *body);

/* The HTTP status of a request as ua (asserting it was answered). */
long status_as(const char *ua, const char *method, const char *path);

unsigned long long fc_rv_of(const json_t *obj);

void fc_mk_ns(const char *name);

/* Create a ConfigMap {v: val}; returns its resourceVersion. */
unsigned long long fc_mk_cm(const char *ns, const char *name, const char *val);

unsigned long long set_cm(const char *ns, const char *name, const char *val);

/* Add a rule as JSON through the C API (single quotes for double); asserts it took. */
void add_json(const char *json);

/* Add a rule through POST /fakeapi/v1/faults; returns the id it got. */
uint64_t post_rule(const char *json);

unsigned long fired_of(uint64_t id);

/* Open a watch on path (query included) as client ua (NULL: "faults-test");
 * asserts 200 promptly. */
wstream *ws_open(const char *path, const char *ua);

/* Expect the next event to be type for name (NULL: any name). */
void expect_ev(wstream *w, const char *type, const char *name);

void expect_quiet(wstream *w, int ms);

/* The value of the sample named exactly series in the text; -1 if absent. */
double metric(const char *text, const char *series);

char *metrics_text(void);

#endif
