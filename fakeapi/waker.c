/*
 * waker.c - wakes suspended connections at their time or on a hang-up (see
 * waker.h for the design).
 *
 * The sleepers the waker knows form one list: those armed and those whose
 * socket it watches. Finding the earliest deadline scans the list; that
 * happens once per wake-up of the thread, which comes with a deadline, a
 * kick or a hang-up, never with each event delivered.
 */
#include "waker.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define WAKER_MAX_WAIT_MS 1000
#define WAKER_EVENTS 64
#define KICK_ID 0 /* epoll data of the eventfd; sleepers count from 1 */

struct fakeapi__waker {
    pthread_mutex_t mu;
    fakeapi__sleeper *head; /* armed or watching a socket */
    uint64_t next_id;
    int64_t planned; /* the deadline the thread sleeps towards */
    bool stopping;
    bool hold; /* holdable sleepers wait for fakeapi__waker_release */
    int epfd, kickfd;
    pthread_t thread;
    bool started;
    int64_t (*now)(void *);
    void *now_ud;
    void (*suspend)(void *conn);
    void (*resume)(void *conn);
};

static void kick(fakeapi__waker *wk)
{
    uint64_t one = 1;
    ssize_t n = write(wk->kickfd, &one, sizeof one);
    (void)n; /* EAGAIN: already kicked */
}

static void link_locked(fakeapi__waker *wk, fakeapi__sleeper *s)
{
    s->prev = NULL;
    s->next = wk->head;
    if (wk->head)
        wk->head->prev = s;
    wk->head = s;
}

static void unlink_locked(fakeapi__waker *wk, fakeapi__sleeper *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        wk->head = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->prev = s->next = NULL;
}

static bool linked(const fakeapi__sleeper *s)
{
    return s->armed || s->watch_fd >= 0;
}

/* Disarm under the lock; unlink when nothing else keeps it known. */
static void disarm_locked(fakeapi__waker *wk, fakeapi__sleeper *s)
{
    s->armed = false;
    s->held = false;
    if (!linked(s))
        unlink_locked(wk, s);
}

static void suspend_conn(const fakeapi__waker *wk, const fakeapi__sleeper *s)
{
    (s->ops ? s->ops->suspend : wk->suspend)(s->conn);
}

static void resume_conn(const fakeapi__waker *wk, const fakeapi__sleeper *s)
{
    (s->ops ? s->ops->resume : wk->resume)(s->conn);
}

/* A connection to resume, and how. */
typedef struct due_conn {
    void (*resume)(void *conn);
    void *conn;
} due_conn;

/* Collected under the lock, resumed after it: the waker's wake-ups. */
typedef struct due_list {
    due_conn *conn;
    size_t n, cap;
} due_list;

static void due_add(due_list *d, const fakeapi__waker *wk, const fakeapi__sleeper *s)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 16;
        due_conn *p = realloc(d->conn, cap * sizeof *p);
        if (!p)
            return; /* retried: the sleeper stays armed (see fire_due) */
        d->conn = p;
        d->cap = cap;
    }
    d->conn[d->n++] = (due_conn){s->ops ? s->ops->resume : wk->resume, s->conn};
}

static void due_resume(due_list *d)
{
    for (size_t i = 0; i < d->n; i++)
        d->conn[i].resume(d->conn[i].conn);
}

/* Disarm the due sleepers into d; returns the earliest remaining deadline. */
static int64_t fire_due(fakeapi__waker *wk, int64_t now, due_list *d)
{
    int64_t next = INT64_MAX;
    fakeapi__sleeper *s = wk->head;
    while (s) {
        fakeapi__sleeper *after = s->next;
        if (s->armed && (wk->stopping || (s->until <= now && !s->held))) {
            size_t before = d->n;
            due_add(d, wk, s);
            if (d->n > before)
                disarm_locked(wk, s);
            else
                next = now; /* out of memory: try again soon */
        } else if (s->armed && !s->held && s->until < next) {
            next = s->until;
        }
        s = after;
    }
    return next;
}

static void hung_up_locked(fakeapi__waker *wk, uint64_t id, due_list *d)
{
    for (fakeapi__sleeper *s = wk->head; s; s = s->next) {
        if (s->id != id)
            continue;
        atomic_store(&s->hung_up, true);
        if (s->armed) {
            size_t before = d->n;
            due_add(d, wk, s);
            if (d->n > before)
                disarm_locked(wk, s);
        }
        return;
    }
}

static void *waker_main(void *ud)
{
    fakeapi__waker *wk = ud;
    due_list due = {0};
    struct epoll_event evs[WAKER_EVENTS];
    pthread_mutex_lock(&wk->mu);
    for (;;) {
        int64_t now = wk->now(wk->now_ud);
        due.n = 0;
        int64_t next = fire_due(wk, now, &due);
        bool stop = wk->stopping;
        wk->planned = next;
        pthread_mutex_unlock(&wk->mu);
        due_resume(&due);
        if (stop)
            break;
        int64_t left_ms = next == INT64_MAX ? WAKER_MAX_WAIT_MS : (next - now + 999999) / 1000000;
        if (left_ms > WAKER_MAX_WAIT_MS)
            left_ms = WAKER_MAX_WAIT_MS;
        if (left_ms < 0)
            left_ms = 0;
        int n = epoll_wait(wk->epfd, evs, WAKER_EVENTS, (int)left_ms);
        pthread_mutex_lock(&wk->mu);
        due.n = 0;
        for (int i = 0; i < n; i++) {
            if (evs[i].data.u64 == KICK_ID) {
                uint64_t count;
                ssize_t r = read(wk->kickfd, &count, sizeof count);
                (void)r;
            } else {
                hung_up_locked(wk, evs[i].data.u64, &due);
            }
        }
        if (due.n) {
            pthread_mutex_unlock(&wk->mu);
            due_resume(&due);
            pthread_mutex_lock(&wk->mu);
        }
    }
    free(due.conn);
    return NULL;
}

fakeapi__waker *fakeapi__waker_new(int64_t (*now)(void *), void *now_ud,
                                   void (*suspend)(void *conn), void (*resume)(void *conn))
{
    fakeapi__waker *wk = calloc(1, sizeof *wk);
    if (!wk)
        return NULL;
    pthread_mutex_init(&wk->mu, NULL);
    wk->now = now;
    wk->now_ud = now_ud;
    wk->suspend = suspend;
    wk->resume = resume;
    wk->planned = INT64_MAX;
    wk->next_id = KICK_ID;
    wk->epfd = epoll_create1(EPOLL_CLOEXEC);
    wk->kickfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = KICK_ID};
    if (wk->epfd < 0 || wk->kickfd < 0 || epoll_ctl(wk->epfd, EPOLL_CTL_ADD, wk->kickfd, &ev) < 0 ||
        pthread_create(&wk->thread, NULL, waker_main, wk) != 0) {
        fakeapi__waker_free(wk);
        return NULL;
    }
    wk->started = true;
    return wk;
}

void fakeapi__waker_stop(fakeapi__waker *wk)
{
    if (!wk)
        return;
    pthread_mutex_lock(&wk->mu);
    wk->stopping = true;
    pthread_mutex_unlock(&wk->mu);
    kick(wk);
    if (wk->started)
        pthread_join(wk->thread, NULL);
    wk->started = false;
}

void fakeapi__waker_free(fakeapi__waker *wk)
{
    if (!wk)
        return;
    fakeapi__waker_stop(wk);
    if (wk->epfd >= 0)
        close(wk->epfd);
    if (wk->kickfd >= 0)
        close(wk->kickfd);
    pthread_mutex_destroy(&wk->mu);
    free(wk);
}

void fakeapi__sleeper_init(fakeapi__waker *wk, fakeapi__sleeper *s, void *conn,
                           const fakeapi__conn_ops *ops, int fd)
{
    s->conn = conn;
    s->ops = ops;
    s->until = INT64_MAX;
    s->armed = false;
    s->held = false;
    atomic_init(&s->hung_up, false);
    atomic_init(&s->dropped, false);
    s->watch_fd = -1;
    s->prev = s->next = NULL;
    pthread_mutex_lock(&wk->mu);
    s->id = ++wk->next_id;
    /* Our own descriptor for the socket: libmicrohttpd may close its own
     * before we are told, and a number reused by the next connection must
     * not be taken out of our set by mistake. */
    int dup_fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
    if (dup_fd >= 0) {
        struct epoll_event ev = {.events = EPOLLRDHUP | EPOLLET, .data.u64 = s->id};
        if (epoll_ctl(wk->epfd, EPOLL_CTL_ADD, dup_fd, &ev) == 0) {
            s->watch_fd = dup_fd;
            link_locked(wk, s);
        } else {
            close(dup_fd);
        }
    }
    pthread_mutex_unlock(&wk->mu);
}

void fakeapi__sleeper_deinit(fakeapi__waker *wk, fakeapi__sleeper *s)
{
    pthread_mutex_lock(&wk->mu);
    bool was_linked = linked(s);
    if (s->watch_fd >= 0) {
        epoll_ctl(wk->epfd, EPOLL_CTL_DEL, s->watch_fd, NULL);
        close(s->watch_fd);
        s->watch_fd = -1;
    }
    s->armed = false;
    if (was_linked)
        unlink_locked(wk, s);
    pthread_mutex_unlock(&wk->mu);
}

int fakeapi__waker_arm(fakeapi__waker *wk, fakeapi__sleeper *s)
{
    suspend_conn(wk, s);
    pthread_mutex_lock(&wk->mu);
    if (wk->stopping || atomic_load(&s->hung_up)) {
        pthread_mutex_unlock(&wk->mu);
        resume_conn(wk, s);
        return FAKEAPI__RESUMED;
    }
    bool was_linked = linked(s);
    s->armed = true;
    s->held = s->holdable && wk->hold;
    if (!was_linked)
        link_locked(wk, s);
    bool earlier = !s->held && s->until < wk->planned;
    if (earlier)
        wk->planned = s->until;
    int rc = s->held ? FAKEAPI__HELD : FAKEAPI__ARMED;
    pthread_mutex_unlock(&wk->mu);
    if (earlier)
        kick(wk);
    return rc;
}

void fakeapi__waker_hold(fakeapi__waker *wk, bool hold)
{
    pthread_mutex_lock(&wk->mu);
    wk->hold = hold;
    bool any = false;
    for (fakeapi__sleeper *s = wk->head; s && !hold; s = s->next) {
        if (s->held) {
            s->held = false;
            s->until = 0; /* due now: the waker's thread resumes it */
            any = true;
        }
    }
    if (any)
        wk->planned = 0;
    pthread_mutex_unlock(&wk->mu);
    if (any)
        kick(wk);
}

int fakeapi__waker_release(fakeapi__waker *wk, uint64_t id, bool drop)
{
    pthread_mutex_lock(&wk->mu);
    fakeapi__sleeper *s = wk->head;
    while (s && !(s->held && s->id == id))
        s = s->next;
    if (s) {
        atomic_store(&s->dropped, drop);
        disarm_locked(wk, s);
    }
    pthread_mutex_unlock(&wk->mu);
    /* Disarmed by us: nobody else resumes it, and until we do the
     * connection cannot end, so s is still valid here. */
    if (s)
        resume_conn(wk, s);
    return s ? 0 : -1;
}

bool fakeapi__waker_wake(fakeapi__waker *wk, fakeapi__sleeper *s)
{
    pthread_mutex_lock(&wk->mu);
    bool was = s->armed;
    if (was)
        disarm_locked(wk, s);
    pthread_mutex_unlock(&wk->mu);
    /* Disarmed by us: nobody else resumes it, and until we do the
     * connection cannot end, so s is still valid here. */
    if (was)
        resume_conn(wk, s);
    return was;
}

void fakeapi__waker_kick(fakeapi__waker *wk)
{
    if (!wk)
        return;
    /* Only when a deadline has come: the thread sleeps towards planned (at
     * most the earliest one), and a virtual clock that moves at every
     * scheduler step would otherwise wake it for nothing each time. */
    pthread_mutex_lock(&wk->mu);
    bool due = wk->planned <= wk->now(wk->now_ud);
    pthread_mutex_unlock(&wk->mu);
    if (due)
        kick(wk);
}

int64_t fakeapi__waker_next(fakeapi__waker *wk)
{
    int64_t next = INT64_MAX;
    pthread_mutex_lock(&wk->mu);
    for (fakeapi__sleeper *s = wk->head; s; s = s->next)
        if (s->armed && !s->held && s->reported && s->until < next)
            next = s->until;
    pthread_mutex_unlock(&wk->mu);
    return next;
}
