/*
 * faults_client.c - the client side of the fault tests (test_faults.c, the
 * actions; test_fault_rules.c, matching, firing, hits, malformed rules,
 * metrics and the trace): requests as a chosen User-Agent or bearer token
 * that report transport errors and Retry-After, a streaming watch client,
 * a virtual clock. See faults_client.h.
 */
#include "faults_client.h"

#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A virtual clock the tests move by hand. */
static atomic_llong vclock_ns;

static int64_t vclock_now(void *ud)
{
    (void)ud;
    return (int64_t)atomic_load(&vclock_ns);
}

static const fakeapi_clock vclock = {.now_ns = vclock_now};

void advance(int64_t ns)
{
    atomic_fetch_add(&vclock_ns, ns);
    fakeapi_clock_advanced(srv);
}

/* Start the test server with seed on the virtual clock, at a fixed time. */
void start_vclock(uint64_t seed)
{
    start_vclock_with(&(fakeapi_options){.seed = seed});
}

void start_vclock_with(const fakeapi_options *opts)
{
    atomic_store(&vclock_ns, 1700000000LL * SEC);
    fakeapi_options o = *opts;
    o.clock = &vclock;
    start(&o);
}

void setup_vclock(void)
{
    start_vclock(4242);
}

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    hres *r = ud;
    size_t len = sz * n;
    r->body = realloc(r->body, r->len + len + 1);
    memcpy(r->body + r->len, p, len);
    r->len += len;
    r->body[r->len] = '\0';
    return len;
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
    hres *r = ud;
    size_t len = sz * n;
    if (len > 12 && !strncasecmp(p, "Retry-After:", 12)) {
        const char *v = p + 12;
        while (*v == ' ')
            v++;
        size_t vl = (size_t)(p + len - v);
        while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n'))
            vl--;
        snprintf(r->retry_after, sizeof r->retry_after, "%.*s", (int)vl, v);
    }
    return len;
}

/*
 * Send method to path as client ua (NULL: "faults-test"), with a bearer
 * token (or NULL) and a body (JSON with single quotes for double quotes, or
 * NULL). ctype NULL means application/json when there is a body.
 */
hres hdo(const char *method, const char *path, const char *body, const char *ua, const char *token,
         const char *ctype)
{
    hres r = {0};
    CURL *c = curl_easy_init();
    cr_assert_not_null(c);
    char url[4096];
    snprintf(url, sizeof url, "%s%s", fakeapi_url(srv), path);
    char *b = body ? strdup(body) : NULL;
    for (char *p = b; p && *p; p++)
        if (*p == '\'')
            *p = '"';
    struct curl_slist *h = curl_slist_append(NULL, "Expect:");
    if (body)
        h = curl_slist_append(h, S("Content-Type: %s", ctype ? ctype : "application/json"));
    if (token)
        h = curl_slist_append(h, S("Authorization: Bearer %s", token));
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_USERAGENT, ua ? ua : "faults-test");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &r);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    if (b) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, b);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(b));
    }
    r.rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    free(b);
    if (!r.body)
        r.body = calloc(1, 1);
    return r;
}

/* A request as ua that must answer want; returns the parsed body (new ref, may be NULL). */
json_t *req_as(long want, const char *ua, const char *method, const char *path, const char *body)
{
    hres r = hdo(method, path, body, ua, NULL, NULL);
    cr_assert_eq(r.rc, CURLE_OK, "%s %s: transport error %d (%s)", method, path, r.rc,
                 curl_easy_strerror(r.rc));
    cr_assert_eq(r.status, want, "%s %s: want %ld, got %ld: %.600s", method, path, want, r.status,
                 r.body);
    json_t *v = json_loads(r.body, 0, NULL);
    free(r.body);
    return v;
}

json_t *fc_req(long want, const char *method, const char *path, const char *body)
{
    return req_as(want, NULL, method, path, body);
}

/* The HTTP status of a request as ua (asserting it was answered). */
long status_as(const char *ua, const char *method, const char *path)
{
    hres r = hdo(method, path, NULL, ua, NULL, NULL);
    cr_assert_eq(r.rc, CURLE_OK, "%s %s: transport error %d", method, path, r.rc);
    free(r.body);
    return r.status;
}

unsigned long long fc_rv_of(const json_t *obj)
{
    const char *rv = jstr(obj, "metadata.resourceVersion");
    return rv ? strtoull(rv, NULL, 10) : 0;
}

void fc_mk_ns(const char *name)
{
    json_decref(fc_req(201, "POST", "/api/v1/namespaces",
                       S("{'apiVersion':'v1','kind':'Namespace','metadata':{'name':'%s'}}", name)));
}

/* Create a ConfigMap {v: val}; returns its resourceVersion. */
unsigned long long fc_mk_cm(const char *ns, const char *name, const char *val)
{
    json_t *o = fc_req(201, "POST", S("/api/v1/namespaces/%s/configmaps", ns),
                       S("{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'%s'},"
                         "'data':{'v':'%s'}}",
                         name, val));
    unsigned long long rv = fc_rv_of(o);
    json_decref(o);
    return rv;
}

unsigned long long set_cm(const char *ns, const char *name, const char *val)
{
    hres r = hdo("PATCH", S("/api/v1/namespaces/%s/configmaps/%s", ns, name),
                 S("{'data':{'v':'%s'}}", val), NULL, NULL, "application/merge-patch+json");
    cr_assert_eq(r.status, 200, "patch %s: %ld %.300s", name, r.status, r.body);
    json_t *o = json_loads(r.body, 0, NULL);
    free(r.body);
    unsigned long long rv = fc_rv_of(o);
    json_decref(o);
    return rv;
}

/* Add a rule as JSON through the C API (single quotes for double); asserts it took. */
void add_json(const char *json)
{
    char *b = strdup(json);
    for (char *p = b; *p; p++)
        if (*p == '\'')
            *p = '"';
    fakeapi_error err = {0};
    int rc = fakeapi_fault_add_json(srv, b, &err);
    cr_assert_eq(rc, 0, "fakeapi_fault_add_json(%s): %d %s", b, rc, err.message);
    free(b);
}

/* Add a rule through POST /fakeapi/v1/faults; returns the id it got. */
uint64_t post_rule(const char *json)
{
    json_t *list = fc_req(201, "POST", "/fakeapi/v1/faults", json);
    cr_assert(json_is_array(list) && json_array_size(list) > 0);
    json_t *last = json_array_get(list, json_array_size(list) - 1);
    uint64_t id = (uint64_t)json_integer_value(json_object_get(last, "id"));
    json_decref(list);
    cr_assert_gt(id, 0);
    return id;
}

unsigned long fired_of(uint64_t id)
{
    unsigned long m = 0, f = 0;
    cr_assert_eq(fakeapi_fault_hits(srv, id, &m, &f), 0, "rule %llu", (unsigned long long)id);
    return f;
}

/* ---- a streaming watch client --------------------------------------------- */

/* Open a watch on path (query included) as client ua (NULL: "faults-test");
 * asserts 200 promptly. */
wstream *ws_open(const char *path, const char *ua)
{
    return ws_start_ok(path, ua ? ua : "faults-test", 3000);
}

/* Expect the next event to be type for name (NULL: any name). */
void expect_ev(wstream *w, const char *type, const char *name)
{
    json_t *ev = ws_next(w, 3000);
    cr_assert_not_null(ev, "no %s event for %s within 3 s", type, name ? name : "(any)");
    cr_assert_str_eq(jstr(ev, "type"), type, "want %s %s, got %s %s", type, name ? name : "",
                     jstr(ev, "type"), jstr(ev, "object.metadata.name"));
    if (name)
        cr_assert_str_eq(jstr(ev, "object.metadata.name"), name);
    json_decref(ev);
}

void expect_quiet(wstream *w, int ms)
{
    json_t *ev = ws_next(w, ms);
    cr_assert_null(ev, "unexpected event: %s %s", jstr(ev, "type"),
                   jstr(ev, "object.metadata.name"));
}

/* The value of the sample named exactly series in the text; -1 if absent. */
double metric(const char *text, const char *series)
{
    size_t n = strlen(series);
    for (const char *line = text; line && *line;
         line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        if (!strncmp(line, series, n) && line[n] == ' ')
            return strtod(line + n + 1, NULL);
    }
    return -1;
}

char *metrics_text(void)
{
    hres r = hdo("GET", "/metrics", NULL, NULL, NULL, NULL);
    cr_assert_eq(r.status, 200);
    return r.body;
}
