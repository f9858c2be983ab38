/*
 * front.c - the HTTP front end: libmicrohttpd's daemon, its connections and
 * their requests, up to fakeapi__handle (see front.h).
 *
 * DESIGN: libmicrohttpd serves every connection from a small pool of
 * event-loop threads (epoll, one per core, 2 to 8), so a thousand idle
 * watches cost a thousand sockets and their buffers, not a thousand threads.
 * Nothing blocks in a request: a request runs to completion on its loop
 * thread (its work is bounded by the store lock), a watch with nothing to
 * send suspends its connection (watch.c, through the waker), and a request
 * held back by a delay fault suspends its connection until the waker
 * (waker.h) resumes it at its time on the server's clock; libmicrohttpd then
 * calls on_request again and the request goes on where it stopped. Request
 * bodies are collected up to max_body (413 past it). Before a request runs,
 * its target is taken raw (on_target) and decoded by fakeapi__url_split, and
 * its headers are checked (front_door: one Content-Length, a Host and an
 * Origin that name this server); once its body is in, its media type
 * (media_ok). A connection waiting for a request (its first, or the next on
 * keep-alive) is bounded by the tracker (conns.h): its request must arrive
 * within conn_timeout_s, a client that hangs up is let go at once, and near
 * the connection limit the oldest waiting connections make room;
 * libmicrohttpd's inactivity timeout (the same length) covers answers that
 * stall, and is off for watches and delayed requests.
 */
#include "front.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

#include "admission.h"
#include "conns.h"
#include "exchange.h"
#include "fault.h"
#include "metrics.h"
#include "record.h"
#include "tlscert.h"
#include "waker.h"
#include "watch.h"

#define WATCH_BLOCK 16384
#define HTTP_THREADS_MIN 2
#define HTTP_THREADS_MAX 8
#define DEFAULT_CONN_TIMEOUT_S 60
#define CONN_LIMIT_MAX 4000
#define CONN_LIMIT_MIN 16
#define FD_RESERVE 128 /* descriptors left for the store, threads and embedder */
/* Requests on threads of their own at once (admission webhooks); more run in place. */
#define OFFLOAD_MAX 64

struct offload;

/* Per-request state between libmicrohttpd's calls, made by on_target. */
typedef struct conn_req {
    char *target; /* the request target as it came: path and query, still escaped */
    bool started; /* past the first call, where the headers were checked */
    char *path;   /* decoded from target (fakeapi__url_split) */
    json_t *query;
    char *body;
    size_t len, cap;
    bool too_large;
    fakeapi__fault_plan *plan; /* set once the faults are chosen (a delayed request) */
    bool sleeper_ready;
    fakeapi__sleeper sleeper; /* a delay fault in progress */
    struct offload *off;      /* a request running on its own thread */
    int64_t received_ns;      /* when it first came to serve() (recording only; 0 = unset) */
} conn_req;

/* The connection's entry in the tracker (conns.h), NULL if untracked. */
static fakeapi__conn *conn_track(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

static unsigned conn_timeout_s(const fakeapi_server *srv)
{
    int s = srv->opts.conn_timeout_s;
    return s < 0 ? 0 : s == 0 ? DEFAULT_CONN_TIMEOUT_S : (unsigned)s;
}

/* A watch or a delayed request has its own timers and hang-up detection: a
 * quiet one is not idle, and libmicrohttpd must not time it out (its timer
 * also runs on while the connection is suspended). */
static void conn_untimed(struct MHD_Connection *conn)
{
    MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT, 0u);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    fakeapi_server *srv = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        *socket_context = ci ? fakeapi__conns_open(srv->conns, ci->connect_fd) : NULL;
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        fakeapi__conns_close(srv->conns, *socket_context);
        *socket_context = NULL;
    }
}

static int body_append(conn_req *cr, const char *data, size_t n, size_t max)
{
    if (cr->too_large || cr->len + n > max) {
        cr->too_large = true;
        return 0;
    }
    if (cr->len + n + 1 > cr->cap) {
        size_t cap = cr->cap ? cr->cap : 4096;
        while (cap < cr->len + n + 1)
            cap *= 2;
        char *p = realloc(cr->body, cap);
        if (!p)
            return -1;
        cr->body = p;
        cr->cap = cap;
    }
    memcpy(cr->body + cr->len, data, n);
    cr->len += n;
    cr->body[cr->len] = '\0';
    return 0;
}

static ssize_t watch_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    ssize_t n = fakeapi__watch_read(cls, buf, max);
    if (n == FAKEAPI__WATCH_END)
        return MHD_CONTENT_READER_END_OF_STREAM;
    if (n == FAKEAPI__WATCH_GONE)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    return n; /* 0: nothing yet, and the connection is suspended */
}

void fakeapi__front_resume(void *conn)
{
    MHD_resume_connection(conn);
}

void fakeapi__front_suspend(void *conn)
{
    MHD_suspend_connection(conn);
}

static void watch_done(void *cls)
{
    fakeapi__watch_free(cls);
}

/*
 * A connection that has been suspended is closed after its answer (the
 * client opens a new one for its next request). libmicrohttpd 0.9.75 in
 * epoll mode can leave a resumed connection's next request unread: after a
 * watch ended, a client's next request on the same connection then waited
 * forever. A new connection per watch costs a handshake on loopback.
 */
/* One "Warning: 299 - \"text\"" header per warning, as the API server sends them. */
static void add_warnings(struct MHD_Response *r, const char *warnings)
{
    for (const char *p = warnings; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char h[1100];
        size_t o = (size_t)snprintf(h, sizeof h, "299 - \"");
        for (size_t i = 0; i < n && o + 4 < sizeof h; i++) {
            if (p[i] == '"' || p[i] == '\\')
                h[o++] = '\\';
            h[o++] = p[i];
        }
        snprintf(h + o, sizeof h - o, "\"");
        MHD_add_response_header(r, "Warning", h);
        p += n + (nl ? 1 : 0);
    }
}

static enum MHD_Result send_resp(struct MHD_Connection *conn, fakeapi__resp *resp, bool close_after)
{
    struct MHD_Response *r;
    if (resp->watch) {
        r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, WATCH_BLOCK, watch_reader,
                                              resp->watch, watch_done);
        if (!r) {
            fakeapi__watch_free(resp->watch);
            return MHD_NO;
        }
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        fakeapi__watch_attach(resp->watch, conn, NULL, ci ? ci->connect_fd : -1);
    } else {
        r = MHD_create_response_from_buffer(resp->body_len, resp->body ? resp->body : (char *)"",
                                            resp->body ? MHD_RESPMEM_MUST_FREE
                                                       : MHD_RESPMEM_PERSISTENT);
        if (!r)
            return MHD_NO;
        resp->body = NULL;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                            resp->content_type ? resp->content_type : "application/json");
    MHD_add_response_header(r, "Cache-Control", "no-cache, private");
    if (close_after || resp->watch)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    if (resp->retry_after > 0) {
        char ra[16];
        snprintf(ra, sizeof ra, "%d", resp->retry_after);
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, ra);
    }
    add_warnings(r, resp->warnings);
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned)resp->status, r);
    MHD_destroy_response(r);
    return ret;
}

/* Half of the body, then the connection ends: a truncated answer. */
static ssize_t truncated_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    fakeapi__resp *half = cls;
    if (pos >= half->body_len)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    size_t n = half->body_len - (size_t)pos;
    n = n < max ? n : max;
    memcpy(buf, half->body + pos, n);
    return (ssize_t)n;
}

static void truncated_free(void *cls)
{
    fakeapi__resp *half = cls;
    fakeapi__resp_deinit(half);
    free(half);
}

static enum MHD_Result send_truncated(struct MHD_Connection *conn, fakeapi__resp *resp)
{
    fakeapi__resp *half = calloc(1, sizeof *half);
    if (!half)
        return MHD_NO;
    *half = *resp;
    size_t full = resp->body_len;
    half->body_len = full / 2;
    resp->body = NULL;
    resp->warnings = NULL;
    struct MHD_Response *r =
        MHD_create_response_from_callback(full, 4096, truncated_reader, half, truncated_free);
    if (!r) {
        truncated_free(half);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned)half->status, r);
    MHD_destroy_response(r);
    return ret;
}

static const char *bearer(struct MHD_Connection *conn)
{
    const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    return auth && !strncmp(auth, "Bearer ", 7) ? auth + 7 : NULL;
}

/* Suspend the connection for a delay fault; the waker resumes it at its
 * time and libmicrohttpd calls on_request again (cr->plan is then set). */
static enum MHD_Result delay(fakeapi_server *srv, struct MHD_Connection *conn, conn_req *cr,
                             const fakeapi__fault_plan *plan)
{
    if (!(cr->plan = malloc(sizeof *cr->plan)))
        return MHD_NO;
    *cr->plan = *plan;
    if (!cr->sleeper_ready) {
        fakeapi__sleeper_init(srv->waker, &cr->sleeper, conn, NULL, -1);
        cr->sleeper_ready = true;
    }
    conn_untimed(conn);
    fakeapi__exchange_delay_arm(srv, &cr->sleeper, plan);
    return MHD_YES;
}

/* Too many connections, none of them idle: a quick 429, then the close. */
static enum MHD_Result crowded(fakeapi_server *srv, struct MHD_Connection *conn,
                               const fakeapi__reqinfo *ri)
{
    fakeapi__resp resp = {0};
    fakeapi__resp_error(&resp, 429, "TooManyRequests", NULL,
                        "too many open connections, please try again later");
    resp.retry_after = 1;
    fakeapi__metrics_request(srv->metrics, ri, 429);
    enum MHD_Result ret = send_resp(conn, &resp, true);
    fakeapi__resp_deinit(&resp);
    return ret;
}

/*
 * A write that may call an admission webhook waits for it for up to the
 * webhook's timeout: it runs on a thread of its own, its connection
 * suspended, so that the loop thread goes on serving its other
 * connections. The thread fills resp, marks it done and resumes the
 * connection; libmicrohttpd then calls on_request again and serve() sends
 * resp. The request's strings (cr's, and the header values libmicrohttpd
 * keeps for the request) stay valid meanwhile: a suspended connection is
 * not closed under it.
 */
typedef struct offload {
    fakeapi_server *srv;
    struct MHD_Connection *conn;
    fakeapi__req req;
    fakeapi__fault_plan plan;
    fakeapi__resp resp;
    atomic_bool done;
} offload;

static void *offload_main(void *ud)
{
    offload *o = ud;
    o->req.plan = &o->plan;
    fakeapi__handle(o->srv, &o->req, &o->resp);
    fakeapi_server *srv = o->srv;
    struct MHD_Connection *conn = o->conn;
    atomic_store(&o->done, true); /* o is the loop thread's from here */
    MHD_resume_connection(conn);
    atomic_fetch_sub(&srv->offloaded, 1);
    return NULL;
}

static bool may_call_webhooks(fakeapi_server *srv, const char *method, const fakeapi__route *rt)
{
    bool write = !strcmp(method, "POST") || !strcmp(method, "PUT") || !strcmp(method, "PATCH") ||
                 !strcmp(method, "DELETE");
    return write &&
           (rt->kind == FAKEAPI__RT_COLLECTION || rt->kind == FAKEAPI__RT_OBJECT ||
            rt->kind == FAKEAPI__RT_SUBRESOURCE) &&
           !atomic_load(&srv->stopping) && atomic_load(&srv->offloaded) < OFFLOAD_MAX &&
           fakeapi__admission_active(srv);
}

/* Hand the request to its own thread: false if that cannot be done (it
 * then runs in place). plan is kept in cr->plan for the call that answers. */
static bool offload_start(fakeapi_server *srv, struct MHD_Connection *conn, conn_req *cr,
                          const fakeapi__req *req, const fakeapi__fault_plan *plan)
{
    offload *o = calloc(1, sizeof *o);
    if (!o || (!cr->plan && !(cr->plan = malloc(sizeof *cr->plan)))) {
        free(o);
        return false;
    }
    *cr->plan = *plan;
    o->srv = srv;
    o->conn = conn;
    o->req = *req;
    o->plan = *plan;
    cr->off = o;
    conn_untimed(conn);
    MHD_suspend_connection(conn);
    atomic_fetch_add(&srv->offloaded, 1);
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&th, &attr, offload_main, o);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        atomic_fetch_sub(&srv->offloaded, 1);
        MHD_resume_connection(conn);
        cr->off = NULL;
        free(o);
        return false;
    }
    return true;
}

static bool tls_client_verified(struct MHD_Connection *conn);

/* What the audit log knows of a request's client (record.h). */
static void client_info(fakeapi_server *srv, struct MHD_Connection *conn, char *ip, size_t iplen,
                        fakeapi__record_info *info)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    if (sa && sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, ip,
                  (socklen_t)iplen);
    else if (sa && sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, ip,
                  (socklen_t)iplen);
    info->source_ip = ip[0] ? ip : NULL;
    info->tls_client = srv->opts.tls && tls_client_verified(conn);
}

static enum MHD_Result serve(fakeapi_server *srv, struct MHD_Connection *conn, const char *method,
                             conn_req *cr)
{
    /* a delayed request comes back here: it was received the first time */
    if (!cr->received_ns && fakeapi__recording(srv))
        cr->received_ns = fakeapi__srv_now(srv);
    fakeapi__resp resp = {0};
    fakeapi__exchange ex = {
        .req =
            {
                .method = method,
                .path = cr->path,
                .query = cr->query,
                .content_type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type"),
                .accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept"),
                .user_agent = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "User-Agent"),
                .token = bearer(conn),
                .body = cr->body ? cr->body : "",
                .body_len = cr->len,
            },
    };
    fakeapi__exchange_classify(&ex);
    if (!cr->plan && !fakeapi__exchange_unfaulted(&ex) &&
        fakeapi__conns_crowded(srv->conns, conn_track(conn))) {
        return crowded(srv, conn, &ex.ri);
    }
    if (cr->plan) {
        ex.plan = *cr->plan; /* back from a delay: the faults were chosen then */
        if (cr->sleeper_ready && atomic_load(&cr->sleeper.dropped))
            ex.plan.terminal = FAKEAPI_FAULT_DROP; /* fakeapi_request_drop */
        /* The answer may stall like any other (a new timer starts). */
        MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT, conn_timeout_s(srv));
    } else if (fakeapi__exchange_choose(srv, &ex)) {
        return delay(srv, conn, cr, &ex.plan);
    }
    fakeapi__exchange_pre(&ex, &resp);
    if (ex.answer && !resp.status && cr->off && atomic_load(&cr->off->done)) {
        resp = cr->off->resp; /* back from its thread */
        free(cr->off);
        cr->off = NULL;
    } else if (ex.answer && !resp.status && cr->off) {
        /* Called again before its thread is done (it resumes only when it
         * is): wait on. */
        MHD_suspend_connection(conn);
        return MHD_YES;
    } else if (ex.answer && !resp.status) {
        if (may_call_webhooks(srv, method, &ex.rt) &&
            offload_start(srv, conn, cr, &ex.req, &ex.plan))
            return MHD_YES;
        fakeapi__handle(srv, &ex.req, &resp);
    }
    enum MHD_Result ret = MHD_NO;
    char ip[INET6_ADDRSTRLEN] = "";
    fakeapi__record_info info = {.target = cr->target, .received_ns = cr->received_ns};
    if (fakeapi__recording(srv))
        client_info(srv, conn, ip, sizeof ip, &info);
    fakeapi__exchange_finish(srv, &ex, &resp, &info);
    if (!ex.answer || ex.plan.terminal == FAKEAPI_FAULT_LOSE_RESPONSE) {
        if (resp.watch)
            fakeapi__watch_free(resp.watch);
    } else if (ex.plan.terminal == FAKEAPI_FAULT_TRUNCATE && !resp.watch) {
        ret = send_truncated(conn, &resp);
    } else {
        if (resp.watch) {
            conn_untimed(conn);
            fakeapi__conns_release(srv->conns, conn_track(conn));
        }
        ret = send_resp(conn, &resp, cr->plan != NULL);
    }
    fakeapi__resp_deinit(&resp);
    return ret;
}

/* libmicrohttpd only asks for a client certificate (GNUTLS_CERT_REQUEST)
 * when given a trusted CA: whether there was one, and whether the CA signed
 * it, is ours to check. */
static bool tls_client_verified(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    return ci && fakeapi__tls_peer_verified(ci->tls_session);
}

/* The request target, before libmicrohttpd unescapes it (and, at a
 * decoded NUL, cuts it): the first thing known of a request. */
static void *on_target(void *cls, const char *uri, struct MHD_Connection *conn)
{
    (void)cls, (void)conn;
    conn_req *cr = calloc(1, sizeof *cr);
    if (cr && !(cr->target = strdup(uri ? uri : ""))) {
        free(cr);
        cr = NULL;
    }
    return cr;
}

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
    (void)kind, (void)value;
    if (key && !strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH))
        (*(int *)cls)++;
    return MHD_YES;
}

static bool is_ip_literal(const char *host)
{
    unsigned char buf[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1;
}

/*
 * Does a Host header name this server? A web page can reach a server on
 * loopback; DNS rebinding makes its own name point there, but the browser
 * still sends that name as Host. So only the names of this server pass:
 * the address it listens on, and on loopback localhost, 127.0.0.1 and
 * [::1]; on a non-loopback address the machine's name too; on any address
 * (0.0.0.0) every address literal as well; with this server's port, or
 * none.
 */
static bool host_allowed(const fakeapi_server *srv, const char *hdr, unsigned our_port)
{
    char host[300];
    const char *port = NULL; /* none: the name alone decides */
    if (hdr[0] == '[') {
        const char *close = strchr(hdr, ']');
        if (!close || (close[1] && close[1] != ':') || (size_t)(close - hdr - 1) >= sizeof host)
            return false;
        snprintf(host, sizeof host, "%.*s", (int)(close - hdr - 1), hdr + 1);
        port = close[1] ? close + 2 : NULL;
    } else {
        const char *colon = strrchr(hdr, ':');
        size_t n = colon ? (size_t)(colon - hdr) : strlen(hdr);
        if (n >= sizeof host)
            return false;
        snprintf(host, sizeof host, "%.*s", (int)n, hdr);
        port = colon ? colon + 1 : NULL;
    }
    char want[8];
    snprintf(want, sizeof want, "%u", our_port);
    if (port && strcmp(port, want) != 0)
        return false;
    if (!strcasecmp(host, srv->listen_ip))
        return true;
    if (srv->listen_loopback || srv->listen_any) {
        if (!strcasecmp(host, "localhost") || !strcmp(host, "127.0.0.1") || !strcmp(host, "::1"))
            return true;
    }
    if (!srv->listen_loopback && srv->hostname[0] && !strcasecmp(host, srv->hostname))
        return true;
    return srv->listen_any && is_ip_literal(host);
}

/* The port this connection came in on (srv->port is written after the
 * loop threads start). */
static unsigned local_port(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    if (!ci || getsockname(ci->connect_fd, (struct sockaddr *)&a, &len) != 0 ||
        a.sin_family != AF_INET)
        return 0;
    return ntohs(a.sin_port);
}

/* An Origin of this server's own (a page it served, were there any). */
static bool origin_allowed(const fakeapi_server *srv, const char *origin, unsigned our_port)
{
    const char *host = !strncasecmp(origin, "http://", 7)    ? origin + 7
                       : !strncasecmp(origin, "https://", 8) ? origin + 8
                                                             : NULL;
    return host && *host && !strchr(host, '/') && host_allowed(srv, host, our_port);
}

/*
 * What is wrong with a request's headers and target, before its body is
 * read: false with resp filled in (then the connection is closed), or true.
 */
static bool front_door(fakeapi_server *srv, struct MHD_Connection *conn, conn_req *cr,
                       fakeapi__resp *resp)
{
    int lengths = 0;
    MHD_get_connection_values(conn, MHD_HEADER_KIND, count_header, &lengths);
    if (lengths > 1) {
        /* Which one frames the body? Two readers could disagree (request
         * smuggling): no answer but this one, and the connection ends. */
        fakeapi__resp_error(resp, 400, "BadRequest", NULL,
                            "the request has more than one Content-Length header");
        return false;
    }
    const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    unsigned port = local_port(conn);
    if (host && !host_allowed(srv, host, port)) {
        fakeapi__resp_error(resp, 403, "Forbidden", NULL,
                            "the Host header does not name this server");
        return false;
    }
    /* Browsers send Origin with every POST, PUT, PATCH and DELETE, and with
     * every cross-origin request they check: a page of another site is
     * refused before anything runs. Clients that are not browsers send none. */
    const char *origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
    if (origin && !origin_allowed(srv, origin, port)) {
        fakeapi__resp_error(resp, 403, "Forbidden", NULL,
                            "cross-origin requests are refused: the Origin header does not name "
                            "this server");
        return false;
    }
    return fakeapi__exchange_target(cr->target, &cr->path, &cr->query, resp);
}

/* Answer now and end the connection: what is left of the request (a body
 * not yet read) is not read. */
static enum MHD_Result refuse(struct MHD_Connection *conn, fakeapi__resp *resp)
{
    enum MHD_Result ret = send_resp(conn, resp, true);
    fakeapi__resp_deinit(resp);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_size, void **con_cls)
{
    (void)version, (void)url; /* url is unescaped and cut at a NUL: cr->path instead */
    fakeapi_server *srv = cls;
    conn_req *cr = *con_cls;
    if (!cr)
        return MHD_NO; /* on_target could not allocate */
    if (!cr->started) {
        if (srv->opts.tls_require_client_cert && !tls_client_verified(conn))
            return MHD_NO; /* closes the connection: no answer to a stranger */
        cr->started = true;
        fakeapi__resp resp = {0};
        if (!front_door(srv, conn, cr, &resp))
            return refuse(conn, &resp);
        return MHD_YES;
    }
    if (*upload_size) {
        if (body_append(cr, upload_data, *upload_size, srv->max_body) < 0)
            return MHD_NO;
        *upload_size = 0;
        return MHD_YES;
    }
    fakeapi__conns_busy(srv->conns, conn_track(conn)); /* the whole request is in */
    if (cr->too_large) {
        fakeapi__resp resp = {0};
        fakeapi__exchange_too_large(srv, &resp);
        enum MHD_Result ret = send_resp(conn, &resp, false);
        fakeapi__resp_deinit(&resp);
        return ret;
    }
    if (!cr->plan) {
        fakeapi__resp resp = {0};
        const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
        bool browser = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin") != NULL;
        if (!fakeapi__exchange_media_ok(cr->path, method, ct, browser, cr->len, &resp))
            return refuse(conn, &resp);
    }
    return serve(srv, conn, method, cr);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    /* Its answer is out: it now waits for the next request. */
    fakeapi__conns_idle(((fakeapi_server *)cls)->conns, conn_track(conn));
    conn_req *cr = *con_cls;
    if (cr) {
        if (cr->sleeper_ready)
            fakeapi__sleeper_deinit(((fakeapi_server *)cls)->waker, &cr->sleeper);
        if (cr->off && atomic_load(&cr->off->done)) {
            fakeapi__resp_deinit(&cr->off->resp);
            free(cr->off);
        }
        free(cr->plan);
        free(cr->body);
        free(cr->target);
        free(cr->path);
        json_decref(cr->query);
        free(cr);
        *con_cls = NULL;
    }
}

static void quiet_logger(void *cls, const char *fmt, va_list ap)
{
    (void)cls, (void)fmt, (void)ap; /* library code never prints */
}

/* One loop thread per core: requests are short and serialised by the store
 * lock, so more threads than cores only add wake-ups; at least two, so one
 * long answer (a big list) does not stall every other connection. */
static unsigned http_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < HTTP_THREADS_MIN)
        n = HTTP_THREADS_MIN;
    return n > HTTP_THREADS_MAX ? HTTP_THREADS_MAX : (unsigned)n;
}

/* An IPv4 address literal, or a name (localhost) resolved to its first
 * IPv4 address. */
static int resolve_host(const char *host, struct in_addr *out)
{
    if (inet_pton(AF_INET, host, out) == 1)
        return 0;
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
    if (getaddrinfo(host, NULL, &hints, &res) != 0 || !res)
        return -1;
    *out = ((const struct sockaddr_in *)(const void *)res->ai_addr)->sin_addr;
    freeaddrinfo(res);
    return 0;
}

/* Every connection costs two descriptors (its socket and the tracker's or
 * the watch's duplicate): as many as the descriptor limit allows, past the
 * store's and the threads', up to CONN_LIMIT_MAX (each also holds a 32 KiB
 * buffer). Accepting past the descriptor limit fails with EMFILE, and
 * libmicrohttpd then stops accepting altogether. */
static unsigned conn_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
        return CONN_LIMIT_MAX;
    rlim_t n = rl.rlim_cur > FD_RESERVE ? (rl.rlim_cur - FD_RESERVE) / 2 : 0;
    if (n < CONN_LIMIT_MIN)
        n = CONN_LIMIT_MIN;
    return n > CONN_LIMIT_MAX ? CONN_LIMIT_MAX : (unsigned)n;
}

int fakeapi__front_start(fakeapi_server *srv)
{
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(srv->opts.port)};
    if (resolve_host(srv->opts.host ? srv->opts.host : "127.0.0.1", &addr.sin_addr) < 0)
        return -1;
    inet_ntop(AF_INET, &addr.sin_addr, srv->listen_ip, sizeof srv->listen_ip);
    const char *host = srv->listen_ip;
    srv->listen_loopback = (ntohl(addr.sin_addr.s_addr) >> 24) == 127;
    srv->listen_any = addr.sin_addr.s_addr == htonl(INADDR_ANY);
    if (gethostname(srv->hostname, sizeof srv->hostname) != 0)
        srv->hostname[0] = '\0';
    srv->hostname[sizeof srv->hostname - 1] = '\0';
    /* TLS options go through MHD_OPTION_ARRAY: empty (just END) without tls. */
    struct MHD_OptionItem tls_opts[4] = {{MHD_OPTION_END, 0, NULL}};
    unsigned tls_flag = 0;
    if (srv->tls) {
        tls_flag = MHD_USE_TLS;
        tls_opts[0] =
            (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, srv->tls->server_key_pem};
        tls_opts[1] =
            (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, srv->tls->server_cert_pem};
        tls_opts[2] = srv->opts.tls_require_client_cert
                          ? (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_TRUST, 0, srv->tls->ca_pem}
                          : (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
        tls_opts[3] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    }
    /* Shed idle connections a little before the limit: a flood of them
     * (or of half-sent requests) leaves room for new clients. */
    unsigned limit = conn_limit();
    int64_t timeout_s = conn_timeout_s(srv);
    srv->conns =
        fakeapi__conns_new(timeout_s ? timeout_s * 1000000000 : INT64_MAX, limit - limit / 8);
    if (!srv->conns)
        return -1;
    srv->mhd = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | tls_flag, 0,
        NULL, NULL, on_request, srv, MHD_OPTION_ARRAY, tls_opts, MHD_OPTION_SOCK_ADDR, &addr,
        MHD_OPTION_URI_LOG_CALLBACK, on_target, srv, MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
        MHD_OPTION_EXTERNAL_LOGGER, quiet_logger, NULL, MHD_OPTION_THREAD_POOL_SIZE,
        srv->opts.http_threads ? srv->opts.http_threads : http_threads(),
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32 * 1024, MHD_OPTION_CONNECTION_LIMIT, limit,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)timeout_s, MHD_OPTION_NOTIFY_CONNECTION,
        on_connection, srv, MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)1024, MHD_OPTION_END);
    if (!srv->mhd)
        return -1;
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(srv->mhd, MHD_DAEMON_INFO_BIND_PORT);
    srv->port = info ? info->port : srv->opts.port;
    snprintf(srv->url, sizeof srv->url, "%s://%s:%u", srv->tls ? "https" : "http", host,
             (unsigned)srv->port);
    return 0;
}

void fakeapi__front_stop(fakeapi_server *srv)
{
    /* Requests on their own threads end soon (webhook calls stop when the
     * server does) and resume their connections: libmicrohttpd must not
     * stop with a connection suspended. */
    while (atomic_load(&srv->offloaded) > 0)
        usleep(1000);
    if (srv->mhd)
        MHD_stop_daemon(srv->mhd);
    srv->mhd = NULL;
    fakeapi__conns_free(srv->conns); /* every connection has closed */
    srv->conns = NULL;
}
