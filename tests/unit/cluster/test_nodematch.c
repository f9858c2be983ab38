/*
 * test_nodematch.c - pod-to-node fit (cluster/nodematch.c): nodeSelector,
 * required node affinity (every operator, matchFields on metadata.name, an
 * empty term), tolerations against taints (Exists, Equal, empty key, the
 * effect), and the node a daemon pod is pinned to.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "nodematch.h"

static json_t *J(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    cr_assert(v, "bad JSON %s: %s", text, e.text);
    return v;
}

static json_t *node;

static void setup(void)
{
    node = J("{\"metadata\":{\"name\":\"n1\",\"labels\":{\"zone\":\"a\",\"cores\":\"8\"}},"
             "\"spec\":{\"taints\":[{\"key\":\"gpu\",\"value\":\"yes\",\"effect\":\"NoSchedule\"},"
             "{\"key\":\"evict\",\"effect\":\"NoExecute\"}]}}");
}

static void teardown(void)
{
    json_decref(node);
}

TestSuite(nodematch, .init = setup, .fini = teardown);

static bool fits(const char *spec)
{
    json_t *s = J(spec);
    bool r = kc__node_fits_selectors(s, node);
    json_decref(s);
    return r;
}

#define AFF                                                                                        \
    "{\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":{"        \
    "\"nodeSelectorTerms\":[%s]}}}}"

static bool fits_terms(const char *terms)
{
    char buf[1024];
    snprintf(buf, sizeof buf, AFF, terms);
    return fits(buf);
}

Test(nodematch, node_selector)
{
    cr_assert(fits("{}"));
    cr_assert(fits("{\"nodeSelector\":{\"zone\":\"a\"}}"));
    cr_assert_not(fits("{\"nodeSelector\":{\"zone\":\"b\"}}"));
    cr_assert_not(fits("{\"nodeSelector\":{\"zone\":\"a\",\"disk\":\"ssd\"}}"));
}

Test(nodematch, required_affinity_operators)
{
    cr_assert(fits_terms("{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\","
                         "\"values\":[\"a\",\"b\"]}]}"));
    cr_assert_not(fits_terms("{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"NotIn\","
                             "\"values\":[\"a\"]}]}"));
    cr_assert(fits_terms("{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"Exists\"}]}"));
    cr_assert(
        fits_terms("{\"matchExpressions\":[{\"key\":\"disk\",\"operator\":\"DoesNotExist\"}]}"));
    cr_assert(fits_terms("{\"matchExpressions\":[{\"key\":\"cores\",\"operator\":\"Gt\","
                         "\"values\":[\"4\"]}]}"));
    cr_assert_not(fits_terms("{\"matchExpressions\":[{\"key\":\"cores\",\"operator\":\"Lt\","
                             "\"values\":[\"4\"]}]}"));
    cr_assert_not(fits_terms("{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"Gt\","
                             "\"values\":[\"4\"]}]}"),
                  "Gt on a value that is not a number");
    /* Terms are ORed, requirements in a term ANDed. */
    cr_assert(fits_terms("{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\","
                         "\"values\":[\"b\"]}]},"
                         "{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\","
                         "\"values\":[\"n1\"]}]}"));
    cr_assert_not(fits_terms("{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\","
                             "\"values\":[\"a\"]}],"
                             "\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\","
                             "\"values\":[\"n2\"]}]}"));
    cr_assert_not(fits_terms("{}"), "an empty term matches nothing");
    cr_assert_not(fits_terms(""), "no terms match nothing");
    cr_assert_not(fits_terms("{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"Near\","
                             "\"values\":[\"a\"]}]}"),
                  "an unknown operator");
}

static bool tolerates(const char *tols, const char *effect)
{
    json_t *t = J(tols);
    bool r = kc__tolerates_taints(t, node, effect);
    json_decref(t);
    return r;
}

Test(nodematch, taints_and_tolerations)
{
    cr_assert_not(tolerates("[]", "NoSchedule"));
    cr_assert_not(tolerates("[]", "NoExecute"));
    cr_assert(tolerates("[{\"key\":\"gpu\",\"operator\":\"Equal\",\"value\":\"yes\","
                        "\"effect\":\"NoSchedule\"}]",
                        "NoSchedule"));
    cr_assert_not(
        tolerates("[{\"key\":\"gpu\",\"operator\":\"Equal\",\"value\":\"no\"}]", "NoSchedule"),
        "another value");
    cr_assert(tolerates("[{\"key\":\"gpu\",\"value\":\"yes\"}]", "NoSchedule"),
              "Equal is the default operator; no effect matches every effect");
    cr_assert(tolerates("[{\"key\":\"gpu\",\"operator\":\"Exists\"}]", "NoSchedule"));
    cr_assert_not(tolerates("[{\"key\":\"gpu\",\"operator\":\"Exists\",\"effect\":\"NoExecute\"}]",
                            "NoSchedule"),
                  "another effect");
    cr_assert(tolerates("[{\"operator\":\"Exists\"}]", "NoSchedule"), "an empty key with Exists");
    cr_assert(tolerates("[{\"operator\":\"Exists\"}]", "NoExecute"));
    cr_assert(tolerates("[{\"key\":\"evict\",\"operator\":\"Exists\",\"effect\":\"NoExecute\"}]",
                        "NoExecute"));
    cr_assert(tolerates("[]", "PreferNoSchedule"), "no taint of that effect");
}

Test(nodematch, target_node)
{
    json_t *p = J("{\"spec\":{\"nodeName\":\"n7\"}}");
    cr_assert_str_eq(kc__pod_target_node(p), "n7");
    json_decref(p);
    p = J("{\"spec\":{\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuring"
          "Execution\":{\"nodeSelectorTerms\":[{\"matchFields\":[{\"key\":\"metadata.name\","
          "\"operator\":\"In\",\"values\":[\"n3\"]}]}]}}}}}");
    cr_assert_str_eq(kc__pod_target_node(p), "n3");
    json_decref(p);
    p = J("{\"spec\":{}}");
    cr_assert_null(kc__pod_target_node(p));
    json_decref(p);
}
