/*
 * apitest.h - helpers shared by the fakeapi integration tests
 * (tests/integration/fakeapi/): the server fixture, request helpers taking
 * JSON written with single quotes, dotted-path lookups, polling helpers,
 * object builders and a streaming watch client.
 *
 * Two sections can be left out by a test file that brings its own helpers of
 * the same names (define the macro before including this header):
 *   APITEST_OWN_REQUESTS  req_full, req_ct, req, req_fail*, assert_failure,
 *                         gone, wait_gone
 *   APITEST_OWN_OBJECTS   rv_of, mk_cm, mk_ns, deploy_body, mk_crd, CM, ...
 */
#ifndef TESTS_APITEST_H
#define TESTS_APITEST_H

#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "fakeapi/fakeapi.h"
#include "httpc.h"

/* ---- the server fixture ---------------------------------------------------- */

/* The server under test (set by start/setup, cleared by teardown). */
extern fakeapi_server *srv;

/* Start the server with o (NULL: seed 4242 and defaults); asserts it runs. */
void start(const fakeapi_options *o);
/* Criterion .init / .fini: start(NULL) and stop. */
void setup(void);
void teardown(void);

/* The server's current revision. */
unsigned long long rev(void);

/* ---- strings, JSON, time --------------------------------------------------- */

/* A printf into one of a ring of static (per-thread) buffers (tests only). */
__attribute__((format(printf, 1, 2))) const char *S(const char *fmt, ...);
/* Percent-encode a query value (one of a ring of static buffers). */
const char *enc(const char *v);

/* Follow a dotted path ("metadata.labels.app", "items.0.metadata.name"). Borrowed. */
json_t *jget(const json_t *v, const char *path);
const char *jstr(const json_t *v, const char *path);
long long jint(const json_t *v, const char *path);

int64_t now_ms(void);
void sleep_ms(int ms);

/* ---- requests over HTTP (tests/support/httpc.c) ---------------------------- */
#ifndef APITEST_OWN_REQUESTS

/*
 * Send method to path on the test server; body is JSON written with single
 * quotes for readability (turned into double quotes), or NULL. Asserts the
 * HTTP status is want (unless want is 0) and returns the parsed body (new
 * reference, may be NULL if not JSON). *got (optional) receives the status.
 */
json_t *req_full(long want, const char *method, const char *path, const char *ctype,
                 const char *body, long *got);
json_t *req_ct(long want, const char *method, const char *path, const char *ctype,
               const char *body);
json_t *req(long want, const char *method, const char *path, const char *body);

/* Every error body: a complete Status with this code and reason. */
void assert_failure(const json_t *st, long code, const char *reason);
/* Expect an error: status, reason and full Status shape. Returns the body. */
json_t *req_fail_ct(long code, const char *reason, const char *method, const char *path,
                    const char *ctype, const char *body);
json_t *req_fail(long code, const char *reason, const char *method, const char *path,
                 const char *body);

/* Does a GET of path answer 404? */
bool gone(const char *path);
/* Poll until path answers 404 (true) or timeout_ms passes (false). */
bool wait_gone(const char *path, int timeout_ms);

#endif /* APITEST_OWN_REQUESTS */

/* ---- object builders ------------------------------------------------------- */
#if !defined(APITEST_OWN_REQUESTS) && !defined(APITEST_OWN_OBJECTS)

#define CM(ns) S("/api/v1/namespaces/%s/configmaps", ns)
#define DEPLOYS "/apis/apps/v1/namespaces/default/deployments"
#define WIDGETS "/apis/example.com/v1/namespaces/default/widgets"

/* metadata.resourceVersion as a number (asserting it is a decimal > 0). */
unsigned long long rv_of(const json_t *obj);
/* A Deployment manifest (single-quoted JSON) named n with one container. */
const char *deploy_body(const char *n);
/* Create a ConfigMap in ns; returns the stored object. */
json_t *mk_cm(const char *ns, const char *name, const char *labels);
/* Create a namespace. */
void mk_ns(const char *name);

/* A namespaced CRD widgets.example.com/v1 Widget with a schema, defaults,
 * and status and scale subresources; mk_crd creates it. */
extern const char crd_widgets[];
json_t *mk_crd(void);

#endif /* !APITEST_OWN_OBJECTS */

/* ---- a streaming watch client ---------------------------------------------- */

/* One thread per watch drives a curl multi handle and splits the body into
 * lines, which the test thread takes with a timeout. */
typedef struct wstream {
    char url[4096];
    char ua[128];
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char **lines; /* complete lines (without '\n'), under mu */
    size_t n, cap, taken;
    char *part; /* the line being received */
    size_t plen, pcap;
    long status;
    char ctype[128];
    bool chunked;
    bool headers; /* the header block is complete */
    bool done;    /* the transfer has ended */
    CURLcode rc;
    size_t early_bytes; /* body bytes seen before the header block ended */
    atomic_bool stop;
} wstream;

/* Open a watch on path (query included) as client ua (NULL: "apitest"). */
wstream *ws_start(const char *path, const char *ua);
/* ws_start, then assert it answers 200 within ms. */
wstream *ws_start_ok(const char *path, const char *ua, int ms);
/* Wait up to ms for the header block (or the end); returns the status. */
long ws_headers(wstream *w, int ms);
/* The next line, waiting up to ms; NULL on timeout or at the end (malloc'ed). */
char *ws_line(wstream *w, int ms);
/* The next event, parsed (asserting it is one JSON object with a type and an
 * object); NULL as ws_line. */
json_t *ws_next(wstream *w, int ms);
/* Wait up to ms for the stream to end; true if it did. */
bool ws_wait_done(wstream *w, int ms);
/* Stop reading (closing the connection if still open) and free. */
void ws_close(wstream *w);

#endif
