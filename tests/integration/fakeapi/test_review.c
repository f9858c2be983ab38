/*
 * test_review.c - the subresources and review APIs clients call, over HTTP:
 * pods/eviction with PodDisruptionBudgets, pods/binding and bindings,
 * pods/log, the kubelet-only subresources, serviceaccounts/token and
 * TokenReview, the access reviews and SelfSubjectReview, and how discovery
 * lists them. The server runs on a virtual clock, so token times are exact.
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakeapi/fakeapi.h"
#include "apitest.h"

#define T0_S 1800000000LL /* the virtual clock's start, in seconds */
#define PODS "/api/v1/namespaces/default/pods"
#define PDBS "/apis/policy/v1/namespaces/default/poddisruptionbudgets"
#define SAS "/api/v1/namespaces/default/serviceaccounts"
#define AUTHN "/apis/authentication.k8s.io/v1"
#define AUTHZ "/apis/authorization.k8s.io/v1"
#define ISSUER "https://kubernetes.default.svc.cluster.local"
#define BLOCKED "Cannot evict pod as it would violate the pod's disruption budget."

static atomic_llong vclock_ns;

static int64_t vclock_now(void *ud)
{
    (void)ud;
    return (int64_t)atomic_load(&vclock_ns);
}

static const fakeapi_clock vclock = {.now_ns = vclock_now};

static void setup_vclock(void)
{
    atomic_store(&vclock_ns, T0_S * 1000000000LL);
    start(&(fakeapi_options){.seed = 4242, .clock = &vclock});
}

static void advance_s(long long s)
{
    atomic_fetch_add(&vclock_ns, s * 1000000000LL);
    fakeapi_clock_advanced(srv);
}

TestSuite(review, .init = setup_vclock, .fini = teardown);

/* ---- helpers --------------------------------------------------------------------- */

/* A pod named name with labels (single-quoted JSON object text, or NULL),
 * in phase (NULL: none), with one container "c". */
static void mk_pod(const char *name, const char *labels, const char *phase)
{
    json_decref(req(201, "POST", PODS,
                    S("{'metadata':{'name':'%s','labels':%s},'spec':{'containers':[{'name':'c',"
                      "'image':'nginx:1'}]}}",
                      name, labels ? labels : "{}")));
    if (phase)
        json_decref(req_ct(200, "PATCH", S(PODS "/%s/status", name), "application/merge-patch+json",
                           S("{'status':{'phase':'%s'}}", phase)));
}

static json_t *evict(long want, const char *name)
{
    return req(want, "POST", S(PODS "/%s/eviction", name),
               S("{'apiVersion':'policy/v1','kind':'Eviction','metadata':{'name':'%s'}}", name));
}

static void assert_evicted(json_t *st)
{
    cr_assert_str_eq(jstr(st, "kind"), "Status");
    cr_assert_str_eq(jstr(st, "status"), "Success");
    cr_assert_eq(jint(st, "code"), 201);
    json_decref(st);
}

/* Expect the budget to block: 429 TooManyRequests with its DisruptionBudget cause. */
static void assert_blocked(json_t *st, const char *cause)
{
    assert_failure(st, 429, "TooManyRequests");
    cr_assert_str_eq(jstr(st, "message"), BLOCKED);
    cr_assert_str_eq(jstr(st, "details.causes.0.reason"), "DisruptionBudget");
    cr_assert_str_eq(jstr(st, "details.causes.0.message"), cause);
    json_decref(st);
}

/* A raw request: status, body (malloc'ed, NUL-terminated) and content type. */
static long raw(const char *method, const char *path, const char *bearer, const char *body,
                char **out, char *ctype, size_t ctlen)
{
    httpc_resp r;
    char url[4096];
    snprintf(url, sizeof url, "%s%s", fakeapi_url(srv), path);
    if (bearer) {
        /* httpc sends no credentials: do this one with curl by hand. */
        CURL *h = curl_easy_init();
        struct curl_slist *hd = NULL;
        char auth[4200];
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", bearer);
        hd = curl_slist_append(hd, auth);
        hd = curl_slist_append(hd, "Content-Type: application/json");
        FILE *mem;
        char *buf = NULL;
        size_t len = 0;
        mem = open_memstream(&buf, &len);
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body ? body : "");
        curl_easy_setopt(h, CURLOPT_WRITEDATA, mem);
        cr_assert_eq(curl_easy_perform(h), CURLE_OK);
        long code = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
        curl_slist_free_all(hd);
        curl_easy_cleanup(h);
        fclose(mem);
        *out = buf;
        return code;
    }
    cr_assert_eq(httpc_do(method, url, body ? "application/json" : NULL, body, &r), 0);
    *out = r.body;
    if (ctype)
        snprintf(ctype, ctlen, "%s", r.ctype);
    r.body = NULL;
    long code = r.status;
    httpc_resp_free(&r);
    return code;
}

/* The discovery entry named name in an APIResourceList. Borrowed. */
static json_t *disc_entry(json_t *list, const char *name)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(list, "resources"), i, e)
    {
        if (!strcmp(jstr(e, "name"), name))
            return e;
    }
    cr_assert_fail("%s not in discovery", name);
    return NULL;
}

static const char *verbs_of(json_t *e)
{
    char *s = json_dumps(json_object_get(e, "verbs"), JSON_COMPACT);
    const char *out = S("%s", s);
    free(s);
    return out;
}

/* The claims of a JWT (new reference), decoding its base64url payload. */
static json_t *jwt_claims(const char *tok)
{
    const char *d1 = strchr(tok, '.');
    cr_assert(d1);
    const char *d2 = strchr(d1 + 1, '.');
    cr_assert(d2);
    static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    char out[4096];
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;
    for (const char *p = d1 + 1; p < d2; p++) {
        const char *at = strchr(al, *p);
        cr_assert(at && *p, "not base64url: %c", *p);
        acc = (acc << 6 | (unsigned)(at - al)) & 0xffffff;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char)(acc >> bits & 0xff);
        }
        cr_assert_lt(o, sizeof out);
    }
    json_t *c = json_loadb(out, o, 0, NULL);
    cr_assert(json_is_object(c), "claims: %.*s", (int)o, out);
    return c;
}

/* The private "kubernetes.io" claim (a key with dots, which jget cannot name). */
#define K8S(claims) json_object_get((claims), "kubernetes.io")

/* Issue a token for service account sa with a TokenRequest spec (single-quoted). */
static char *issue(const char *sa, const char *spec)
{
    json_t *tr = req(201, "POST", S(SAS "/%s/token", sa),
                     S("{'apiVersion':'authentication.k8s.io/v1','kind':'TokenRequest',"
                       "'spec':%s}",
                       spec));
    char *tok = strdup(jstr(tr, "status.token"));
    json_decref(tr);
    return tok;
}

static json_t *review_token(const char *tok, const char *auds)
{
    return req(201, "POST", AUTHN "/tokenreviews",
               S("{'apiVersion':'authentication.k8s.io/v1','kind':'TokenReview','spec':"
                 "{'token':'%s'%s%s}}",
                 tok, auds ? ",'audiences':" : "", auds ? auds : ""));
}

/* ---- discovery -------------------------------------------------------------------- */

Test(review, discovery_lists_subresources_and_reviews)
{
    json_t *core = req(200, "GET", "/api/v1", NULL);
    json_t *e = disc_entry(core, "pods/eviction");
    cr_assert_str_eq(jstr(e, "group"), "policy");
    cr_assert_str_eq(jstr(e, "version"), "v1");
    cr_assert_str_eq(jstr(e, "kind"), "Eviction");
    cr_assert_str_eq(verbs_of(e), "[\"create\"]");
    cr_assert_str_eq(verbs_of(disc_entry(core, "pods/log")), "[\"get\"]");
    cr_assert_str_eq(jstr(disc_entry(core, "pods/log"), "kind"), "Pod");
    cr_assert_str_eq(jstr(disc_entry(core, "pods/binding"), "kind"), "Binding");
    cr_assert_str_eq(verbs_of(disc_entry(core, "pods/binding")), "[\"create\"]");
    cr_assert_str_eq(jstr(disc_entry(core, "pods/exec"), "kind"), "PodExecOptions");
    cr_assert_str_eq(verbs_of(disc_entry(core, "pods/exec")), "[\"create\",\"get\"]");
    cr_assert_str_eq(jstr(disc_entry(core, "nodes/proxy"), "kind"), "NodeProxyOptions");
    cr_assert_str_eq(jstr(disc_entry(core, "services/proxy"), "kind"), "ServiceProxyOptions");
    cr_assert_str_eq(verbs_of(disc_entry(core, "bindings")), "[\"create\"]");
    e = disc_entry(core, "serviceaccounts/token");
    cr_assert_str_eq(jstr(e, "group"), "authentication.k8s.io");
    cr_assert_str_eq(jstr(e, "kind"), "TokenRequest");
    cr_assert_str_eq(verbs_of(e), "[\"create\"]");
    json_decref(core);

    json_t *authz = req(200, "GET", AUTHZ, NULL);
    static const char *const authz_kinds[] = {"localsubjectaccessreviews",
                                              "selfsubjectaccessreviews", "selfsubjectrulesreviews",
                                              "subjectaccessreviews"};
    for (size_t i = 0; i < 4; i++)
        cr_assert_str_eq(verbs_of(disc_entry(authz, authz_kinds[i])), "[\"create\"]");
    cr_assert(json_is_true(jget(disc_entry(authz, "localsubjectaccessreviews"), "namespaced")));
    json_decref(authz);
    json_t *authn = req(200, "GET", AUTHN, NULL);
    cr_assert_str_eq(verbs_of(disc_entry(authn, "tokenreviews")), "[\"create\"]");
    cr_assert_str_eq(verbs_of(disc_entry(authn, "selfsubjectreviews")), "[\"create\"]");
    json_decref(authn);
    json_t *policy = req(200, "GET", "/apis/policy/v1", NULL);
    cr_assert_str_eq(jstr(disc_entry(policy, "poddisruptionbudgets"), "shortNames.0"), "pdb");
    disc_entry(policy, "poddisruptionbudgets/status");
    json_decref(policy);

    /* OpenAPI has only the POST of each review. */
    json_t *oa = req(200, "GET", "/openapi/v3/apis/authentication.k8s.io/v1", NULL);
    json_t *item = json_object_get(json_object_get(oa, "paths"),
                                   "/apis/authentication.k8s.io/v1/tokenreviews");
    cr_assert(json_object_get(item, "post"));
    cr_assert_null(json_object_get(item, "get"));
    cr_assert_null(json_object_get(json_object_get(oa, "paths"),
                                   "/apis/authentication.k8s.io/v1/tokenreviews/{name}"));
    json_decref(oa);

    /* Reviews take only POST on their collection, and store nothing. */
    json_decref(req_fail(405, "MethodNotAllowed", "GET", AUTHN "/tokenreviews", NULL));
    json_decref(
        req_fail(405, "MethodNotAllowed", "GET", AUTHZ "/selfsubjectaccessreviews/x", NULL));
    json_decref(req_fail(405, "MethodNotAllowed", "DELETE", AUTHZ "/subjectaccessreviews", NULL));
}

/* ---- pods/eviction ------------------------------------------------------------------ */

Test(review, eviction_without_budget_deletes)
{
    mk_pod("p", NULL, "Running");
    unsigned long long before = rev();
    assert_evicted(evict(201, "p"));
    cr_assert(gone(PODS "/p"));
    cr_assert_eq(rev(), before + 1, "one delete");
    /* Missing pods, wrong names and kinds. */
    json_t *st = evict(404, "p");
    assert_failure(st, 404, "NotFound");
    cr_assert_str_eq(jstr(st, "message"), "pods \"p\" not found");
    json_decref(st);
    mk_pod("q", NULL, "Running");
    st = req_fail(400, "BadRequest", "POST", PODS "/q/eviction",
                  "{'apiVersion':'policy/v1','kind':'Eviction','metadata':{'name':'other'}}");
    cr_assert_str_eq(jstr(st, "message"), "name in URL does not match name in Eviction object");
    json_decref(st);
    json_decref(req_fail(400, "BadRequest", "POST", PODS "/q/eviction",
                         "{'apiVersion':'apps/v1','kind':'Eviction','metadata':{'name':'q'}}"));
    json_decref(req_fail(400, "BadRequest", "POST", PODS "/q/eviction",
                         "{'apiVersion':'policy/v1','kind':'Pod','metadata':{'name':'q'}}"));
    json_decref(req_fail(400, "BadRequest", "POST", PODS "/q/eviction", "{nope"));
    st = req_fail(400, "BadRequest", "POST", PODS "/q/eviction",
                  "{'apiVersion':'policy/v1','kind':'Eviction','metadata':{'name':'q'},"
                  "'deleteOptions':'now'}");
    cr_assert_str_eq(jstr(st, "message"),
                     "Eviction in version \"v1\" cannot be handled as a Eviction: json: cannot "
                     "unmarshal string into Go struct field Eviction.deleteOptions of type "
                     "v1.DeleteOptions");
    json_decref(st);
    json_decref(req_fail(400, "BadRequest", "POST", PODS "/q/eviction",
                         "{'apiVersion':'policy/v1','kind':'Eviction','metadata':{'name':'q'},"
                         "'deleteOptions':{'dryRun':'All'}}"));
    json_decref(req_fail(422, "Invalid", "POST", PODS "/q/eviction",
                         "{'apiVersion':'policy/v1','kind':'Eviction','metadata':{'name':'q'},"
                         "'deleteOptions':{'propagationPolicy':'Sometimes'}}"));
    json_decref(req_fail(405, "MethodNotAllowed", "GET", PODS "/q/eviction", NULL));
    /* A uid precondition that does not hold. */
    json_decref(req_fail(409, "Conflict", "POST", PODS "/q/eviction",
                         "{'apiVersion':'policy/v1','kind':'Eviction','metadata':{'name':'q'},"
                         "'deleteOptions':{'preconditions':{'uid':'not-it'}}}"));
    /* Dry run: answered, nothing deleted. */
    before = rev();
    assert_evicted(req(201, "POST", PODS "/q/eviction?dryRun=All",
                       "{'apiVersion':'policy/v1','kind':'Eviction','metadata':{'name':'q'}}"));
    assert_evicted(req(201, "POST", PODS "/q/eviction",
                       "{'apiVersion':'policy/v1beta1','kind':'Eviction','metadata':{'name':'q'},"
                       "'deleteOptions':{'dryRun':['All']}}"));
    cr_assert_eq(rev(), before);
    cr_assert_not(gone(PODS "/q"));
    /* policy/v1beta1 is accepted too. */
    assert_evicted(
        req(201, "POST", PODS "/q/eviction",
            "{'apiVersion':'policy/v1beta1','kind':'Eviction','metadata':{'name':'q'}}"));
    cr_assert(gone(PODS "/q"));
}

Test(review, eviction_honours_computed_budget)
{
    mk_pod("a", "{'app':'w'}", "Running");
    mk_pod("b", "{'app':'w'}", "Running");
    mk_pod("other", "{'app':'x'}", "Running");
    json_decref(req(201, "POST", PDBS,
                    "{'metadata':{'name':'keep1'},'spec':{'minAvailable':1,'selector':"
                    "{'matchLabels':{'app':'w'}}}}"));
    /* Two healthy, one needed: one may go, then the budget holds. */
    assert_evicted(evict(201, "a"));
    unsigned long long before = rev();
    char *body = NULL;
    cr_assert_eq(raw("POST", PODS "/b/eviction", NULL,
                     "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":"
                     "{\"name\":\"b\"}}",
                     &body, NULL, 0),
                 429);
    assert_blocked(json_loads(body, 0, NULL),
                   "The disruption budget keep1 needs 1 healthy pods and has 1 currently");
    free(body);
    cr_assert_eq(rev(), before, "nothing written");
    cr_assert_not(gone(PODS "/b"));
    /* A pod the budget does not select is not held back. */
    assert_evicted(evict(201, "other"));

    /* maxUnavailable 0 allows nothing; a percentage rounds up. */
    mk_pod("m1", "{'tier':'db'}", "Running");
    mk_pod("m2", "{'tier':'db'}", "Running");
    json_decref(req(201, "POST", PDBS,
                    "{'metadata':{'name':'none'},'spec':{'maxUnavailable':0,'selector':"
                    "{'matchExpressions':[{'key':'tier','operator':'In','values':['db']}]}}}"));
    assert_blocked(evict(429, "m1"),
                   "The disruption budget none needs 2 healthy pods and has 2 currently");
    json_decref(req_ct(200, "PATCH", PDBS "/none", "application/merge-patch+json",
                       "{'spec':{'maxUnavailable':'50%'}}"));
    assert_evicted(evict(201, "m1"));
    /* One pod left: 50% of 1 rounds up to 1 unavailable, so it may go too. */
    assert_evicted(evict(201, "m2"));

    /* Pods not running yet (or done) go without a budget check. */
    mk_pod("pend", "{'app':'w'}", "Pending");
    mk_pod("nophase", "{'app':'w'}", NULL);
    mk_pod("done", "{'app':'w'}", "Succeeded");
    assert_evicted(evict(201, "pend"));
    assert_evicted(evict(201, "nophase"));
    assert_evicted(evict(201, "done"));
    cr_assert_not(gone(PODS "/b"));
}

Test(review, eviction_readiness_counts)
{
    /* Running but not Ready does not count as healthy. */
    mk_pod("r1", "{'app':'w'}", "Running");
    mk_pod("r2", "{'app':'w'}", "Running");
    json_decref(req_ct(200, "PATCH", PODS "/r2/status", "application/merge-patch+json",
                       "{'status':{'conditions':[{'type':'Ready','status':'False'}]}}"));
    json_decref(req(201, "POST", PDBS,
                    "{'metadata':{'name':'one'},'spec':{'minAvailable':1,'selector':"
                    "{'matchLabels':{'app':'w'}}}}"));
    assert_blocked(evict(429, "r1"),
                   "The disruption budget one needs 1 healthy pods and has 1 currently");
    /* The unready one may go: it takes nothing from the healthy count. */
    assert_evicted(evict(201, "r2"));

    /* A budget not met holds unready pods too, unless its policy is AlwaysAllow. */
    mk_pod("r3", "{'app':'w'}", "Running");
    json_decref(req_ct(200, "PATCH", PODS "/r3/status", "application/merge-patch+json",
                       "{'status':{'conditions':[{'type':'Ready','status':'False'}]}}"));
    json_decref(req_ct(200, "PATCH", PDBS "/one", "application/merge-patch+json",
                       "{'spec':{'minAvailable':2}}"));
    assert_blocked(evict(429, "r3"),
                   "The disruption budget one needs 2 healthy pods and has 1 currently");
    json_decref(req_ct(200, "PATCH", PDBS "/one", "application/merge-patch+json",
                       "{'spec':{'unhealthyPodEvictionPolicy':'AlwaysAllow'}}"));
    assert_evicted(evict(201, "r3"));
    assert_blocked(evict(429, "r1"),
                   "The disruption budget one needs 2 healthy pods and has 1 currently");
}

Test(review, eviction_with_stored_status)
{
    mk_pod("s1", "{'app':'s'}", "Running");
    mk_pod("s2", "{'app':'s'}", "Running");
    json_t *pdb = req(201, "POST", PDBS,
                      "{'metadata':{'name':'st'},'spec':{'minAvailable':1,'selector':"
                      "{'matchLabels':{'app':'s'}}}}");
    long long gen = jint(pdb, "metadata.generation");
    json_decref(pdb);
    /* A controller's status for an older generation: still being processed. */
    json_decref(req_ct(200, "PATCH", PDBS "/st/status", "application/merge-patch+json",
                       S("{'status':{'observedGeneration':%lld,'disruptionsAllowed':1,"
                         "'currentHealthy':2,'desiredHealthy':1,'expectedPods':2}}",
                         gen - 1)));
    char *body = NULL;
    char ev[] =
        "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":\"s1\"}}";
    httpc_resp r;
    cr_assert_eq(httpc_do("POST", S("%s" PODS "/s1/eviction", fakeapi_url(srv)), NULL, ev, &r), 0);
    cr_assert_eq(r.status, 429);
    cr_assert_str_eq(r.retry_after, "10");
    json_t *st = json_loads(r.body, 0, NULL);
    cr_assert_eq(jint(st, "details.retryAfterSeconds"), 10);
    assert_blocked(st, "The disruption budget st is still being processed by the server.");
    httpc_resp_free(&r);

    /* Up to date: the eviction takes one disruption and records it. */
    json_decref(req_ct(200, "PATCH", PDBS "/st/status", "application/merge-patch+json",
                       S("{'status':{'observedGeneration':%lld}}", gen)));
    assert_evicted(evict(201, "s1"));
    pdb = req(200, "GET", PDBS "/st", NULL);
    cr_assert_eq(jint(pdb, "status.disruptionsAllowed"), 0);
    cr_assert_str_eq(jstr(pdb, "status.disruptedPods.s1"), "2027-01-15T08:00:00Z");
    cr_assert_str_eq(jstr(pdb, "status.conditions.0.type"), "DisruptionAllowed");
    cr_assert_str_eq(jstr(pdb, "status.conditions.0.status"), "False");
    cr_assert_str_eq(jstr(pdb, "status.conditions.0.reason"), "InsufficientPods");
    json_decref(pdb);
    /* The stored status now allows nothing, whatever the pods say. */
    assert_blocked(evict(429, "s2"),
                   "The disruption budget st needs 1 healthy pods and has 2 currently");
    /* A negative budget is forbidden outright. */
    json_decref(req_ct(200, "PATCH", PDBS "/st/status", "application/merge-patch+json",
                       "{'status':{'disruptionsAllowed':-1}}"));
    json_decref(req_fail(403, "Forbidden", "POST", PODS "/s2/eviction",
                         "{'apiVersion':'policy/v1','kind':'Eviction','metadata':{'name':'s2'}}"));
    free(body);
}

Test(review, eviction_two_budgets_and_terminating)
{
    mk_pod("t", "{'app':'t'}", "Running");
    json_decref(req(201, "POST", PDBS,
                    "{'metadata':{'name':'x1'},'spec':{'maxUnavailable':1,'selector':"
                    "{'matchLabels':{'app':'t'}}}}"));
    json_decref(req(201, "POST", PDBS,
                    "{'metadata':{'name':'x2'},'spec':{'maxUnavailable':1,'selector':"
                    "{'matchExpressions':[{'key':'app','operator':'Exists'}]}}}"));
    json_t *st = evict(500, "t");
    cr_assert_str_eq(jstr(st, "message"), "This pod has more than one PodDisruptionBudget, which "
                                          "the eviction subresource does not support.");
    json_decref(st);
    /* An empty selector matches nothing: with x2 gone, only x1 covers t. */
    json_decref(req_ct(200, "PATCH", PDBS "/x2", "application/merge-patch+json",
                       "{'spec':{'selector':{'matchExpressions':null}}}"));
    assert_evicted(req(201, "POST", PODS "/t/eviction?dryRun=All",
                       "{'apiVersion':'policy/v1','kind':'Eviction','metadata':{'name':'t'}}"));
    /* A selector value that would read as two terms ("app=t,app") is invalid
     * and matches nothing: still one budget. */
    json_decref(req(201, "POST", PDBS,
                    "{'metadata':{'name':'x3'},'spec':{'maxUnavailable':0,'selector':"
                    "{'matchLabels':{'app':'t,app'}}}}"));
    assert_evicted(req(201, "POST", PODS "/t/eviction?dryRun=All",
                       "{'apiVersion':'policy/v1','kind':'Eviction','metadata':{'name':'t'}}"));
    json_decref(req(200, "DELETE", PDBS "/x3", NULL));
    /* A terminating pod is deleted without a budget check, and stays until its
     * finalizer goes. */
    json_decref(req_ct(200, "PATCH", PODS "/t", "application/merge-patch+json",
                       "{'metadata':{'finalizers':['example.com/hold']}}"));
    json_decref(req(200, "DELETE", PODS "/t", NULL));
    json_decref(req_ct(200, "PATCH", PDBS "/x1", "application/merge-patch+json",
                       "{'spec':{'maxUnavailable':0}}"));
    assert_evicted(evict(201, "t"));
    json_t *p = req(200, "GET", PODS "/t", NULL);
    cr_assert(jstr(p, "metadata.deletionTimestamp"));
    json_decref(p);
}

/* ---- binding ------------------------------------------------------------------------ */

Test(review, binding_assigns_a_node_once)
{
    mk_pod("u", NULL, NULL);
    json_t *st = req(201, "POST", PODS "/u/binding",
                     "{'apiVersion':'v1','kind':'Binding','metadata':{'name':'u',"
                     "'annotations':{'sched':'yes'}},'target':{'kind':'Node','name':'n1'}}");
    cr_assert_str_eq(jstr(st, "status"), "Success");
    json_decref(st);
    json_t *p = req(200, "GET", PODS "/u", NULL);
    cr_assert_str_eq(jstr(p, "spec.nodeName"), "n1");
    cr_assert_str_eq(jstr(p, "metadata.annotations.sched"), "yes");
    cr_assert_str_eq(jstr(p, "status.conditions.0.type"), "PodScheduled");
    cr_assert_str_eq(jstr(p, "status.conditions.0.status"), "True");
    json_decref(p);
    st = req_fail(409, "Conflict", "POST", PODS "/u/binding",
                  "{'metadata':{'name':'u'},'target':{'name':'n2'}}");
    cr_assert_str_eq(jstr(st, "message"), "Operation cannot be fulfilled on pods/binding \"u\": "
                                          "pod u is already assigned to node \"n1\"");
    json_decref(st);

    /* POST bindings names the pod in the body. */
    mk_pod("v", NULL, NULL);
    json_decref(req(201, "POST", "/api/v1/namespaces/default/bindings",
                    "{'apiVersion':'v1','kind':'Binding','metadata':{'name':'v'},"
                    "'target':{'name':'n2'}}"));
    p = req(200, "GET", PODS "/v", NULL);
    cr_assert_str_eq(jstr(p, "spec.nodeName"), "n2");
    json_decref(p);

    /* Bad bindings change nothing. */
    mk_pod("w", NULL, NULL);
    unsigned long long before = rev();
    json_decref(req_fail(422, "Invalid", "POST", PODS "/w/binding",
                         "{'metadata':{'name':'w'},'target':{}}"));
    json_decref(req_fail(422, "Invalid", "POST", PODS "/w/binding",
                         "{'metadata':{'name':'w'},'target':{'kind':'Pod','name':'x'}}"));
    json_decref(req_fail(400, "BadRequest", "POST", PODS "/w/binding",
                         "{'metadata':{'name':'z'},'target':{'name':'n1'}}"));
    json_decref(req_fail(400, "BadRequest", "POST", PODS "/w/binding",
                         "{'metadata':{'name':'w'},'target':'n1'}"));
    json_decref(req_fail(404, "NotFound", "POST", "/api/v1/namespaces/default/bindings",
                         "{'metadata':{'name':'nope'},'target':{'name':'n1'}}"));
    json_decref(req_fail(409, "Conflict", "POST", PODS "/w/binding",
                         "{'metadata':{'name':'w','uid':'other'},'target':{'name':'n1'}}"));
    json_decref(
        req_fail(405, "MethodNotAllowed", "GET", "/api/v1/namespaces/default/bindings", NULL));
    cr_assert_eq(rev(), before);
}

/* ---- pods/log ----------------------------------------------------------------------- */

Test(review, log_is_text_from_the_annotation)
{
    mk_pod("l", NULL, "Running");
    char *body = NULL, ct[128];
    cr_assert_eq(raw("GET", PODS "/l/log", NULL, NULL, &body, ct, sizeof ct), 200);
    cr_assert_str_eq(body, "");
    cr_assert(strstr(ct, "text/plain"), "%s", ct);
    free(body);
    json_decref(req_ct(200, "PATCH", PODS "/l", "application/merge-patch+json",
                       "{'metadata':{'annotations':{'fakeapi.kube-harness.io/log':"
                       "'one\\ntwo\\nthree\\n'}}}"));
    cr_assert_eq(raw("GET", PODS "/l/log?follow=true", NULL, NULL, &body, NULL, 0), 200);
    cr_assert_str_eq(body, "one\ntwo\nthree\n");
    free(body);
    cr_assert_eq(raw("GET", PODS "/l/log?tailLines=2", NULL, NULL, &body, NULL, 0), 200);
    cr_assert_str_eq(body, "two\nthree\n");
    free(body);
    cr_assert_eq(raw("GET", PODS "/l/log?tailLines=0", NULL, NULL, &body, NULL, 0), 200);
    cr_assert_str_eq(body, "");
    free(body);
    cr_assert_eq(raw("GET", PODS "/l/log?tailLines=9&limitBytes=5", NULL, NULL, &body, NULL, 0),
                 200);
    cr_assert_str_eq(body, "one\nt");
    free(body);
    cr_assert_eq(raw("GET", PODS "/l/log?container=c", NULL, NULL, &body, NULL, 0), 200);
    cr_assert_str_eq(body, "one\ntwo\nthree\n");
    free(body);
    json_t *st = req_fail(400, "BadRequest", "GET", PODS "/l/log?container=zz", NULL);
    cr_assert_str_eq(jstr(st, "message"), "container zz is not valid for pod l");
    json_decref(st);
    json_decref(req_fail(422, "Invalid", "GET", PODS "/l/log?tailLines=-1", NULL));
    json_decref(req_fail(400, "BadRequest", "GET", PODS "/l/log?limitBytes=x", NULL));
    json_decref(req_fail(404, "NotFound", "GET", PODS "/none/log", NULL));
    json_decref(req_fail(422, "Invalid", "GET", PODS "/l/log?sinceSeconds=0", NULL));
    st = req_fail(400, "BadRequest", "GET", PODS "/l/log?previous=true", NULL);
    cr_assert_str_eq(jstr(st, "message"),
                     "previous terminated container \"c\" in pod \"l\" not found");
    json_decref(st);
    cr_assert_eq(
        raw("GET", PODS "/l/log?sinceSeconds=10&previous=false", NULL, NULL, &body, NULL, 0), 200);
    cr_assert_str_eq(body, "one\ntwo\nthree\n");
    free(body);

    /* Two containers: one must be named; each may have its own log. */
    json_decref(req(201, "POST", PODS,
                    "{'metadata':{'name':'two','annotations':{"
                    "'fakeapi.kube-harness.io/log-side':'side says hi\\n'}},'spec':{'containers':"
                    "[{'name':'main','image':'i'},{'name':'side','image':'i'}]}}"));
    st = req_fail(400, "BadRequest", "GET", PODS "/two/log", NULL);
    cr_assert_str_eq(jstr(st, "message"),
                     "a container name must be specified for pod two, choose one of: [main side]");
    json_decref(st);
    cr_assert_eq(raw("GET", PODS "/two/log?container=side", NULL, NULL, &body, NULL, 0), 200);
    cr_assert_str_eq(body, "side says hi\n");
    free(body);
    cr_assert_eq(raw("GET", PODS "/two/log?container=main", NULL, NULL, &body, NULL, 0), 200);
    cr_assert_str_eq(body, "");
    free(body);
}

/* ---- what needs a kubelet ----------------------------------------------------------- */

Test(review, kubelet_subresources_are_400)
{
    mk_pod("k", NULL, "Running");
    static const char *const subs[] = {"exec", "attach", "portforward", "proxy"};
    for (size_t i = 0; i < 4; i++) {
        json_t *st = req_fail(400, "BadRequest", "POST", S(PODS "/k/%s?command=ls", subs[i]), NULL);
        cr_assert_str_eq(jstr(st, "message"),
                         S("fakeapi does not run containers: pods/%s is not supported", subs[i]));
        json_decref(st);
    }
    json_decref(req_fail(404, "NotFound", "GET", PODS "/gone/exec", NULL));
    json_decref(req(201, "POST", "/api/v1/nodes", "{'metadata':{'name':'n1'}}"));
    json_t *st = req_fail(400, "BadRequest", "GET", "/api/v1/nodes/n1/proxy", NULL);
    cr_assert_str_eq(jstr(st, "message"), "fakeapi has no kubelets: nodes/proxy is not supported");
    json_decref(st);
    /* A proxy path goes on past the subresource. */
    json_decref(
        req_fail(400, "BadRequest", "GET", "/api/v1/nodes/n1/proxy/metrics/cadvisor", NULL));
    json_decref(req_fail(404, "NotFound", "GET", "/api/v1/nodes/n1/status/more", NULL));
    json_decref(req(201, "POST", "/api/v1/namespaces/default/services",
                    "{'metadata':{'name':'s'},'spec':{'ports':[{'port':80}]}}"));
    json_decref(
        req_fail(400, "BadRequest", "GET", "/api/v1/namespaces/default/services/s/proxy", NULL));
    /* Configmaps have no such subresources at all. */
    json_decref(mk_cm("default", "c", NULL));
    json_decref(
        req_fail(404, "NotFound", "GET", "/api/v1/namespaces/default/configmaps/c/log", NULL));
}

/* ---- serviceaccounts/token and TokenReview ---------------------------------------- */

Test(review, token_request_claims)
{
    json_t *sa = req(201, "POST", SAS, "{'metadata':{'name':'robot'}}");
    const char *sa_uid = jstr(sa, "metadata.uid");
    json_t *tr = req(201, "POST", SAS "/robot/token",
                     "{'apiVersion':'authentication.k8s.io/v1','kind':'TokenRequest','spec':{}}");
    cr_assert_str_eq(jstr(tr, "kind"), "TokenRequest");
    cr_assert_str_eq(jstr(tr, "apiVersion"), "authentication.k8s.io/v1");
    cr_assert_str_eq(jstr(tr, "metadata.name"), "robot");
    cr_assert_str_eq(jstr(tr, "metadata.namespace"), "default");
    cr_assert_eq(jint(tr, "spec.expirationSeconds"), 3600);
    cr_assert_str_eq(jstr(tr, "spec.audiences.0"), ISSUER);
    /* T0 + 3600 s by the server's clock. */
    cr_assert_str_eq(jstr(tr, "status.expirationTimestamp"), "2027-01-15T09:00:00Z");
    json_t *c = jwt_claims(jstr(tr, "status.token"));
    cr_assert_str_eq(jstr(c, "iss"), ISSUER);
    cr_assert_str_eq(jstr(c, "sub"), "system:serviceaccount:default:robot");
    cr_assert_str_eq(jstr(c, "aud.0"), ISSUER);
    cr_assert_eq(jint(c, "iat"), T0_S);
    cr_assert_eq(jint(c, "nbf"), T0_S);
    cr_assert_eq(jint(c, "exp"), T0_S + 3600);
    cr_assert(jstr(c, "jti"));
    cr_assert_str_eq(jstr(K8S(c), "namespace"), "default");
    cr_assert_str_eq(jstr(K8S(c), "serviceaccount.name"), "robot");
    cr_assert_str_eq(jstr(K8S(c), "serviceaccount.uid"), sa_uid);
    cr_assert_null(jget(K8S(c), "pod"));
    json_decref(c);
    json_decref(tr);

    /* Audiences and expiry as asked; bound to a pod (and its node). */
    json_decref(req(201, "POST", "/api/v1/nodes", "{'metadata':{'name':'n1'}}"));
    json_t *pod = req(201, "POST", PODS,
                      "{'metadata':{'name':'bp'},'spec':{'serviceAccountName':'robot',"
                      "'nodeName':'n1','containers':[{'name':'c','image':'i'}]}}");
    tr = req(201, "POST", SAS "/robot/token",
             S("{'spec':{'audiences':['vault'],'expirationSeconds':7200,'boundObjectRef':"
               "{'kind':'Pod','apiVersion':'v1','name':'bp','uid':'%s'}}}",
               jstr(pod, "metadata.uid")));
    c = jwt_claims(jstr(tr, "status.token"));
    cr_assert_str_eq(jstr(c, "aud.0"), "vault");
    cr_assert_eq(json_array_size(jget(c, "aud")), 1);
    cr_assert_eq(jint(c, "exp") - jint(c, "iat"), 7200);
    cr_assert_str_eq(jstr(K8S(c), "pod.name"), "bp");
    cr_assert_str_eq(jstr(K8S(c), "pod.uid"), jstr(pod, "metadata.uid"));
    cr_assert_str_eq(jstr(K8S(c), "node.name"), "n1");
    json_decref(c);
    json_decref(tr);

    /* Refused requests. */
    json_t *st =
        req_fail(422, "Invalid", "POST", SAS "/robot/token", "{'spec':{'expirationSeconds':60}}");
    cr_assert_str_eq(jstr(st, "message"),
                     "TokenRequest.authentication.k8s.io \"robot\" is invalid: "
                     "spec.expirationSeconds: Invalid value: 60: may not specify a duration "
                     "less than 10 minutes");
    cr_assert_str_eq(jstr(st, "details.causes.0.field"), "spec.expirationSeconds");
    json_decref(st);
    json_decref(req_fail(404, "NotFound", "POST", SAS "/nobody/token", "{'spec':{}}"));
    json_decref(req_fail(404, "NotFound", "POST", SAS "/robot/token",
                         "{'spec':{'boundObjectRef':{'kind':'Pod','apiVersion':'v1',"
                         "'name':'nope'}}}"));
    json_decref(req_fail(409, "Conflict", "POST", SAS "/robot/token",
                         "{'spec':{'boundObjectRef':{'kind':'Pod','apiVersion':'v1',"
                         "'name':'bp','uid':'stale'}}}"));
    json_decref(req_fail(400, "BadRequest", "POST", SAS "/robot/token",
                         "{'spec':{'boundObjectRef':{'kind':'ConfigMap','apiVersion':'v1',"
                         "'name':'x'}}}"));
    json_decref(req(201, "POST", SAS, "{'metadata':{'name':'other'}}"));
    st = req_fail(400, "BadRequest", "POST", SAS "/other/token",
                  "{'spec':{'boundObjectRef':{'kind':'Pod','apiVersion':'v1','name':'bp'}}}");
    cr_assert_str_eq(jstr(st, "message"), "cannot bind token for serviceaccount \"other\" to pod "
                                          "running with serviceaccount \"robot\"");
    json_decref(st);
    json_decref(req_fail(422, "Invalid", "POST", SAS "/robot/token",
                         "{'metadata':{'name':'other'},'spec':{}}"));
    json_decref(req_fail(405, "MethodNotAllowed", "GET", SAS "/robot/token", NULL));
    /* Fields of the wrong type are refused as the decoder refuses them. */
    st = req_fail(400, "BadRequest", "POST", SAS "/robot/token", "{'spec':{'audiences':'vault'}}");
    cr_assert_str_eq(jstr(st, "message"),
                     "TokenRequest in version \"v1\" cannot be handled as a TokenRequest: json: "
                     "cannot unmarshal string into Go struct field TokenRequestSpec.spec.audiences "
                     "of type []string");
    json_decref(st);
    json_decref(
        req_fail(400, "BadRequest", "POST", SAS "/robot/token", "{'spec':{'audiences':[1]}}"));
    json_decref(req_fail(400, "BadRequest", "POST", SAS "/robot/token",
                         "{'spec':{'expirationSeconds':'3600'}}"));
    json_decref(req_fail(400, "BadRequest", "POST", SAS "/robot/token",
                         "{'spec':{'boundObjectRef':'bp'}}"));
    json_decref(req_fail(400, "BadRequest", "POST", SAS "/robot/token", "{'spec':[]}"));
    json_decref(pod);
    json_decref(sa);
}

Test(review, token_review_checks_tokens)
{
    json_decref(req(201, "POST", SAS, "{'metadata':{'name':'robot'}}"));
    char *tok = issue("robot", "{'audiences':['a','b']}");
    json_t *rv = review_token(tok, "['b','c']");
    cr_assert(json_is_true(jget(rv, "status.authenticated")));
    cr_assert_str_eq(jstr(rv, "status.user.username"), "system:serviceaccount:default:robot");
    cr_assert_str_eq(jstr(rv, "status.user.groups.0"), "system:serviceaccounts");
    cr_assert_str_eq(jstr(rv, "status.user.groups.1"), "system:serviceaccounts:default");
    cr_assert_str_eq(jstr(rv, "status.user.groups.2"), "system:authenticated");
    cr_assert_str_eq(jstr(rv, "status.audiences.0"), "b");
    cr_assert_eq(json_array_size(jget(rv, "status.audiences")), 1);
    json_t *cred = json_object_get(json_object_get(jget(rv, "status.user"), "extra"),
                                   "authentication.kubernetes.io/credential-id");
    cr_assert(!strncmp(json_string_value(json_array_get(cred, 0)), "JTI=", 4));
    json_decref(rv);

    /* The default audience is the issuer's, which this token does not carry. */
    rv = review_token(tok, NULL);
    cr_assert_not(json_is_true(jget(rv, "status.authenticated")));
    cr_assert(strstr(jstr(rv, "status.error"), "token audiences"), "%s", jstr(rv, "status.error"));
    json_decref(rv);

    /* A changed byte breaks the signature. */
    char *bad = strdup(tok);
    bad[strlen(bad) - 2] = bad[strlen(bad) - 2] == 'A' ? 'B' : 'A';
    rv = review_token(bad, "['a']");
    cr_assert_not(json_is_true(jget(rv, "status.authenticated")));
    cr_assert(strstr(jstr(rv, "status.error"), "invalid bearer token"));
    json_decref(rv);
    free(bad);
    rv = review_token("not-a-jwt", NULL);
    cr_assert_not(json_is_true(jget(rv, "status.authenticated")));
    cr_assert(jstr(rv, "status.error"));
    json_decref(rv);

    /* Expiry by the server's clock, with a minute's leeway. */
    advance_s(3600 + 59);
    rv = review_token(tok, "['a']");
    cr_assert(json_is_true(jget(rv, "status.authenticated")));
    json_decref(rv);
    advance_s(2);
    rv = review_token(tok, "['a']");
    cr_assert_not(json_is_true(jget(rv, "status.authenticated")));
    cr_assert_str_eq(jstr(rv, "status.error"), "service account token has expired");
    json_decref(rv);
    free(tok);

    /* A token outlives neither its service account nor the uid it names. */
    tok = issue("robot", "{}");
    json_decref(req(200, "DELETE", SAS "/robot", NULL));
    rv = review_token(tok, NULL);
    cr_assert_str_eq(jstr(rv, "status.error"), "serviceaccounts \"robot\" not found");
    json_decref(rv);
    json_decref(req(201, "POST", SAS, "{'metadata':{'name':'robot'}}"));
    rv = review_token(tok, NULL);
    cr_assert(strstr(jstr(rv, "status.error"), "does not match claim"));
    json_decref(rv);
    free(tok);

    json_decref(req_fail(400, "BadRequest", "POST", AUTHN "/tokenreviews", "{'spec':{}}"));
    json_decref(req_fail(400, "BadRequest", "POST", AUTHN "/tokenreviews", "{'spec':{'token':5}}"));
    json_decref(req_fail(400, "BadRequest", "POST", AUTHN "/tokenreviews",
                         "{'spec':{'token':'x','audiences':{}}}"));
    json_decref(req_fail(400, "BadRequest", "POST", AUTHN "/tokenreviews",
                         "{'kind':'SelfSubjectReview','spec':{'token':'x'}}"));
}

/* ---- who am I, and may I -------------------------------------------------------------- */

Test(review, self_subject_review)
{
    json_t *r = req(201, "POST", AUTHN "/selfsubjectreviews",
                    "{'apiVersion':'authentication.k8s.io/v1','kind':'SelfSubjectReview'}");
    cr_assert_str_eq(jstr(r, "kind"), "SelfSubjectReview");
    cr_assert_str_eq(jstr(r, "status.userInfo.username"), "fakeapi-admin");
    cr_assert_str_eq(jstr(r, "status.userInfo.groups.0"), "system:masters");
    cr_assert_str_eq(jstr(r, "status.userInfo.groups.1"), "system:authenticated");
    json_decref(r);
    /* With a service account's token, the request is that service account. */
    json_decref(req(201, "POST", SAS, "{'metadata':{'name':'robot'}}"));
    char *tok = issue("robot", "{}");
    char *body = NULL;
    cr_assert_eq(raw("POST", AUTHN "/selfsubjectreviews", tok, "{}", &body, NULL, 0), 201);
    r = json_loads(body, 0, NULL);
    cr_assert_str_eq(jstr(r, "status.userInfo.username"), "system:serviceaccount:default:robot");
    json_decref(r);
    free(body);
    free(tok);
}

Test(review, access_reviews_allow)
{
    unsigned long long before = rev();
    json_t *r = req(201, "POST", AUTHZ "/selfsubjectaccessreviews",
                    "{'apiVersion':'authorization.k8s.io/v1','kind':'SelfSubjectAccessReview',"
                    "'spec':{'resourceAttributes':{'verb':'create','group':'apps',"
                    "'resource':'deployments','namespace':'default'}}}");
    cr_assert(json_is_true(jget(r, "status.allowed")));
    cr_assert_str_eq(jstr(r, "spec.resourceAttributes.resource"), "deployments");
    json_decref(r);
    r = req(201, "POST", AUTHZ "/selfsubjectaccessreviews",
            "{'spec':{'nonResourceAttributes':{'verb':'get','path':'/healthz'}}}");
    cr_assert(json_is_true(jget(r, "status.allowed")));
    json_decref(r);
    json_t *st = req_fail(422, "Invalid", "POST", AUTHZ "/selfsubjectaccessreviews", "{'spec':{}}");
    cr_assert_str_eq(jstr(st, "details.causes.0.field"), "spec.resourceAttributes");
    json_decref(st);

    r = req(201, "POST", AUTHZ "/subjectaccessreviews",
            "{'spec':{'user':'alice','resourceAttributes':{'verb':'get','resource':'pods'}}}");
    cr_assert(json_is_true(jget(r, "status.allowed")));
    json_decref(r);
    json_decref(req_fail(422, "Invalid", "POST", AUTHZ "/subjectaccessreviews",
                         "{'spec':{'resourceAttributes':{'verb':'get','resource':'pods'}}}"));

    r = req(201, "POST", AUTHZ "/namespaces/default/localsubjectaccessreviews",
            "{'spec':{'groups':['g'],'resourceAttributes':{'namespace':'default','verb':'get',"
            "'resource':'pods'}}}");
    cr_assert(json_is_true(jget(r, "status.allowed")));
    cr_assert_str_eq(jstr(r, "metadata.namespace"), "default");
    json_decref(r);
    json_decref(req_fail(422, "Invalid", "POST",
                         AUTHZ "/namespaces/default/localsubjectaccessreviews",
                         "{'spec':{'user':'u','resourceAttributes':{'namespace':'kube-system',"
                         "'verb':'get','resource':'pods'}}}"));
    json_decref(
        req_fail(422, "Invalid", "POST", AUTHZ "/namespaces/default/localsubjectaccessreviews",
                 "{'spec':{'user':'u','nonResourceAttributes':{'verb':'get','path':'/'}}}"));

    r = req(201, "POST", AUTHZ "/selfsubjectrulesreviews", "{'spec':{'namespace':'default'}}");
    cr_assert_str_eq(jstr(r, "status.resourceRules.0.verbs.0"), "*");
    cr_assert_str_eq(jstr(r, "status.resourceRules.0.apiGroups.0"), "*");
    cr_assert_str_eq(jstr(r, "status.resourceRules.0.resources.0"), "*");
    cr_assert_str_eq(jstr(r, "status.nonResourceRules.0.nonResourceURLs.0"), "*");
    cr_assert(json_is_false(jget(r, "status.incomplete")));
    json_decref(r);
    st = req_fail(400, "BadRequest", "POST", AUTHZ "/selfsubjectrulesreviews", "{'spec':{}}");
    cr_assert_str_eq(jstr(st, "message"), "no namespace on request");
    json_decref(st);
    /* Reviews are never stored: nothing was written. */
    cr_assert_eq(rev(), before);
}
