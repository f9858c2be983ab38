/*
 * batchtest.h - the fixture of the Job, CronJob, StatefulSet and DaemonSet
 * integration tests: an in-process fakeapi and a cluster running only the
 * controllers under test, both on one clock that runs at real speed but
 * can be moved forward by hand (bt_advance), so deadlines, TTLs and cron
 * schedules are reached without waiting.
 *
 * Pods never run here (no kubelet): the tests move them by hand with
 * bt_pod_phase. Every wait is a poll with a bound; nothing asserts on
 * timing. KH_TEST_LOG=1 shows the cluster's log lines.
 *
 * Threads: the test's thread only (the clock callbacks are thread-safe).
 */
#ifndef BATCHTEST_H
#define BATCHTEST_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "ctrl/client.h"
#include "fakeapi/fakeapi.h"
#include "kc/cluster.h"

extern fakeapi_server *bt_api;
extern kc_cluster *bt_cluster;
extern ctrl_client *bt_client;

/* Start fakeapi and a cluster from the document (JSON text) with the clock
 * at start_wall_ns (0: real time). Asserts on failure. */
void bt_start(const char *doc, int64_t start_wall_ns);
/* Stop both (safe when not started). */
void bt_stop(void);
/* Move the shared clock forward. */
void bt_advance(int64_t ns);
/* The shared clock's wall time. */
int64_t bt_now(void);

/* Apply a manifest (YAML or JSON); asserts. */
void bt_apply(const char *text);
/* The object, or NULL when it does not exist (a new reference). */
json_t *bt_get(const char *api_version, const char *kind, const char *ns, const char *name);
/* Objects of a kind in ns matching selector (NULL: all), sorted by name. */
json_t *bt_list(const char *api_version, const char *kind, const char *ns, const char *selector);
/* Merge-patch an object's status; asserts. */
void bt_patch_status(const char *api_version, const char *kind, const char *ns, const char *name,
                     const char *patch_json);
/* Merge-patch an object; asserts. */
void bt_patch(const char *api_version, const char *kind, const char *ns, const char *name,
              const char *patch_json);
/* Set a pod's phase, with its Ready condition True when ready. */
void bt_pod_phase(const char *ns, const char *name, const char *phase, bool ready);

/* Poll expr every 5 ms until it holds, for at most ms milliseconds of real
 * time; then assert that it did (expr is not evaluated again). */
#define BT_WAIT(expr, ms, ...)                                                                     \
    do {                                                                                           \
        int64_t bt_deadline_ = bt_mono_ms() + (ms);                                                \
        bool bt_ok_;                                                                               \
        while (!(bt_ok_ = (expr)) && bt_mono_ms() < bt_deadline_)                                  \
            bt_nap();                                                                              \
        cr_assert(bt_ok_, __VA_ARGS__);                                                            \
    } while (0)

int64_t bt_mono_ms(void);
void bt_nap(void);

/* A string member by dotted path, or "" (never NULL). */
const char *bt_str(const json_t *obj, const char *path);
/* An integer member by dotted path, or def. */
long long bt_int(const json_t *obj, const char *path, long long def);
/* The condition of that type in obj's status (borrowed), or NULL. */
json_t *bt_cond(const json_t *obj, const char *type);

#endif
