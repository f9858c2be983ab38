/*
 * health.c - health and readiness checks: the named sets a manager keeps
 * (healthz, readyz) and the answers controller-runtime's healthz handler
 * gives for them (see health_int.h).
 *
 * A set's lock guards only its list; checks run after it is released, on a
 * snapshot (names live as long as the set), so a slow check never holds up
 * registration.
 */
#include "health_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CHECKS 256

void ctrl__checks_init(ctrl__checks *c)
{
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
}

void ctrl__checks_deinit(ctrl__checks *c)
{
    for (size_t i = 0; i < c->n; i++)
        free((char *)c->v[i].name);
    free(c->v);
    c->v = NULL;
    c->n = c->cap = 0;
    pthread_mutex_destroy(&c->mu);
}

int ctrl__checks_add(ctrl__checks *c, const char *name, ctrl_check_fn fn, void *user)
{
    if (!c || !name || !*name || strchr(name, '/') || !fn)
        return CTRL_ERR_ARG;
    char *copy = strdup(name);
    if (!copy)
        return CTRL_ERR_NOMEM;
    int rc = 0;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < c->n && rc == 0; i++)
        if (strcmp(c->v[i].name, name) == 0)
            rc = CTRL_ERR_ARG; /* controller-runtime: a check of that name exists */
    if (rc == 0 && c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 8;
        ctrl__check *v = c->n >= MAX_CHECKS ? NULL : realloc(c->v, cap * sizeof *v);
        if (v) {
            c->v = v;
            c->cap = cap;
        } else {
            rc = c->n >= MAX_CHECKS ? CTRL_ERR_ARG : CTRL_ERR_NOMEM;
        }
    }
    if (rc == 0)
        c->v[c->n++] = (ctrl__check){copy, fn, user};
    pthread_mutex_unlock(&c->mu);
    if (rc < 0)
        free(copy);
    return rc;
}

void ctrl__checks_answer(ctrl__checks *c, const char *sub, bool verbose, const char *exclude,
                         ctrl__http_reply *out)
{
    pthread_mutex_lock(&c->mu);
    size_t n = c->n;
    ctrl__check *v = malloc((n ? n : 1) * sizeof *v);
    if (v && n)
        memcpy(v, c->v, n * sizeof *v);
    pthread_mutex_unlock(&c->mu);
    if (!v) {
        out->status = 500;
        return;
    }
    ctrl__health_answer(v, n, sub, verbose, exclude, out);
    free(v);
}

typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || b->len + (size_t)n + 1 > (1u << 20))
        return; /* a health answer has no business being a megabyte */
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = (b->len + (size_t)n + 1) * 2;
        char *p = realloc(b->p, cap);
        if (!p)
            return;
        b->p = p;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static int ping(void *user, char *buf, size_t len)
{
    (void)user, (void)buf, (void)len;
    return 0;
}

static int cmp_check(const void *a, const void *b)
{
    return strcmp(((const ctrl__check *)a)->name, ((const ctrl__check *)b)->name);
}

/* Run one check; on failure its message (or a generic one) in msg. */
static bool run_check(const ctrl__check *c, char *msg, size_t len)
{
    msg[0] = '\0';
    int rc = c->fn(c->user, msg, len);
    if (rc != 0 && !msg[0])
        snprintf(msg, len, "check failed (%d)", rc);
    return rc == 0;
}

void ctrl__health_answer(const ctrl__check *checks, size_t n, const char *sub, bool verbose,
                         const char *exclude, ctrl__http_reply *out)
{
    static const ctrl__check ping_check = {"ping", ping, NULL};
    if (n == 0) {
        checks = &ping_check;
        n = 1;
    }
    char msg[512];
    sbuf b = {0};
    if (sub && sub[0] == '/' && sub[1]) {
        const char *name = sub + 1;
        for (size_t i = 0; i < n; i++) {
            if (strcmp(checks[i].name, name) != 0)
                continue;
            if (run_check(&checks[i], msg, sizeof msg)) {
                out->status = 200;
                sb_printf(&b, "ok");
            } else {
                out->status = 500;
                sb_printf(&b, "internal server error: %s\n", msg);
            }
            out->body = b.p;
            return;
        }
        out->status = 404;
        out->body = strdup("404 page not found\n");
        return;
    }
    ctrl__check *sorted = malloc(n * sizeof *sorted);
    if (!sorted) {
        out->status = 500;
        return;
    }
    memcpy(sorted, checks, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_check);
    bool failed = false, excluded = false;
    for (size_t i = 0; i < n; i++) {
        if (exclude && strcmp(sorted[i].name, exclude) == 0) {
            excluded = true;
            continue;
        }
        if (run_check(&sorted[i], msg, sizeof msg)) {
            sb_printf(&b, "[+]%s ok\n", sorted[i].name);
        } else {
            failed = true;
            /* controller-runtime withholds the reason unless asked for it. */
            sb_printf(&b, "[-]%s failed: %s\n", sorted[i].name, verbose ? msg : "reason withheld");
        }
    }
    free(sorted);
    if (exclude && *exclude && !excluded)
        sb_printf(&b, "warn: some health checks cannot be excluded: no matches for %s\n", exclude);
    if (failed) {
        out->status = 500;
        sb_printf(&b, "healthz check failed\n");
    } else if (!verbose) {
        out->status = 200;
        free(b.p);
        out->body = strdup("ok");
        return;
    } else {
        out->status = 200;
        sb_printf(&b, "healthz check passed\n");
    }
    out->body = b.p;
}
