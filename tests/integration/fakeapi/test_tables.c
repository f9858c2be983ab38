/*
 * test_tables.c - `kubectl get`'s Tables over HTTP for the built-in kinds the
 * server serves: objects are created (and their status written through
 * /status), the server's virtual clock is moved, and lists and single GETs
 * asked for as meta.k8s.io/v1 Tables must carry the real server's columns,
 * priorities and cells, ages counted on the server's clock.
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apitest.h"

#define SEC INT64_C(1000000000)
#define TABLE_ACCEPT                                                                               \
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;"            \
    "g=meta.k8s.io,application/json"

/* ---- a virtual clock, moved by hand -------------------------------------------------- */

static atomic_llong vclock_ns;

static int64_t vclock_now(void *ud)
{
    (void)ud;
    return (int64_t)atomic_load(&vclock_ns);
}

static const fakeapi_clock vclock = {.now_ns = vclock_now};

static void advance(int64_t ns)
{
    atomic_fetch_add(&vclock_ns, ns);
    fakeapi_clock_advanced(srv);
}

static void setup_vclock(void)
{
    atomic_store(&vclock_ns, INT64_C(1796204136) * SEC); /* 2026-12-02T09:35:36Z */
    start(&(fakeapi_options){.seed = 4242, .clock = &vclock});
}

TestSuite(tables, .init = setup_vclock, .fini = teardown);

/* ---- a GET with kubectl's Accept header ---------------------------------------------- */

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    char **buf = ud;
    size_t old = *buf ? strlen(*buf) : 0, len = sz * n;
    char *nb = realloc(*buf, old + len + 1);
    cr_assert_not_null(nb);
    memcpy(nb + old, p, len);
    nb[old + len] = '\0';
    *buf = nb;
    return len;
}

/* The body of a GET of path as a Table, read for at most ms of real time (for watches). */
static char *get_table_text(const char *path, long ms)
{
    CURL *h = curl_easy_init();
    cr_assert_not_null(h);
    char url[4096], *body = NULL;
    snprintf(url, sizeof url, "%s%s", fakeapi_url(srv), path);
    struct curl_slist *hdr = curl_slist_append(NULL, "Accept: " TABLE_ACCEPT);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, ms);
    CURLcode rc = curl_easy_perform(h);
    cr_assert(rc == CURLE_OK || rc == CURLE_OPERATION_TIMEDOUT, "GET %s: %s", path,
              curl_easy_strerror(rc));
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    return body ? body : strdup("");
}

/* GET path as a Table; asserts 200 and a Table document, returns it. */
static json_t *get_table(const char *path)
{
    CURL *h = curl_easy_init();
    cr_assert_not_null(h);
    char url[4096], *body = NULL;
    snprintf(url, sizeof url, "%s%s", fakeapi_url(srv), path);
    struct curl_slist *hdr = curl_slist_append(NULL, "Accept: " TABLE_ACCEPT);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
    cr_assert_eq(curl_easy_perform(h), CURLE_OK);
    long code = 0;
    char *ct = NULL;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
    cr_assert_eq(code, 200, "GET %s: %ld %.400s", path, code, body ? body : "");
    cr_assert(ct && !strncmp(ct, "application/json", 16), "content type %s", ct ? ct : "(none)");
    json_t *t = json_loads(body ? body : "", 0, NULL);
    cr_assert_not_null(t, "not JSON: %.300s", body ? body : "");
    cr_assert_str_eq(jstr(t, "kind"), "Table");
    cr_assert_str_eq(jstr(t, "apiVersion"), "meta.k8s.io/v1");
    free(body);
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    return t;
}

/* The column names, and the names of the priority-1 columns, comma-joined. */
static void assert_columns(const json_t *t, const char *names, const char *wide)
{
    char got[512] = "", gotw[512] = "";
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(t, "columnDefinitions"), i, c)
    {
        char *dst = jint(c, "priority") ? gotw : got;
        if (*dst)
            strcat(dst, ",");
        strcat(dst, jstr(c, "name"));
    }
    cr_assert_str_eq(got, names);
    cr_assert_str_eq(gotw, wide);
}

/* Row i's cells, against JSON text written with single quotes. */
static void assert_row(const json_t *t, size_t i, const char *want_text)
{
    char *w = strdup(want_text);
    for (char *p = w; *p; p++)
        if (*p == '\'')
            *p = '"';
    json_t *want = json_loads(w, 0, NULL);
    cr_assert_not_null(want, "bad JSON %s", w);
    json_t *cells = jget(t, S("rows.%zu.cells", i));
    char *g = json_dumps(cells, JSON_COMPACT | JSON_ENCODE_ANY);
    cr_assert(json_equal(cells, want), "row %zu: got %s, want %s", i, g ? g : "NULL", w);
    free(g);
    free(w);
    json_decref(want);
}

/* The index of the row whose cell col is name (asserting there is one). */
static size_t row_named(const json_t *t, const char *name, size_t col)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(t, "rows"), i, r)
    {
        const char *s = json_string_value(json_array_get(json_object_get(r, "cells"), col));
        if (s && !strcmp(s, name))
            return i;
    }
    cr_assert_fail("no row %s", name);
    return 0;
}

static void create(const char *path, const char *body)
{
    json_decref(req(201, "POST", path, body));
}

static void status(const char *path, const char *patch)
{
    json_decref(req_ct(200, "PATCH", S("%s/status", path), "application/merge-patch+json", patch));
}

/* ---- the kinds ------------------------------------------------------------------------ */

Test(tables, pods_list_and_single_get)
{
    const char *pods = "/api/v1/namespaces/default/pods";
    create(pods, "{'metadata':{'name':'web'},'spec':{'nodeName':'node-1','containers':["
                 "{'name':'a','image':'nginx'},{'name':'b','image':'busybox'}]}}");
    status(S("%s/web", pods),
           "{'status':{'phase':'Running','podIP':'10.1.0.4','podIPs':[{'ip':'10.1.0.4'}],"
           "'containerStatuses':["
           "{'name':'a','ready':true,'restartCount':0,'image':'nginx','imageID':'',"
           " 'state':{'running':{'startedAt':'2026-12-02T09:35:36Z'}}},"
           "{'name':'b','ready':false,'restartCount':2,'image':'busybox','imageID':'',"
           " 'state':{'waiting':{'reason':'CrashLoopBackOff'}},"
           " 'lastState':{'terminated':{'exitCode':1,'finishedAt':'2026-12-02T09:37:36Z'}}}]}}");
    advance(5 * 60 * SEC);

    json_t *t = get_table(pods);
    assert_columns(t, "Name,Ready,Status,Restarts,Age", "IP,Node,Nominated Node,Readiness Gates");
    cr_assert_str_eq(jstr(t, "columnDefinitions.0.format"), "name");
    cr_assert(jstr(t, "metadata.resourceVersion"));
    assert_row(t, 0,
               "['web','1/2','CrashLoopBackOff','2 (3m ago)','5m','10.1.0.4','node-1','<none>',"
               "'<none>']");
    cr_assert_str_eq(jstr(t, "rows.0.object.kind"), "PartialObjectMetadata");
    cr_assert_str_eq(jstr(t, "rows.0.object.metadata.name"), "web");
    json_decref(t);

    /* One object: a one-row Table, aged on the same clock. */
    advance(2 * 3600 * SEC);
    t = get_table(S("%s/web", pods));
    cr_assert_eq(json_array_size(jget(t, "rows")), 1);
    cr_assert_str_eq(jstr(t, "rows.0.cells.4"), "125m");
    json_decref(t);

    /* A deleted pod with a finalizer is Terminating. */
    json_decref(req_ct(200, "PATCH", S("%s/web", pods), "application/merge-patch+json",
                       "{'metadata':{'finalizers':['example.com/hold']}}"));
    json_decref(req(200, "DELETE", S("%s/web", pods), NULL));
    t = get_table(pods);
    cr_assert_str_eq(jstr(t, "rows.0.cells.2"), "Terminating");
    json_decref(t);
    json_decref(req_ct(200, "PATCH", S("%s/web", pods), "application/merge-patch+json",
                       "{'metadata':{'finalizers':null}}"));
}

Test(tables, succeeded_pod_row_has_completed_condition)
{
    const char *pods = "/api/v1/namespaces/default/pods";
    create(pods, "{'metadata':{'name':'done'},'spec':{'containers':[{'name':'a','image':'x'}]}}");
    status(S("%s/done", pods), "{'status':{'phase':'Succeeded','containerStatuses':[{'name':'a',"
                               "'ready':false,'restartCount':0,'image':'x','imageID':'',"
                               "'state':{'terminated':{'exitCode':0,'reason':'Completed'}}}]}}");
    json_t *t = get_table(pods);
    cr_assert_str_eq(jstr(t, "rows.0.cells.2"), "Completed");
    cr_assert_str_eq(jstr(t, "rows.0.conditions.0.type"), "Completed");
    cr_assert_str_eq(jstr(t, "rows.0.conditions.0.reason"), "Succeeded");
    json_decref(t);
}

Test(tables, workloads)
{
    const char *deploys = "/apis/apps/v1/namespaces/default/deployments";
    create(deploys,
           "{'metadata':{'name':'web'},'spec':{'replicas':3,'selector':{'matchLabels':"
           "{'app':'web','tier':'fe'}},'template':{'metadata':{'labels':{'app':'web','tier':'fe'}},"
           "'spec':{'containers':[{'name':'nginx','image':'nginx:1.27'}]}}}}");
    status(S("%s/web", deploys),
           "{'status':{'replicas':3,'readyReplicas':2,'updatedReplicas':3,'availableReplicas':2}}");
    const char *sts = "/apis/apps/v1/namespaces/default/statefulsets";
    create(sts, "{'metadata':{'name':'db'},'spec':{'serviceName':'db','selector':{'matchLabels':"
                "{'app':'db'}},'template':{'metadata':{'labels':{'app':'db'}},"
                "'spec':{'containers':[{'name':'pg','image':'postgres:16'}]}}}}");
    const char *rs = "/apis/apps/v1/namespaces/default/replicasets";
    create(rs, "{'metadata':{'name':'web-1'},'spec':{'replicas':2,'selector':{'matchLabels':"
               "{'app':'web'}},'template':{'metadata':{'labels':{'app':'web'}},"
               "'spec':{'containers':[{'name':'c','image':'i'}]}}}}");
    const char *ds = "/apis/apps/v1/namespaces/default/daemonsets";
    create(ds, "{'metadata':{'name':'agent'},'spec':{'selector':{'matchLabels':{'app':'agent'}},"
               "'template':{'metadata':{'labels':{'app':'agent'}},'spec':{'nodeSelector':"
               "{'kubernetes.io/os':'linux'},'containers':[{'name':'a','image':'agent:2'}]}}}}");
    advance(90 * SEC);

    json_t *t = get_table(deploys);
    assert_columns(t, "Name,Ready,Up-to-date,Available,Age", "Containers,Images,Selector");
    assert_row(t, 0, "['web','2/3',3,2,'90s','nginx','nginx:1.27','app=web,tier=fe']");
    json_decref(t);
    t = get_table(sts);
    assert_columns(t, "Name,Ready,Age", "Containers,Images");
    assert_row(t, 0, "['db','0/1','90s','pg','postgres:16']");
    json_decref(t);
    t = get_table(rs);
    assert_columns(t, "Name,Desired,Current,Ready,Age", "Containers,Images,Selector");
    assert_row(t, 0, "['web-1',2,0,0,'90s','c','i','app=web']");
    json_decref(t);
    t = get_table(ds);
    assert_row(t, 0,
               "['agent',0,0,0,0,0,'kubernetes.io/os=linux','90s','a','agent:2','app=agent']");
    json_decref(t);
}

Test(tables, jobs_and_cronjobs)
{
    const char *jobs = "/apis/batch/v1/namespaces/default/jobs";
    create(jobs, "{'metadata':{'name':'pi'},'spec':{'completions':2,'template':{'spec':{"
                 "'restartPolicy':'Never','containers':[{'name':'pi','image':'perl'}]}}}}");
    status(S("%s/pi", jobs), "{'status':{'startTime':'2026-12-02T09:35:36Z','succeeded':1}}");
    const char *cjs = "/apis/batch/v1/namespaces/default/cronjobs";
    create(cjs, "{'metadata':{'name':'tick'},'spec':{'schedule':'*/5 * * * *','jobTemplate':{"
                "'spec':{'template':{'spec':{'restartPolicy':'OnFailure','containers':[{'name':'t',"
                "'image':'busybox'}]}}}}}}");
    advance(3 * 60 * SEC + 20 * SEC);

    json_t *t = get_table(jobs);
    assert_columns(t, "Name,Status,Completions,Duration,Age", "Containers,Images,Selector");
    cr_assert_str_eq(jstr(t, "rows.0.cells.0"), "pi");
    cr_assert_str_eq(jstr(t, "rows.0.cells.1"), "Running");
    cr_assert_str_eq(jstr(t, "rows.0.cells.2"), "1/2");
    cr_assert_str_eq(jstr(t, "rows.0.cells.3"), "3m20s");
    cr_assert_str_eq(jstr(t, "rows.0.cells.4"), "3m20s");
    json_decref(t);

    /* Complete: the duration stops at completionTime. */
    status(S("%s/pi", jobs), "{'status':{'succeeded':2,'completionTime':'2026-12-02T09:36:36Z',"
                             "'conditions':[{'type':'Complete','status':'True'}]}}");
    advance(3600 * SEC);
    t = get_table(jobs);
    cr_assert_str_eq(jstr(t, "rows.0.cells.1"), "Complete");
    cr_assert_str_eq(jstr(t, "rows.0.cells.2"), "2/2");
    cr_assert_str_eq(jstr(t, "rows.0.cells.3"), "60s");
    json_decref(t);

    t = get_table(cjs);
    assert_columns(t, "Name,Schedule,Timezone,Suspend,Active,Last Schedule,Age",
                   "Containers,Images,Selector");
    cr_assert_str_eq(jstr(t, "rows.0.cells.1"), "*/5 * * * *");
    cr_assert_str_eq(jstr(t, "rows.0.cells.2"), "<none>");
    cr_assert_str_eq(jstr(t, "rows.0.cells.3"), "False");
    cr_assert_eq(jint(t, "rows.0.cells.4"), 0);
    cr_assert_str_eq(jstr(t, "rows.0.cells.5"), "<none>");
    cr_assert_str_eq(jstr(t, "rows.0.cells.6"), "63m");
    json_decref(t);
}

Test(tables, core_kinds)
{
    create("/api/v1/namespaces/default/services",
           "{'metadata':{'name':'web'},'spec':{'type':'NodePort','clusterIP':'10.96.0.20',"
           "'selector':{'app':'web'},'ports':[{'port':80,'nodePort':30080,'protocol':'TCP'}]}}");
    create("/api/v1/namespaces/default/configmaps",
           "{'metadata':{'name':'cfg'},'data':{'a':'1','b':'2'},'binaryData':{'c':'AA=='}}");
    create("/api/v1/namespaces/default/secrets", "{'metadata':{'name':'tls'},'type':'kubernetes.io/"
                                                 "tls','data':{'tls.crt':'','tls.key':''}}");
    create("/api/v1/namespaces/default/serviceaccounts",
           "{'metadata':{'name':'robot'},'secrets':[{'name':'robot-token'}]}");
    create("/api/v1/namespaces/default/endpoints",
           "{'metadata':{'name':'web'},'subsets':[{'addresses':[{'ip':'10.1.0.4'}],"
           "'ports':[{'port':8080}]}]}");
    create("/api/v1/namespaces/default/persistentvolumeclaims",
           "{'metadata':{'name':'data'},'spec':{'accessModes':['ReadWriteOnce'],"
           "'storageClassName':'fast','resources':{'requests':{'storage':'1Gi'}}}}");
    create("/api/v1/namespaces", "{'metadata':{'name':'team-a'}}");
    create("/api/v1/nodes", "{'metadata':{'name':'node-1','labels':{"
                            "'node-role.kubernetes.io/control-plane':''}}}");
    status("/api/v1/nodes/node-1",
           "{'status':{'conditions':[{'type':'Ready','status':'True'}],'addresses':["
           "{'type':'InternalIP','address':'192.168.0.10'}],'nodeInfo':{'kubeletVersion':"
           "'v1.32.0','osImage':'Debian GNU/Linux 12','kernelVersion':'6.1.0',"
           "'containerRuntimeVersion':'containerd://1.7.0','machineID':'','systemUUID':'',"
           "'bootID':'','kubeProxyVersion':'','operatingSystem':'linux','architecture':'amd64'}}}");
    create("/apis/coordination.k8s.io/v1/namespaces/default/leases",
           "{'metadata':{'name':'leader'},'spec':{'holderIdentity':'manager-0'}}");
    advance(48 * 3600 * SEC + 3 * 3600 * SEC);

    json_t *t = get_table("/api/v1/namespaces/default/services/web");
    assert_columns(t, "Name,Type,Cluster-IP,External-IP,Port(s),Age", "Selector");
    assert_row(t, 0, "['web','NodePort','10.96.0.20','<none>','80:30080/TCP','2d3h','app=web']");
    json_decref(t);
    t = get_table("/api/v1/namespaces/default/configmaps/cfg");
    assert_columns(t, "Name,Data,Age", "");
    assert_row(t, 0, "['cfg',3,'2d3h']");
    json_decref(t);
    t = get_table("/api/v1/namespaces/default/secrets/tls");
    assert_columns(t, "Name,Type,Data,Age", "");
    assert_row(t, 0, "['tls','kubernetes.io/tls',2,'2d3h']");
    json_decref(t);
    t = get_table("/api/v1/namespaces/default/serviceaccounts/robot");
    assert_columns(t, "Name,Secrets,Age", "");
    assert_row(t, 0, "['robot',1,'2d3h']");
    json_decref(t);
    t = get_table("/api/v1/namespaces/default/endpoints/web");
    assert_columns(t, "Name,Endpoints,Age", "");
    assert_row(t, 0, "['web','10.1.0.4:8080','2d3h']");
    json_decref(t);
    t = get_table("/api/v1/namespaces/default/persistentvolumeclaims");
    assert_columns(t,
                   "Name,Status,Volume,Capacity,Access Modes,StorageClass,"
                   "VolumeAttributesClass,Age",
                   "VolumeMode");
    cr_assert_str_eq(jstr(t, "rows.0.cells.0"), "data");
    cr_assert_str_eq(jstr(t, "rows.0.cells.2"), "");
    cr_assert_str_eq(jstr(t, "rows.0.cells.5"), "fast");
    cr_assert_str_eq(jstr(t, "rows.0.cells.6"), "<unset>");
    json_decref(t);
    t = get_table("/api/v1/namespaces/team-a");
    assert_columns(t, "Name,Status,Age", "");
    assert_row(t, 0, "['team-a','Active','2d3h']");
    json_decref(t);
    t = get_table("/api/v1/nodes");
    assert_columns(t, "Name,Status,Roles,Age,Version",
                   "Internal-IP,External-IP,OS-Image,Kernel-Version,Container-Runtime");
    assert_row(t, 0,
               "['node-1','Ready','control-plane','2d3h','v1.32.0','192.168.0.10','<none>',"
               "'Debian GNU/Linux 12','6.1.0','containerd://1.7.0']");
    json_decref(t);
    t = get_table("/apis/coordination.k8s.io/v1/namespaces/default/leases");
    assert_columns(t, "Name,Holder,Age", "");
    assert_row(t, 0, "['leader','manager-0','2d3h']");
    json_decref(t);
}

Test(tables, events_of_both_apis)
{
    create("/api/v1/namespaces/default/events",
           "{'metadata':{'name':'web.1'},'involvedObject':{'kind':'Pod','name':'web',"
           "'namespace':'default','fieldPath':'spec.containers{a}'},'reason':'Pulled',"
           "'message':'Successfully pulled image','type':'Normal','count':4,"
           "'source':{'component':'kubelet','host':'node-1'},"
           "'firstTimestamp':'2026-12-02T09:30:36Z','lastTimestamp':'2026-12-02T09:35:36Z'}");
    create("/apis/events.k8s.io/v1/namespaces/default/events",
           "{'metadata':{'name':'web.2'},'regarding':{'kind':'Deployment','name':'web',"
           "'namespace':'default'},'reason':'ScalingReplicaSet','note':'Scaled up to 3',"
           "'type':'Normal','action':'Scale','reportingController':'deployment-controller',"
           "'reportingInstance':'kcm-1','eventTime':'2026-12-02T09:35:36.000000Z'}");
    advance(45 * SEC);

    json_t *t = get_table("/api/v1/namespaces/default/events");
    assert_columns(t, "Last Seen,Type,Reason,Object,Message",
                   "Subobject,Source,First Seen,Count,Name");
    cr_assert_str_eq(jstr(t, "columnDefinitions.9.format"), "name");
    /* The core row (the two APIs may or may not share storage here; the real server's do). */
    assert_row(t, row_named(t, "web.1", 9),
               "['45s','Normal','Pulled','pod/web','spec.containers{a}','kubelet, node-1',"
               "'Successfully pulled image','5m45s',4,'web.1']");
    json_decref(t);

    t = get_table("/apis/events.k8s.io/v1/namespaces/default/events");
    assert_columns(t, "Last Seen,Type,Reason,Object,Message",
                   "Subobject,Source,First Seen,Count,Name");
    assert_row(t, row_named(t, "web.2", 9),
               "['45s','Normal','ScalingReplicaSet','deployment/web','',"
               "'deployment-controller, kcm-1','Scaled up to 3','45s',1,'web.2']");
    json_decref(t);

    t = get_table("/apis/events.k8s.io/v1/namespaces/default/events/web.2");
    assert_columns(t, "Last Seen,Type,Reason,Object,Message",
                   "Subobject,Source,First Seen,Count,Name");
    assert_row(t, 0,
               "['45s','Normal','ScalingReplicaSet','deployment/web','',"
               "'deployment-controller, kcm-1','Scaled up to 3','45s',1,'web.2']");
    json_decref(t);
}

Test(tables, rbac)
{
    create("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
           "{'metadata':{'name':'reader'},'rules':[{'apiGroups':[''],'resources':['pods'],"
           "'verbs':['get']}]}");
    create("/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
           "{'metadata':{'name':'read'},'roleRef':{'apiGroup':'rbac.authorization.k8s.io',"
           "'kind':'Role','name':'reader'},'subjects':[{'kind':'User','name':'alice'},"
           "{'kind':'Group','name':'devs'},{'kind':'ServiceAccount','name':'robot',"
           "'namespace':'default'}]}");
    create("/apis/rbac.authorization.k8s.io/v1/clusterroles",
           "{'metadata':{'name':'viewer'},'rules':[]}");
    advance(10 * 60 * SEC);

    json_t *t = get_table("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles");
    assert_columns(t, "Name,Created At", "");
    cr_assert_str_eq(jstr(t, "columnDefinitions.1.type"), "date");
    assert_row(t, 0, "['reader','2026-12-02T09:35:36Z']");
    json_decref(t);
    t = get_table("/apis/rbac.authorization.k8s.io/v1/clusterroles/viewer");
    assert_row(t, 0, "['viewer','2026-12-02T09:35:36Z']");
    json_decref(t);
    t = get_table("/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings");
    assert_columns(t, "Name,Role,Age", "Users,Groups,ServiceAccounts");
    assert_row(t, 0, "['read','Role/reader','10m','alice','devs','default/robot']");
    json_decref(t);
}

Test(tables, other_ga_groups)
{
    create("/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers",
           "{'metadata':{'name':'web'},'spec':{'scaleTargetRef':{'apiVersion':'apps/v1',"
           "'kind':'Deployment','name':'web'},'minReplicas':2,'maxReplicas':10,'metrics':["
           "{'type':'Resource','resource':{'name':'cpu','target':{'type':'Utilization',"
           "'averageUtilization':80}}}]}}");
    status("/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/web",
           "{'status':{'currentReplicas':3,'desiredReplicas':3,'currentMetrics':["
           "{'type':'Resource','resource':{'name':'cpu','current':{'averageUtilization':41}}}]}}");
    create(
        "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers",
        "{'metadata':{'name':'old'},'spec':{'scaleTargetRef':{'apiVersion':'apps/v1',"
        "'kind':'Deployment','name':'web'},'maxReplicas':3,'targetCPUUtilizationPercentage':50}}");
    create("/apis/policy/v1/namespaces/default/poddisruptionbudgets",
           "{'metadata':{'name':'web'},'spec':{'maxUnavailable':'25%','selector':{'matchLabels':"
           "{'app':'web'}}}}");
    create("/apis/networking.k8s.io/v1/namespaces/default/ingresses",
           "{'metadata':{'name':'web'},'spec':{'rules':[{'host':'a.example.com'},"
           "{'host':'b.example.com'}]}}");
    create("/apis/storage.k8s.io/v1/storageclasses",
           "{'metadata':{'name':'slow'},'provisioner':'csi.example.com','reclaimPolicy':'Retain',"
           "'volumeBindingMode':'WaitForFirstConsumer','allowVolumeExpansion':true}");
    create("/apis/scheduling.k8s.io/v1/priorityclasses",
           "{'metadata':{'name':'critical'},'value':1000000,'globalDefault':false,"
           "'preemptionPolicy':'Never'}");
    create("/apis/certificates.k8s.io/v1/certificatesigningrequests",
           "{'metadata':{'name':'alice'},'spec':{'request':'"
           "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K',"
           "'signerName':'kubernetes.io/kube-apiserver-client','expirationSeconds':3600,"
           "'usages':['client auth']}}");
    advance(30 * SEC);

    json_t *t = get_table("/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers");
    assert_columns(t, "Name,Reference,Targets,MinPods,MaxPods,Replicas,Age", "");
    assert_row(t, row_named(t, "web", 0), "['web','Deployment/web','cpu: 41%/80%','2',10,3,'30s']");
    /* Stored once: the v1 object reads back through v2 with its target as a metric. */
    cr_assert_str_eq(jstr(t, S("rows.%zu.cells.2", row_named(t, "old", 0))), "cpu: <unknown>/50%");
    json_decref(t);
    t = get_table("/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/old");
    assert_row(t, 0, "['old','Deployment/web','cpu: <unknown>/50%','<unset>',3,0,'30s']");
    json_decref(t);
    t = get_table("/apis/policy/v1/namespaces/default/poddisruptionbudgets");
    assert_columns(t, "Name,Min Available,Max Unavailable,Allowed Disruptions,Age", "");
    assert_row(t, 0, "['web','N/A','25%',0,'30s']");
    json_decref(t);
    t = get_table("/apis/networking.k8s.io/v1/namespaces/default/ingresses");
    assert_columns(t, "Name,Class,Hosts,Address,Ports,Age", "");
    assert_row(t, 0, "['web','<none>','a.example.com,b.example.com','','80','30s']");
    json_decref(t);
    t = get_table("/apis/storage.k8s.io/v1/storageclasses/slow");
    assert_row(t, 0, "['slow','csi.example.com','Retain','WaitForFirstConsumer',true,'30s']");
    json_decref(t);
    t = get_table("/apis/scheduling.k8s.io/v1/priorityclasses/critical");
    assert_columns(t, "Name,Value,Global-Default,Age,PreemptionPolicy", "");
    assert_row(t, 0, "['critical',1000000,false,'30s','Never']");
    json_decref(t);
    t = get_table("/apis/certificates.k8s.io/v1/certificatesigningrequests/alice");
    assert_columns(t, "Name,Age,SignerName,Requestor,RequestedDuration,Condition", "");
    cr_assert_str_eq(jstr(t, "rows.0.cells.2"), "kubernetes.io/kube-apiserver-client");
    cr_assert_str_eq(jstr(t, "rows.0.cells.4"), "60m");
    cr_assert_str_eq(jstr(t, "rows.0.cells.5"), "Pending");
    json_decref(t);
}

Test(tables, watch_events_as_tables)
{
    json_t *first = req(201, "POST", "/api/v1/namespaces/default/events",
                        "{'metadata':{'name':'a'},'involvedObject':{'kind':'Pod','name':'p'},"
                        "'reason':'Started','message':'one','type':'Normal','count':1,"
                        "'lastTimestamp':'2026-12-02T09:35:36Z'}");
    unsigned long long rv = rv_of(first);
    json_decref(first);
    create("/api/v1/namespaces/default/events",
           "{'metadata':{'name':'b'},'involvedObject':{'kind':'Node','name':'n'},"
           "'reason':'Rebooted','message':'two','type':'Warning','count':2,"
           "'lastTimestamp':'2026-12-02T09:35:36Z'}");
    advance(7 * SEC);
    char *text = get_table_text(
        S("/api/v1/namespaces/default/events?watch=true&resourceVersion=%llu", rv - 1), 1500);
    char *nl = strchr(text, '\n');
    cr_assert_not_null(nl, "no watch event: %s", text);
    *nl = '\0';
    json_t *e1 = json_loads(text, 0, NULL), *e2 = json_loads(nl + 1, JSON_DISABLE_EOF_CHECK, NULL);
    cr_assert(e1 && e2, "events: %s", text);
    cr_assert_str_eq(jstr(e1, "type"), "ADDED");
    cr_assert_str_eq(jstr(e1, "object.kind"), "Table");
    /* The first event carries the columns; later ones only their rows. */
    cr_assert_eq(json_array_size(jget(e1, "object.columnDefinitions")), 10);
    cr_assert_str_eq(jstr(e1, "object.columnDefinitions.0.name"), "Last Seen");
    cr_assert_eq(json_array_size(jget(e2, "object.columnDefinitions")), 0);
    assert_row(jget(e1, "object"), 0,
               "['7s','Normal','Started','pod/p','','','one','<unknown>',1,'a']");
    assert_row(jget(e2, "object"), 0,
               "['7s','Warning','Rebooted','node/n','','','two','<unknown>',2,'b']");
    json_decref(e1);
    json_decref(e2);
    free(text);
}

Test(tables, plain_json_still_served_without_the_table_accept)
{
    create("/api/v1/namespaces/default/configmaps", "{'metadata':{'name':'x'}}");
    json_t *l = req(200, "GET", "/api/v1/namespaces/default/configmaps", NULL);
    cr_assert_str_eq(jstr(l, "kind"), "ConfigMapList");
    json_decref(l);
}
