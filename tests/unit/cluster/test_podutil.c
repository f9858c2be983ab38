/*
 * test_podutil.c - the shared pod helpers: states, template hashes, times
 * and label selectors.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "podutil.h"

static json_t *js(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    cr_assert_not_null(v, "%s: %s", text, e.text);
    return v;
}

Test(cluster_podutil, pod_states)
{
    json_t *p = js("{\"status\": {\"phase\": \"Running\", \"conditions\": [{\"type\": \"Ready\", "
                   "\"status\": \"True\", \"lastTransitionTime\": \"2026-01-01T00:00:10Z\"}]}}");
    cr_assert(kc__pod_ready(p));
    cr_assert(kc__pod_active(p));
    int64_t t10 = kc__parse_time("2026-01-01T00:00:10Z");
    cr_assert(kc__pod_available(p, 0, t10));
    cr_assert(!kc__pod_available(p, 5, t10 + 4000000000LL));
    cr_assert(kc__pod_available(p, 5, t10 + 5000000000LL));
    json_object_set_new(json_object_get(p, "status"), "phase", json_string("Succeeded"));
    cr_assert(!kc__pod_active(p));
    json_decref(p);
    p = js("{\"metadata\": {\"deletionTimestamp\": \"2026-01-01T00:00:00Z\"}}");
    cr_assert_str_eq(kc__pod_phase(p), "Pending");
    cr_assert(!kc__pod_active(p));
    cr_assert(!kc__pod_ready(p));
    json_decref(p);
}

Test(cluster_podutil, template_hash_is_stable_and_safe)
{
    json_t *a = js("{\"metadata\": {\"labels\": {\"app\": \"web\"}}, \"spec\": {\"containers\": "
                   "[{\"name\": \"c\", \"image\": \"nginx\"}]}}");
    json_t *b = js("{\"spec\": {\"containers\": [{\"image\": \"nginx\", \"name\": \"c\"}]}, "
                   "\"metadata\": {\"labels\": {\"app\": \"web\"}}}");
    char ha[16], hb[16], hc[16], hd[16];
    kc__template_hash(a, -1, ha, sizeof ha);
    kc__template_hash(b, -1, hb, sizeof hb);
    cr_assert_str_eq(ha, hb, "key order changed the hash");
    kc__template_hash(a, 1, hc, sizeof hc);
    cr_assert_str_neq(ha, hc, "the collision count did not change the hash");
    json_t *c0 = json_array_get(json_object_get(json_object_get(a, "spec"), "containers"), 0);
    json_object_set_new(c0, "image", json_string("nginx:2"));
    kc__template_hash(a, -1, hd, sizeof hd);
    cr_assert_str_neq(ha, hd);
    for (const char *p = ha; *p; p++)
        cr_assert(strchr("bcdfghjklmnpqrstvwxz2456789", *p), "%c not in the safe alphabet", *p);
    cr_assert(strlen(ha) >= 1 && strlen(ha) <= 10);
    json_decref(a);
    json_decref(b);
}

Test(cluster_podutil, times_round_trip)
{
    char buf[32];
    int64_t t = kc__parse_time("2026-12-06T12:34:56Z");
    cr_assert_gt(t, 0);
    kc__rfc3339(t, buf, sizeof buf);
    cr_assert_str_eq(buf, "2026-12-06T12:34:56Z");
    cr_assert_eq(kc__parse_time("2026-12-06T13:34:56+01:00"), t);
    cr_assert_eq(kc__parse_time("2026-12-06T12:34:56.5Z"), t + 500000000LL);
    cr_assert_eq(kc__parse_time("yesterday"), -1);
    cr_assert_eq(kc__parse_time("2026-12-06T12:34:56"), -1);
}

Test(cluster_podutil, label_selectors)
{
    json_t *labels = js("{\"app\": \"web\", \"tier\": \"front\"}");
    json_t *sel = js("{\"matchLabels\": {\"app\": \"web\"}, \"matchExpressions\": [{\"key\": "
                     "\"tier\", \"operator\": \"In\", \"values\": [\"front\", \"back\"]}, "
                     "{\"key\": \"canary\", \"operator\": \"DoesNotExist\"}]}");
    cr_assert_eq(kc__selector_matches(sel, labels), 1);
    char *s = kc__selector_string(sel);
    cr_assert_str_eq(s, "app=web,tier in (front,back),!canary");
    free(s);
    json_t *other = js("{\"app\": \"web\", \"tier\": \"middle\"}");
    cr_assert_eq(kc__selector_matches(sel, other), 0);
    json_t *empty = js("{}");
    cr_assert_eq(kc__selector_matches(empty, other), 1, "an empty selector matches everything");
    cr_assert_eq(kc__selector_matches(NULL, other), 0, "a null selector matches nothing");
    json_t *bad = js("{\"matchExpressions\": [{\"key\": \"a\", \"operator\": \"Near\"}]}");
    cr_assert_eq(kc__selector_matches(bad, other), -1);
    cr_assert_null(kc__selector_string(bad));
    json_t *web = js("{\"app\": \"web\"}"), *db = js("{\"app\": \"db\"}");
    cr_assert(kc__map_matches(web, labels));
    cr_assert(!kc__map_matches(db, labels));
    json_decref(web);
    json_decref(db);
    cr_assert(kc__map_matches(NULL, labels));
    json_decref(labels);
    json_decref(sel);
    json_decref(other);
    json_decref(empty);
    json_decref(bad);
}
