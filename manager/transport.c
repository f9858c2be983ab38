/*
 * transport.c - HTTP for libctrl on libcurl.
 *
 * DESIGN
 * Threads: none of its own. Any thread that calls ctrl__transport_do
 * performs its request itself, on a curl easy handle borrowed from the
 * transport's pool for the length of the request (retries included).
 * Handles go back to the pool after curl_easy_reset, which keeps their open
 * connections, DNS and TLS session caches: so a thread that makes request
 * after request reuses one handle and one kept-alive connection, and a new
 * handle is created only when every pooled one is busy. At most
 * max_idle_handles stay pooled; extra ones are cleaned up on release.
 *
 * Cancellable requests (watches) run on a curl multi handle of their own so
 * that ctrl__cancel_fire can wake curl_multi_poll at once (curl_multi_wakeup)
 * instead of waiting for a progress callback.
 *
 * Locks, never nested, never held across I/O or sleeps:
 *   pool_mu   the idle handle stack;
 *   token_mu  the bearer token and its last read from the token file;
 *   rl_mu     the rate limiter's bucket and the jitter generator;
 *   cancel->mu  the multi handle pointer of a running cancellable request.
 *
 * With a round-tripper (ctrl/roundtrip.h) set on the config, no curl
 * handle is ever made: each attempt calls the round-tripper on the calling
 * thread instead, and everything around the attempt (rate limit, retries,
 * Status decoding, sink, on_open, size limit, metrics) is shared with the
 * curl path. Cancellation then wakes the round-tripper through the wake
 * function it registered (cancel->mu guards it; called under that lock so
 * that it is never called once the exchange has returned).
 *
 * Connections (a round-tripper with model_connections): each exchange
 * borrows a modelled handle, taken from and given back to a stack in the
 * same order as curl handles, and the model counts the kept-alive
 * connections that handle's libcurl connection cache would hold: one more
 * after a whole answer on a new connection (at most CURL_MAX_KEPT, libcurl's
 * CURLOPT_MAXCONNECTS default: the oldest goes), one fewer when a kept one
 * fails or is closed by the server. An idempotent request (not sent with
 * CURLOPT_FRESH_CONNECT) goes on a kept connection when there is one, and
 * when that fails before any byte of the answer it is sent again at once,
 * as libcurl does ("Connection died, retrying a fresh connect"): on another
 * kept connection, else a new one, at most CURL_MAX_RESENDS times. That
 * re-send is inside one attempt: no rate limit, no backoff, one
 * on_response. Cancellable requests run on a multi handle of their own,
 * so on a new connection closed at their end: they change no count.
 *
 * Retries: see ctrl/client.h. Delays come from the Retry-After header when
 * the server sends one, else base * 2^attempt capped at max, plus up to 10%
 * jitter; they are slept through the (replaceable) clock.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "config_int.h"
#include "error_int.h"
#include "transport.h"

/* Process-wide totals of the requests that are not watches (benchmarks). */
static atomic_ulong totals_requests;
static atomic_llong totals_ns;

void ctrl_transport_totals(unsigned long *requests, long long *ns)
{
    *requests = atomic_load_explicit(&totals_requests, memory_order_relaxed);
    *ns = atomic_load_explicit(&totals_ns, memory_order_relaxed);
}

#define DEFAULT_UA "kube-harness-ctrl/0.1"
#define TOKEN_REFRESH_NS (60LL * 1000000000LL)
#define NS_PER_MS 1000000LL

struct ctrl__cancel {
    pthread_mutex_t mu;
    atomic_bool fired;
    CURLM *multi; /* while a request runs; guarded by mu */
    /* A round-tripper's wake-up while its exchange runs; guarded by mu. */
    void (*wake)(void *ud);
    void *wake_ud;
};

struct ctrl__transport {
    atomic_int refs;
    char *server;   /* as configured */
    char *base_url; /* what requests go to (host replaced by tls-server-name) */
    char *ns;
    char *user_agent;
    struct curl_slist *connect_to;
    bool https;
    ctrl_roundtripper rt; /* roundtrip NULL = libcurl */
    char *prefix;         /* with rt: the server URL's path, "" if none */

    pthread_mutex_t token_mu;
    char *token;
    char *token_file;
    int64_t token_read_ns;
    char *username;
    char *password;
    unsigned char *ca, *cert, *key;
    size_t ca_len, cert_len, key_len;
    bool insecure;

    int timeout_ms;
    int connect_timeout_ms;
    int max_retries;
    int base_ms;
    int max_ms;
    bool retry_non_idempotent;
    size_t max_response;
    int max_idle;
    ctrl_clock clock;
    void (*on_response)(void *ud, int code, const char *method, const char *host);
    void *on_response_ud;
    char host[256]; /* "host:port" of the server, for on_response */

    pthread_mutex_t rl_mu;
    double qps;
    double burst;
    double tokens;
    int64_t last_ns;
    uint64_t rng;

    pthread_mutex_t pool_mu;
    CURL **idle;
    int n_idle;
    /* With a round-tripper that models connections: the idle handles'
     * kept-alive connection counts, a stack like idle (see "Connections"). */
    int *kept_idle;
    int n_kept_idle;
};

/* ---- clock ---- */

static int64_t real_now(void *ud)
{
    (void)ud;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void real_sleep(void *ud, int64_t ns)
{
    (void)ud;
    if (ns <= 0)
        return;
    struct timespec ts = {.tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

int64_t ctrl__transport_now_ns(ctrl__transport *t)
{
    return t->clock.now_ns(t->clock.ud);
}

static void sleep_ns(ctrl__transport *t, int64_t ns)
{
    if (ns > 0)
        t->clock.sleep_ns(t->clock.ud, ns);
}

/* ---- set-up ---- */

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

static void global_init(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void transport_free(ctrl__transport *t)
{
    for (int i = 0; i < t->n_idle; i++)
        curl_easy_cleanup(t->idle[i]);
    free(t->idle);
    free(t->kept_idle);
    curl_slist_free_all(t->connect_to);
    free(t->server);
    free(t->base_url);
    free(t->prefix);
    free(t->ns);
    free(t->user_agent);
    free(t->token);
    free(t->token_file);
    free(t->username);
    free(t->password);
    free(t->ca);
    free(t->cert);
    if (t->key)
        memset(t->key, 0, t->key_len);
    free(t->key);
    pthread_mutex_destroy(&t->token_mu);
    pthread_mutex_destroy(&t->rl_mu);
    pthread_mutex_destroy(&t->pool_mu);
    free(t);
}

static char *xstrdup(const char *s, bool *oom)
{
    if (!s)
        return NULL;
    char *c = strdup(s);
    if (!c)
        *oom = true;
    return c;
}

static unsigned char *xmemdup(const unsigned char *p, size_t len, bool *oom)
{
    if (!p)
        return NULL;
    unsigned char *c = malloc(len ? len : 1);
    if (!c)
        *oom = true;
    else
        memcpy(c, p, len);
    return c;
}

/*
 * With tls-server-name, requests go to https://<name>:<port><prefix> and
 * CURLOPT_CONNECT_TO sends the connection to the configured host, so that
 * SNI and certificate checks use the name.
 */
static int setup_server_name(ctrl__transport *t, const char *name, ctrl_error *err)
{
    CURLU *u = curl_url();
    char *host = NULL, *port = NULL, *path = NULL;
    int rc = 0;
    if (!u)
        return ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
    if (curl_url_set(u, CURLUPART_URL, t->server, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK) {
        rc = ctrl__error_set(err, CTRL_ERR_CONFIG, "cannot parse server URL \"%s\"", t->server);
        goto out;
    }
    size_t plen = strlen(path);
    while (plen > 0 && path[plen - 1] == '/')
        path[--plen] = '\0';
    size_t l = strlen(name) + strlen(port) + plen + 16;
    char *base = malloc(l);
    char ct[600];
    snprintf(ct, sizeof ct, "%s:%s:%s:%s", name, port, host, port);
    struct curl_slist *list = base ? curl_slist_append(NULL, ct) : NULL;
    if (!base || !list) {
        free(base);
        rc = ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
        goto out;
    }
    snprintf(base, l, "https://%s:%s%s", name, port, path);
    free(t->base_url);
    t->base_url = base;
    t->connect_to = list;
out:
    curl_free(host);
    curl_free(port);
    curl_free(path);
    curl_url_cleanup(u);
    return rc;
}

/* "host:port" of a URL, as client-go's rest_client_requests_total labels it. */
static void host_of(const char *url, char *out, size_t len)
{
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    size_t n = strcspn(p, "/?#");
    if (n >= len)
        n = len - 1;
    memcpy(out, p, n);
    out[n] = '\0';
}

int ctrl__transport_new(const ctrl_config *cfg, const ctrl_client_options *opts,
                        ctrl__transport **out, ctrl_error *err)
{
    static const ctrl_client_options none = {0};
    if (!cfg || !out || !cfg->server)
        return ctrl__error_set(err, CTRL_ERR_ARG, "a config with a server is required");
    if (!opts)
        opts = &none;
    bool use_rt = cfg->rt.roundtrip != NULL;
    if (!use_rt)
        pthread_once(&global_once, global_init);
    if (!use_rt && global_rc != CURLE_OK)
        return ctrl__error_set(err, CTRL_ERR_INTERNAL, "curl_global_init failed: %s",
                               curl_easy_strerror(global_rc));
    ctrl__transport *t = calloc(1, sizeof *t);
    if (!t)
        return ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
    atomic_init(&t->refs, 1);
    pthread_mutex_init(&t->token_mu, NULL);
    pthread_mutex_init(&t->rl_mu, NULL);
    pthread_mutex_init(&t->pool_mu, NULL);
    bool oom = false;
    t->server = xstrdup(cfg->server, &oom);
    t->base_url = xstrdup(cfg->server, &oom);
    t->ns = xstrdup(cfg->ns ? cfg->ns : "default", &oom);
    t->user_agent = xstrdup(opts->user_agent ? opts->user_agent : DEFAULT_UA, &oom);
    t->token = xstrdup(cfg->token, &oom);
    t->token_file = xstrdup(cfg->token_file, &oom);
    t->username = xstrdup(cfg->username, &oom);
    t->password = xstrdup(cfg->password, &oom);
    t->ca = xmemdup(cfg->ca, cfg->ca_len, &oom);
    t->ca_len = cfg->ca_len;
    t->cert = xmemdup(cfg->cert, cfg->cert_len, &oom);
    t->cert_len = cfg->cert_len;
    t->key = xmemdup(cfg->key, cfg->key_len, &oom);
    t->key_len = cfg->key_len;
    t->insecure = cfg->insecure;
    t->on_response = opts->on_response;
    t->on_response_ud = opts->on_response_ud;
    host_of(cfg->server, t->host, sizeof t->host);
    t->https = !strncmp(cfg->server, "https://", 8);
    if (use_rt) {
        /* The target is what a request line would carry: the server URL's
         * path prefix, then the request's path. */
        const char *p = strstr(cfg->server, "://");
        p = p ? p + 3 : cfg->server;
        p += strcspn(p, "/?#");
        char *prefix = strndup(p, strcspn(p, "?#"));
        if (!prefix)
            oom = true;
        t->prefix = prefix;
        t->rt = cfg->rt;
    }

    t->timeout_ms = opts->timeout_ms == 0 ? 30000 : opts->timeout_ms;
    t->connect_timeout_ms = opts->connect_timeout_ms > 0 ? opts->connect_timeout_ms : 10000;
    t->max_retries = opts->max_retries == 0 ? 5 : (opts->max_retries < 0 ? 0 : opts->max_retries);
    t->base_ms = opts->backoff_base_ms > 0 ? opts->backoff_base_ms : 100;
    t->max_ms = opts->backoff_max_ms > 0 ? opts->backoff_max_ms : 30000;
    t->retry_non_idempotent = opts->retry_non_idempotent;
    t->max_response = opts->max_response_bytes ? opts->max_response_bytes : 64u << 20;
    t->max_idle = opts->max_idle_handles > 0 ? opts->max_idle_handles : 16;
    t->clock.now_ns = opts->clock && opts->clock->now_ns ? opts->clock->now_ns : real_now;
    t->clock.sleep_ns = opts->clock && opts->clock->sleep_ns ? opts->clock->sleep_ns : real_sleep;
    t->clock.ud = opts->clock ? opts->clock->ud : NULL;
    t->qps = opts->qps > 0 ? opts->qps : 0;
    t->burst = opts->burst > 0 ? opts->burst : (t->qps > 1 ? t->qps : 1);
    t->tokens = t->burst;
    t->last_ns = t->clock.now_ns(t->clock.ud);
    t->token_read_ns = t->last_ns;
    /* Backoff jitter: seeded from the clock and the User-Agent, never from
     * an address, so that a run under a virtual clock repeats exactly. */
    uint64_t ua_hash = 1469598103934665603ULL;
    for (const char *q = t->user_agent ? t->user_agent : ""; *q; q++)
        ua_hash = (ua_hash ^ (unsigned char)*q) * 1099511628211ULL;
    t->rng = (uint64_t)t->last_ns ^ ua_hash ^ 0x9E3779B97F4A7C15ULL;
    if (!t->rng)
        t->rng = 0x9E3779B97F4A7C15ULL;
    t->idle = calloc((size_t)t->max_idle, sizeof *t->idle);
    t->kept_idle = calloc((size_t)t->max_idle, sizeof *t->kept_idle);
    int rc = 0;
    if (oom || !t->idle || !t->kept_idle) {
        rc = ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
        goto out;
    }
    if (!use_rt && cfg->tls_server_name && *cfg->tls_server_name && t->https)
        rc = setup_server_name(t, cfg->tls_server_name, err);
out:
    if (rc < 0) {
        transport_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

ctrl__transport *ctrl__transport_ref(ctrl__transport *t)
{
    atomic_fetch_add(&t->refs, 1);
    return t;
}

void ctrl__transport_unref(ctrl__transport *t)
{
    if (t && atomic_fetch_sub(&t->refs, 1) == 1)
        transport_free(t);
}

const char *ctrl__transport_user_agent(const ctrl__transport *t)
{
    return t->user_agent;
}
const char *ctrl__transport_server(const ctrl__transport *t)
{
    return t->server;
}
const char *ctrl__transport_namespace(const ctrl__transport *t)
{
    return t->ns;
}

/* ---- cancellation ---- */

int ctrl__cancel_new(ctrl__cancel **out)
{
    ctrl__cancel *c = calloc(1, sizeof *c);
    if (!c)
        return CTRL_ERR_NOMEM;
    pthread_mutex_init(&c->mu, NULL);
    atomic_init(&c->fired, false);
    *out = c;
    return 0;
}

void ctrl__cancel_fire(ctrl__cancel *c)
{
    pthread_mutex_lock(&c->mu);
    atomic_store(&c->fired, true);
    if (c->multi)
        curl_multi_wakeup(c->multi);
    if (c->wake) {
        c->wake(c->wake_ud);
        c->wake = NULL; /* at most once */
    }
    pthread_mutex_unlock(&c->mu);
}

bool ctrl__cancel_fired(ctrl__cancel *c)
{
    return atomic_load(&c->fired);
}

void ctrl__cancel_free(ctrl__cancel *c)
{
    if (!c)
        return;
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* ---- pool ---- */

static CURL *pool_get(ctrl__transport *t)
{
    CURL *h = NULL;
    pthread_mutex_lock(&t->pool_mu);
    if (t->n_idle > 0)
        h = t->idle[--t->n_idle];
    pthread_mutex_unlock(&t->pool_mu);
    return h ? h : curl_easy_init();
}

static void pool_put(ctrl__transport *t, CURL *h)
{
    /* Reset drops our callbacks and pointers but keeps connections alive. */
    curl_easy_reset(h);
    pthread_mutex_lock(&t->pool_mu);
    if (t->n_idle < t->max_idle) {
        t->idle[t->n_idle++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&t->pool_mu);
    if (h)
        curl_easy_cleanup(h);
}

/* Modelled handles (model_connections): only their kept-connection count. */
static int kept_get(ctrl__transport *t)
{
    int kept = 0;
    pthread_mutex_lock(&t->pool_mu);
    if (t->n_kept_idle > 0)
        kept = t->kept_idle[--t->n_kept_idle];
    pthread_mutex_unlock(&t->pool_mu);
    return kept;
}

static void kept_put(ctrl__transport *t, int kept)
{
    pthread_mutex_lock(&t->pool_mu);
    if (t->n_kept_idle < t->max_idle)
        t->kept_idle[t->n_kept_idle++] = kept; /* else cleaned up: its connections close */
    pthread_mutex_unlock(&t->pool_mu);
}

/* ---- rate limit, backoff ---- */

static void rate_wait(ctrl__transport *t)
{
    if (t->qps <= 0)
        return;
    pthread_mutex_lock(&t->rl_mu);
    int64_t now = t->clock.now_ns(t->clock.ud);
    double refill = (double)(now - t->last_ns) / 1e9 * t->qps;
    if (refill > 0) {
        t->tokens = t->tokens + refill > t->burst ? t->burst : t->tokens + refill;
        t->last_ns = now;
    }
    t->tokens -= 1;
    int64_t wait = t->tokens < 0 ? (int64_t)(-t->tokens / t->qps * 1e9) : 0;
    pthread_mutex_unlock(&t->rl_mu);
    sleep_ns(t, wait);
}

static int64_t backoff_ns(ctrl__transport *t, int attempt)
{
    int64_t ms = t->base_ms;
    for (int i = 0; i < attempt && ms < t->max_ms; i++)
        ms *= 2;
    if (ms > t->max_ms)
        ms = t->max_ms;
    pthread_mutex_lock(&t->rl_mu);
    t->rng ^= t->rng << 13;
    t->rng ^= t->rng >> 7;
    t->rng ^= t->rng << 17;
    uint64_t r = t->rng;
    pthread_mutex_unlock(&t->rl_mu);
    int64_t jitter =
        (int64_t)((double)(r >> 11) / 9007199254740992.0 * 0.1 * (double)ms * (double)NS_PER_MS);
    return ms * NS_PER_MS + jitter;
}

/* The bearer token, re-read from its file at most once a minute. Caller frees. */
static char *current_token(ctrl__transport *t)
{
    pthread_mutex_lock(&t->token_mu);
    if (t->token_file) {
        int64_t now = t->clock.now_ns(t->clock.ud);
        if (now - t->token_read_ns >= TOKEN_REFRESH_NS || !t->token) {
            char *fresh = NULL;
            if (ctrl__read_token(t->token_file, &fresh, NULL) == 0) {
                free(t->token);
                t->token = fresh;
            }
            t->token_read_ns = now; /* on failure keep the last good token */
        }
    }
    char *tok = t->token ? strdup(t->token) : NULL;
    pthread_mutex_unlock(&t->token_mu);
    return tok;
}

/* ---- one attempt ---- */

typedef struct xfer {
    ctrl__transport *t;
    const ctrl__request *req;
    CURL *h;
    char *buf;
    size_t len, cap;
    bool checked, to_sink, too_big, sink_stop, opened;
} xfer;

/* The blank line that ends a response's headers: tell on_open about a 2xx. */
static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
    xfer *x = ud;
    size_t len = sz * n;
    bool end = (len == 2 && p[0] == '\r' && p[1] == '\n') || (len == 1 && p[0] == '\n');
    if (end && !x->opened && x->req->on_open) {
        long code = 0;
        curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &code);
        if (code >= 200 && code < 300) {
            x->opened = true;
            x->req->on_open(x->req->on_open_ud);
        }
    }
    return len;
}

/*
 * Keep one chunk of the answer: to the sink (a 2xx answer of a request with
 * one; code is read at the first chunk) or into the buffer, within the size
 * limit. false = end the transfer (sink_stop or too_big says why).
 */
static bool keep_body(xfer *x, long code, const char *p, size_t len)
{
    if (x->req->sink) {
        if (!x->checked) {
            x->to_sink = code >= 200 && code < 300;
            x->checked = true;
        }
        if (x->to_sink) {
            if (x->req->sink(p, len, x->req->sink_ud) != 0) {
                x->sink_stop = true;
                return false;
            }
            return true;
        }
    }
    if (x->len + len > x->t->max_response) {
        x->too_big = true;
        return false;
    }
    if (x->len + len + 1 > x->cap) {
        size_t cap = x->cap ? x->cap : 4096;
        while (cap < x->len + len + 1)
            cap *= 2;
        char *nb = realloc(x->buf, cap);
        if (!nb) {
            x->too_big = true;
            return false;
        }
        x->buf = nb;
        x->cap = cap;
    }
    memcpy(x->buf + x->len, p, len);
    x->len += len;
    x->buf[x->len] = '\0';
    return true;
}

static size_t on_write(char *p, size_t sz, size_t n, void *ud)
{
    xfer *x = ud;
    size_t len = sz * n;
    long code = 0;
    if (x->req->sink && !x->checked)
        curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &code);
    return keep_body(x, code, p, len) ? len : 0;
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)dt, (void)dn, (void)ut, (void)un;
    ctrl__cancel *c = ud;
    return ctrl__cancel_fired(c) ? 1 : 0;
}

/* Set every option of one request on a freshly reset handle. */
static int prepare(ctrl__transport *t, const ctrl__request *req, xfer *x, const char *url,
                   struct curl_slist **headers, char *errbuf)
{
    CURL *h = x->h;
    CURLcode c = CURLE_OK;
#define SET(opt, val)                                                                              \
    do {                                                                                           \
        if (c == CURLE_OK)                                                                         \
            c = curl_easy_setopt(h, opt, val);                                                     \
    } while (0)
    SET(CURLOPT_URL, url);
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_ERRORBUFFER, errbuf);
    SET(CURLOPT_USERAGENT, req->user_agent ? req->user_agent : t->user_agent);
    SET(CURLOPT_WRITEFUNCTION, on_write);
    SET(CURLOPT_WRITEDATA, x);
    if (req->on_open) {
        SET(CURLOPT_HEADERFUNCTION, on_header);
        SET(CURLOPT_HEADERDATA, x);
    }
    /* libcurl silently re-sends a request whose reused connection died
     * before the answer: for a POST that can create an object twice. A
     * request that must not be repeated gets a connection of its own. */
    if (!req->idempotent)
        SET(CURLOPT_FRESH_CONNECT, 1L);
    SET(CURLOPT_TCP_KEEPALIVE, 1L);
    SET(CURLOPT_TCP_KEEPIDLE, 30L);
    SET(CURLOPT_TCP_KEEPINTVL, 15L);
    SET(CURLOPT_ACCEPT_ENCODING, "");
    SET(CURLOPT_CONNECTTIMEOUT_MS, (long)t->connect_timeout_ms);
    int timeout = req->timeout_ms ? req->timeout_ms : t->timeout_ms;
    SET(CURLOPT_TIMEOUT_MS, timeout > 0 ? (long)timeout : 0L);
    if (t->connect_to)
        SET(CURLOPT_CONNECT_TO, t->connect_to);
    if (req->cancel) {
        SET(CURLOPT_XFERINFOFUNCTION, on_progress);
        SET(CURLOPT_XFERINFODATA, req->cancel);
        SET(CURLOPT_NOPROGRESS, 0L);
    }
    if (t->https) {
        if (t->insecure) {
            SET(CURLOPT_SSL_VERIFYPEER, 0L);
            SET(CURLOPT_SSL_VERIFYHOST, 0L);
        }
        if (t->ca) {
            struct curl_blob b = {.data = t->ca, .len = t->ca_len, .flags = CURL_BLOB_COPY};
            SET(CURLOPT_CAINFO_BLOB, &b);
        }
        if (t->cert) {
            struct curl_blob b = {.data = t->cert, .len = t->cert_len, .flags = CURL_BLOB_COPY};
            SET(CURLOPT_SSLCERT_BLOB, &b);
            SET(CURLOPT_SSLCERTTYPE, "PEM");
        }
        if (t->key) {
            struct curl_blob b = {.data = t->key, .len = t->key_len, .flags = CURL_BLOB_COPY};
            SET(CURLOPT_SSLKEY_BLOB, &b);
            SET(CURLOPT_SSLKEYTYPE, "PEM");
        }
        if (t->username && t->password) {
            SET(CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
            SET(CURLOPT_USERNAME, t->username);
            SET(CURLOPT_PASSWORD, t->password);
        }
    }
    if (!strcmp(req->method, "GET")) {
        SET(CURLOPT_HTTPGET, 1L);
    } else {
        SET(CURLOPT_CUSTOMREQUEST, req->method);
        if (req->body) {
            SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
            SET(CURLOPT_POSTFIELDS, req->body);
        } else if (strcmp(req->method, "DELETE") != 0) {
            SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
            SET(CURLOPT_POSTFIELDS, "");
        }
    }
#undef SET
    if (c != CURLE_OK)
        return CTRL_ERR_INTERNAL;
    /* Headers: JSON both ways; no 100-continue round trip; a bearer token
     * only over https, as client-go (credentials never go out in clear). */
    struct curl_slist *hl = curl_slist_append(NULL, "Accept: application/json");
    if (hl)
        hl = curl_slist_append(hl, "Expect:");
    if (hl && req->content_type) {
        char ct[128];
        snprintf(ct, sizeof ct, "Content-Type: %s", req->content_type);
        hl = curl_slist_append(hl, ct);
    }
    if (hl && t->https) {
        char *tok = current_token(t);
        if (tok) {
            size_t l = strlen(tok) + 32;
            char *auth = malloc(l);
            if (auth) {
                snprintf(auth, l, "Authorization: Bearer %s", tok);
                struct curl_slist *nl = curl_slist_append(hl, auth);
                memset(auth, 0, l);
                free(auth);
                if (!nl) {
                    curl_slist_free_all(hl);
                    hl = NULL;
                } else {
                    hl = nl;
                }
            } else {
                curl_slist_free_all(hl);
                hl = NULL;
            }
            memset(tok, 0, strlen(tok));
            free(tok);
        }
    }
    if (!hl)
        return CTRL_ERR_NOMEM;
    *headers = hl;
    return curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl) == CURLE_OK ? 0 : CTRL_ERR_INTERNAL;
}

/* Run a cancellable transfer on a private multi handle. */
static CURLcode perform_cancellable(CURL *h, ctrl__cancel *cancel)
{
    CURLM *m = curl_multi_init();
    if (!m)
        return CURLE_OUT_OF_MEMORY;
    if (curl_multi_add_handle(m, h) != CURLM_OK) {
        curl_multi_cleanup(m);
        return CURLE_OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&cancel->mu);
    cancel->multi = m;
    pthread_mutex_unlock(&cancel->mu);
    CURLcode result = CURLE_OK;
    bool done = false;
    while (!done) {
        if (ctrl__cancel_fired(cancel)) {
            result = CURLE_ABORTED_BY_CALLBACK;
            break;
        }
        int running = 0;
        if (curl_multi_perform(m, &running) != CURLM_OK) {
            result = CURLE_RECV_ERROR;
            break;
        }
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left))) {
            if (msg->msg == CURLMSG_DONE) {
                result = msg->data.result;
                done = true;
            }
        }
        if (!done && running)
            curl_multi_poll(m, NULL, 0, 1000, NULL);
        else if (!done)
            done = true;
    }
    pthread_mutex_lock(&cancel->mu);
    cancel->multi = NULL;
    pthread_mutex_unlock(&cancel->mu);
    curl_multi_remove_handle(m, h);
    curl_multi_cleanup(m);
    return result;
}

static bool nothing_sent(CURLcode c)
{
    return c == CURLE_COULDNT_CONNECT || c == CURLE_COULDNT_RESOLVE_HOST ||
           c == CURLE_COULDNT_RESOLVE_PROXY;
}

static bool dropped(CURLcode c)
{
    return c == CURLE_SEND_ERROR || c == CURLE_RECV_ERROR || c == CURLE_GOT_NOTHING ||
           c == CURLE_PARTIAL_FILE || c == CURLE_HTTP2 || c == CURLE_HTTP2_STREAM;
}

static bool retry_status(int s)
{
    return s == 429 || s == 500 || s == 502 || s == 503 || s == 504;
}

void ctrl__response_deinit(ctrl__response *resp)
{
    if (!resp)
        return;
    free(resp->body);
    memset(resp, 0, sizeof *resp);
}

/* ---- attempts ---- */

/* How one attempt ended, whichever way it was performed. */
typedef enum attempt_end {
    END_ANSWER,       /* a whole HTTP answer */
    END_SINK_STOP,    /* the sink ended the transfer */
    END_CANCELLED,    /* ctrl__cancel_fire */
    END_TOO_BIG,      /* beyond max_response */
    END_NOTHING_SENT, /* failed before the request left: always retried */
    END_DROPPED,      /* failed after it may have: retried when idempotent */
    END_TIMEOUT,      /* the request's timeout: not retried */
    END_FAILED,       /* any other failure: not retried */
    END_NO_ANSWER,    /* a round-tripper returned 0 without a proper answer */
} attempt_end;

typedef struct attempt_result {
    attempt_end end;
    int status;      /* 0 when nothing answered */
    int retry_after; /* seconds (0 = none), for an answer that is not 2xx */
    char msg[CURL_ERROR_SIZE];
} attempt_result;

static void add_totals(const struct timespec *p0)
{
    struct timespec p1;
    clock_gettime(CLOCK_MONOTONIC, &p1);
    atomic_fetch_add_explicit(&totals_requests, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(
        &totals_ns, (long long)(p1.tv_sec - p0->tv_sec) * 1000000000 + (p1.tv_nsec - p0->tv_nsec),
        memory_order_relaxed);
}

/* One attempt on curl handle h. < 0 when the handle could not be set up. */
static int attempt_curl(ctrl__transport *t, const ctrl__request *req, xfer *x, const char *url,
                        bool reset, attempt_result *a)
{
    CURL *h = x->h;
    struct curl_slist *headers = NULL;
    char errbuf[CURL_ERROR_SIZE] = "";
    if (reset)
        curl_easy_reset(h);
    int rc = prepare(t, req, x, url, &headers, errbuf);
    if (rc < 0) {
        curl_slist_free_all(headers);
        return rc;
    }
    CURLcode cc;
    if (req->cancel) {
        cc = perform_cancellable(h, req->cancel);
    } else {
        struct timespec p0;
        clock_gettime(CLOCK_MONOTONIC, &p0);
        cc = curl_easy_perform(h);
        add_totals(&p0);
    }
    curl_slist_free_all(headers);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    a->status = (int)status;
    if (cc == CURLE_WRITE_ERROR && x->sink_stop) {
        a->end = END_SINK_STOP;
        return 0;
    }
    if (cc != CURLE_OK) {
        snprintf(a->msg, sizeof a->msg, "%s", errbuf[0] ? errbuf : curl_easy_strerror(cc));
        if (cc == CURLE_ABORTED_BY_CALLBACK && req->cancel)
            a->end = END_CANCELLED;
        else if (x->too_big)
            a->end = END_TOO_BIG;
        else if (nothing_sent(cc))
            a->end = END_NOTHING_SENT;
        else if (dropped(cc))
            a->end = END_DROPPED;
        else if (cc == CURLE_OPERATION_TIMEDOUT)
            a->end = END_TIMEOUT;
        else
            a->end = END_FAILED;
        return 0;
    }
    a->end = END_ANSWER;
    if (status < 200 || status >= 300) {
        curl_off_t ra = 0;
        if (curl_easy_getinfo(h, CURLINFO_RETRY_AFTER, &ra) != CURLE_OK || ra < 0)
            ra = 0;
        if (ra > 600)
            ra = 600;
        a->retry_after = (int)ra;
    }
    return 0;
}

/* One exchange through a round-tripper: the state its io points to. */
typedef struct rt_call {
    xfer *x;
    ctrl__cancel *cancel; /* NULL = not cancellable */
    bool head_seen, body_early, cancel_seen, registered, fail_set, closes;
    int status, retry_after;
    ctrl_roundtrip_failure how;
    char reason[CURL_ERROR_SIZE];
} rt_call;

static void rt_head(void *io, int status, int retry_after_s, const char *content_type)
{
    (void)content_type;
    rt_call *c = io;
    if (c->head_seen)
        return;
    c->head_seen = true;
    c->status = status;
    c->retry_after = retry_after_s < 0 ? 0 : (retry_after_s > 600 ? 600 : retry_after_s);
    const ctrl__request *req = c->x->req;
    if (req->on_open && status >= 200 && status < 300) {
        c->x->opened = true;
        req->on_open(req->on_open_ud);
    }
}

static int rt_body(void *io, const char *data, size_t len)
{
    rt_call *c = io;
    if (!c->head_seen) {
        c->body_early = true;
        return 1;
    }
    /* As curl's progress callback: a cancelled transfer ends between chunks. */
    if (c->cancel && ctrl__cancel_fired(c->cancel)) {
        c->cancel_seen = true;
        return 1;
    }
    if (!len)
        return 0;
    return keep_body(c->x, c->status, data, len) ? 0 : 1;
}

static bool rt_cancelled(void *io)
{
    rt_call *c = io;
    return c->cancel && ctrl__cancel_fired(c->cancel);
}

static void rt_on_cancel(void *io, void (*wake)(void *wake_ud), void *wake_ud)
{
    rt_call *c = io;
    if (!c->cancel)
        return;
    if (!wake) {
        /* Unregister: once this returns, wake is not called. */
        pthread_mutex_lock(&c->cancel->mu);
        if (c->registered) {
            c->cancel->wake = NULL;
            c->cancel->wake_ud = NULL;
            c->registered = false;
        }
        pthread_mutex_unlock(&c->cancel->mu);
        return;
    }
    pthread_mutex_lock(&c->cancel->mu);
    if (ctrl__cancel_fired(c->cancel)) {
        wake(wake_ud);
    } else {
        c->cancel->wake = wake;
        c->cancel->wake_ud = wake_ud;
        c->registered = true;
    }
    pthread_mutex_unlock(&c->cancel->mu);
}

static void rt_fail(void *io, ctrl_roundtrip_failure how, const char *reason)
{
    rt_call *c = io;
    c->fail_set = true;
    c->how = how;
    snprintf(c->reason, sizeof c->reason, "%s", reason && *reason ? reason : "connection failed");
}

static void rt_closes(void *io)
{
    rt_call *c = io;
    c->closes = true;
}

/* One exchange through the round-tripper; target is the path and query.
 * *closes: the server closes the connection after its answer. */
static int exchange_rt(ctrl__transport *t, const ctrl__request *req, xfer *x, const char *target,
                       attempt_result *a, bool *closes)
{
    char *tok = t->https ? current_token(t) : NULL;
    int timeout = req->timeout_ms ? req->timeout_ms : t->timeout_ms;
    ctrl_roundtrip_request r = {.method = req->method,
                                .target = target,
                                .content_type = req->content_type,
                                .accept = "application/json",
                                .user_agent = req->user_agent ? req->user_agent : t->user_agent,
                                .bearer_token = tok,
                                .body = req->body,
                                .body_len = req->body ? req->body_len : 0,
                                .timeout_ms = timeout > 0 ? timeout : 0,
                                .streaming = req->sink != NULL};
    rt_call c = {.x = x, .cancel = req->cancel};
    ctrl_roundtrip_io io = {.head = rt_head,
                            .body = rt_body,
                            .cancelled = rt_cancelled,
                            .on_cancel = rt_on_cancel,
                            .fail = rt_fail,
                            .closes = rt_closes,
                            .io = &c};
    struct timespec p0;
    clock_gettime(CLOCK_MONOTONIC, &p0);
    int rc = t->rt.roundtrip(t->rt.ud, &r, &io);
    if (!req->cancel)
        add_totals(&p0);
    if (c.registered) {
        /* After this, wake is never called: its data may go away. */
        pthread_mutex_lock(&c.cancel->mu);
        c.cancel->wake = NULL;
        c.cancel->wake_ud = NULL;
        pthread_mutex_unlock(&c.cancel->mu);
    }
    if (tok) {
        memset(tok, 0, strlen(tok));
        free(tok);
    }
    a->status = c.head_seen ? c.status : 0;
    if (x->sink_stop) {
        a->end = END_SINK_STOP;
    } else if (c.cancel_seen || (rc == CTRL_ERR_CANCELLED && req->cancel)) {
        a->end = END_CANCELLED;
    } else if (x->too_big) {
        a->end = END_TOO_BIG;
    } else if (rc == 0 && (c.body_early || !c.head_seen)) {
        a->end = END_NO_ANSWER;
        snprintf(a->msg, sizeof a->msg, "%s",
                 c.body_early ? "the round-tripper gave a body before the status"
                              : "the round-tripper returned no answer");
    } else if (rc == 0) {
        a->end = END_ANSWER;
        a->retry_after = c.retry_after;
    } else if (rc == CTRL_ERR_TIMEOUT) {
        a->end = END_TIMEOUT;
        snprintf(a->msg, sizeof a->msg, "%s", c.fail_set ? c.reason : "timed out");
    } else {
        a->end =
            c.fail_set && c.how == CTRL_ROUNDTRIP_NOTHING_SENT ? END_NOTHING_SENT : END_DROPPED;
        if (c.fail_set)
            snprintf(a->msg, sizeof a->msg, "%s", c.reason);
        else if (rc == CTRL_ERR_TRANSPORT || rc == CTRL_ERR_CANCELLED)
            snprintf(a->msg, sizeof a->msg, "connection failed");
        else
            snprintf(a->msg, sizeof a->msg, "the round-tripper failed (code %d)", rc);
    }
    return 0;
}

/* A libcurl handle's connection cache and its silent re-sends (see
 * "Connections" above). */
#define CURL_MAX_KEPT 5
#define CURL_MAX_RESENDS 5

/* One attempt through the round-tripper: *kept is the modelled handle's
 * kept connections, NULL when the round-tripper does not model them. */
static int attempt_rt(ctrl__transport *t, const ctrl__request *req, xfer *x, const char *target,
                      attempt_result *a, int *kept)
{
    bool closes = false;
    if (!kept || req->cancel)
        return exchange_rt(t, req, x, target, a, &closes);
    for (int resends = 0;; resends++) {
        bool reused = req->idempotent && *kept > 0; /* else CURLOPT_FRESH_CONNECT */
        closes = false;
        *a = (attempt_result){0};
        int rc = exchange_rt(t, req, x, target, a, &closes);
        if (rc < 0)
            return rc;
        bool kept_alive = a->end == END_ANSWER && !closes;
        if (!reused) {
            if (kept_alive && *kept < CURL_MAX_KEPT)
                (*kept)++;
            return 0;
        }
        if (!kept_alive)
            (*kept)--;
        /* Nothing came back on a connection kept from before: libcurl takes
         * it for one the server had closed meanwhile, and sends again. */
        if (a->end != END_DROPPED || a->status != 0 || x->len > 0 || resends >= CURL_MAX_RESENDS)
            return 0;
    }
}

int ctrl__transport_do(ctrl__transport *t, const ctrl__request *req, ctrl__response *resp,
                       ctrl_error *err)
{
    if (!req || !req->method || !req->path || !resp)
        return ctrl__error_set(err, CTRL_ERR_ARG, "method, path and response are required");
    memset(resp, 0, sizeof *resp);
    size_t ul = strlen(t->base_url) + strlen(req->path) + 1;
    char *url = malloc(ul);
    if (!url)
        return ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
    snprintf(url, ul, "%s%s", t->base_url, req->path);
    CURL *h = NULL;
    char *target = NULL;
    int kept = -1; /* the modelled handle's kept connections (model_connections) */
    if (t->rt.roundtrip) {
        if (t->rt.model_connections)
            kept = kept_get(t);
        size_t tl = strlen(t->prefix) + strlen(req->path) + 1;
        if (!(target = malloc(tl))) {
            free(url);
            return ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
        }
        snprintf(target, tl, "%s%s", t->prefix, req->path);
    } else if (!(h = pool_get(t))) {
        free(url);
        return ctrl__error_set(err, CTRL_ERR_NOMEM, "cannot create a curl handle");
    }
    bool may_retry = !req->no_retry && (req->idempotent || t->retry_non_idempotent);
    int rc = 0;
    for (int attempt = 0;; attempt++) {
        if (req->cancel && ctrl__cancel_fired(req->cancel)) {
            rc = ctrl__error_set(err, CTRL_ERR_CANCELLED, "%s %s: cancelled", req->method, url);
            break;
        }
        rate_wait(t);
        xfer x = {.t = t, .req = req, .h = h};
        attempt_result a = {0};
        rc = h ? attempt_curl(t, req, &x, url, attempt > 0, &a)
               : attempt_rt(t, req, &x, target, &a, kept >= 0 ? &kept : NULL);
        if (rc < 0) {
            free(x.buf);
            rc = ctrl__error_set(err, rc, "%s %s: cannot set up the request", req->method, url);
            break;
        }
        if (t->on_response)
            t->on_response(t->on_response_ud, a.status, req->method, t->host);
        if (a.end == END_SINK_STOP) {
            resp->status = a.status;
            resp->stopped_by_sink = true;
            free(x.buf);
            rc = 0;
            break;
        }
        if (a.end != END_ANSWER) {
            free(x.buf);
            if (a.end == END_CANCELLED) {
                rc = ctrl__error_set(err, CTRL_ERR_CANCELLED, "%s %s: cancelled", req->method, url);
                break;
            }
            if (a.end == END_TOO_BIG) {
                rc = ctrl__error_set(err, CTRL_ERR_PROTOCOL, "%s %s: answer larger than %zu bytes",
                                     req->method, url, t->max_response);
                break;
            }
            if (a.end == END_NO_ANSWER) {
                rc = ctrl__error_set(err, CTRL_ERR_PROTOCOL, "%s %s: %s", req->method, url, a.msg);
                break;
            }
            bool retry = !req->no_retry && attempt < t->max_retries &&
                         (a.end == END_NOTHING_SENT || (may_retry && a.end == END_DROPPED));
            if (retry) {
                sleep_ns(t, backoff_ns(t, attempt));
                continue;
            }
            int code = a.end == END_TIMEOUT ? CTRL_ERR_TIMEOUT : CTRL_ERR_TRANSPORT;
            rc = ctrl__error_set(err, code, "%s %s: %s", req->method, url, a.msg);
            break;
        }
        int status = a.status;
        if (status >= 200 && status < 300) {
            resp->status = status;
            resp->body = x.buf;
            resp->len = x.len;
            rc = 0;
            break;
        }
        int ra = a.retry_after;
        if (may_retry && retry_status(status) && attempt < t->max_retries) {
            free(x.buf);
            sleep_ns(t, ra > 0 ? (int64_t)ra * 1000 * NS_PER_MS : backoff_ns(t, attempt));
            continue;
        }
        rc = ctrl__error_from_response(err, status, x.buf, x.len, ra);
        free(x.buf);
        break;
    }
    if (h)
        pool_put(t, h);
    if (kept >= 0)
        kept_put(t, kept);
    free(target);
    free(url);
    return rc;
}
