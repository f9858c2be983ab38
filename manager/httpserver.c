/*
 * httpserver.c - the manager's HTTP servers (health.c renders the health
 * answers they serve).
 *
 * DESIGN
 * - libmicrohttpd with its internal polling thread (MHD_USE_INTERNAL_POLLING_THREAD
 *   | MHD_USE_POLL | MHD_USE_ITC): one thread per server, requests served
 *   one at a time on it; the ITC lets MHD_stop_daemon return at once. The
 *   handler owns no state here: the manager's handler takes its own locks.
 * - Only GET and HEAD are answered; bodies are built whole (a scrape of a
 *   few hundred series), never streamed.
 */
#include "httpserver_int.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

struct ctrl__httpserver {
    struct MHD_Daemon *mhd;
    ctrl__http_fn fn;
    void *ud;
    int port;
};

typedef struct query_ctx {
    struct MHD_Connection *conn;
    const char *key;
    const char *found;
} query_ctx;

static enum MHD_Result find_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                const char *value)
{
    (void)kind;
    query_ctx *q = cls;
    if (strcmp(key, q->key) != 0)
        return MHD_YES;
    q->found = value ? value : "";
    return MHD_NO;
}

static const char *query(void *qctx, const char *key)
{
    query_ctx *q = qctx;
    q->key = key;
    q->found = NULL;
    MHD_get_connection_values(q->conn, MHD_GET_ARGUMENT_KIND, find_arg, q);
    return q->found;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    (void)version, (void)upload_data;
    ctrl__httpserver *s = cls;
    if (!*con_cls) { /* first call: headers only */
        *con_cls = s;
        return MHD_YES;
    }
    if (*upload_data_size) { /* a body: ignored */
        *upload_data_size = 0;
        return MHD_YES;
    }
    ctrl__http_reply r = {0};
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        r.status = 405;
        r.body = strdup("method not allowed\n");
    } else {
        query_ctx q = {.conn = conn};
        s->fn(s->ud, method, url, query, &q, &r);
    }
    size_t len = r.body ? strlen(r.body) : 0;
    struct MHD_Response *resp = MHD_create_response_from_buffer(
        len, r.body ? r.body : (void *)"", r.body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!resp) {
        free(r.body);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type",
                            r.content_type ? r.content_type : "text/plain; charset=utf-8");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned)(r.status ? r.status : 200), resp);
    MHD_destroy_response(resp);
    return ret;
}

static void quiet_logger(void *cls, const char *fmt, va_list ap)
{
    (void)cls, (void)fmt, (void)ap; /* library code never prints */
}

/* "host:port", ":port", "[v6]:port" into a socket address. */
static int parse_addr(const char *addr, struct sockaddr_storage *ss, bool *v6)
{
    char host[256];
    const char *colon;
    const char *h = addr;
    size_t hl;
    if (addr[0] == '[') {
        const char *end = strchr(addr, ']');
        if (!end || end[1] != ':')
            return CTRL_ERR_ARG;
        h = addr + 1;
        hl = (size_t)(end - h);
        colon = end + 1;
    } else {
        colon = strrchr(addr, ':');
        if (!colon)
            return CTRL_ERR_ARG;
        hl = (size_t)(colon - addr);
    }
    if (hl >= sizeof host)
        return CTRL_ERR_ARG;
    memcpy(host, h, hl);
    host[hl] = '\0';
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || port < 0 || port > 65535)
        return CTRL_ERR_ARG;
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    if (!*host || strcmp(host, "0.0.0.0") == 0) {
        in4->sin_family = AF_INET;
        in4->sin_addr.s_addr = htonl(INADDR_ANY);
        in4->sin_port = htons((uint16_t)port);
        *v6 = false;
        return 0;
    }
    if (strcmp(host, "localhost") == 0)
        snprintf(host, sizeof host, "127.0.0.1");
    if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        in4->sin_port = htons((uint16_t)port);
        *v6 = false;
        return 0;
    }
    if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)port);
        *v6 = true;
        return 0;
    }
    return CTRL_ERR_ARG; /* host names other than localhost are not resolved */
}

/* A listening socket on ss, or -1 with errno and what failed in why. */
static int listen_on(const struct sockaddr_storage *ss, bool v6, const char *addr, char *why,
                     size_t why_len)
{
    int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const char *step = "socket";
    if (fd >= 0) {
        int one = 1;
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        socklen_t len = v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
        step = "bind";
        if (bind(fd, (const struct sockaddr *)ss, len) == 0) {
            step = "listen";
            if (listen(fd, 64) == 0)
                return fd;
        }
    }
    int e = errno;
    if (fd >= 0)
        close(fd);
    if (why && why_len)
        snprintf(why, why_len, "listen tcp %s: %s: %s (errno %d)", addr, step, strerror(e), e);
    errno = e;
    return -1;
}

int ctrl__httpserver_start(const char *addr, ctrl__http_fn fn, void *ud, ctrl__httpserver **out,
                           char *why, size_t why_len)
{
    if (why && why_len)
        why[0] = '\0';
    if (!addr || !fn || !out)
        return CTRL_ERR_ARG;
    struct sockaddr_storage ss;
    bool v6 = false;
    int rc = parse_addr(addr, &ss, &v6);
    if (rc < 0) {
        if (why && why_len)
            snprintf(why, why_len, "malformed address \"%s\" (host:port, :port or [v6]:port)",
                     addr);
        return rc;
    }
    int fd = listen_on(&ss, v6, addr, why, why_len);
    if (fd < 0)
        return CTRL_ERR_IO;
    ctrl__httpserver *s = calloc(1, sizeof *s);
    if (!s) {
        close(fd);
        return CTRL_ERR_NOMEM;
    }
    s->fn = fn;
    s->ud = ud;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC;
    if (v6)
        flags |= MHD_USE_IPv6;
    /* MHD owns the socket from here: MHD_stop_daemon closes it. */
    s->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_LISTEN_SOCKET, fd,
                              MHD_OPTION_EXTERNAL_LOGGER, quiet_logger, NULL,
                              MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
                              MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)64 * 1024,
                              MHD_OPTION_CONNECTION_LIMIT, (unsigned)64, MHD_OPTION_END);
    if (!s->mhd) {
        close(fd);
        free(s);
        if (why && why_len)
            snprintf(why, why_len, "listen tcp %s: the HTTP server could not start", addr);
        return CTRL_ERR_IO;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : 0;
    *out = s;
    return 0;
}

int ctrl__httpserver_port(const ctrl__httpserver *s)
{
    return s ? s->port : 0;
}

void ctrl__httpserver_stop(ctrl__httpserver *s)
{
    if (!s)
        return;
    MHD_stop_daemon(s->mhd);
    free(s);
}
