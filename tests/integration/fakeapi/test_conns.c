/*
 * test_conns.c - connections never take the server down: clients that send
 * part of a request and go, half-close, trickle their headers, sit idle, or
 * hang up on a watch while events flow are freed (their descriptors with
 * them), and a flood of idle connections does not lock new clients out.
 *
 * fakeapi runs in this process, so the server's descriptors are counted in
 * /proc/self/fd; clients are raw sockets (or a child process's, where the
 * test lowers the descriptor limit).
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fakeapi/fakeapi.h"
#include "apitest.h"

#define CMS "/api/v1/namespaces/default/configmaps"

/* ---- helpers of this file --------------------------------------------------- */

static int fd_count(void)
{
    DIR *d = opendir("/proc/self/fd");
    cr_assert_not_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* the directory's own descriptor */
}

/* Wait up to ms for the descriptor count to come down to at most want. */
static int wait_fds(int want, int ms)
{
    int64_t t0 = now_ms();
    int n;
    while ((n = fd_count()) > want && now_ms() - t0 < ms)
        sleep_ms(10);
    return n;
}

static int raw_connect(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    cr_assert_geq(fd, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(fakeapi_port(srv))};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0, "connect: %s", strerror(errno));
    return fd;
}

static void send_all(int fd, const char *s)
{
    size_t n = strlen(s);
    cr_assert_eq(send(fd, s, n, MSG_NOSIGNAL), (ssize_t)n);
}

/* Read until the server closes (true) or ms pass (false); the bytes read
 * (the start of them) go to buf if given. */
static bool wait_closed(int fd, int ms, char *buf, size_t len)
{
    size_t got = 0;
    int64_t t0 = now_ms();
    for (;;) {
        int left = ms - (int)(now_ms() - t0);
        if (left <= 0)
            return false;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, left) <= 0)
            continue;
        char tmp[4096];
        ssize_t n = recv(fd, tmp, sizeof tmp, 0);
        if (n <= 0)
            return n == 0 || errno == ECONNRESET;
        if (buf && got + 1 < len) {
            size_t k = (size_t)n < len - 1 - got ? (size_t)n : len - 1 - got;
            memcpy(buf + got, tmp, k);
            got += k;
            buf[got] = '\0';
        }
    }
}

/* A request still gets its answer. */
static void still_serves(void)
{
    json_decref(req(200, "GET", CMS, NULL));
}

/* ---- half-closed and abandoned requests --------------------------------------- */

/* The ways a client can stop in the middle of a request. */
static const char *const partial[] = {
    "GET /api/v1/namespaces HTTP/1.1\r\nHost: 127.0.0.1\r\n",
    "GET /api/v1/names",
    "POST " CMS " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    "Content-Length: 1000\r\n\r\n{\"apiVersion\":\"v1\",",
    "PUT " CMS "/x HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc",
};
#define N_PARTIAL (sizeof partial / sizeof partial[0])

Test(conns, abandoned_requests_free_their_descriptors_at_once, .init = setup, .fini = teardown)
{
    still_serves();
    int base = fd_count();
    for (int i = 0; i < 400; i++) {
        int fd = raw_connect();
        send_all(fd, partial[i % N_PARTIAL]);
        close(fd);
    }
    int left = wait_fds(base, 2000);
    cr_assert_leq(left, base, "%d descriptors left by 400 abandoned requests (base %d)",
                  left - base, base);
    still_serves();
}

Test(conns, half_closed_requests_are_closed_at_once, .init = setup, .fini = teardown)
{
    for (size_t i = 0; i < N_PARTIAL; i++) {
        int fd = raw_connect();
        send_all(fd, partial[i]);
        sleep_ms(50); /* the server has read what came */
        cr_assert_eq(shutdown(fd, SHUT_WR), 0);
        cr_assert(wait_closed(fd, 1500, NULL, 0), "a half-closed request %zu is still open", i);
        close(fd);
    }
    /* A complete request, then the half-close: answered, then closed. */
    int fd = raw_connect();
    send_all(fd, "GET " CMS " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    cr_assert_eq(shutdown(fd, SHUT_WR), 0);
    char got[256];
    cr_assert(wait_closed(fd, 1500, got, sizeof got), "a half-closed keep-alive stays open");
    cr_assert(!strncmp(got, "HTTP/1.1 200", 12), "answered %.40s", got);
    close(fd);
    still_serves();
}

/* ---- timeouts -------------------------------------------------------------------- */

static void start_timeout(int s)
{
    fakeapi_options o = {.seed = 1, .conn_timeout_s = s};
    start(&o);
}

Test(conns_opts, slowloris_is_closed_at_the_timeout, .fini = teardown)
{
    start_timeout(1);
    int fd = raw_connect();
    send_all(fd, "GET " CMS " HTTP/1.1\r\n");
    /* A header byte every 100 ms, for 30 s: never idle, never done. */
    char trickle[300];
    memset(trickle, 'a', sizeof trickle);
    memcpy(trickle, "X-Slow: ", 8);
    int64_t t0 = now_ms();
    bool closed = false;
    for (size_t i = 0; i < sizeof trickle && !closed; i++) {
        if (send(fd, &trickle[i], 1, MSG_NOSIGNAL) != 1)
            break;
        closed = wait_closed(fd, 100, NULL, 0);
    }
    int64_t took = now_ms() - t0;
    close(fd);
    /* Held to the end of the trickle would be 30 s. */
    cr_assert_lt(took, 15000, "a slowloris client was held %lld ms with a 1 s timeout",
                 (long long)took);
    cr_assert_geq(took, 900, "closed after %lld ms, before its timeout", (long long)took);
    still_serves();
}

Test(conns_opts, idle_keep_alive_and_slow_bodies_time_out, .fini = teardown)
{
    start_timeout(1);
    int idle = raw_connect();
    send_all(idle, "GET " CMS " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    int body = raw_connect();
    send_all(body, partial[2]);
    int nothing = raw_connect();
    char got[256];
    cr_assert(wait_closed(idle, 3500, got, sizeof got), "an idle keep-alive connection stays");
    cr_assert(!strncmp(got, "HTTP/1.1 200", 12), "answered %.40s", got);
    cr_assert(wait_closed(body, 1000, NULL, 0), "a request without its body stays");
    cr_assert(wait_closed(nothing, 1000, NULL, 0), "a connection that sent nothing stays");
    close(idle);
    close(body);
    close(nothing);
}

Test(conns_opts, watches_and_delayed_requests_outlive_the_timeout, .fini = teardown)
{
    start_timeout(1);
    cr_assert_eq(
        fakeapi_fault_add_json(
            srv,
            "{\"match\":{\"verb\":\"get\",\"name\":\"slow\"},\"action\":{\"delay\":\"2500ms\"}}",
            NULL),
        0);
    wstream *w = ws_start_ok(CMS "?watch=true", NULL, 2000);
    int fd = raw_connect();
    send_all(fd, "GET " CMS "/slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    sleep_ms(3000);
    cr_assert(!w->done, "a quiet watch was closed by the connection timeout");
    json_decref(mk_cm("default", "after", NULL));
    json_t *ev = ws_next(w, 2000);
    cr_assert_not_null(ev, "the watch got no event after the timeout");
    json_decref(ev);
    char got[256];
    cr_assert(wait_closed(fd, 2000, got, sizeof got), "the delayed request was not answered");
    cr_assert(!strncmp(got, "HTTP/1.1 404", 12), "the delayed request got %.40s", got);
    close(fd);
    ws_close(w);
}

/* ---- watches whose clients hang up while events flow ----------------------------- */

typedef struct writer {
    atomic_bool stop;
    pthread_t th;
} writer;

static void *write_loop(void *ud)
{
    writer *wr = ud;
    static char big[3000];
    memset(big, 'x', sizeof big - 1);
    for (unsigned i = 0; !atomic_load(&wr->stop); i++) {
        char text[4096];
        snprintf(text, sizeof text,
                 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"w%u\","
                 "\"namespace\":\"default\"},\"data\":{\"v\":\"%s\"}}",
                 i % 50, big);
        fakeapi_apply(srv, text, strlen(text), NULL);
    }
    return NULL;
}

Test(conns, watches_hung_up_mid_stream_free_their_descriptors, .init = setup, .fini = teardown)
{
    still_serves();
    int base = fd_count();
    writer wr = {0};
    cr_assert_eq(pthread_create(&wr.th, NULL, write_loop, &wr), 0);
    for (int i = 0; i < 300; i++) {
        int fd = raw_connect();
        if (i % 2) {
            int small = 2048; /* the server's writes fill it at once */
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
        }
        send_all(fd, "GET " CMS "?watch=true HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        char buf[8192];
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 1000) > 0 && i % 3)
            (void)!recv(fd, buf, sizeof buf, 0); /* some read a little, some nothing */
        if (i % 4 == 0) {
            struct linger lg = {.l_onoff = 1, .l_linger = 0}; /* a reset, not a FIN */
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        }
        close(fd);
    }
    int64_t t0 = now_ms();
    size_t open = 1;
    while (now_ms() - t0 < 3000) {
        fakeapi_watch_info *info = NULL;
        cr_assert_eq(fakeapi_watches(srv, &info, &open), 0);
        free(info);
        if (!open)
            break;
        sleep_ms(20);
    }
    /* Still writing: the descriptors must go while events flow. */
    int left = wait_fds(base, 2000);
    atomic_store(&wr.stop, true);
    pthread_join(wr.th, NULL);
    cr_assert_eq(open, 0, "%zu watches outlived their clients", open);
    cr_assert_leq(left, base, "%d descriptors left by 300 hung-up watches", left - base);
    still_serves();
}

/* ---- the connection limit -------------------------------------------------------- */

/* A child process (its own descriptor table) holds n connections that sent
 * rq; returns its pid once they are all connected. */
static pid_t hold_conns(uint16_t port, int n, const char *rq)
{
    int pfd[2];
    cr_assert_eq(pipe(pfd), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed test does not leave it behind */
        close(pfd[0]);
        struct rlimit rl;
        getrlimit(RLIMIT_NOFILE, &rl);
        rl.rlim_cur = rl.rlim_max < 4096 ? rl.rlim_max : 4096; /* the parent lowered it */
        setrlimit(RLIMIT_NOFILE, &rl);
        for (int i = 0; i < n; i++) {
            int fd = socket(AF_INET, SOCK_STREAM, 0);
            struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
            inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
            if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0)
                _exit(1);
            (void)!send(fd, rq, strlen(rq), MSG_NOSIGNAL);
        }
        (void)!write(pfd[1], "k", 1);
        pause();
        _exit(0);
    }
    close(pfd[1]);
    char c;
    cr_assert_eq(read(pfd[0], &c, 1), 1, "the child could not connect");
    close(pfd[0]);
    return pid;
}

/* A GET on a new connection: the status line if answered within ms, else "". */
static const char *quick_get(int ms)
{
    static char got[64];
    int fd = raw_connect();
    send_all(fd, "GET " CMS " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    got[0] = '\0';
    if (!wait_closed(fd, ms, got, sizeof got))
        got[0] = '\0';
    close(fd);
    char *eol = strstr(got, "\r\n");
    if (eol)
        *eol = '\0';
    got[12] = '\0'; /* "HTTP/1.1 NNN" */
    return got;
}

static void lower_fd_limit(rlim_t n)
{
    struct rlimit rl;
    cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
    rl.rlim_cur = n;
    cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
}

Test(conns_opts, idle_connections_do_not_lock_new_clients_out, .fini = teardown)
{
    /* A small descriptor budget: the server derives its limit from it (64). */
    lower_fd_limit(256);
    start(NULL);
    pid_t child = hold_conns(fakeapi_port(srv), 400, "GET / HTTP/1.1\r\n");
    sleep_ms(300);
    int answered = 0;
    for (int i = 0; i < 20; i++)
        answered += !strcmp(quick_get(2000), "HTTP/1.1 200");
    int fds = fd_count();
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    cr_assert_eq(answered, 20, "%d of 20 new clients answered past 400 idle connections", answered);
    cr_assert_lt(fds, 256, "the server holds %d descriptors", fds);
}

Test(conns_opts, past_the_limit_with_only_watches_new_clients_get_429, .fini = teardown)
{
    lower_fd_limit(256); /* a limit of 64 connections, shedding past 56 */
    start(NULL);
    pid_t child = hold_conns(fakeapi_port(srv), 56,
                             "GET " CMS "?watch=true HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    size_t open = 0;
    for (int i = 0; i < 200 && open < 56; i++) {
        fakeapi_watch_info *info = NULL;
        cr_assert_eq(fakeapi_watches(srv, &info, &open), 0);
        free(info);
        sleep_ms(10);
    }
    const char *crowded = quick_get(1000);
    char first[16];
    snprintf(first, sizeof first, "%s", crowded);
    json_t *stats = req(200, "GET", "/fakeapi/v1/stats", NULL); /* the way in stays open */
    json_decref(stats);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    cr_assert_eq(open, 56, "%zu of 56 watches open", open);
    cr_assert_str_eq(first, "HTTP/1.1 429", "a new client past 56 watches got \"%s\"", first);
    int64_t t0 = now_ms();
    while (strcmp(quick_get(1000), "HTTP/1.1 200") && now_ms() - t0 < 3000)
        sleep_ms(50);
    cr_assert_lt(now_ms() - t0, 3000, "no 200 once the watches had gone");
}
