/*
 * test_podfacts.c - per owner pod facts kept from events: counts follow
 * adds, updates, owner changes and deletes, and agree with a count made
 * from scratch over the same pods.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "podfacts.h"
#include "podutil.h"

static json_t *js(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    cr_assert_not_null(v, "%s: %s", text, e.text);
    return v;
}

/* A pod named name, controlled by owner (NULL: none), labelled app=app
 * (and tier=web when web), in phase, Ready or not since t. */
static json_t *pod(const char *name, const char *owner, const char *app, bool web,
                   const char *phase, bool ready, const char *t)
{
    json_t *p =
        json_pack("{s:{s:s, s:s, s:{s:s}}, s:{s:s, s:[{s:s, s:s, s:s}]}}", "metadata", "name", name,
                  "namespace", "ns", "labels", "app", app, "status", "phase", phase, "conditions",
                  "type", "Ready", "status", ready ? "True" : "False", "lastTransitionTime", t);
    cr_assert_not_null(p);
    if (web)
        json_object_set_new(json_object_get(json_object_get(p, "metadata"), "labels"), "tier",
                            json_string("web"));
    if (owner)
        json_object_set_new(json_object_get(p, "metadata"), "ownerReferences",
                            json_pack("[{s:s, s:s, s:s, s:s, s:b}]", "apiVersion", "apps/v1",
                                      "kind", "ReplicaSet", "name", owner, "uid", owner,
                                      "controller", 1));
    return p;
}

static kc_podfacts_counts count(kc_podfacts *f, const char *uid, const json_t *sel,
                                const json_t *tl)
{
    kc_podfacts_counts c;
    cr_assert_eq(kc__podfacts_count(f, uid, sel, tl, &c, NULL), 0);
    return c;
}

static void put(kc_podfacts *f, json_t *p)
{
    cr_assert_eq(kc__podfacts_put(f, p), 0);
    json_decref(p);
}

#define T0 "2026-01-01T00:00:00Z"

Test(cluster_podfacts, counts_follow_events)
{
    kc_podfacts *f = kc__podfacts_new();
    cr_assert_not_null(f);
    json_t *sel = js("{\"matchLabels\": {\"app\": \"a\"}}");
    json_t *tl = js("{\"app\": \"a\", \"tier\": \"web\"}");

    kc_podfacts_counts c = count(f, "rs1", sel, tl);
    cr_assert_eq(c.matching, 0);

    put(f, pod("p1", "rs1", "a", true, "Running", true, T0));
    put(f, pod("p2", "rs1", "a", false, "Pending", false, T0));
    put(f, pod("p3", "rs1", "b", false, "Running", true, T0));   /* selector does not match */
    put(f, pod("p4", "rs1", "a", true, "Succeeded", false, T0)); /* not active */
    put(f, pod("p5", "rs2", "a", true, "Running", true, T0));    /* another owner's */
    put(f, pod("p6", NULL, "a", true, "Running", true, T0));     /* an orphan */
    c = count(f, "rs1", sel, tl);
    cr_assert_eq(c.matching, 2);
    cr_assert_eq(c.not_matching, 1);
    cr_assert_eq(c.labelled, 1);
    cr_assert_eq(c.ready, 1);
    c = count(f, "rs2", sel, tl);
    cr_assert_eq(c.matching, 1);

    /* p2 becomes ready and labelled; p1 is being deleted (not active). */
    put(f, pod("p2", "rs1", "a", true, "Running", true, T0));
    json_t *p1 = pod("p1", "rs1", "a", true, "Running", true, T0);
    json_object_set_new(json_object_get(p1, "metadata"), "deletionTimestamp", json_string(T0));
    put(f, p1);
    c = count(f, "rs1", sel, tl);
    cr_assert_eq(c.matching, 1);
    cr_assert_eq(c.labelled, 1);
    cr_assert_eq(c.ready, 1);

    /* p3 released (no controller), p5 moves from rs2 to rs1. */
    put(f, pod("p3", NULL, "b", false, "Running", true, T0));
    put(f, pod("p5", "rs1", "a", true, "Running", true, T0));
    c = count(f, "rs1", sel, tl);
    cr_assert_eq(c.matching, 2);
    cr_assert_eq(c.not_matching, 0);
    cr_assert_eq(c.ready, 2);
    c = count(f, "rs2", sel, tl);
    cr_assert_eq(c.matching, 0);

    /* Another selector: matched again. */
    json_t *sel_b = js("{\"matchExpressions\": [{\"key\": \"app\", \"operator\": \"Exists\"}]}");
    c = count(f, "rs1", sel_b, NULL);
    cr_assert_eq(c.matching, 2);
    cr_assert_eq(c.labelled, 2);
    json_t *none = js("{\"matchLabels\": {\"app\": \"zzz\"}}");
    c = count(f, "rs1", none, NULL);
    cr_assert_eq(c.matching, 0);
    cr_assert_eq(c.not_matching, 2);

    /* Deletes by name, whatever the object says. */
    json_t *gone = js("{\"metadata\": {\"name\": \"p5\", \"namespace\": \"ns\"}}");
    kc__podfacts_remove(f, gone);
    json_decref(gone);
    c = count(f, "rs1", sel, tl);
    cr_assert_eq(c.matching, 1);
    cr_assert_eq(c.ready, 1);
    json_decref(none);
    json_decref(sel_b);
    json_decref(sel);
    json_decref(tl);
    kc__podfacts_free(f);
}

Test(cluster_podfacts, ready_times)
{
    kc_podfacts *f = kc__podfacts_new();
    json_t *sel = js("{\"matchLabels\": {\"app\": \"a\"}}");
    put(f, pod("p1", "rs1", "a", false, "Running", true, "2026-01-01T00:00:10Z"));
    put(f, pod("p2", "rs1", "a", false, "Running", false, "2026-01-01T00:00:20Z"));
    kc_podfacts_counts c;
    int64_t *since = NULL;
    cr_assert_eq(kc__podfacts_count(f, "rs1", sel, NULL, &c, &since), 0);
    cr_assert_eq(c.ready, 1);
    cr_assert_not_null(since);
    cr_assert_eq(since[0], kc__parse_time("2026-01-01T00:00:10Z"));
    free(since);
    cr_assert_eq(kc__podfacts_count(f, "nobody", sel, NULL, &c, &since), 0);
    cr_assert_null(since);
    cr_assert_eq(c.matching, 0);
    json_decref(sel);
    kc__podfacts_free(f);
}

/* Many random events against a count from scratch over the last state. */
Test(cluster_podfacts, agrees_with_a_full_count)
{
    enum { PODS = 60, OWNERS = 4, EVENTS = 4000 };
    kc_podfacts *f = kc__podfacts_new();
    json_t *state[PODS] = {0};
    json_t *sel = js("{\"matchLabels\": {\"app\": \"a\"}}");
    json_t *tl = js("{\"tier\": \"web\"}");
    const char *owners[OWNERS] = {"o0", "o1", "o2", NULL};
    const char *phases[] = {"Pending", "Running", "Failed"};
    unsigned r = 12345;
    for (int e = 0; e < EVENTS; e++) {
        r = r * 1103515245u + 12345u;
        int i = (int)((r >> 8) % PODS);
        char name[16];
        snprintf(name, sizeof name, "p%d", i);
        if ((r >> 20) % 7 == 0) {
            if (state[i])
                kc__podfacts_remove(f, state[i]);
            json_decref(state[i]);
            state[i] = NULL;
        } else {
            json_t *p = pod(name, owners[(r >> 12) % OWNERS], (r >> 16) % 3 ? "a" : "b",
                            (r >> 18) % 2, phases[(r >> 22) % 3], (r >> 24) % 2, T0);
            cr_assert_eq(kc__podfacts_put(f, p), 0);
            json_decref(state[i]);
            state[i] = p;
        }
        if (e % 97)
            continue;
        for (int o = 0; o < OWNERS - 1; o++) {
            kc_podfacts_counts want = {0};
            for (int k = 0; k < PODS; k++) {
                const json_t *p = state[k];
                const char *uid =
                    p ? json_string_value(json_object_get(
                            json_array_get(
                                json_object_get(json_object_get(p, "metadata"), "ownerReferences"),
                                0),
                            "uid"))
                      : NULL;
                if (!uid || strcmp(uid, owners[o]) || !kc__pod_active(p))
                    continue;
                const json_t *labels = json_object_get(json_object_get(p, "metadata"), "labels");
                if (kc__selector_matches(sel, labels) != 1) {
                    want.not_matching++;
                    continue;
                }
                want.matching++;
                want.labelled += kc__map_matches(tl, labels);
                want.ready += kc__pod_ready(p);
            }
            kc_podfacts_counts got = count(f, owners[o], sel, tl);
            cr_assert_eq(got.matching, want.matching, "event %d owner %d", e, o);
            cr_assert_eq(got.not_matching, want.not_matching, "event %d owner %d", e, o);
            cr_assert_eq(got.labelled, want.labelled, "event %d owner %d", e, o);
            cr_assert_eq(got.ready, want.ready, "event %d owner %d", e, o);
        }
    }
    for (int k = 0; k < PODS; k++)
        json_decref(state[k]);
    json_decref(sel);
    json_decref(tl);
    kc__podfacts_free(f);
}
