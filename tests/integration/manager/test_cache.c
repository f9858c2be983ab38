/*
 * test_cache.c - ctrl/cache.h against an in-process fakeapi: initial sync, handler events
 * in order, a watch dropped mid-stream, a relist after compaction with
 * final-state-unknown deletes, and 410 on the relist too.
 * Shared fixture: tests/support/cachetest.h.
 */
#include "cachetest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(cache, .init = setup, .fini = teardown, .timeout = 60);
TestSuite(cache_custom, .fini = teardown, .timeout = 60);

Test(cache, initial_sync)
{
    char rvs[40][32];
    for (int i = 0; i < 40; i++) {
        char name[32];
        snprintf(name, sizeof name, "cm-%02d", i);
        put_cm("default", name, "\"app\":\"x\"", "v");
        snprintf(rvs[i], sizeof rvs[i], "%s", rev());
    }
    evlog *l = new_log();
    ctrl_informer *inf = cm_informer(NULL, NULL, l);
    cr_assert_not(ctrl_informer_has_synced(inf));
    cr_assert(ctrl_cache_has(cache, "v1", "ConfigMap"));
    cr_assert_not(ctrl_cache_has(cache, "v1", "Secret"));
    char rv[32];
    ctrl_informer_last_rv(inf, rv, sizeof rv);
    cr_assert_str_eq(rv, "");
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_start(cache), CTRL_ERR_ARG);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    cr_assert(ctrl_informer_has_synced(inf));
    ctrl_informer_stats st;
    ctrl_informer_stats_get(inf, &st);
    cr_assert_eq(st.objects, 40);
    ctrl_informer_last_rv(inf, rv, sizeof rv);
    cr_assert_str_eq(rv, rev());
    /* Every add is initial and in (namespace, name) order. */
    pthread_mutex_lock(&l->mu);
    cr_assert_eq(l->n, 40);
    for (int i = 0; i < 40; i++) {
        char want[128];
        snprintf(want, sizeof want, "ADD default/cm-%02d %s i", i, rvs[i]);
        cr_assert_str_eq(l->lines[i], want);
    }
    pthread_mutex_unlock(&l->mu);
    json_t *got = NULL;
    cr_assert_eq(ctrl_informer_get(inf, "default", "cm-07", &got), 0);
    cr_assert_str_eq(meta(got, "name"), "cm-07");
    json_decref(got);
    cr_assert_eq(ctrl_informer_get(inf, "default", "nope", &got), CTRL_ERR_NOT_FOUND);
    ctrl_cache_stop(cache);
    ctrl_cache_stop(cache);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, CTRL_SECOND), CTRL_ERR_CANCELLED);
    free(l);
}

Test(cache, events_in_order)
{
    evlog *l = new_log();
    cm_informer(&(ctrl_cache_options){.no_watch_list = true}, NULL, l);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    char want[6][512], arv[32], brv[32];
    put_cm("default", "a", NULL, "1");
    snprintf(arv, sizeof arv, "%s", rev());
    snprintf(want[0], sizeof want[0], "ADD default/a %s -", arv);
    put_cm("default", "a", NULL, "2");
    snprintf(want[1], sizeof want[1], "UPD default/a %s %s", arv, rev());
    put_cm("default", "b", NULL, "1");
    snprintf(brv, sizeof brv, "%s", rev());
    snprintf(want[2], sizeof want[2], "ADD default/b %s -", brv);
    del_cm("default", "a");
    snprintf(want[3], sizeof want[3], "DEL default/a %s -", rev());
    put_cm("default", "b", NULL, "2");
    snprintf(want[4], sizeof want[4], "UPD default/b %s %s", brv, rev());
    del_cm("default", "b");
    snprintf(want[5], sizeof want[5], "DEL default/b %s -", rev());
    const char *w[6] = {want[0], want[1], want[2], want[3], want[4], want[5]};
    expect_log(l, w, 6);
    ctrl_informer_stats st;
    ctrl_informer *inf = NULL;
    cr_assert_eq(ctrl_cache_informer(cache, "v1", "ConfigMap", NULL, &inf, NULL), 0);
    ctrl_informer_stats_get(inf, &st);
    cr_assert_eq(st.objects, 0);
    cr_assert_eq(st.events, 6);
    cr_assert_eq(st.lists, 1);
    free(l);
}

/* The server ends every watch after two events: the informer resumes from
 * its last resourceVersion each time, losing and repeating nothing. */
Test(cache, watch_dropped_resumes)
{
    fakeapi_error fe = {0};
    cr_assert_eq(fakeapi_fault_add(api,
                                   &(fakeapi_fault){.verb = "watch",
                                                    .resource = "configmaps",
                                                    .action = FAKEAPI_FAULT_WATCH_CLOSE,
                                                    .count = 2},
                                   NULL, &fe),
                 0, "%s", fe.message);
    evlog *l = new_log();
    ctrl_informer *inf =
        cm_informer(&(ctrl_cache_options){.no_watch_list = true, .seed = 7}, NULL, l);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    static char want[60][512];
    const char *w[60];
    char last[8][32] = {{0}};
    size_t n = 0;
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < 5; i++) {
            char name[16];
            snprintf(name, sizeof name, "o%d", i);
            char val[16];
            snprintf(val, sizeof val, "r%d", round);
            put_cm("default", name, NULL, val);
            if (round == 0)
                snprintf(want[n], sizeof want[n], "ADD default/%s %s -", name, rev());
            else
                snprintf(want[n], sizeof want[n], "UPD default/%s %s %s", name, last[i], rev());
            snprintf(last[i], sizeof last[i], "%s", rev());
            w[n] = want[n];
            n++;
        }
    }
    for (int i = 0; i < 5; i += 2) {
        char name[16];
        snprintf(name, sizeof name, "o%d", i);
        del_cm("default", name);
        snprintf(want[n], sizeof want[n], "DEL default/%s %s -", name, rev());
        w[n] = want[n];
        n++;
    }
    expect_log(l, w, n);
    ctrl_informer_stats st;
    ctrl_informer_stats_get(inf, &st);
    cr_assert_eq(st.lists, 1, "no relist: %lu lists", st.lists);
    cr_assert_eq(st.relists, 0);
    cr_assert_geq(st.watches, n / 2, "watches %lu", st.watches);
    cr_assert_eq(st.objects, 2);
    char rv[32];
    ctrl_informer_last_rv(inf, rv, sizeof rv);
    cr_assert_str_eq(rv, rev());
    free(l);
}

/* Hooks that block the informer on the event of one key until released. */
typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const char *key;
    bool armed, held, released;
    unsigned long before, after, before_keyed;
    char last_actor[64], last_kind[16];
} gate;

static void gate_before(void *ud, const char *kind, const char *actor, const char *key)
{
    gate *g = ud;
    pthread_mutex_lock(&g->mu);
    g->before++;
    if (*key)
        g->before_keyed++;
    snprintf(g->last_actor, sizeof g->last_actor, "%s", actor);
    snprintf(g->last_kind, sizeof g->last_kind, "%s", kind);
    if (g->armed && g->key && !strcmp(key, g->key)) {
        g->armed = false;
        g->held = true;
        pthread_cond_broadcast(&g->cv);
        while (!g->released)
            pthread_cond_wait(&g->cv, &g->mu);
    }
    pthread_mutex_unlock(&g->mu);
}

static void gate_after(void *ud, const char *kind, const char *actor, const char *key)
{
    gate *g = ud;
    pthread_mutex_lock(&g->mu);
    g->after++;
    pthread_mutex_unlock(&g->mu);
}

/*
 * While the informer is held on an event, objects are deleted and the
 * history compacted; the watch closes after that event (a fault), its
 * resume gets 410, and the relist reports the deletions as final state
 * unknown.
 */
Test(cache, compaction_relist_reports_deletes)
{
    fakeapi_error fe = {0};
    cr_assert_eq(fakeapi_fault_add(api,
                                   &(fakeapi_fault){.verb = "watch",
                                                    .resource = "configmaps",
                                                    .nth = 1,
                                                    .action = FAKEAPI_FAULT_WATCH_CLOSE,
                                                    .count = 1},
                                   NULL, &fe),
                 0, "%s", fe.message);
    put_cm("default", "keep", NULL, "1");
    put_cm("default", "gone1", NULL, "1");
    char gone1_rv[32];
    snprintf(gone1_rv, sizeof gone1_rv, "%s", rev());
    put_cm("default", "gone2", NULL, "1");
    char gone2_rv[32];
    snprintf(gone2_rv, sizeof gone2_rv, "%s", rev());
    static gate g = {
        .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .key = "default/trigger"};
    ctrl_hooks hooks = {.before = gate_before, .after = gate_after, .ud = &g};
    evlog *l = new_log();
    ctrl_informer *inf =
        cm_informer(&(ctrl_cache_options){.no_watch_list = true, .hooks = &hooks}, NULL, l);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    cr_assert_eq(log_len(l), 3);
    pthread_mutex_lock(&g.mu);
    g.armed = true;
    pthread_mutex_unlock(&g.mu);
    put_cm("default", "trigger", NULL, "1");
    char trig_rv[32];
    snprintf(trig_rv, sizeof trig_rv, "%s", rev());
    pthread_mutex_lock(&g.mu);
    while (!g.held)
        pthread_cond_wait(&g.cv, &g.mu);
    pthread_mutex_unlock(&g.mu);
    /* The informer is inside the trigger's event: change things behind it. */
    del_cm("default", "gone1");
    del_cm("default", "gone2");
    put_cm("default", "fresh", NULL, "1");
    char fresh_rv[32];
    snprintf(fresh_rv, sizeof fresh_rv, "%s", rev());
    cr_assert_eq(fakeapi_compact(api, 0), 0);
    pthread_mutex_lock(&g.mu);
    g.released = true;
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
    WAIT_FOR(log_len(l) >= 7, 10000);
    usleep(50000);
    pthread_mutex_lock(&l->mu);
    cr_assert_eq(l->n, 7);
    char want[128];
    snprintf(want, sizeof want, "ADD default/trigger %s -", trig_rv);
    cr_assert_str_eq(l->lines[3], want);
    snprintf(want, sizeof want, "ADD default/fresh %s -", fresh_rv);
    cr_assert_str_eq(l->lines[4], want);
    snprintf(want, sizeof want, "DEL default/gone1 %s u", gone1_rv);
    cr_assert_str_eq(l->lines[5], want);
    snprintf(want, sizeof want, "DEL default/gone2 %s u", gone2_rv);
    cr_assert_str_eq(l->lines[6], want);
    pthread_mutex_unlock(&l->mu);
    ctrl_informer_stats st;
    ctrl_informer_stats_get(inf, &st);
    cr_assert_eq(st.relists, 1);
    cr_assert_eq(st.lists, 2);
    cr_assert_eq(st.objects, 3);
    /* Hooks saw every dispatched event. */
    pthread_mutex_lock(&g.mu);
    cr_assert_eq(g.before_keyed, 7);
    cr_assert_eq(g.after, g.before);
    cr_assert_str_eq(g.last_kind, "event");
    cr_assert_str_eq(g.last_actor, "v1/ConfigMap");
    pthread_mutex_unlock(&g.mu);
    free(l);
}

/* The watch is told 410; so is the relist from the last resourceVersion;
 * the informer then lists the newest state. */
Test(cache, fresh_list_when_relist_is_gone_too)
{
    fakeapi_error fe = {0};
    cr_assert_eq(fakeapi_fault_add(api,
                                   &(fakeapi_fault){.verb = "watch",
                                                    .resource = "configmaps",
                                                    .nth = 1,
                                                    .action = FAKEAPI_FAULT_WATCH_CLOSE,
                                                    .count = 1},
                                   NULL, &fe),
                 0);
    cr_assert_eq(fakeapi_fault_add(api,
                                   &(fakeapi_fault){.verb = "watch",
                                                    .resource = "configmaps",
                                                    .nth = 2,
                                                    .action = FAKEAPI_FAULT_WATCH_EXPIRE},
                                   NULL, &fe),
                 0);
    uint64_t list_rule;
    cr_assert_eq(fakeapi_fault_add(api,
                                   &(fakeapi_fault){.verb = "list",
                                                    .resource = "configmaps",
                                                    .nth = 2,
                                                    .action = FAKEAPI_FAULT_ERROR,
                                                    .status = 410,
                                                    .reason = "Expired"},
                                   &list_rule, &fe),
                 0);
    put_cm("default", "before", NULL, "1");
    evlog *l = new_log();
    ctrl_informer *inf = cm_informer(&(ctrl_cache_options){.no_watch_list = true}, NULL, l);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    put_cm("default", "x", NULL, "1");
    WAIT_FOR(stat_of(inf, 'l') >= 3 && stat_of(inf, 'w') >= 3, 10000);
    ctrl_informer_stats st;
    ctrl_informer_stats_get(inf, &st);
    cr_assert_eq(st.relists, 1);
    cr_assert_eq(st.lists, 3);
    cr_assert_eq(st.objects, 2);
    unsigned long matched = 0, fired = 0;
    cr_assert_eq(fakeapi_fault_hits(api, list_rule, &matched, &fired), 0);
    cr_assert_eq(fired, 1);
    free(l);
}
