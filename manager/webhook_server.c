/*
 * webhook_server.c - the manager's webhook server (ctrl/webhook.h): TLS
 * from files, the handlers at their paths, graceful stop, the readiness
 * check and the manager's runnable.
 *
 * DESIGN
 * - libmicrohttpd with GnuTLS (MHD_USE_TLS), a thread per connection
 *   (MHD_USE_THREAD_PER_CONNECTION): a slow handler holds only its own
 *   connection. The handler table is written before start and only read
 *   after, so it needs no lock.
 * - s->inflight counts requests between their first call and their
 *   completion; stop quiesces the listening socket (no new connections),
 *   waits for inflight to reach 0 (at most STOP_WAIT_MS), then stops the
 *   daemon, which joins the connection threads.
 * - The runnable (ctrl_manager_add_webhook_server) starts the server, then
 *   waits on run_cv until its stop is called: s->mu guards `stop_asked`
 *   (a stop that comes before the start makes the start return at once).
 * - What a review is answered is webhook_review.c's; only a body that is
 *   not a JSON object at all gets a plain 400 here.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ctrl/webhook.h"
#include "error_int.h"
#include "webhook_int.h"

#define MAX_BODY ((size_t)8 << 20)
#define MAX_CERT_FILE ((size_t)1 << 20)
#define MAX_HANDLERS 256
#define STOP_WAIT_MS 10000
#define DEFAULT_ADDR ":9443"

struct ctrl_webhook_server {
    char *addr, *cert_path, *key_path;
    ctrl__webhook_handler handlers[MAX_HANDLERS];
    size_t n;
    struct MHD_Daemon *mhd;
    char *cert_pem, *key_pem;
    int port;
    atomic_int inflight;
    atomic_bool started;
    pthread_mutex_t mu;
    pthread_cond_t run_cv;
    bool stop_asked; /* the runnable's stop was called */
};

/* ---- paths and registration ---- */

static int path_for(const char *prefix, const char *api_version, const char *kind, char *buf,
                    size_t len)
{
    if (!api_version || !kind || !*kind || !buf)
        return CTRL_ERR_ARG;
    const char *slash = strchr(api_version, '/');
    size_t gl = slash ? (size_t)(slash - api_version) : 0;
    const char *version = slash ? slash + 1 : api_version;
    int n = snprintf(buf, len, "/%s-%.*s-%s-%s", prefix, (int)gl, api_version, version, kind);
    if (n < 0 || (size_t)n >= len)
        return CTRL_ERR_ARG;
    /* The group's dots become dashes, the kind is lower case. */
    size_t p = strlen(prefix) + 2;
    for (size_t i = p; i < p + gl; i++)
        if (buf[i] == '.')
            buf[i] = '-';
    for (char *k = buf + n - strlen(kind); *k; k++)
        *k = (char)((*k >= 'A' && *k <= 'Z') ? *k - 'A' + 'a' : *k);
    return 0;
}

int ctrl_webhook_validate_path(const char *api_version, const char *kind, char *buf, size_t len)
{
    return path_for("validate", api_version, kind, buf, len);
}

int ctrl_webhook_mutate_path(const char *api_version, const char *kind, char *buf, size_t len)
{
    return path_for("mutate", api_version, kind, buf, len);
}

static char *dup_or(const char *s, const char *def)
{
    return strdup(s ? s : def);
}

static char *join(const char *dir, const char *name)
{
    char *p = NULL;
    if (asprintf(&p, "%s/%s", dir, name) < 0)
        return NULL;
    return p;
}

int ctrl_webhook_server_new(const ctrl_webhook_server_options *opts, ctrl_webhook_server **out,
                            ctrl_error *err)
{
    static const ctrl_webhook_server_options none = {0};
    if (!out)
        return ctrl__error_set(err, CTRL_ERR_ARG, "webhook server: out is NULL");
    if (!opts)
        opts = &none;
    ctrl_webhook_server *s = calloc(1, sizeof *s);
    if (!s)
        return ctrl__error_set(err, CTRL_ERR_NOMEM, "webhook server: out of memory");
    char tmpdir[4096];
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/k8s-webhook-server/serving-certs", t && *t ? t : "/tmp");
    const char *dir = opts->cert_dir ? opts->cert_dir : tmpdir;
    s->addr = dup_or(opts->addr, DEFAULT_ADDR);
    s->cert_path = join(dir, opts->cert_name ? opts->cert_name : "tls.crt");
    s->key_path = join(dir, opts->key_name ? opts->key_name : "tls.key");
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->run_cv, NULL);
    if (!s->addr || !s->cert_path || !s->key_path) {
        ctrl_webhook_server_free(s);
        return ctrl__error_set(err, CTRL_ERR_NOMEM, "webhook server: out of memory");
    }
    *out = s;
    return 0;
}

void ctrl_webhook_server_free(ctrl_webhook_server *s)
{
    if (!s)
        return;
    ctrl_webhook_server_stop(s);
    for (size_t i = 0; i < s->n; i++) {
        free(s->handlers[i].path);
        free(s->handlers[i].api_version);
        free(s->handlers[i].kind);
    }
    free(s->addr);
    free(s->cert_path);
    free(s->key_path);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->run_cv);
    free(s);
}

static int add_handler(ctrl_webhook_server *s, const char *path, ctrl_validate_fn validate,
                       ctrl_default_fn mutate, ctrl_convert_fn convert, void *user,
                       const char *api_version, const char *kind)
{
    int fns = (validate != NULL) + (mutate != NULL) + (convert != NULL);
    if (!s || !path || path[0] != '/' || fns != 1 || atomic_load(&s->started) ||
        s->n >= MAX_HANDLERS)
        return CTRL_ERR_ARG;
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->handlers[i].path, path))
            return CTRL_ERR_ARG;
    ctrl__webhook_handler *h = &s->handlers[s->n];
    *h = (ctrl__webhook_handler){.path = strdup(path),
                                 .validate = validate,
                                 .mutate = mutate,
                                 .convert = convert,
                                 .user = user};
    if (api_version) {
        h->api_version = strdup(api_version);
        h->kind = strdup(kind);
    }
    if (!h->path || (api_version && (!h->api_version || !h->kind))) {
        free(h->path);
        free(h->api_version);
        free(h->kind);
        return CTRL_ERR_NOMEM;
    }
    s->n++;
    return 0;
}

int ctrl_webhook_server_register(ctrl_webhook_server *s, const char *path,
                                 ctrl_validate_fn validate, ctrl_default_fn mutate, void *user)
{
    return add_handler(s, path, validate, mutate, NULL, user, NULL, NULL);
}

int ctrl_webhook_server_register_converter(ctrl_webhook_server *s, const char *path,
                                           ctrl_convert_fn fn, void *user)
{
    return add_handler(s, path ? path : "/convert", NULL, NULL, fn, user, NULL, NULL);
}

int ctrl_webhook_server_register_validator(ctrl_webhook_server *s, const char *api_version,
                                           const char *kind, ctrl_validate_fn fn, void *user)
{
    char path[512];
    int rc = ctrl_webhook_validate_path(api_version, kind, path, sizeof path);
    return rc < 0 || !fn ? CTRL_ERR_ARG
                         : add_handler(s, path, fn, NULL, NULL, user, api_version, kind);
}

int ctrl_webhook_server_register_defaulter(ctrl_webhook_server *s, const char *api_version,
                                           const char *kind, ctrl_default_fn fn, void *user)
{
    char path[512];
    int rc = ctrl_webhook_mutate_path(api_version, kind, path, sizeof path);
    return rc < 0 || !fn ? CTRL_ERR_ARG
                         : add_handler(s, path, NULL, fn, NULL, user, api_version, kind);
}

size_t ctrl__webhook_server_kinds(const ctrl_webhook_server *s, size_t i, const char **api_version,
                                  const char **kind, const char **path, bool *mutating)
{
    if (i >= s->n)
        return 0;
    const ctrl__webhook_handler *h = &s->handlers[i];
    *api_version = h->api_version;
    *kind = h->kind;
    *path = h->path;
    *mutating = h->mutate != NULL;
    return s->n;
}

/* ---- HTTP ---- */

typedef struct conn_body {
    char *p;
    size_t n;
    bool too_big;
} conn_body;

static enum MHD_Result send_text(struct MHD_Connection *conn, unsigned status, char *text,
                                 const char *ctype)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", ctype);
    enum MHD_Result ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **ctx)
{
    (void)version;
    ctrl_webhook_server *s = cls;
    conn_body *b = *ctx;
    if (!b) {
        if (!(b = calloc(1, sizeof *b)))
            return MHD_NO;
        *ctx = b;
        atomic_fetch_add(&s->inflight, 1);
        return MHD_YES;
    }
    if (*size) {
        if (b->too_big || b->n + *size > MAX_BODY) {
            b->too_big = true;
        } else {
            char *p = realloc(b->p, b->n + *size + 1);
            if (!p)
                return MHD_NO;
            memcpy(p + b->n, data, *size);
            b->p = p;
            b->n += *size;
            b->p[b->n] = '\0';
        }
        *size = 0;
        return MHD_YES;
    }
    const ctrl__webhook_handler *h = NULL;
    for (size_t i = 0; i < s->n && !h; i++)
        if (!strcmp(s->handlers[i].path, url))
            h = &s->handlers[i];
    if (!h)
        return send_text(conn, 404, strdup("404 page not found\n"), "text/plain; charset=utf-8");
    if (strcmp(method, "POST"))
        return send_text(conn, 405, strdup("method not allowed\n"), "text/plain; charset=utf-8");
    const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
    if (b->too_big)
        return send_text(conn, 413, strdup("request body too large\n"), "text/plain");
    if (!ct || strncasecmp(ct, "application/json", 16))
        return send_text(conn, 400, strdup("contentType must be application/json\n"), "text/plain");
    json_t *in = b->p ? json_loadb(b->p, b->n, 0, NULL) : NULL;
    if (!json_is_object(in)) {
        json_decref(in);
        return send_text(conn, 400, strdup("the request body is not an AdmissionReview\n"),
                         "text/plain");
    }
    json_t *out = ctrl__webhook_answer(h, in);
    json_decref(in);
    char *text = out ? json_dumps(out, JSON_COMPACT) : NULL;
    json_decref(out);
    if (!text)
        return MHD_NO;
    return send_text(conn, 200, text, "application/json");
}

static void on_done(void *cls, struct MHD_Connection *conn, void **ctx,
                    enum MHD_RequestTerminationCode toe)
{
    (void)conn, (void)toe;
    ctrl_webhook_server *s = cls;
    conn_body *b = *ctx;
    if (b) {
        free(b->p);
        free(b);
        atomic_fetch_sub(&s->inflight, 1);
    }
    *ctx = NULL;
}

static void quiet_logger(void *cls, const char *fmt, va_list ap)
{
    (void)cls, (void)fmt, (void)ap; /* library code never prints */
}

/* A whole PEM file (bounded), NUL-terminated. */
static int read_file(const char *path, char **out, ctrl_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return ctrl__error_set(err, CTRL_ERR_IO, "webhook server: cannot read %s: %s", path,
                               strerror(errno));
    char *buf = malloc(MAX_CERT_FILE + 1);
    size_t n = buf ? fread(buf, 1, MAX_CERT_FILE + 1, f) : 0;
    fclose(f);
    if (!buf)
        return ctrl__error_set(err, CTRL_ERR_NOMEM, "webhook server: out of memory");
    if (n == 0 || n > MAX_CERT_FILE) {
        free(buf);
        return ctrl__error_set(err, CTRL_ERR_IO, "webhook server: %s is %s", path,
                               n ? "too large" : "empty");
    }
    buf[n] = '\0';
    *out = buf;
    return 0;
}

static int parse_addr(const char *addr, struct sockaddr_in *sa)
{
    const char *colon = strrchr(addr, ':');
    if (!colon)
        return -1;
    char host[256];
    size_t hl = (size_t)(colon - addr);
    if (hl >= sizeof host)
        return -1;
    memcpy(host, addr, hl);
    host[hl] = '\0';
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || port < 0 || port > 65535)
        return -1;
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    sa->sin_port = htons((uint16_t)port);
    if (!*host || !strcmp(host, "0.0.0.0"))
        sa->sin_addr.s_addr = htonl(INADDR_ANY);
    else if (!strcmp(host, "localhost"))
        sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    else if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
        return -1;
    return 0;
}

int ctrl_webhook_server_start(ctrl_webhook_server *s, ctrl_error *err)
{
    if (!s || atomic_load(&s->started))
        return ctrl__error_set(err, CTRL_ERR_ARG, "webhook server: %s",
                               s ? "already started" : "NULL server");
    struct sockaddr_in sa;
    if (parse_addr(s->addr, &sa) < 0)
        return ctrl__error_set(err, CTRL_ERR_ARG,
                               "webhook server: address %s is not host:port (IPv4)", s->addr);
    int rc = read_file(s->cert_path, &s->cert_pem, err);
    if (rc == 0)
        rc = read_file(s->key_path, &s->key_pem, err);
    if (rc < 0)
        goto fail;
    /* Bind here, to say why it failed; libmicrohttpd listens on it. */
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 128) < 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        rc = ctrl__error_set(err, CTRL_ERR_TRANSPORT, "webhook server: cannot listen on %s: %s",
                             s->addr, strerror(e));
        goto fail;
    }
    struct MHD_OptionItem tls[] = {
        {MHD_OPTION_HTTPS_MEM_KEY, 0, s->key_pem},
        {MHD_OPTION_HTTPS_MEM_CERT, 0, s->cert_pem},
        {MHD_OPTION_END, 0, NULL},
    };
    s->mhd = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_TLS | MHD_USE_ITC,
        0, NULL, NULL, on_request, s, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_ARRAY, tls,
        MHD_OPTION_NOTIFY_COMPLETED, on_done, s, MHD_OPTION_EXTERNAL_LOGGER, quiet_logger, NULL,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_CONNECTION_LIMIT, (unsigned)256,
        MHD_OPTION_END);
    if (!s->mhd) {
        close(fd);
        rc = ctrl__error_set(err, CTRL_ERR_TRANSPORT,
                             "webhook server: cannot serve TLS on %s (is %s a certificate and "
                             "%s its key?)",
                             s->addr, s->cert_path, s->key_path);
        goto fail;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
    s->port = di ? di->port : 0;
    atomic_store(&s->started, true);
    return 0;
fail:
    free(s->cert_pem);
    free(s->key_pem);
    s->cert_pem = s->key_pem = NULL;
    return rc;
}

void ctrl_webhook_server_stop(ctrl_webhook_server *s)
{
    if (!s || !s->mhd)
        return;
    /* No new connections; the ones being served finish. */
    MHD_socket lfd = MHD_quiesce_daemon(s->mhd);
    for (int waited = 0; atomic_load(&s->inflight) > 0 && waited < STOP_WAIT_MS; waited++)
        usleep(1000);
    MHD_stop_daemon(s->mhd);
    if (lfd != MHD_INVALID_SOCKET)
        close(lfd);
    s->mhd = NULL;
    s->port = 0;
    atomic_store(&s->started, false);
    free(s->cert_pem);
    free(s->key_pem);
    s->cert_pem = s->key_pem = NULL;
}

int ctrl_webhook_server_port(const ctrl_webhook_server *s)
{
    return s && atomic_load(&((ctrl_webhook_server *)s)->started) ? s->port : 0;
}

int ctrl_webhook_server_check(void *server, char *buf, size_t len)
{
    ctrl_webhook_server *s = server;
    int port = ctrl_webhook_server_port(s);
    if (!port) {
        snprintf(buf, len, "webhook server has not been started yet");
        return 1;
    }
    struct sockaddr_in sa;
    if (parse_addr(s->addr, &sa) < 0)
        return 1;
    if (sa.sin_addr.s_addr == htonl(INADDR_ANY))
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons((uint16_t)port);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int rc = fd >= 0 ? connect(fd, (struct sockaddr *)&sa, sizeof sa) : -1;
    int e = errno;
    if (fd >= 0)
        close(fd);
    if (rc < 0) {
        snprintf(buf, len, "webhook server is not reachable: %s", strerror(e));
        return 1;
    }
    return 0;
}

/* ---- the manager's runnable ---- */

static int run_start(void *ud)
{
    ctrl_webhook_server *s = ud;
    pthread_mutex_lock(&s->mu);
    bool stopped = s->stop_asked;
    pthread_mutex_unlock(&s->mu);
    if (stopped)
        return 0;
    /* A server the program started itself (to install its configurations
     * first) is kept as it is. */
    if (!atomic_load(&s->started)) {
        ctrl_error err = {0};
        int rc = ctrl_webhook_server_start(s, &err);
        ctrl_error_deinit(&err);
        if (rc < 0)
            return rc;
    }
    pthread_mutex_lock(&s->mu);
    while (!s->stop_asked)
        pthread_cond_wait(&s->run_cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
    ctrl_webhook_server_stop(s);
    return 0;
}

static void run_stop(void *ud)
{
    ctrl_webhook_server *s = ud;
    pthread_mutex_lock(&s->mu);
    s->stop_asked = true;
    pthread_cond_broadcast(&s->run_cv);
    pthread_mutex_unlock(&s->mu);
}

int ctrl_manager_add_webhook_server(ctrl_manager *mgr, ctrl_webhook_server *s)
{
    if (!mgr || !s)
        return CTRL_ERR_ARG;
    s->stop_asked = false;
    ctrl_runnable r = {.name = "webhook-server", .start = run_start, .stop = run_stop, .ud = s};
    int rc = ctrl_manager_add(mgr, &r);
    if (rc == 0)
        rc = ctrl_manager_add_readyz(mgr, "webhook", ctrl_webhook_server_check, s);
    return rc;
}
