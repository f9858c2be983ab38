/*
 * cachetest.h - what the cache tests (test_cache*.c) share: one fakeapi in
 * the test process and a client to it (setup/teardown, or start_api with
 * options), objects written in-process, a log of handler events (evlog)
 * and the checks on it. Criterion runs each test in a process of its own,
 * so the globals are per test. Defined in cachetest.c.
 */
#ifndef KH_TEST_CACHETEST_H
#define KH_TEST_CACHETEST_H

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "ctrl/cache.h"
#include "ctrl/client.h"
#include "fakeapi/fakeapi.h"

extern fakeapi_server *api;
extern ctrl_client *client;
extern ctrl_cache *cache; /* made by cm_informer, freed by teardown */

/* Start the server (o may be NULL) and a client (co may be NULL; its
 * User-Agent defaults to "test-cache"). */
void start_api(const fakeapi_options *o, const ctrl_client_options *co);
/* Criterion init and fini: start_api(NULL, NULL); free the cache, client, server. */
void setup(void);
void teardown(void);

int64_t mono_ms(void);

/* Poll cond (evaluated once per round, never again after it held). */
#define WAIT_FOR(cond, ms)                                                                         \
    do {                                                                                           \
        int64_t until_ = mono_ms() + (ms);                                                         \
        bool ok_;                                                                                  \
        while (!(ok_ = (cond)) && mono_ms() < until_)                                              \
            usleep(2000);                                                                          \
        cr_assert(ok_, "timed out waiting for %s", #cond);                                         \
    } while (0)

/* Writes in-process (fakeapi_apply/delete), asserting they succeed. */
void apply_json(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void put_cm(const char *ns, const char *name, const char *labels, const char *value);
void put_ns(const char *name);
void del_cm(const char *ns, const char *name);
/* metadata.f of obj (borrowed), or NULL. */
const char *meta(const json_t *obj, const char *f);

/* The handlers' log: one line per event, "ADD ns/name rv i", "UPD ns/name
 * oldrv newrv", "DEL ns/name rv u". */
typedef struct evlog {
    pthread_mutex_t mu;
    char lines[4096][600];
    size_t n;
    size_t same_obj_updates; /* updates with old == new (resync) */
} evlog;

evlog *new_log(void);
void log_add(evlog *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
size_t log_len(evlog *l);
/* The handlers that write the log (user = the evlog). */
void on_add(const json_t *obj, bool initial, void *user);
void on_update(const json_t *old, const json_t *obj, void *user);
void on_delete(const json_t *obj, bool unknown, void *user);
/* Wait for n lines, then assert the log is exactly want. */
void expect_log(evlog *l, const char *const *want, size_t n);

/* One counter of an informer's stats: l(ists), w(atches), o(bjects). */
unsigned long stat_of(ctrl_informer *inf, char which);
/* True once the cache holds another version than was under ns/name. */
bool replaced(ctrl_informer *inf, const char *ns, const char *name, const json_t *was);
/* "ns/name" of o into buf. */
void key_of(const json_t *o, char *buf, size_t len);
/* A cache (in the global cache) with a ConfigMap informer, its handlers
 * logging to l when l is non-NULL. */
ctrl_informer *cm_informer(const ctrl_cache_options *o, const ctrl_informer_options *io, evlog *l);
/* The server's revision as text (a per-thread buffer). */
char *rev(void);

#endif
