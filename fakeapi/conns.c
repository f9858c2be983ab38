/*
 * conns.c - bounds the life of connections waiting for a request (see
 * conns.h for the design).
 */
#include "conns.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CONNS_MAX_WAIT_MS 1000
#define CONNS_EVENTS 64
/* A client that hung up may have sent a whole request first (a half-close
 * after it): libmicrohttpd gets this long to take it in and answer. */
#define CONNS_HANGUP_GRACE_NS 300000000LL

enum phase {
    PH_WAITING,  /* for a request: on the waiting list, with a deadline */
    PH_HUNG,     /* the same, but its client hung up: on the hung-up list */
    PH_BUSY,     /* its request is being answered */
    PH_RELEASED, /* a watch's: not ours to time */
    PH_DONE,     /* let go (shut down) or closed */
};

typedef struct conn_list {
    struct fakeapi__conn *head, *tail; /* oldest (earliest deadline) first */
} conn_list;

struct fakeapi__conn {
    enum phase phase;
    bool hung_up; /* the client hung up or half-closed */
    bool closed;  /* the connection has ended: free at the next sweep */
    bool crowded; /* accepted past the soft limit with nothing to shed */
    int fd;       /* our duplicate of the socket, -1 if none */
    int64_t deadline;
    struct fakeapi__conn *prev, *next; /* its list, or the closed list */
};

struct fakeapi__conns {
    pthread_mutex_t mu;
    conn_list waiting, hung;      /* every deadline in a list is its start + a constant */
    struct fakeapi__conn *closed; /* ended, to be freed by the thread */
    size_t open, soft_limit;
    int64_t timeout_ns;
    unsigned long timed_out, hung_up, shed; /* connections let go, by reason */
    bool stopping;
    int epfd, kickfd;
    pthread_t thread;
    bool started;
};

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t after(int64_t now, int64_t ns)
{
    return ns == INT64_MAX || now > INT64_MAX - ns ? INT64_MAX : now + ns;
}

static void list_append(conn_list *l, fakeapi__conn *c)
{
    c->next = NULL;
    c->prev = l->tail;
    if (l->tail)
        l->tail->next = c;
    else
        l->head = c;
    l->tail = c;
}

static void list_remove(conn_list *l, fakeapi__conn *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        l->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        l->tail = c->prev;
    c->prev = c->next = NULL;
}

/* Take c off the list its phase puts it on. */
static void unlist(fakeapi__conns *cs, fakeapi__conn *c)
{
    if (c->phase == PH_WAITING)
        list_remove(&cs->waiting, c);
    else if (c->phase == PH_HUNG)
        list_remove(&cs->hung, c);
}

static void drop_fd(fakeapi__conns *cs, fakeapi__conn *c)
{
    if (c->fd < 0)
        return;
    epoll_ctl(cs->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->fd = -1;
}

/* Let a connection go: its loop thread sees the end of the stream and
 * closes it. The duplicate stays open until then, so its number cannot be
 * reused under us. Called with the lock held. */
static void let_go_locked(fakeapi__conns *cs, fakeapi__conn *c, unsigned long *counter)
{
    unlist(cs, c);
    c->phase = PH_DONE;
    if (c->fd >= 0)
        shutdown(c->fd, SHUT_RDWR);
    (*counter)++;
}

static void sweep_closed_locked(fakeapi__conns *cs)
{
    while (cs->closed) {
        fakeapi__conn *c = cs->closed;
        cs->closed = c->next;
        free(c);
    }
}

static void *conns_main(void *ud)
{
    fakeapi__conns *cs = ud;
    struct epoll_event evs[CONNS_EVENTS];
    pthread_mutex_lock(&cs->mu);
    while (!cs->stopping) {
        int64_t now = mono_ns();
        while (cs->waiting.head && cs->waiting.head->deadline <= now)
            let_go_locked(cs, cs->waiting.head, &cs->timed_out);
        while (cs->hung.head && cs->hung.head->deadline <= now)
            let_go_locked(cs, cs->hung.head, &cs->hung_up);
        int64_t next = cs->waiting.head ? cs->waiting.head->deadline : INT64_MAX;
        if (cs->hung.head && cs->hung.head->deadline < next)
            next = cs->hung.head->deadline;
        int64_t left_ms = CONNS_MAX_WAIT_MS;
        if (next != INT64_MAX && (next - now) / 1000000 + 1 < left_ms)
            left_ms = (next - now) / 1000000 + 1;
        /* Entries closed before this wait cannot appear in it (their
         * descriptors left the set when they closed). */
        sweep_closed_locked(cs);
        pthread_mutex_unlock(&cs->mu);
        int n = epoll_wait(cs->epfd, evs, CONNS_EVENTS, (int)left_ms);
        pthread_mutex_lock(&cs->mu);
        for (int i = 0; i < n; i++) {
            fakeapi__conn *c = evs[i].data.ptr;
            if (!c) {
                uint64_t count;
                ssize_t r = read(cs->kickfd, &count, sizeof count);
                (void)r;
                continue;
            }
            if (c->closed || c->phase == PH_DONE || c->phase == PH_RELEASED)
                continue;
            c->hung_up = true;
            if (c->phase == PH_WAITING) {
                /* Let go soon, unless its request turns out whole. */
                list_remove(&cs->waiting, c);
                c->phase = PH_HUNG;
                c->deadline = after(mono_ns(), CONNS_HANGUP_GRACE_NS);
                list_append(&cs->hung, c);
            }
            /* busy: let go once its answer is out (fakeapi__conns_idle) */
        }
    }
    pthread_mutex_unlock(&cs->mu);
    return NULL;
}

fakeapi__conns *fakeapi__conns_new(int64_t timeout_ns, size_t soft_limit)
{
    fakeapi__conns *cs = calloc(1, sizeof *cs);
    if (!cs)
        return NULL;
    pthread_mutex_init(&cs->mu, NULL);
    cs->timeout_ns = timeout_ns;
    cs->soft_limit = soft_limit;
    cs->epfd = epoll_create1(EPOLL_CLOEXEC);
    cs->kickfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    if (cs->epfd < 0 || cs->kickfd < 0 || epoll_ctl(cs->epfd, EPOLL_CTL_ADD, cs->kickfd, &ev) < 0 ||
        pthread_create(&cs->thread, NULL, conns_main, cs) != 0) {
        fakeapi__conns_free(cs);
        return NULL;
    }
    cs->started = true;
    return cs;
}

void fakeapi__conns_free(fakeapi__conns *cs)
{
    if (!cs)
        return;
    if (cs->started) {
        pthread_mutex_lock(&cs->mu);
        cs->stopping = true;
        pthread_mutex_unlock(&cs->mu);
        uint64_t one = 1;
        ssize_t w = write(cs->kickfd, &one, sizeof one);
        (void)w;
        pthread_join(cs->thread, NULL);
    }
    /* No connection is left: only closed entries, and waiting ones if the
     * server never closed them (it always does). */
    sweep_closed_locked(cs);
    conn_list *lists[] = {&cs->waiting, &cs->hung};
    for (size_t i = 0; i < 2; i++) {
        while (lists[i]->head) {
            fakeapi__conn *c = lists[i]->head;
            list_remove(lists[i], c);
            drop_fd(cs, c);
            free(c);
        }
    }
    if (cs->epfd >= 0)
        close(cs->epfd);
    if (cs->kickfd >= 0)
        close(cs->kickfd);
    pthread_mutex_destroy(&cs->mu);
    free(cs);
}

fakeapi__conn *fakeapi__conns_open(fakeapi__conns *cs, int fd)
{
    fakeapi__conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
    if (c->fd < 0) {
        free(c);
        return NULL;
    }
    pthread_mutex_lock(&cs->mu);
    /* Listed before it is watched: a hang-up already there is reported at
     * once, to a thread that must find it on its list. */
    c->phase = PH_WAITING;
    c->deadline = after(mono_ns(), cs->timeout_ns);
    list_append(&cs->waiting, c);
    struct epoll_event ev = {.events = EPOLLRDHUP | EPOLLET, .data.ptr = c};
    if (epoll_ctl(cs->epfd, EPOLL_CTL_ADD, c->fd, &ev) < 0) {
        list_remove(&cs->waiting, c);
        pthread_mutex_unlock(&cs->mu);
        close(c->fd);
        free(c);
        return NULL;
    }
    cs->open++;
    /* Past the soft limit, the longest waiting connection makes room: one
     * whose client hung up, an idle keep-alive, a request never finished. */
    if (cs->open > cs->soft_limit && cs->hung.head)
        let_go_locked(cs, cs->hung.head, &cs->shed);
    else if (cs->open > cs->soft_limit && cs->waiting.head != c)
        let_go_locked(cs, cs->waiting.head, &cs->shed);
    else if (cs->open > cs->soft_limit)
        c->crowded = true;
    pthread_mutex_unlock(&cs->mu);
    return c;
}

void fakeapi__conns_close(fakeapi__conns *cs, fakeapi__conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&cs->mu);
    unlist(cs, c);
    c->phase = PH_DONE;
    drop_fd(cs, c);
    c->closed = true;
    c->next = cs->closed;
    cs->closed = c;
    cs->open--;
    pthread_mutex_unlock(&cs->mu);
}

void fakeapi__conns_busy(fakeapi__conns *cs, fakeapi__conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&cs->mu);
    if (c->phase == PH_WAITING || c->phase == PH_HUNG) {
        unlist(cs, c);
        c->phase = PH_BUSY;
    }
    pthread_mutex_unlock(&cs->mu);
}

void fakeapi__conns_idle(fakeapi__conns *cs, fakeapi__conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&cs->mu);
    if (c->phase == PH_BUSY && c->hung_up) {
        let_go_locked(cs, c, &cs->hung_up);
    } else if (c->phase == PH_BUSY) {
        c->phase = PH_WAITING;
        c->deadline = after(mono_ns(), cs->timeout_ns);
        list_append(&cs->waiting, c);
    }
    pthread_mutex_unlock(&cs->mu);
}

void fakeapi__conns_release(fakeapi__conns *cs, fakeapi__conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&cs->mu);
    unlist(cs, c);
    if (c->phase != PH_DONE)
        c->phase = PH_RELEASED;
    drop_fd(cs, c);
    pthread_mutex_unlock(&cs->mu);
}

bool fakeapi__conns_crowded(fakeapi__conns *cs, const fakeapi__conn *c)
{
    (void)cs; /* set once at open, before the connection's first request */
    return c && c->crowded;
}
