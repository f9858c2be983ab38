/*
 * apitest.c - helpers shared by the fakeapi integration tests (apitest.h).
 */
#include "apitest.h"

#include <criterion/criterion.h>
#include <curl/curl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---- the server fixture ---------------------------------------------------- */

fakeapi_server *srv;

void start(const fakeapi_options *o)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    fakeapi_options def = {.seed = 4242};
    cr_assert_eq(fakeapi_start(o ? o : &def, &srv), 0, "fakeapi_start");
    cr_assert_neq(fakeapi_port(srv), 0);
}

void setup(void)
{
    start(NULL);
}

void teardown(void)
{
    fakeapi_stop(srv);
    srv = NULL;
}

unsigned long long rev(void)
{
    return (unsigned long long)fakeapi_revision(srv);
}

/* ---- strings, JSON, time --------------------------------------------------- */

/* A printf into one of a ring of static (per-thread) buffers (tests only). */
const char *S(const char *fmt, ...)
{
    static __thread char ring[8][16384];
    static __thread int next;
    char *b = ring[next++ % 8];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof ring[0], fmt, ap);
    va_end(ap);
    return b;
}

/* Percent-encode a query value. */
const char *enc(const char *v)
{
    static char ring[4][4096];
    static int next;
    char *b = ring[next++ % 4], *o = b;
    for (const unsigned char *p = (const unsigned char *)v; *p && o < b + sizeof ring[0] - 4; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("-_.~", *p))
            *o++ = (char)*p;
        else
            o += sprintf(o, "%%%02X", *p);
    }
    *o = '\0';
    return b;
}

/* Follow a dotted path ("metadata.labels.app", "items.0.metadata.name"). Borrowed. */
json_t *jget(const json_t *v, const char *path)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", path);
    json_t *cur = (json_t *)v;
    for (char *save = NULL, *p = strtok_r(buf, ".", &save); p && cur;
         p = strtok_r(NULL, ".", &save)) {
        if (json_is_array(cur))
            cur = json_array_get(cur, strtoul(p, NULL, 10));
        else
            cur = json_object_get(cur, p);
    }
    return cur;
}

const char *jstr(const json_t *v, const char *path)
{
    return json_string_value(jget(v, path));
}

long long jint(const json_t *v, const char *path)
{
    return json_integer_value(jget(v, path));
}

int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* ---- requests over HTTP (tests/support/httpc.c) ---------------------------- */

/*
 * Send method to path on the test server; body is JSON written with single
 * quotes for readability (turned into double quotes), or NULL. Asserts the
 * HTTP status is want (unless want is 0) and returns the parsed body (new
 * reference, may be NULL if not JSON). *got (optional) receives the status.
 */
json_t *req_full(long want, const char *method, const char *path, const char *ctype,
                 const char *body, long *got)
{
    char url[4096];
    snprintf(url, sizeof url, "%s%s", fakeapi_url(srv), path);
    char *b = body ? strdup(body) : NULL;
    for (char *p = b; p && *p; p++)
        if (*p == '\'')
            *p = '"';
    httpc_resp r;
    int rc = httpc_do(method, url, ctype, b, &r);
    free(b);
    json_t *v = json_loads(r.body, 0, NULL);
    if (want)
        cr_assert_eq(r.status, want, "%s %s: want %ld, got %ld (rc %d): %.600s", method, path, want,
                     r.status, rc, r.body);
    if (got)
        *got = r.status;
    httpc_resp_free(&r);
    return v;
}

json_t *req_ct(long want, const char *method, const char *path, const char *ctype, const char *body)
{
    return req_full(want, method, path, ctype, body, NULL);
}

json_t *req(long want, const char *method, const char *path, const char *body)
{
    return req_ct(want, method, path, body ? "application/json" : NULL, body);
}

/* Every error body: a complete Status with this code and reason. */
void assert_failure(const json_t *st, long code, const char *reason)
{
    cr_assert_not_null(st, "error body is not JSON");
    cr_assert_str_eq(jstr(st, "kind"), "Status");
    cr_assert_str_eq(jstr(st, "apiVersion"), "v1");
    cr_assert_str_eq(jstr(st, "status"), "Failure");
    cr_assert(json_is_object(jget(st, "metadata")));
    cr_assert_eq(jint(st, "code"), code);
    cr_assert_str_eq(jstr(st, "reason"), reason);
    cr_assert(jstr(st, "message") && *jstr(st, "message"));
}

/* Expect an error: status, reason and full Status shape. Returns the body. */
json_t *req_fail_ct(long code, const char *reason, const char *method, const char *path,
                    const char *ctype, const char *body)
{
    json_t *st = req_ct(code, method, path, ctype, body);
    assert_failure(st, code, reason);
    return st;
}

json_t *req_fail(long code, const char *reason, const char *method, const char *path,
                 const char *body)
{
    return req_fail_ct(code, reason, method, path, body ? "application/json" : NULL, body);
}

/* Does a GET of path answer 404? */
bool gone(const char *path)
{
    json_t *v = req(0, "GET", path, NULL);
    bool g = v && jint(v, "code") == 404 && jstr(v, "kind") && !strcmp(jstr(v, "kind"), "Status");
    json_decref(v);
    return g;
}

/* Poll until path answers 404 (true) or timeout_ms passes (false). */
bool wait_gone(const char *path, int timeout_ms)
{
    for (int t = 0; t <= timeout_ms; t += 20) {
        if (gone(path))
            return true;
        usleep(20 * 1000);
    }
    return false;
}

/* ---- object builders ------------------------------------------------------- */

/* metadata.resourceVersion as a number (asserting it is a decimal > 0). */
unsigned long long rv_of(const json_t *obj)
{
    const char *rv = jstr(obj, "metadata.resourceVersion");
    cr_assert_not_null(rv, "no resourceVersion");
    char *end;
    unsigned long long n = strtoull(rv, &end, 10);
    cr_assert(*rv && !*end && n > 0, "bad resourceVersion '%s'", rv);
    return n;
}

/* A Deployment manifest (single-quoted JSON) named n with one container. */
const char *deploy_body(const char *n)
{
    return S("{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':'%s'},"
             "'spec':{'replicas':1,'selector':{'matchLabels':{'app':'%s'}},"
             "'template':{'metadata':{'labels':{'app':'%s'}},"
             "'spec':{'containers':[{'name':'a','image':'nginx:1'}]}}}}",
             n, n, n);
}

/* Create a ConfigMap in ns; returns the stored object. */
json_t *mk_cm(const char *ns, const char *name, const char *labels)
{
    return req(
        201, "POST", CM(ns),
        S("{'metadata':{'name':'%s','labels':%s},'data':{'k':'v'}}", name, labels ? labels : "{}"));
}

/* Create a namespace. */
void mk_ns(const char *name)
{
    json_decref(req(201, "POST", "/api/v1/namespaces", S("{'metadata':{'name':'%s'}}", name)));
}

const char crd_widgets[] =
    "{'apiVersion':'apiextensions.k8s.io/v1','kind':'CustomResourceDefinition',"
    "'metadata':{'name':'widgets.example.com'},"
    "'spec':{'group':'example.com','scope':'Namespaced',"
    "'names':{'plural':'widgets','singular':'widget','kind':'Widget','listKind':'WidgetList',"
    "'shortNames':['wd']},"
    "'versions':[{'name':'v1','served':true,'storage':true,"
    "'schema':{'openAPIV3Schema':{'type':'object','properties':{"
    "'spec':{'type':'object','required':['color'],'properties':{"
    "'size':{'type':'integer','minimum':1,'default':3},"
    "'color':{'type':'string','enum':['red','blue']},"
    "'replicas':{'type':'integer'},"
    "'tags':{'type':'array','items':{'type':'string'}}}},"
    "'status':{'type':'object','properties':{'ready':{'type':'boolean'},"
    "'replicas':{'type':'integer'},'selector':{'type':'string'}}}}}},"
    "'subresources':{'status':{},'scale':{'specReplicasPath':'.spec.replicas',"
    "'statusReplicasPath':'.status.replicas','labelSelectorPath':'.status.selector'}}}]}}";

json_t *mk_crd(void)
{
    return req(201, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd_widgets);
}

/* ---- a streaming watch client ---------------------------------------------- */

static size_t ws_header(char *p, size_t sz, size_t nm, void *ud)
{
    wstream *w = ud;
    size_t len = sz * nm;
    pthread_mutex_lock(&w->mu);
    if (len >= 5 && !strncmp(p, "HTTP/", 5)) {
        const char *sp = memchr(p, ' ', len);
        w->status = sp ? strtol(sp + 1, NULL, 10) : 0;
        w->chunked = false;
        w->ctype[0] = '\0';
    } else if (len >= 13 && !strncasecmp(p, "Content-Type:", 13)) {
        const char *v = p + 13;
        while (*v == ' ')
            v++;
        size_t vl = (size_t)(p + len - v);
        while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n'))
            vl--;
        snprintf(w->ctype, sizeof w->ctype, "%.*s", (int)vl, v);
    } else if (len >= 18 && !strncasecmp(p, "Transfer-Encoding:", 18)) {
        w->chunked = memmem(p, len, "chunked", 7) != NULL;
    } else if (len <= 2 && (p[0] == '\r' || p[0] == '\n')) {
        w->headers = true;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return len;
}

static size_t ws_body(char *p, size_t sz, size_t nm, void *ud)
{
    wstream *w = ud;
    size_t len = sz * nm;
    pthread_mutex_lock(&w->mu);
    if (!w->headers)
        w->early_bytes += len;
    for (size_t i = 0; i < len; i++) {
        if (p[i] != '\n') {
            if (w->plen + 2 > w->pcap) {
                w->pcap = w->pcap ? w->pcap * 2 : 4096;
                w->part = realloc(w->part, w->pcap);
            }
            w->part[w->plen++] = p[i];
            continue;
        }
        if (w->n == w->cap) {
            w->cap = w->cap ? w->cap * 2 : 64;
            w->lines = realloc(w->lines, w->cap * sizeof *w->lines);
        }
        w->lines[w->n] = malloc(w->plen + 1);
        memcpy(w->lines[w->n], w->part ? w->part : "", w->plen);
        w->lines[w->n++][w->plen] = '\0';
        w->plen = 0;
    }
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return len;
}

static void *ws_run(void *ud)
{
    wstream *w = ud;
    CURL *h = curl_easy_init();
    CURLM *m = curl_multi_init();
    curl_easy_setopt(h, CURLOPT_URL, w->url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, ws_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, w);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, ws_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, w);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_USERAGENT, w->ua);
    curl_multi_add_handle(m, h);
    int running = 1;
    CURLcode rc = CURLE_OK;
    while (running && !atomic_load(&w->stop)) {
        curl_multi_perform(m, &running);
        if (running)
            curl_multi_poll(m, NULL, 0, 50, NULL);
    }
    int left;
    CURLMsg *msg;
    bool finished = false;
    while ((msg = curl_multi_info_read(m, &left)))
        if (msg->msg == CURLMSG_DONE) {
            rc = msg->data.result;
            finished = true;
        }
    curl_multi_remove_handle(m, h);
    curl_easy_cleanup(h);
    curl_multi_cleanup(m);
    pthread_mutex_lock(&w->mu);
    w->rc = finished ? rc : CURLE_ABORTED_BY_CALLBACK;
    w->done = true;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

static void deadline_ts(struct timespec *ts, int ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000;
    if (ts->tv_nsec >= 1000000000) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000;
    }
}

wstream *ws_start(const char *path, const char *ua)
{
    wstream *w = calloc(1, sizeof *w);
    cr_assert_not_null(w);
    snprintf(w->url, sizeof w->url, "%s%s", fakeapi_url(srv), path);
    snprintf(w->ua, sizeof w->ua, "%s", ua ? ua : "apitest");
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    cr_assert_eq(pthread_create(&w->th, NULL, ws_run, w), 0);
    return w;
}

wstream *ws_start_ok(const char *path, const char *ua, int ms)
{
    wstream *w = ws_start(path, ua);
    long st = ws_headers(w, ms);
    cr_assert_eq(st, 200, "watch %s: status %ld", path, st);
    return w;
}

long ws_headers(wstream *w, int ms)
{
    struct timespec ts;
    deadline_ts(&ts, ms);
    pthread_mutex_lock(&w->mu);
    while (!w->headers && !w->done)
        if (pthread_cond_timedwait(&w->cv, &w->mu, &ts))
            break;
    long st = w->headers ? w->status : 0;
    pthread_mutex_unlock(&w->mu);
    return st;
}

char *ws_line(wstream *w, int ms)
{
    struct timespec ts;
    deadline_ts(&ts, ms);
    char *line = NULL;
    pthread_mutex_lock(&w->mu);
    while (w->taken == w->n && !w->done)
        if (pthread_cond_timedwait(&w->cv, &w->mu, &ts))
            break;
    if (w->taken < w->n) {
        line = w->lines[w->taken];
        w->lines[w->taken++] = NULL;
    }
    pthread_mutex_unlock(&w->mu);
    return line;
}

json_t *ws_next(wstream *w, int ms)
{
    char *line = ws_line(w, ms);
    if (!line)
        return NULL;
    json_error_t e;
    json_t *ev = json_loads(line, 0, &e);
    cr_assert(json_is_object(ev), "not a JSON event: %.300s (%s)", line, e.text);
    cr_assert_not_null(jstr(ev, "type"), "event without type: %.300s", line);
    cr_assert(json_is_object(jget(ev, "object")), "event without object: %.300s", line);
    free(line);
    return ev;
}

bool ws_wait_done(wstream *w, int ms)
{
    struct timespec ts;
    deadline_ts(&ts, ms);
    pthread_mutex_lock(&w->mu);
    while (!w->done)
        if (pthread_cond_timedwait(&w->cv, &w->mu, &ts))
            break;
    bool d = w->done;
    pthread_mutex_unlock(&w->mu);
    return d;
}

void ws_close(wstream *w)
{
    if (!w)
        return;
    atomic_store(&w->stop, true);
    pthread_join(w->th, NULL);
    for (size_t i = 0; i < w->n; i++)
        free(w->lines[i]);
    free(w->lines);
    free(w->part);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w);
}
