/*
 * test_table_cols.c - the built-in kinds' Table printers, called directly on
 * JSON objects: each kind's column names, types and `-o wide` priorities as
 * the real server has them, and the cells its printer computes (statuses,
 * ages against the server clock, selectors, "+ N more..." lists, ...).
 * Kinds not served yet are covered here too, keyed by group and kind.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "table.h"
#include "table_cols.h"

/* 2026-12-02T09:35:36Z in ns. */
#define T0_NS (INT64_C(1796204136) * 1000000000)

/* JSON with ' for " so test documents stay readable. */
static json_t *J(const char *text)
{
    char *buf = strdup(text);
    for (char *p = buf; *p; p++)
        if (*p == '\'')
            *p = '"';
    json_error_t err;
    json_t *v = json_loads(buf, JSON_DECODE_ANY, &err);
    cr_assert_not_null(v, "bad test JSON: %s: %s", err.text, buf);
    free(buf);
    return v;
}

static void assert_json(const json_t *got, const char *expected_text, const char *what)
{
    json_t *want = J(expected_text);
    char *g = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY);
    cr_assert(json_equal((json_t *)got, want), "%s: got %s, want %s", what, g ? g : "NULL",
              expected_text);
    free(g);
    json_decref(want);
}

/* The cells printer p makes for obj (given as JSON text), at T0. */
static json_t *row_of(const fakeapi__printer *p, const char *obj_text)
{
    json_t *obj = J(obj_text);
    json_t *cells = json_array();
    for (size_t i = 0; i < p->ncols; i++) {
        json_t *c = p->cols[i].cell(obj, T0_NS, p->cols[i].arg);
        cr_assert_not_null(c, "%s column %s gave NULL", p->kind, p->cols[i].name);
        json_array_append_new(cells, c);
    }
    cr_assert_eq(obj->refcount, 1, "cells must not keep the object");
    json_decref(obj);
    return cells;
}

static const fakeapi__printer *find(const char *group, const char *kind)
{
    const fakeapi__printer *p = fakeapi__printer_find(group, kind);
    cr_assert_not_null(p);
    return p;
}

/* ---- columns --------------------------------------------------------------------------- */

/* Inline text, no pointers: Criterion may run each case in a fresh process image. */
typedef struct colcase {
    char group[40], kind[40];
    char names[160]; /* the columns kubectl shows without -o wide */
    char wide[80];   /* the priority-1 columns */
} colcase;

ParameterizedTestParameters(cols, names_and_priorities)
{
    static colcase cases[] = {
        {"", "Pod", "Name,Ready,Status,Restarts,Age", "IP,Node,Nominated Node,Readiness Gates"},
        {"apps", "Deployment", "Name,Ready,Up-to-date,Available,Age", "Containers,Images,Selector"},
        {"apps", "ReplicaSet", "Name,Desired,Current,Ready,Age", "Containers,Images,Selector"},
        {"apps", "StatefulSet", "Name,Ready,Age", "Containers,Images"},
        {"apps", "DaemonSet", "Name,Desired,Current,Ready,Up-to-date,Available,Node Selector,Age",
         "Containers,Images,Selector"},
        {"", "Service", "Name,Type,Cluster-IP,External-IP,Port(s),Age", "Selector"},
        {"", "Event", "Last Seen,Type,Reason,Object,Message",
         "Subobject,Source,First Seen,Count,Name"},
        {"events.k8s.io", "Event", "Last Seen,Type,Reason,Object,Message",
         "Subobject,Source,First Seen,Count,Name"},
        {"", "Node", "Name,Status,Roles,Age,Version",
         "Internal-IP,External-IP,OS-Image,Kernel-Version,Container-Runtime"},
        {"batch", "Job", "Name,Status,Completions,Duration,Age", "Containers,Images,Selector"},
        {"batch", "CronJob", "Name,Schedule,Timezone,Suspend,Active,Last Schedule,Age",
         "Containers,Images,Selector"},
        {"coordination.k8s.io", "Lease", "Name,Holder,Age", ""},
        {"", "ConfigMap", "Name,Data,Age", ""},
        {"", "Secret", "Name,Type,Data,Age", ""},
        {"", "Namespace", "Name,Status,Age", ""},
        {"", "ServiceAccount", "Name,Secrets,Age", ""},
        {"", "Endpoints", "Name,Endpoints,Age", ""},
        {"", "PersistentVolumeClaim",
         "Name,Status,Volume,Capacity,Access Modes,StorageClass,VolumeAttributesClass,Age",
         "VolumeMode"},
        {"", "PersistentVolume",
         "Name,Capacity,Access Modes,Reclaim Policy,Status,Claim,StorageClass,"
         "VolumeAttributesClass,Reason,Age",
         "VolumeMode"},
        {"rbac.authorization.k8s.io", "Role", "Name,Created At", ""},
        {"rbac.authorization.k8s.io", "ClusterRole", "Name,Created At", ""},
        {"rbac.authorization.k8s.io", "RoleBinding", "Name,Role,Age",
         "Users,Groups,ServiceAccounts"},
        {"rbac.authorization.k8s.io", "ClusterRoleBinding", "Name,Role,Age",
         "Users,Groups,ServiceAccounts"},
        {"policy", "PodDisruptionBudget",
         "Name,Min Available,Max Unavailable,Allowed Disruptions,Age", ""},
        {"autoscaling", "HorizontalPodAutoscaler",
         "Name,Reference,Targets,MinPods,MaxPods,Replicas,Age", ""},
        {"networking.k8s.io", "Ingress", "Name,Class,Hosts,Address,Ports,Age", ""},
        {"networking.k8s.io", "NetworkPolicy", "Name,Pod-Selector,Age", ""},
        {"storage.k8s.io", "StorageClass",
         "Name,Provisioner,ReclaimPolicy,VolumeBindingMode,AllowVolumeExpansion,Age", ""},
        {"scheduling.k8s.io", "PriorityClass", "Name,Value,Global-Default,Age,PreemptionPolicy",
         ""},
        {"certificates.k8s.io", "CertificateSigningRequest",
         "Name,Age,SignerName,Requestor,RequestedDuration,Condition", ""},
        {"apiextensions.k8s.io", "CustomResourceDefinition", "Name,Created At", ""},
        {"", "ResourceQuota", "Name,Request,Limit,Age", ""},
        {"", "ComponentStatus", "Name,Status,Message,Error", ""},
        {"", "LimitRange", "Name,Created At", ""},
        {"storage.k8s.io", "VolumeAttachment", "Name,Attacher,PV,Node,Attached,Age", ""},
        {"storage.k8s.io", "CSIStorageCapacity", "Name,StorageClassName,Capacity", ""},
        {"flowcontrol.apiserver.k8s.io", "FlowSchema",
         "Name,PriorityLevel,MatchingPrecedence,DistinguisherMethod,Age,MissingPL", ""},
        {"flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration",
         "Name,Type,NominalConcurrencyShares,Queues,HandSize,QueueLengthLimit,Age", ""},
        {"apiregistration.k8s.io", "APIService", "Name,Service,Available,Age", ""},
        {"admissionregistration.k8s.io", "ValidatingAdmissionPolicy",
         "Name,Validations,ParamKind,Age", ""},
        {"admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding",
         "Name,PolicyName,ParamRef,Age", ""},
        {"nope.example.com", "Widget", "Name,Created At", ""},
    };
    return cr_make_param_array(colcase, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(colcase *c, cols, names_and_priorities)
{
    const fakeapi__printer *p = find(c->group, c->kind);
    char names[512] = "", wide[512] = "";
    bool has_name = false;
    for (size_t i = 0; i < p->ncols; i++) {
        const fakeapi__colspec *col = &p->cols[i];
        char *dst = col->priority ? wide : names;
        if (*dst)
            strcat(dst, ",");
        strcat(dst, col->name);
        cr_assert(col->priority == 0 || col->priority == 1);
        cr_assert(col->type && (!strcmp(col->type, "string") || !strcmp(col->type, "integer") ||
                                !strcmp(col->type, "boolean") || !strcmp(col->type, "date")),
                  "%s/%s: bad type", c->kind, col->name);
        cr_assert(col->desc && *col->desc, "%s/%s: no description", c->kind, col->name);
        cr_assert_not_null(col->cell);
        if (!strcmp(col->name, "Name")) {
            cr_assert_str_eq(col->format, "name");
            has_name = true;
        }
    }
    cr_assert(has_name, "%s has no name-format column", c->kind);
    cr_assert_str_eq(names, c->names, "%s/%s", c->group, c->kind);
    cr_assert_str_eq(wide, c->wide, "%s/%s wide", c->group, c->kind);
}

/* Column types follow the real definitions, not the cells' JSON types. */
Test(cols, types_as_the_real_server)
{
    const fakeapi__printer *d = find("apps", "Deployment");
    cr_assert_str_eq(d->cols[2].type, "string"); /* Up-to-date */
    const fakeapi__printer *rs = find("apps", "ReplicaSet");
    cr_assert_str_eq(rs->cols[1].type, "integer"); /* Desired */
    const fakeapi__printer *cj = find("batch", "CronJob");
    cr_assert_str_eq(cj->cols[3].type, "boolean"); /* Suspend */
    const fakeapi__printer *cm = find("", "ConfigMap");
    cr_assert_str_eq(cm->cols[1].type, "string"); /* Data */
    const fakeapi__printer *def = find("rbac.authorization.k8s.io", "Role");
    cr_assert_str_eq(def->cols[1].type, "date");
}

/* ---- cells ----------------------------------------------------------------------------- */

typedef struct cellcase {
    char what[48], group[40], kind[40], obj[900], want[300];
} cellcase;

ParameterizedTestParameters(cells, computed)
{
    static cellcase cases[] = {
        /* Pods: STATUS and RESTARTS as printPod computes them. */
        {"pod running", "", "Pod",
         "{'metadata':{'name':'p','creationTimestamp':'2026-12-02T09:30:36Z'},"
         " 'spec':{'nodeName':'n1','containers':[{'name':'a'}]},"
         " 'status':{'phase':'Running','podIPs':[{'ip':'10.0.0.7'}],'podIP':'10.9.9.9',"
         "  'containerStatuses':[{'name':'a','ready':true,'restartCount':0,"
         "   'state':{'running':{}}}]}}",
         "['p','1/1','Running','0','5m','10.0.0.7','n1','<none>','<none>']"},
        {"pod init waiting", "", "Pod",
         "{'metadata':{'name':'p'},'spec':{'initContainers':[{'name':'i1'},{'name':'i2'}],"
         " 'containers':[{'name':'a'}]},"
         " 'status':{'phase':'Pending','initContainerStatuses':["
         "  {'name':'i1','state':{'terminated':{'exitCode':0}}},"
         "  {'name':'i2','state':{'waiting':{'reason':'PodInitializing'}}}]}}",
         "['p','0/1','Init:1/2','0','<unknown>','<none>','<none>','<none>','<none>']"},
        {"pod init crash", "", "Pod",
         "{'metadata':{'name':'p'},'spec':{'initContainers':[{'name':'i1'}],"
         " 'containers':[{'name':'a'}]},"
         " 'status':{'phase':'Pending','initContainerStatuses':["
         "  {'name':'i1','restartCount':4,'state':{'waiting':{'reason':'CrashLoopBackOff'}},"
         "   'lastState':{'terminated':{'exitCode':1,'finishedAt':'2026-12-02T09:35:06Z'}}}]}}",
         "['p','0/1','Init:CrashLoopBackOff','4 (30s ago)','<unknown>','<none>','<none>',"
         "'<none>','<none>']"},
        {"pod init signal", "", "Pod",
         "{'metadata':{'name':'p'},'spec':{'initContainers':[{'name':'i1'}],"
         " 'containers':[{'name':'a'}]},"
         " 'status':{'phase':'Pending','initContainerStatuses':["
         "  {'name':'i1','state':{'terminated':{'exitCode':137,'signal':9}}}]}}",
         "['p','0/1','Init:Signal:9','0','<unknown>','<none>','<none>','<none>','<none>']"},
        {"pod sidecar counts", "", "Pod",
         "{'metadata':{'name':'p'},'spec':{'initContainers':[{'name':'s','restartPolicy':'Always'}]"
         ","
         " 'containers':[{'name':'a'}]},"
         " 'status':{'phase':'Running','conditions':[{'type':'Initialized','status':'True'}],"
         "  'initContainerStatuses':[{'name':'s','started':true,'ready':true,'restartCount':2,"
         "   'state':{'running':{}}}],"
         "  'containerStatuses':[{'name':'a','ready':true,'restartCount':1,"
         "   'state':{'running':{}}}]}}",
         "['p','2/2','Running','3','<unknown>','<none>','<none>','<none>','<none>']"},
        {"pod exit code", "", "Pod",
         "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'a'}]},"
         " 'status':{'phase':'Failed','containerStatuses':[{'name':'a',"
         "   'state':{'terminated':{'exitCode':3}}}]}}",
         "['p','0/1','ExitCode:3','0','<unknown>','<none>','<none>','<none>','<none>']"},
        {"pod completed but one running, not ready", "", "Pod",
         "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'a'},{'name':'b'}]},"
         " 'status':{'phase':'Running','containerStatuses':["
         "  {'name':'a','ready':true,'state':{'running':{}}},"
         "  {'name':'b','state':{'terminated':{'exitCode':0,'reason':'Completed'}}}]}}",
         "['p','1/2','NotReady','0','<unknown>','<none>','<none>','<none>','<none>']"},
        {"pod terminating", "", "Pod",
         "{'metadata':{'name':'p','deletionTimestamp':'2026-12-02T09:35:30Z'},"
         " 'spec':{'containers':[{'name':'a'}]},'status':{'phase':'Running'}}",
         "['p','0/1','Terminating','0','<unknown>','<none>','<none>','<none>','<none>']"},
        {"pod deleted after success stays Succeeded", "", "Pod",
         "{'metadata':{'name':'p','deletionTimestamp':'2026-12-02T09:35:30Z'},"
         " 'spec':{'containers':[{'name':'a'}]},'status':{'phase':'Succeeded'}}",
         "['p','0/1','Succeeded','0','<unknown>','<none>','<none>','<none>','<none>']"},
        {"pod node lost", "", "Pod",
         "{'metadata':{'name':'p','deletionTimestamp':'2026-12-02T09:35:30Z'},"
         " 'spec':{'containers':[{'name':'a'}]},'status':{'phase':'Running','reason':'NodeLost'}}",
         "['p','0/1','Unknown','0','<unknown>','<none>','<none>','<none>','<none>']"},
        {"pod gated", "", "Pod",
         "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'a'}],"
         " 'readinessGates':[{'conditionType':'x/ok'},{'conditionType':'x/two'}]},"
         " 'status':{'phase':'Pending','nominatedNodeName':'n2','conditions':["
         "  {'type':'PodScheduled','status':'False','reason':'SchedulingGated'},"
         "  {'type':'x/ok','status':'True'}]}}",
         "['p','0/1','SchedulingGated','0','<unknown>','<none>','<none>','n2','1/2']"},
        /* Workloads. */
        {"statefulset", "apps", "StatefulSet",
         "{'metadata':{'name':'db','creationTimestamp':'2026-12-01T09:35:36Z'},"
         " 'spec':{'replicas':3,'template':{'spec':{'containers':[{'name':'pg','image':'pg:16'}]}}}"
         ","
         " 'status':{'readyReplicas':1}}",
         "['db','1/3','24h','pg','pg:16']"},
        {"daemonset", "apps", "DaemonSet",
         "{'metadata':{'name':'ds'},'spec':{'selector':{'matchLabels':{'app':'x'},"
         "  'matchExpressions':[{'key':'tier','operator':'In','values':['b','a']},"
         "   {'key':'gone','operator':'DoesNotExist'},{'key':'has','operator':'Exists'}]},"
         "  'template':{'spec':{'nodeSelector':{'os':'linux','arch':'arm'},"
         "   'containers':[{'name':'c','image':'i'}]}}},"
         " 'status':{'desiredNumberScheduled':3,'currentNumberScheduled':2,'numberReady':1,"
         "  'updatedNumberScheduled':2,'numberAvailable':1}}",
         "['ds',3,2,1,2,1,'arch=arm,os=linux','<unknown>','c','i',"
         "'app=x,!gone,has,tier in (a,b)']"},
        {"replicaset defaults", "apps", "ReplicaSet",
         "{'metadata':{'name':'rs'},'spec':{'selector':{'matchLabels':{'a':'b'}},"
         " 'template':{'spec':{'containers':[]}}}}",
         "['rs',1,0,0,'<unknown>','','','a=b']"},
        {"controller revision", "apps", "ControllerRevision",
         "{'metadata':{'name':'web-1','ownerReferences':[{'apiVersion':'apps/v1',"
         " 'kind':'StatefulSet','name':'web','controller':true}]},'revision':2}",
         "['web-1','statefulset.apps/web',2,'<unknown>']"},
        {"job failed wins over deletion", "batch", "Job",
         "{'metadata':{'name':'j','deletionTimestamp':'2026-12-02T09:35:00Z'},"
         " 'spec':{'completions':2,'template':{'spec':{'containers':[{'name':'c','image':'i'}]}}},"
         " 'status':{'conditions':[{'type':'Failed','status':'True'}]}}",
         "['j','Failed','0/2','','<unknown>','c','i','<none>']"},
        {"job terminating", "batch", "Job",
         "{'metadata':{'name':'j','deletionTimestamp':'2026-12-02T09:35:00Z'},"
         " 'status':{'startTime':'2026-12-02T09:25:36Z'}}",
         "['j','Terminating','0/1','10m','<unknown>','','','<none>']"},
        {"job suspended", "batch", "Job",
         "{'metadata':{'name':'j'},'spec':{'suspend':true},"
         " 'status':{'conditions':[{'type':'Suspended','status':'True'}]}}",
         "['j','Suspended','0/1','','<unknown>','','','<none>']"},
        {"cronjob with zone", "batch", "CronJob",
         "{'metadata':{'name':'cj'},'spec':{'schedule':'0 * * * *','timeZone':'Etc/UTC'}}",
         "['cj','0 * * * *','Etc/UTC','False',0,'<none>','<unknown>','','','<none>']"},
        {"hpa v2", "autoscaling", "HorizontalPodAutoscaler",
         "{'metadata':{'name':'h'},'spec':{'scaleTargetRef':{'kind':'Deployment','name':'web'},"
         " 'minReplicas':2,'maxReplicas':10,'metrics':["
         "  {'type':'Resource','resource':{'name':'cpu','target':{'type':'Utilization',"
         "   'averageUtilization':80}}},"
         "  {'type':'Pods','pods':{'metric':{'name':'qps'},'target':{'type':'AverageValue',"
         "   'averageValue':'1k'}}},"
         "  {'type':'External','external':{'metric':{'name':'q'},'target':{'type':'Value',"
         "   'value':'5'}}}]},"
         " 'status':{'currentReplicas':3,'currentMetrics':["
         "  {'type':'Resource','resource':{'name':'cpu','current':{'averageUtilization':45}}}]}}",
         "['h','Deployment/web','cpu: 45%/80%, <unknown>/1k + 1 more...','2',10,3,'<unknown>']"},
        {"hpa v1", "autoscaling", "HorizontalPodAutoscaler",
         "{'metadata':{'name':'h'},'spec':{'scaleTargetRef':{'kind':'Deployment','name':'web'},"
         " 'maxReplicas':4,'targetCPUUtilizationPercentage':50}}",
         "['h','Deployment/web','cpu: <unknown>/50%','<unset>',4,0,'<unknown>']"},
        {"hpa no metrics", "autoscaling", "HorizontalPodAutoscaler",
         "{'metadata':{'name':'h'},'spec':{'scaleTargetRef':{'kind':'StatefulSet','name':'s'},"
         " 'maxReplicas':1}}",
         "['h','StatefulSet/s','<none>','<unset>',1,0,'<unknown>']"},
        {"pdb", "policy", "PodDisruptionBudget",
         "{'metadata':{'name':'pdb'},'spec':{'minAvailable':'50%'},"
         " 'status':{'disruptionsAllowed':1}}",
         "['pdb','50%','N/A',1,'<unknown>']"},
        {"pdb max", "policy", "PodDisruptionBudget",
         "{'metadata':{'name':'pdb'},'spec':{'maxUnavailable':1}}",
         "['pdb','N/A','1',0,'<unknown>']"},
        /* Core. */
        {"service lb", "", "Service",
         "{'metadata':{'name':'s'},'spec':{'type':'LoadBalancer','clusterIPs':['10.96.0.9'],"
         " 'clusterIP':'10.96.0.9','externalIPs':['1.2.3.4'],'ports':[{'port':443,"
         " 'nodePort':31000,'protocol':'TCP'}]},"
         " 'status':{'loadBalancer':{'ingress':[{'ip':'9.9.9.9'},{'hostname':'lb.example'}]}}}",
         "['s','LoadBalancer','10.96.0.9','9.9.9.9,lb.example,1.2.3.4','443:31000/TCP',"
         "'<unknown>','<none>']"},
        {"service external name", "", "Service",
         "{'metadata':{'name':'s'},'spec':{'type':'ExternalName','externalName':'db.example'}}",
         "['s','ExternalName','<none>','db.example','<none>','<unknown>','<none>']"},
        {"service headless", "", "Service",
         "{'metadata':{'name':'s'},'spec':{'clusterIP':'None','selector':{'b':'2','a':'1'},"
         " 'ports':[{'port':80,'protocol':'TCP'}]}}",
         "['s','ClusterIP','None','<none>','80/TCP','<unknown>','a=1,b=2']"},
        {"core event", "", "Event",
         "{'metadata':{'name':'p.17a'},'involvedObject':{'kind':'Pod','name':'p',"
         " 'fieldPath':'spec.containers{a}'},'reason':'Pulled','type':'Normal',"
         " 'message':'  Pulled image  \\n','source':{'component':'kubelet','host':'n1'},"
         " 'firstTimestamp':'2026-12-02T09:30:36Z','lastTimestamp':'2026-12-02T09:35:26Z',"
         " 'count':3}",
         "['10s','Normal','Pulled','pod/p','spec.containers{a}','kubelet, n1','Pulled image',"
         "'5m',3,'p.17a']"},
        {"core event from the new API", "", "Event",
         "{'metadata':{'name':'e'},'involvedObject':{'kind':'Node'},'reason':'R','type':'Warning',"
         " 'eventTime':'2026-12-02T09:35:16.123456Z','reportingController':'ctl',"
         " 'reportingInstance':'ctl-1'}",
         "['19s','Warning','R','node','','ctl, ctl-1','','19s',1,'e']"},
        {"core event series", "", "Event",
         "{'metadata':{'name':'e'},'involvedObject':{'kind':'Pod','name':'x'},"
         " 'eventTime':'2026-12-02T09:00:36.000000Z',"
         " 'series':{'count':7,'lastObservedTime':'2026-12-02T09:34:36.000000Z'}}",
         "['60s','','','pod/x','','','','35m',7,'e']"},
        {"events.k8s.io event", "events.k8s.io", "Event",
         "{'metadata':{'name':'e2'},'regarding':{'kind':'Deployment','name':'web'},"
         " 'note':'Scaled up','reason':'ScalingReplicaSet','type':'Normal',"
         " 'reportingController':'deployment-controller',"
         " 'deprecatedFirstTimestamp':'2026-12-02T09:34:36Z',"
         " 'deprecatedLastTimestamp':'2026-12-02T09:35:06Z','deprecatedCount':2}",
         "['30s','Normal','ScalingReplicaSet','deployment/web','','deployment-controller',"
         "'Scaled up','60s',2,'e2']"},
        {"node not ready", "", "Node",
         "{'metadata':{'name':'n','labels':{'kubernetes.io/role':'edge'}},"
         " 'status':{'conditions':[{'type':'Ready','status':'Unknown'}],"
         "  'addresses':[{'type':'ExternalIP','address':'8.8.8.8'},"
         "   {'type':'InternalIP','address':'10.1.1.1'}],"
         "  'nodeInfo':{'kubeletVersion':'v1.32.1','osImage':'Debian','kernelVersion':'6.1',"
         "   'containerRuntimeVersion':'containerd://1.7'}}}",
         "['n','NotReady','edge','<unknown>','v1.32.1','10.1.1.1','8.8.8.8','Debian','6.1',"
         "'containerd://1.7']"},
        {"node no conditions", "", "Node", "{'metadata':{'name':'n'}}",
         "['n','Unknown','<none>','<unknown>','','<none>','<none>','<unknown>','<unknown>',"
         "'<unknown>']"},
        {"secret counts data", "", "Secret", "{'metadata':{'name':'s'},'data':{'a':'','b':''}}",
         "['s','Opaque',2,'<unknown>']"},
        {"service account", "", "ServiceAccount",
         "{'metadata':{'name':'sa','creationTimestamp':'2026-12-01T09:35:36Z'},"
         " 'secrets':[{'name':'tok'}]}",
         "['sa',1,'24h']"},
        {"endpoints", "", "Endpoints",
         "{'metadata':{'name':'e'},'subsets':[{'addresses':[{'ip':'10.0.0.1'},{'ip':'10.0.0.2'},"
         " {'ip':'fd00::3'}],'ports':[{'port':80},{'port':443}]}]}",
         "['e','10.0.0.1:80,10.0.0.2:80,[fd00::3]:80 + 3 more...','<unknown>']"},
        {"endpoints headless", "", "Endpoints",
         "{'metadata':{'name':'e'},'subsets':[{'addresses':[{'ip':'10.0.0.1'}]}]}",
         "['e','10.0.0.1','<unknown>']"},
        {"endpoints empty", "", "Endpoints", "{'metadata':{'name':'e'}}",
         "['e','<none>','<unknown>']"},
        {"pvc bound", "", "PersistentVolumeClaim",
         "{'metadata':{'name':'data'},'spec':{'volumeName':'pv1','storageClassName':'fast',"
         " 'volumeMode':'Filesystem'},"
         " 'status':{'phase':'Bound','capacity':{'storage':'10Gi'},"
         "  'accessModes':['ReadWriteMany','ReadWriteOnce']}}",
         "['data','Bound','pv1','10Gi','RWO,RWX','fast','<unset>','<unknown>','Filesystem']"},
        {"pvc pending, beta class", "", "PersistentVolumeClaim",
         "{'metadata':{'name':'d','annotations':{'volume.beta.kubernetes.io/storage-class':'old'}},"
         " 'spec':{'storageClassName':'fast'},'status':{'phase':'Pending'}}",
         "['d','Pending','','','','old','<unset>','<unknown>','Filesystem']"},
        {"pvc as stored before defaulting", "", "PersistentVolumeClaim",
         "{'metadata':{'name':'d'},'spec':{}}",
         "['d','Pending','','','','','<unset>','<unknown>','Filesystem']"},
        {"pv", "", "PersistentVolume",
         "{'metadata':{'name':'pv1'},'spec':{'capacity':{'storage':'5Gi'},"
         " 'accessModes':['ReadWriteOncePod'],'persistentVolumeReclaimPolicy':'Retain',"
         " 'claimRef':{'namespace':'ns','name':'data'}},'status':{'phase':'Bound'}}",
         "['pv1','5Gi','RWOP','Retain','Bound','ns/"
         "data','','<unset>','','<unknown>','Filesystem']"},
        /* Everything else. */
        {"rolebinding", "rbac.authorization.k8s.io", "RoleBinding",
         "{'metadata':{'name':'rb'},'roleRef':{'kind':'ClusterRole','name':'view'},"
         " 'subjects':[{'kind':'User','name':'alice'},{'kind':'User','name':'bob'},"
         "  "
         "{'kind':'Group','name':'devs'},{'kind':'ServiceAccount','name':'sa','namespace':'ns'}]}",
         "['rb','ClusterRole/view','<unknown>','alice, bob','devs','ns/sa']"},
        {"role without a timestamp", "rbac.authorization.k8s.io", "ClusterRole",
         "{'metadata':{'name':'r'}}", "['r','0001-01-01T00:00:00Z']"},
        {"role has created at", "rbac.authorization.k8s.io", "Role",
         "{'metadata':{'name':'r','creationTimestamp':'2026-12-02T11:35:36+02:00'}}",
         "['r','2026-12-02T09:35:36Z']"},
        {"ingress", "networking.k8s.io", "Ingress",
         "{'metadata':{'name':'i'},'spec':{'ingressClassName':'nginx','tls':[{}],'rules':["
         " {'host':'a.x'},{'host':'b.x'},{},{'host':'c.x'},{'host':'d.x'}]},"
         " 'status':{'loadBalancer':{'ingress':[{'ip':'5.5.5.5'}]}}}",
         "['i','nginx','a.x,b.x,c.x + 2 more...','5.5.5.5','80, 443','<unknown>']"},
        {"ingress bare", "networking.k8s.io", "Ingress", "{'metadata':{'name':'i'}}",
         "['i','<none>','*','','80','<unknown>']"},
        {"ingress class", "networking.k8s.io", "IngressClass",
         "{'metadata':{'name':'c'},'spec':{'controller':'k8s.io/nginx','parameters':{"
         " 'apiGroup':'k8s.example.com','kind':'P','name':'p1'}}}",
         "['c','k8s.io/nginx','P.k8s.example.com/p1','<unknown>']"},
        {"network policy", "networking.k8s.io", "NetworkPolicy",
         "{'metadata':{'name':'np'},'spec':{'podSelector':{}}}", "['np','<none>','<unknown>']"},
        {"endpoint slice", "discovery.k8s.io", "EndpointSlice",
         "{'metadata':{'name':'es'},'addressType':'IPv4','ports':[{'port':80},{'name':'x'},{}],"
         " 'endpoints':[{'addresses':['1.1.1.1','1.1.1.2']},{'addresses':['1.1.1.3','1.1.1.4']}]}",
         "['es','IPv4','80,x,*','1.1.1.1,1.1.1.2,1.1.1.3 + 1 more...','<unknown>']"},
        {"storage class default", "storage.k8s.io", "StorageClass",
         "{'metadata':{'name':'std','annotations':{"
         " 'storageclass.kubernetes.io/is-default-class':'true'}},'provisioner':'csi.x'}",
         "['std (default)','csi.x','Delete','Immediate',false,'<unknown>']"},
        {"csi driver", "storage.k8s.io", "CSIDriver",
         "{'metadata':{'name':'d'},'spec':{'tokenRequests':[{'audience':'a'},{'audience':'b'}],"
         " 'volumeLifecycleModes':['Persistent','Ephemeral']}}",
         "['d',true,false,false,'a,b',false,'Persistent,Ephemeral','<unknown>']"},
        {"priority class", "scheduling.k8s.io", "PriorityClass",
         "{'metadata':{'name':'hi'},'value':1000,'globalDefault':true,"
         " 'preemptionPolicy':'Never'}",
         "['hi',1000,true,'<unknown>','Never']"},
        {"priority class defaults", "scheduling.k8s.io", "PriorityClass",
         "{'metadata':{'name':'lo'},'value':-5}",
         "['lo',-5,false,'<unknown>','PreemptLowerPriority']"},
        {"csr", "certificates.k8s.io", "CertificateSigningRequest",
         "{'metadata':{'name':'c','creationTimestamp':'2026-12-02T09:35:26Z'},"
         " 'spec':{'signerName':'kubernetes.io/kube-apiserver-client','username':'alice',"
         "  'expirationSeconds':86400},"
         " 'status':{'conditions':[{'type':'Approved','status':'True'}],'certificate':'Zm9v'}}",
         "['c','10s','kubernetes.io/kube-apiserver-client','alice','24h','Approved,Issued']"},
        {"csr denied", "certificates.k8s.io", "CertificateSigningRequest",
         "{'metadata':{'name':'c'},'status':{'conditions':[{'type':'Approved'},"
         " {'type':'Denied'},{'type':'Failed'}]}}",
         "['c','<unknown>','<none>','','<none>','Denied,Failed']"},
        {"webhooks", "admissionregistration.k8s.io", "ValidatingWebhookConfiguration",
         "{'metadata':{'name':'w'},'webhooks':[{},{}]}", "['w',2,'<unknown>']"},
        {"quota", "", "ResourceQuota",
         "{'metadata':{'name':'q'},'status':{'hard':{'pods':'10','limits.cpu':'4',"
         " 'requests.cpu':'2','limits.memory':'8Gi'},'used':{'pods':'3','requests.cpu':'500m'}}}",
         "['q','pods: 3/10, requests.cpu: 500m/2','limits.cpu: 0/4, limits.memory: 0/8Gi',"
         "'<unknown>']"},
        {"component status", "", "ComponentStatus",
         "{'metadata':{'name':'etcd-0'},'conditions':[{'type':'Healthy','status':'True',"
         " 'message':'ok'}]}",
         "['etcd-0','Healthy','ok','']"},
        {"component status unknown", "", "ComponentStatus", "{'metadata':{'name':'x'}}",
         "['x','Unknown','','']"},
        {"volume attachment", "storage.k8s.io", "VolumeAttachment",
         "{'metadata':{'name':'va'},'spec':{'attacher':'csi.x','nodeName':'n1',"
         " 'source':{'persistentVolumeName':'pv1'}},'status':{'attached':true}}",
         "['va','csi.x','pv1','n1',true,'<unknown>']"},
        {"csi storage capacity", "storage.k8s.io", "CSIStorageCapacity",
         "{'metadata':{'name':'c'},'storageClassName':'fast'}", "['c','fast','<unset>']"},
        {"flow schema", "flowcontrol.apiserver.k8s.io", "FlowSchema",
         "{'metadata':{'name':'fs'},'spec':{'priorityLevelConfiguration':{'name':'global'},"
         " 'matchingPrecedence':1000,'distinguisherMethod':{'type':'ByUser'}},"
         " 'status':{'conditions':[{'type':'Dangling','status':'False'}]}}",
         "['fs','global',1000,'ByUser','<unknown>','False']"},
        {"flow schema bare", "flowcontrol.apiserver.k8s.io", "FlowSchema",
         "{'metadata':{'name':'fs'},'spec':{'priorityLevelConfiguration':{'name':'p'}}}",
         "['fs','p',0,'<none>','<unknown>','?']"},
        {"priority level limited", "flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration",
         "{'metadata':{'name':'pl'},'spec':{'type':'Limited','limited':{"
         " 'limitResponse':{'type':'Queue','queuing':{'queues':64,'handSize':6,"
         " 'queueLengthLimit':50}}}}}",
         "['pl','Limited',30,64,6,50,'<unknown>']"},
        {"priority level exempt", "flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration",
         "{'metadata':{'name':'ex'},'spec':{'type':'Exempt','exempt':{}}}",
         "['ex','Exempt','<none>','<none>','<none>','<none>','<unknown>']"},
        {"api service local", "apiregistration.k8s.io", "APIService",
         "{'metadata':{'name':'v1.apps'},'status':{'conditions':[{'type':'Available',"
         " 'status':'True','reason':'Local'}]}}",
         "['v1.apps','Local','True','<unknown>']"},
        {"api service down", "apiregistration.k8s.io", "APIService",
         "{'metadata':{'name':'v1beta1.metrics.k8s.io'},'spec':{'service':{'namespace':"
         " 'kube-system','name':'metrics-server'}},'status':{'conditions':[{'type':'Available',"
         " 'status':'False','reason':'MissingEndpoints'}]}}",
         "['v1beta1.metrics.k8s.io','kube-system/metrics-server','False (MissingEndpoints)',"
         "'<unknown>']"},
        {"admission policy", "admissionregistration.k8s.io", "ValidatingAdmissionPolicy",
         "{'metadata':{'name':'p'},'spec':{'validations':[{},{}],'paramKind':{"
         " 'apiVersion':'v1','kind':'ConfigMap'}}}",
         "['p',2,'v1/ConfigMap','<unknown>']"},
        {"admission binding", "admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding",
         "{'metadata':{'name':'b'},'spec':{'policyName':'p','paramRef':{'name':'cfg'}}}",
         "['b','p','*/cfg','<unknown>']"},
        {"admission binding selector", "admissionregistration.k8s.io",
         "ValidatingAdmissionPolicyBinding",
         "{'metadata':{'name':'b'},'spec':{'policyName':'p','paramRef':{'selector':{"
         " 'matchLabels':{'env':'prod'}}}}}",
         "['b','p','env=prod','<unknown>']"},
        {"mutating policy", "admissionregistration.k8s.io", "MutatingAdmissionPolicy",
         "{'metadata':{'name':'m'},'spec':{'mutations':[{}]}}", "['m',1,'<unset>','<unknown>']"},
        {"volume attributes class", "storage.k8s.io", "VolumeAttributesClass",
         "{'metadata':{'name':'gold','annotations':{'storage.kubernetes.io/is-default-class':"
         " 'true'}},'driverName':'csi.x'}",
         "['gold (default)','csi.x','<unknown>']"},
        {"service cidr", "networking.k8s.io", "ServiceCIDR",
         "{'metadata':{'name':'kubernetes'},'spec':{'cidrs':['10.96.0.0/12','fd00::/108']}}",
         "['kubernetes','10.96.0.0/12,fd00::/108','<unknown>']"},
        {"ip address", "networking.k8s.io", "IPAddress",
         "{'metadata':{'name':'10.96.0.1'},'spec':{'parentRef':{'group':'','resource':'services',"
         " 'namespace':'default','name':'kubernetes'}}}",
         "['10.96.0.1','services/default/kubernetes','<unknown>']"},
        {"cluster trust bundle", "certificates.k8s.io", "ClusterTrustBundle",
         "{'metadata':{'name':'b'}}", "['b','<none>']"},
        {"storage version migration", "storagemigration.k8s.io", "StorageVersionMigration",
         "{'metadata':{'name':'m'},'spec':{'resource':{'group':'apps','version':'v1',"
         " 'resource':'deployments'}}}",
         "['m','deployments.v1.apps']"},
        {"lease", "coordination.k8s.io", "Lease",
         "{'metadata':{'name':'l','creationTimestamp':'2026-12-02T09:35:00Z'},"
         " 'spec':{'holderIdentity':'node-1'}}",
         "['l','node-1','36s']"},
    };
    return cr_make_param_array(cellcase, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(cellcase *c, cells, computed)
{
    json_t *cells = row_of(find(c->group, c->kind), c->obj);
    assert_json(cells, c->want, c->what);
    json_decref(cells);
}

/* Every printer copes with an empty object (a watch DELETED tombstone, a bad client). */
Test(cells, every_printer_survives_an_empty_object)
{
    const struct {
        const fakeapi__printer *p;
        size_t n;
    } tables[] = {{fakeapi__printers_core, fakeapi__printers_core_n},
                  {fakeapi__printers_events, fakeapi__printers_events_n},
                  {fakeapi__printers_apps, fakeapi__printers_apps_n},
                  {fakeapi__printers_misc, fakeapi__printers_misc_n}};
    static const char *const objs[] = {
        "{}", "{'metadata':{'name':7},'spec':[],'status':'x'}",
        "{'spec':{'containers':{},'ports':[1,'a'],'rules':7},'status':{'conditions':[1]}}",
        "{'metadata':{'labels':{'node-role.kubernetes.io/x':5,'kubernetes.io/role':[]},"
        " 'annotations':7,'ownerReferences':[{'controller':true,'kind':3}]},"
        " 'spec':{'selector':{'matchLabels':{'a':1},'matchExpressions':[{'key':'k',"
        "  'operator':'In','values':[1,null]},{'operator':'Exists'},7]},"
        "  'template':{'spec':{'containers':[7,{'name':1}],'nodeSelector':{'x':[]}}},"
        "  'metrics':[7,{'type':'Resource'},{'type':'Pods','pods':7}],'tls':{},"
        "  'readinessGates':[{},7],'initContainers':[7],'ports':[{'nodePort':'x'}],"
        "  'scaleTargetRef':[],'subjects':[7]},"
        " 'status':{'containerStatuses':[7,{'state':7,'lastState':{'terminated':{"
        "  'finishedAt':'not a time'}}}],'initContainerStatuses':[{'state':{'terminated':7}}],"
        "  'hard':{'a':1},'addresses':[7],'loadBalancer':{'ingress':[7,{}]}},"
        " 'subsets':[7,{'addresses':[7],'ports':[7]}],'involvedObject':7,'series':{}}"};
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        for (size_t i = 0; i < tables[t].n; i++)
            for (size_t k = 0; k < sizeof objs / sizeof objs[0]; k++) {
                json_t *cells = row_of(&tables[t].p[i], objs[k]);
                cr_assert_eq(json_array_size(cells), tables[t].p[i].ncols);
                json_decref(cells);
            }
}

Test(cells, pod_completed_row_condition)
{
    const fakeapi__printer *p = find("", "Pod");
    cr_assert_not_null(p->conditions);
    json_t *obj = J("{'status':{'phase':'Succeeded'}}");
    json_t *c = p->conditions(obj);
    assert_json(c,
                "[{'type':'Completed','status':'True','reason':'Succeeded',"
                "'message':'The pod has completed successfully.'}]",
                "succeeded");
    json_decref(c);
    json_decref(obj);
    obj = J("{'status':{'phase':'Running'}}");
    cr_assert_null(p->conditions(obj));
    json_decref(obj);
}

Test(cells, long_cells_truncate)
{
    /* 400 containers of 20-character images exceed the cell bound: cut, never overrun. */
    char *obj = malloc(64 * 1024);
    strcpy(obj, "{'spec':{'template':{'spec':{'containers':[");
    for (int i = 0; i < 400; i++)
        sprintf(obj + strlen(obj), "%s{'name':'c%03d','image':'registry.example/img'}",
                i ? "," : "", i);
    strcat(obj, "]}}}}");
    json_t *cells = row_of(find("apps", "Deployment"), obj);
    const char *images = json_string_value(json_array_get(cells, 6));
    cr_assert_not_null(images);
    cr_assert_eq(strlen(images), FAKEAPI__MAX_CELL - 1);
    json_decref(cells);
    free(obj);
}

/* ---- the Table document ---------------------------------------------------------------- */

Test(table, flowschemas_list_in_matching_order)
{
    /* A built-in kind as the registry would describe it (it need not be served yet). */
    char group[] = "flowcontrol.apiserver.k8s.io", kind[] = "FlowSchema";
    fakeapi__resource r = {.group = group, .kind = kind};
    json_t *items = J("[{'metadata':{'name':'catch-all'},'spec':{'matchingPrecedence':10000}},"
                      " {'metadata':{'name':'exempt'},'spec':{'matchingPrecedence':1}},"
                      " {'metadata':{'name':'b-mid'},'spec':{'matchingPrecedence':500}},"
                      " {'metadata':{'name':'a-mid'},'spec':{'matchingPrecedence':500}}]");
    json_t *t = fakeapi__table_new(&r, items, "9", NULL, T0_NS);
    cr_assert_not_null(t);
    const char *want[] = {"exempt", "a-mid", "b-mid", "catch-all"};
    json_t *rows = json_object_get(t, "rows");
    cr_assert_eq(json_array_size(rows), 4);
    for (size_t i = 0; i < 4; i++)
        cr_assert_str_eq(
            json_string_value(json_array_get(json_object_get(json_array_get(rows, i), "cells"), 0)),
            want[i]);
    /* The caller's list is left as it was. */
    cr_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(json_array_get(items, 0), "metadata"), "name")),
                     "catch-all");
    cr_assert_eq(items->refcount, 1);
    json_decref(t);
    json_decref(items);
}

Test(table, not_yet_served_kinds_print_their_columns)
{
    char group[] = "policy", kind[] = "PodDisruptionBudget";
    fakeapi__resource r = {.group = group, .kind = kind};
    json_t *items = J("[{'metadata':{'name':'pdb','creationTimestamp':'2026-12-02T09:35:26Z'},"
                      "  'spec':{'minAvailable':2},'status':{'disruptionsAllowed':0}}]");
    json_t *t = fakeapi__table_new(&r, items, NULL, NULL, T0_NS);
    cr_assert_not_null(t);
    assert_json(json_object_get(json_array_get(json_object_get(t, "rows"), 0), "cells"),
                "['pdb','2','N/A',0,'10s']", "pdb row");
    assert_json(json_object_get(json_array_get(json_object_get(t, "columnDefinitions"), 3), "type"),
                "'integer'", "Allowed Disruptions type");
    json_decref(t);
    json_decref(items);
}

Test(table, include_object_modes)
{
    char group[] = "", kind[] = "ConfigMap";
    fakeapi__resource r = {.group = group, .kind = kind};
    json_t *items = J("[{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'a','uid':'u'},"
                      "  'data':{'k':'v'}}]");
    json_t *t = fakeapi__table_new_incl(&r, items, "3", NULL, T0_NS, FAKEAPI__INCLUDE_OBJECT);
    json_t *obj = json_object_get(json_array_get(json_object_get(t, "rows"), 0), "object");
    assert_json(obj,
                "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'a','uid':'u'},"
                "'data':{'k':'v'}}",
                "whole object");
    cr_assert_neq(obj, json_array_get(items, 0), "a copy, not the caller's object");
    json_decref(t);

    t = fakeapi__table_new_incl(&r, items, "3", NULL, T0_NS, FAKEAPI__INCLUDE_NONE);
    cr_assert_null(json_object_get(json_array_get(json_object_get(t, "rows"), 0), "object"));
    assert_json(json_object_get(json_array_get(json_object_get(t, "rows"), 0), "cells"),
                "['a',1,'<unknown>']", "cells without an object");
    json_decref(t);

    t = fakeapi__table_new(&r, items, "3", NULL, T0_NS);
    obj = json_object_get(json_array_get(json_object_get(t, "rows"), 0), "object");
    assert_json(obj,
                "{'kind':'PartialObjectMetadata','apiVersion':'meta.k8s.io/v1',"
                "'metadata':{'name':'a','uid':'u'}}",
                "metadata by default");
    json_decref(t);
    json_decref(items);
}

Test(table, include_object_values)
{
    fakeapi__table_include inc = FAKEAPI__INCLUDE_NONE;
    cr_assert_eq(fakeapi__table_include_parse(NULL, &inc), 0);
    cr_assert_eq(inc, FAKEAPI__INCLUDE_METADATA);
    cr_assert_eq(fakeapi__table_include_parse("Object", &inc), 0);
    cr_assert_eq(inc, FAKEAPI__INCLUDE_OBJECT);
    cr_assert_eq(fakeapi__table_include_parse("None", &inc), 0);
    cr_assert_eq(inc, FAKEAPI__INCLUDE_NONE);
    cr_assert_eq(fakeapi__table_include_parse("Metadata", &inc), 0);
    cr_assert_eq(inc, FAKEAPI__INCLUDE_METADATA);
    cr_assert_eq(fakeapi__table_include_parse("object", &inc), -1, "values are case-sensitive");
    cr_assert_eq(fakeapi__table_include_parse("Everything", &inc), -1);
    cr_assert_eq(inc, FAKEAPI__INCLUDE_METADATA, "untouched on error");
}
