/*
 * webhook_call.c - one admission webhook call (webhook_call.h).
 *
 * DESIGN: one libcurl easy handle per call, made and freed in the call:
 * webhooks are rare next to the writes that call none, and a handle kept
 * per thread would outlive the offload threads that make most calls. The
 * call is bounded by the webhook's timeoutSeconds (default 10, at most 30,
 * as kube-apiserver's) and by MAX_RESPONSE bytes of answer, and ends early
 * when the server stops (the progress callback reads srv->stopping). No
 * proxy is used. Errors are worded as Go's HTTP client words them, since
 * kube-apiserver's messages quote those.
 */
#include "webhook_call.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store.h"
#include "strbuf.h"

#define DEFAULT_TIMEOUT_S 10
#define MAX_TIMEOUT_S 30
#define MAX_RESPONSE ((size_t)8 << 20)

void fakeapi__webhook_fail(fakeapi__webhook_err *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
}

static int b64val(int ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9')
        return ch - '0' + 52;
    if (ch == '+')
        return 62;
    if (ch == '/')
        return 63;
    return -1;
}

char *fakeapi__b64_decode(const char *in, size_t *len)
{
    size_t n = strlen(in);
    char *out = malloc(n / 4 * 3 + 4);
    if (!out)
        return NULL;
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int ch = (unsigned char)in[i];
        if (ch == '=' || ch == '\n' || ch == '\r' || ch == ' ')
            continue;
        int v = b64val(ch);
        if (v < 0) {
            free(out);
            return NULL;
        }
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char)((acc >> bits) & 0xff);
        }
    }
    out[o] = '\0';
    *len = o;
    return out;
}

typedef struct sink {
    fakeapi__strbuf b;
    bool too_big;
} sink;

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
    sink *s = ud;
    if (s->b.len + size * n > MAX_RESPONSE) {
        s->too_big = true;
        return 0;
    }
    fakeapi__strbuf_add(&s->b, p, size * n);
    return size * n;
}

/* A server that stops ends the calls in flight. */
static int on_progress(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    (void)a, (void)b, (void)c, (void)d;
    return atomic_load(&((fakeapi_server *)ud)->stopping) ? 1 : 0;
}

/* Where clientConfig points: the URL to post to, and for a service the
 * address actually connected to (curl's CONNECT_TO entry, "" for none). */
typedef struct target {
    char url[1100];
    char connect_to[600];
} target;

/*
 * A service reference {namespace, name, path, port (443)} as a URL
 * https://<name>.<namespace>.svc:<port><path>, the name its certificate
 * must carry. There is no cluster DNS, so the address comes from the
 * store: an ExternalName Service's externalName, else the first address
 * of the Service's Endpoints, at the targetPort of the Service port that
 * is <port> (the port itself when the Service does not list it).
 */
static int resolve_service(fakeapi_server *srv, const json_t *svc, target *t,
                           fakeapi__webhook_err *e)
{
    const char *ns = json_string_value(json_object_get(svc, "namespace"));
    const char *name = json_string_value(json_object_get(svc, "name"));
    const char *path = json_string_value(json_object_get(svc, "path"));
    json_int_t port = json_integer_value(json_object_get(svc, "port"));
    if (!ns || !name) {
        fakeapi__webhook_fail(
            e, "failed to call webhook: service reference without a name and namespace");
        return -1;
    }
    if (port <= 0)
        port = 443;
    snprintf(t->url, sizeof t->url, "https://%s.%s.svc:%lld%s", name, ns, (long long)port,
             path ? path : "");
    json_t *s = NULL, *ep = NULL;
    fakeapi__store_lock(srv->store);
    int rc = fakeapi__store_get(srv->store, "/services", ns, name, &s);
    if (rc == 0)
        fakeapi__store_get(srv->store, "/endpoints", ns, name, &ep);
    fakeapi__store_unlock(srv->store);
    int out = -1;
    if (rc != 0) {
        fakeapi__webhook_fail(e, "failed to call webhook: service \"%s\" not found", name);
        goto done;
    }
    const json_t *spec = json_object_get(s, "spec");
    const char *type = json_string_value(json_object_get(spec, "type"));
    const char *ext = json_string_value(json_object_get(spec, "externalName"));
    if (type && !strcmp(type, "ExternalName") && ext) {
        snprintf(t->connect_to, sizeof t->connect_to, "%s.%s.svc:%lld:%s:%lld", name, ns,
                 (long long)port, ext, (long long)port);
        out = 0;
        goto done;
    }
    json_int_t tport = port;
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(spec, "ports"), i, p)
    {
        if (json_integer_value(json_object_get(p, "port")) == port &&
            json_is_integer(json_object_get(p, "targetPort")))
            tport = json_integer_value(json_object_get(p, "targetPort"));
    }
    const json_t *sub = json_array_get(json_object_get(ep, "subsets"), 0);
    const char *ip = json_string_value(
        json_object_get(json_array_get(json_object_get(sub, "addresses"), 0), "ip"));
    if (!ip) {
        fakeapi__webhook_fail(
            e, "failed to call webhook: no endpoints available for service \"%s\"", name);
        goto done;
    }
    snprintf(t->connect_to, sizeof t->connect_to, "%s.%s.svc:%lld:%s%s%s:%lld", name, ns,
             (long long)port, strchr(ip, ':') ? "[" : "", ip, strchr(ip, ':') ? "]" : "",
             (long long)tport);
    out = 0;
done:
    json_decref(s);
    json_decref(ep);
    return out;
}

static int timeout_of(const json_t *hook)
{
    json_int_t t = json_integer_value(json_object_get(hook, "timeoutSeconds"));
    return t <= 0 ? DEFAULT_TIMEOUT_S : t > MAX_TIMEOUT_S ? MAX_TIMEOUT_S : (int)t;
}

/* host:port of an https URL (443 when it names none). */
static void url_hostport(const char *url, char *out, size_t len)
{
    const char *h = strstr(url, "://");
    h = h ? h + 3 : url;
    size_t n = strcspn(h, "/?#");
    const char *at = memchr(h, '@', n);
    if (at) {
        n -= (size_t)(at + 1 - h);
        h = at + 1;
    }
    const char *close = h[0] == '[' ? memchr(h, ']', n) : NULL;
    const char *colon = memchr(close ? close : h, ':', n - (size_t)((close ? close : h) - h));
    snprintf(out, len, "%.*s%s", (int)n, h, colon ? "" : ":443");
}

/* An errno as Go's syscall package words it. */
static const char *go_errno(long e)
{
    switch (e) {
    case ECONNREFUSED:
        return "connection refused";
    case ETIMEDOUT:
        return "connection timed out";
    case EHOSTUNREACH:
        return "no route to host";
    case ENETUNREACH:
        return "network is unreachable";
    case ECONNRESET:
        return "connection reset by peer";
    default:
        return strerror((int)e);
    }
}

/* What curl's failure would read as from Go's HTTP client. */
static void transport_error(CURL *h, CURLcode cc, const char *url, const char *errbuf,
                            fakeapi__webhook_err *e)
{
    long os_errno = 0;
    curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os_errno);
    char hp[300];
    url_hostport(url, hp, sizeof hp);
    const char *what = errbuf[0] ? errbuf : curl_easy_strerror(cc);
    if (cc == CURLE_OPERATION_TIMEDOUT)
        fakeapi__webhook_fail(e, "failed to call webhook: Post \"%s\": context deadline exceeded",
                              url);
    else if (cc == CURLE_COULDNT_CONNECT && os_errno)
        fakeapi__webhook_fail(e, "failed to call webhook: Post \"%s\": dial tcp %s: connect: %s",
                              url, hp, go_errno(os_errno));
    else if (cc == CURLE_COULDNT_RESOLVE_HOST)
        fakeapi__webhook_fail(
            e, "failed to call webhook: Post \"%s\": dial tcp: lookup %.*s: no such host", url,
            (int)(strrchr(hp, ':') ? strrchr(hp, ':') - hp : (long)strlen(hp)), hp);
    else if (cc == CURLE_PEER_FAILED_VERIFICATION || cc == CURLE_SSL_CACERT_BADFILE)
        fakeapi__webhook_fail(
            e, "failed to call webhook: Post \"%s\": tls: failed to verify certificate: %s", url,
            what);
    else if (cc == CURLE_ABORTED_BY_CALLBACK)
        fakeapi__webhook_fail(e, "failed to call webhook: Post \"%s\": the server is shutting down",
                              url);
    else
        fakeapi__webhook_fail(e, "failed to call webhook: Post \"%s\": %s", url, what);
}

/* POST review to the webhook; its answer's body (a new value) in *out. */
int fakeapi__webhook_post(fakeapi_server *srv, const json_t *hook, const json_t *review,
                          json_t **out, fakeapi__webhook_err *e)
{
    const json_t *cc = json_object_get(hook, "clientConfig");
    const char *url = json_string_value(json_object_get(cc, "url"));
    const json_t *svc = json_object_get(cc, "service");
    target t = {{0}, {0}};
    int timeout = timeout_of(hook);
    if (url && *url) {
        snprintf(t.url, sizeof t.url, "%s", url);
    } else if (json_is_object(svc)) {
        if (resolve_service(srv, svc, &t, e) < 0)
            return -1;
    } else {
        fakeapi__webhook_fail(
            e, "failed to call webhook: clientConfig has neither a url nor a service");
        return -1;
    }
    if (strncasecmp(t.url, "https://", 8) != 0) {
        fakeapi__webhook_fail(e, "failed to call webhook: the webhook URL must use https: %s",
                              t.url);
        return -1;
    }
    /* As kube-apiserver's REST client, the timeout goes in the query too. */
    char full[1200];
    snprintf(full, sizeof full, "%s%stimeout=%ds", t.url, strchr(t.url, '?') ? "&" : "?", timeout);
    const char *ca64 = json_string_value(json_object_get(cc, "caBundle"));
    size_t ca_len = 0;
    char *ca = ca64 && *ca64 ? fakeapi__b64_decode(ca64, &ca_len) : NULL;
    if (ca64 && *ca64 && !ca) {
        fakeapi__webhook_fail(e, "failed to call webhook: caBundle is not valid base64");
        return -1;
    }
    char *body = json_dumps(review, JSON_COMPACT);
    CURL *h = curl_easy_init();
    struct curl_slist *hdrs = NULL, *conn = NULL;
    hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
    hdrs = curl_slist_append(hdrs, "Accept: application/json, */*");
    if (t.connect_to[0])
        conn = curl_slist_append(conn, t.connect_to);
    sink s = {.b = {.max = MAX_RESPONSE + 1}};
    char errbuf[CURL_ERROR_SIZE] = "";
    int rc = -1;
    if (!body || !h || !hdrs || (t.connect_to[0] && !conn)) {
        fakeapi__webhook_fail(e, "failed to call webhook: out of memory");
        goto out;
    }
    curl_easy_setopt(h, CURLOPT_URL, full);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "kube-apiserver-admission");
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_PROXY, "");
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)timeout * 1000L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, srv);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https");
    if (conn)
        curl_easy_setopt(h, CURLOPT_CONNECT_TO, conn);
    if (ca) {
        struct curl_blob blob = {.data = ca, .len = ca_len, .flags = CURL_BLOB_COPY};
        curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
    }
    CURLcode code = curl_easy_perform(h);
    if (code == CURLE_WRITE_ERROR && s.too_big) {
        fakeapi__webhook_fail(e, "failed to call webhook: the response is larger than %zu bytes",
                              MAX_RESPONSE);
        goto out;
    }
    if (code != CURLE_OK) {
        transport_error(h, code, full, errbuf, e);
        goto out;
    }
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    if (status < 200 || status > 299) {
        if (s.b.len)
            fakeapi__webhook_fail(
                e,
                "failed to call webhook: an error on the server (\"%.*s\") has prevented "
                "the request from succeeding",
                (int)(s.b.len > 200 ? 200 : s.b.len), s.b.data);
        else
            fakeapi__webhook_fail(
                e,
                "failed to call webhook: the server responded with the status code %ld "
                "but did not return more information",
                status);
        goto out;
    }
    json_error_t jerr;
    *out = s.b.data ? json_loadb(s.b.data, s.b.len, 0, &jerr) : NULL;
    if (!json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
        fakeapi__webhook_fail(
            e, "received invalid webhook response: the response is not a JSON object");
        goto out;
    }
    rc = 0;
out:
    fakeapi__strbuf_deinit(&s.b);
    curl_slist_free_all(hdrs);
    curl_slist_free_all(conn);
    if (h)
        curl_easy_cleanup(h);
    free(body);
    free(ca);
    return rc;
}
