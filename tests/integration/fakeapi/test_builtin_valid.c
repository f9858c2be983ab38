/*
 * test_builtin_valid.c - built-in objects checked by their types and their
 * kinds' rules, over HTTP: wrong JSON types at any depth are 400 in the
 * decoder's words, unknown fields follow fieldValidation (Strict: 400,
 * Warn and the default: Warning headers and dropped, Ignore: dropped), the
 * common kinds' rules are 422 Invalid with the server's causes, and nothing
 * invalid is ever stored.
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fakeapi/fakeapi.h"
#include "apitest.h"

TestSuite(builtin_valid, .init = setup, .fini = teardown);

#define PODS "/api/v1/namespaces/default/pods"
#define SVCS "/api/v1/namespaces/default/services"
#define JOBS "/apis/batch/v1/namespaces/default/jobs"
#define CRONJOBS "/apis/batch/v1/namespaces/default/cronjobs"
#define SECRETS "/api/v1/namespaces/default/secrets"
#define CMS "/api/v1/namespaces/default/configmaps"
#define STS "/apis/apps/v1/namespaces/default/statefulsets"
#define MERGE "application/merge-patch+json"

#define DEPLOY_IN "Deployment in version \"v1\" cannot be handled as a Deployment: "
#define POD_IN "Pod in version \"v1\" cannot be handled as a Pod: "
#define SVC_IN "Service in version \"v1\" cannot be handled as a Service: "
#define CTR "'containers':[{'name':'c','image':'nginx'}]"
#define TMPL(labels, spec) "'template':{'metadata':{'labels':" labels "},'spec':{" spec "}}"
#define DEPLOY(spec) "{'metadata':{'name':'d'},'spec':{" spec "}}"
#define POD(spec) "{'metadata':{'name':'p'},'spec':{" spec "}}"
#define DNS_LABEL_MSG                                                                              \
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "   \
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "     \
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"

typedef struct bad_type {
    const char *path, *body, *message;
} bad_type;

/* What the JSON decoder refuses, as it words it: the innermost struct, the
 * JSON path from the root, the Go type. */
static const bad_type bad_types[] = {
    {DEPLOYS, DEPLOY("'replicas':'3'"),
     DEPLOY_IN "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas "
               "of type int32"},
    {DEPLOYS, DEPLOY("'replicas':3.5"),
     DEPLOY_IN
     "json: cannot unmarshal number 3.5 into Go struct field DeploymentSpec.spec.replicas "
     "of type int32"},
    {DEPLOYS, DEPLOY(TMPL("'x'", CTR)),
     DEPLOY_IN "json: cannot unmarshal string into Go struct field "
               "ObjectMeta.spec.template.metadata.labels of type map[string]string"},
    {DEPLOYS, DEPLOY("'strategy':{'rollingUpdate':{'maxSurge':true}}"),
     DEPLOY_IN "json: cannot unmarshal bool into Go value of type int32"},
    {PODS, POD("'containers':{}"),
     POD_IN "json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type "
            "[]v1.Container"},
    {PODS, POD("'containers':[{'name':'c','image':'x','ports':[{'containerPort':'80'}]}]"),
     POD_IN "json: cannot unmarshal string into Go struct field "
            "ContainerPort.spec.containers.ports.containerPort of type int32"},
    {PODS, POD("'restartPolicy':1," CTR),
     POD_IN "json: cannot unmarshal number into Go struct field PodSpec.spec.restartPolicy of "
            "type v1.RestartPolicy"},
    {PODS, POD("'containers':[{'name':'c','image':'x','resources':{'limits':{'cpu':'lots'}}}]"),
     POD_IN "quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
    {PODS, POD("'containers':[{'name':'c','image':'x','resources':{'limits':{'cpu':'1.2.3'}}}]"),
     POD_IN "unable to parse numeric part of quantity"},
    {PODS, POD("'containers':[{'name':'c','image':'x','resources':{'limits':{'memory':'1Qi'}}}]"),
     POD_IN "quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
    {PODS, POD("'containers':[{'name':'c','image':'x','resources':{'limits':{'memory':'1ki'}}}]"),
     POD_IN "unable to parse quantity's suffix"},
    {PODS, POD("'activeDeadlineSeconds':[1]," CTR),
     POD_IN "json: cannot unmarshal array into Go struct field PodSpec.spec.activeDeadlineSeconds "
            "of type int64"},
    {PODS, POD("'volumes':[{'name':'v','configMap':{'items':[{'key':'k','mode':'x'}]}}]," CTR),
     POD_IN "json: cannot unmarshal string into Go struct field "
            "KeyToPath.spec.volumes.configMap.items.mode of type int32"},
    {SVCS, "{'metadata':{'name':'s'},'spec':{'ports':[{'port':80,'targetPort':{'a':1}}]}}",
     SVC_IN "json: cannot unmarshal object into Go value of type int32"},
    {SVCS, "{'metadata':{'name':'s'},'spec':{'ports':[{'port':80,'targetPort':1.5}]}}",
     SVC_IN "json: cannot unmarshal number 1.5 into Go value of type int32"},
    {SVCS, "{'metadata':{'name':'s'},'spec':{'type':['ClusterIP']}}",
     SVC_IN "json: cannot unmarshal array into Go struct field ServiceSpec.spec.type of type "
            "v1.ServiceType"},
    {JOBS, "{'metadata':{'name':'j'},'spec':{'suspend':'no'}}",
     "Job in version \"v1\" cannot be handled as a Job: json: cannot unmarshal string into Go "
     "struct field JobSpec.spec.suspend of type bool"},
    {PODS, "{'metadata':{'name':'p'},'status':{'startTime':5}}",
     POD_IN "json: cannot unmarshal number into Go value of type string"},
    {PODS, "{'metadata':{'name':'p','creationTimestamp':'2024/01/01'}}",
     POD_IN "parsing time \"2024/01/01\" as \"2006-01-02T15:04:05Z07:00\": cannot parse "
            "\"/01/01\" as \"-\""},
    {PODS, "{'metadata':{'name':'p','creationTimestamp':'yesterday'}}",
     POD_IN "parsing time \"yesterday\" as \"2006-01-02T15:04:05Z07:00\": cannot parse "
            "\"yesterday\" as \"2006\""},
    {PODS, "{'metadata':{'name':'p','creationTimestamp':'2024-13-01T00:00:00Z'}}",
     POD_IN "parsing time \"2024-13-01T00:00:00Z\": month out of range"},
    {PODS, "{'metadata':{'name':'p','creationTimestamp':'2023-02-29T00:00:00Z'}}",
     POD_IN "parsing time \"2023-02-29T00:00:00Z\": day out of range"},
    {PODS, "{'metadata':{'name':'p','creationTimestamp':'2024-01-01T00:00:00'}}",
     POD_IN "parsing time \"2024-01-01T00:00:00\" as \"2006-01-02T15:04:05Z07:00\": cannot "
            "parse \"\" as \"Z07:00\""},
    {PODS, "{'metadata':{'name':'p','creationTimestamp':'2024-01-01T00:00:00Zjunk'}}",
     POD_IN "parsing time \"2024-01-01T00:00:00Zjunk\": extra text: \"junk\""},
    {"/apis/events.k8s.io/v1/namespaces/default/events",
     "{'metadata':{'name':'e'},'eventTime':'2024-01-01T00:00:00Z'}",
     "Event in version \"v1\" cannot be handled as a Event: parsing time "
     "\"2024-01-01T00:00:00Z\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"Z\" as "
     "\".000000\""},
};

Test(builtin_valid, wrong_types_are_400_in_the_decoders_words)
{
    unsigned long long before = rev();
    for (size_t i = 0; i < sizeof bad_types / sizeof bad_types[0]; i++) {
        const bad_type *b = &bad_types[i];
        json_t *st = req_fail(400, "BadRequest", "POST", b->path, b->body);
        cr_assert_str_eq(jstr(st, "message"), b->message, "case %zu", i);
        json_decref(st);
    }
    cr_assert_eq(rev(), before, "nothing was written");
    /* What the types take: quantities as numbers or canonical strings,
     * IntOrString either way, raw JSON anything. */
    json_decref(req(201, "POST", PODS,
                    POD("'containers':[{'name':'c','image':'x','resources':{'limits':{'cpu':1.5,"
                        "'memory':'128Mi'},'requests':{'cpu':'250m','memory':'1e3'}}}]")));
    json_decref(req(201, "POST", DEPLOYS,
                    DEPLOY("'selector':{'matchLabels':{'a':'b'}},'strategy':{'rollingUpdate':{"
                           "'maxSurge':1,'maxUnavailable':'50%'}}," TMPL("{'a':'b'}", CTR))));
    /* Times in RFC 3339, with a fraction or an offset. */
    json_decref(req(201, "POST", PODS,
                    "{'metadata':{'name':'t'},'spec':{" CTR "},'status':{'startTime':"
                    "'2024-02-29T23:59:59.5+05:30'}}"));
}

typedef struct bad_rule {
    const char *path, *body;
    const char *message; /* the whole Status message */
    int causes;          /* how many causes */
    const char *field;   /* the first cause's field */
    const char *reason;  /* and its reason */
} bad_rule;

#define SEL "'selector':{'matchLabels':{'app':'web'}},"
#define WEB "{'app':'web'}"

static const bad_rule bad_rules[] = {
    {PODS, POD("'containers':[]"), "Pod \"p\" is invalid: spec.containers: Required value", 1,
     "spec.containers", "FieldValueRequired"},
    {PODS, POD("'containers':[{'name':'c'}]"),
     "Pod \"p\" is invalid: spec.containers[0].image: Required value", 1,
     "spec.containers[0].image", "FieldValueRequired"},
    {PODS, POD("'containers':[{'image':'x'}]"),
     "Pod \"p\" is invalid: spec.containers[0].name: Required value", 1, "spec.containers[0].name",
     "FieldValueRequired"},
    {PODS, POD("'containers':[{'name':'Web','image':'x'}]"),
     "Pod \"p\" is invalid: spec.containers[0].name: Invalid value: \"Web\": " DNS_LABEL_MSG, 1,
     "spec.containers[0].name", "FieldValueInvalid"},
    {PODS, POD("'containers':[{'name':'a','image':'x'},{'name':'a','image':'y'}]"),
     "Pod \"p\" is invalid: spec.containers[1].name: Duplicate value: \"a\"", 1,
     "spec.containers[1].name", "FieldValueDuplicate"},
    {PODS,
     POD("'initContainers':[{'name':'a','image':'x'}],'containers':[{'name':'a','image':'y'}]"),
     "Pod \"p\" is invalid: spec.containers[0].name: Duplicate value: \"a\"", 1,
     "spec.containers[0].name", "FieldValueDuplicate"},
    {PODS, POD("'containers':[{'name':'c','image':'x','ports':[{'containerPort':0}]}]"),
     "Pod \"p\" is invalid: spec.containers[0].ports[0].containerPort: Required value", 1,
     "spec.containers[0].ports[0].containerPort", "FieldValueRequired"},
    {PODS,
     POD("'containers':[{'name':'c','image':'x','ports':[{'containerPort':70000,'hostPort':-1,"
         "'protocol':'ICMP'}]}]"),
     "Pod \"p\" is invalid: [spec.containers[0].ports[0].containerPort: Invalid value: 70000: must "
     "be between 1 and 65535, inclusive, spec.containers[0].ports[0].hostPort: Invalid value: -1: "
     "must be between 1 and 65535, inclusive, spec.containers[0].ports[0].protocol: Unsupported "
     "value: \"ICMP\": supported values: \"SCTP\", \"TCP\", \"UDP\"]",
     3, "spec.containers[0].ports[0].containerPort", "FieldValueInvalid"},
    {PODS,
     POD("'volumes':[{'name':'data'},{'name':'data'}],'containers':[{'name':'c','image':'x',"
         "'env':[{'name':'A=B'}],'volumeMounts':[{'name':'cfg','mountPath':'/"
         "etc'},{'name':'data'}]}]"),
     "Pod \"p\" is invalid: [spec.volumes[1].name: Duplicate value: \"data\", "
     "spec.containers[0].env[0].name: Invalid value: \"A=B\": a valid environment variable name "
     "must consist only of printable ASCII characters other than '=', "
     "spec.containers[0].volumeMounts[0].name: Not found: \"cfg\", "
     "spec.containers[0].volumeMounts[1].mountPath: Required value]",
     4, "spec.volumes[1].name", "FieldValueDuplicate"},
    {PODS, POD("'restartPolicy':'Sometimes'," CTR),
     "Pod \"p\" is invalid: spec.restartPolicy: Unsupported value: \"Sometimes\": supported "
     "values: \"Always\", \"OnFailure\", \"Never\"",
     1, "spec.restartPolicy", "FieldValueNotSupported"},
    {PODS, POD("'dnsPolicy':'Google'," CTR),
     "Pod \"p\" is invalid: spec.dnsPolicy: Unsupported value: \"Google\": supported values: "
     "\"ClusterFirstWithHostNet\", \"ClusterFirst\", \"Default\", \"None\"",
     1, "spec.dnsPolicy", "FieldValueNotSupported"},
    {PODS, POD("'containers':[{'name':'c','image':'x','imagePullPolicy':'Sometimes'}]"),
     "Pod \"p\" is invalid: spec.containers[0].imagePullPolicy: Unsupported value: \"Sometimes\": "
     "supported values: \"Always\", \"IfNotPresent\", \"Never\"",
     1, "spec.containers[0].imagePullPolicy", "FieldValueNotSupported"},
    /* A Deployment without a selector matches nothing: two causes, as upstream. */
    {DEPLOYS, DEPLOY(TMPL(WEB, CTR)),
     "Deployment.apps \"d\" is invalid: [spec.selector: Required value, "
     "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: "
     "`selector` does not match template `labels`]",
     2, "spec.selector", "FieldValueRequired"},
    {DEPLOYS,
     DEPLOY("'selector':{'matchLabels':{'app':'db'}}," TMPL("{'app':'web','tier':'x'}", CTR)),
     "Deployment.apps \"d\" is invalid: spec.template.metadata.labels: Invalid value: "
     "map[string]string{\"app\":\"web\", \"tier\":\"x\"}: `selector` does not match template "
     "`labels`",
     1, "spec.template.metadata.labels", "FieldValueInvalid"},
    {DEPLOYS,
     DEPLOY("'selector':{'matchExpressions':[{'key':'app','operator':'NotIn','values':['web']}]}"
            "," TMPL(WEB, CTR)),
     "Deployment.apps \"d\" is invalid: spec.template.metadata.labels: Invalid value: "
     "map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`",
     1, "spec.template.metadata.labels", "FieldValueInvalid"},
    {DEPLOYS, DEPLOY("'selector':{}," TMPL(WEB, CTR)),
     "Deployment.apps \"d\" is invalid: spec.selector: Invalid value: "
     "v1.LabelSelector{MatchLabels:map[string]string(nil), "
     "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for "
     "deployment",
     1, "spec.selector", "FieldValueInvalid"},
    {DEPLOYS, DEPLOY("'replicas':-1," SEL TMPL(WEB, CTR)),
     "Deployment.apps \"d\" is invalid: spec.replicas: Invalid value: -1: must be greater than or "
     "equal to 0",
     1, "spec.replicas", "FieldValueInvalid"},
    {DEPLOYS, DEPLOY(SEL TMPL(WEB, "'restartPolicy':'Never'," CTR)),
     "Deployment.apps \"d\" is invalid: spec.template.spec.restartPolicy: Unsupported value: "
     "\"Never\": supported values: \"Always\"",
     1, "spec.template.spec.restartPolicy", "FieldValueNotSupported"},
    {DEPLOYS, DEPLOY(SEL TMPL(WEB, "'containers':[{'name':'c'}]")),
     "Deployment.apps \"d\" is invalid: spec.template.spec.containers[0].image: Required value", 1,
     "spec.template.spec.containers[0].image", "FieldValueRequired"},
    {STS, "{'metadata':{'name':'s'},'spec':{'replicas':-2," SEL TMPL(WEB, CTR) "}}",
     "StatefulSet.apps \"s\" is invalid: spec.replicas: Invalid value: -2: must be greater than "
     "or equal to 0",
     1, "spec.replicas", "FieldValueInvalid"},
    {"/apis/apps/v1/namespaces/default/daemonsets",
     "{'metadata':{'name':'ds'},'spec':{" TMPL(WEB, CTR) "}}",
     "DaemonSet.apps \"ds\" is invalid: [spec.selector: Required value, "
     "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: "
     "`selector` does not match template `labels`]",
     2, "spec.selector", "FieldValueRequired"},
    {"/apis/apps/v1/namespaces/default/replicasets",
     "{'metadata':{'name':'rs'},'spec':{" SEL TMPL("{'app':'db'}", CTR) "}}",
     "ReplicaSet.apps \"rs\" is invalid: spec.template.metadata.labels: Invalid value: "
     "map[string]string{\"app\":\"db\"}: `selector` does not match template `labels`",
     1, "spec.template.metadata.labels", "FieldValueInvalid"},
    /* A Job's pods must not restart Always, which is what a pod defaults to. */
    {JOBS, "{'metadata':{'name':'j'},'spec':{'template':{'spec':{" CTR "}}}}",
     "Job.batch \"j\" is invalid: spec.template.spec.restartPolicy: Unsupported value: "
     "\"Always\": supported values: \"OnFailure\", \"Never\"",
     1, "spec.template.spec.restartPolicy", "FieldValueNotSupported"},
    {JOBS,
     "{'metadata':{'name':'j'},'spec':{'backoffLimit':-1,'template':{'spec':{'restartPolicy':"
     "'Never'," CTR "}}}}",
     "Job.batch \"j\" is invalid: spec.backoffLimit: Invalid value: -1: must be greater than or "
     "equal to 0",
     1, "spec.backoffLimit", "FieldValueInvalid"},
    {JOBS,
     "{'metadata':{'name':'j'},'spec':{'manualSelector':true,'template':{'spec':{"
     "'restartPolicy':'Never'," CTR "}}}}",
     "Job.batch \"j\" is invalid: spec.selector: Required value", 1, "spec.selector",
     "FieldValueRequired"},
#define CJ(sched)                                                                                  \
    "{'metadata':{'name':'cj'},'spec':{'schedule':'" sched "','jobTemplate':{'spec':{'template':{" \
    "'spec':{'restartPolicy':'OnFailure'," CTR "}}}}}}"
    {CRONJOBS, CJ("every minute"),
     "CronJob.batch \"cj\" is invalid: spec.schedule: Invalid value: \"every minute\": expected "
     "exactly 5 fields, found 2: [every minute]",
     1, "spec.schedule", "FieldValueInvalid"},
    {CRONJOBS, CJ("0 25 * * *"),
     "CronJob.batch \"cj\" is invalid: spec.schedule: Invalid value: \"0 25 * * *\": end of range "
     "(25) above maximum (23): 25",
     1, "spec.schedule", "FieldValueInvalid"},
    {CRONJOBS, CJ("*/x * * * *"),
     "CronJob.batch \"cj\" is invalid: spec.schedule: Invalid value: \"*/x * * * *\": failed to "
     "parse int from x: strconv.Atoi: parsing \"x\": invalid syntax",
     1, "spec.schedule", "FieldValueInvalid"},
    {CRONJOBS, CJ("5-1 * * * *"),
     "CronJob.batch \"cj\" is invalid: spec.schedule: Invalid value: \"5-1 * * * *\": beginning of "
     "range (5) beyond end of range (1): 5-1",
     1, "spec.schedule", "FieldValueInvalid"},
    {CRONJOBS, CJ("@sometimes"),
     "CronJob.batch \"cj\" is invalid: spec.schedule: Invalid value: \"@sometimes\": unrecognized "
     "descriptor: @sometimes",
     1, "spec.schedule", "FieldValueInvalid"},
    {CRONJOBS, CJ("TZ=UTC 0 * * * *"),
     "CronJob.batch \"cj\" is invalid: spec.schedule: Invalid value: \"TZ=UTC 0 * * * *\": cannot "
     "use TZ or CRON_TZ in schedule, use timeZone field instead",
     1, "spec.schedule", "FieldValueInvalid"},
    {CRONJOBS,
     "{'metadata':{'name':'cj'},'spec':{'schedule':'@hourly','jobTemplate':{'spec':{'template':{"
     "'spec':{'restartPolicy':'Always'," CTR "}}}}}}",
     "CronJob.batch \"cj\" is invalid: spec.jobTemplate.spec.template.spec.restartPolicy: "
     "Unsupported value: \"Always\": supported values: \"OnFailure\", \"Never\"",
     1, "spec.jobTemplate.spec.template.spec.restartPolicy", "FieldValueNotSupported"},
    {SVCS, "{'metadata':{'name':'s'},'spec':{'selector':{'a':'b'}}}",
     "Service \"s\" is invalid: spec.ports: Required value", 1, "spec.ports", "FieldValueRequired"},
    {SVCS, "{'metadata':{'name':'s'},'spec':{'ports':[{'port':80},{'port':81,'name':'b'}]}}",
     "Service \"s\" is invalid: spec.ports[0].name: Required value", 1, "spec.ports[0].name",
     "FieldValueRequired"},
    {SVCS,
     "{'metadata':{'name':'s'},'spec':{'ports':[{'port':80,'name':'a'},{'port':81,'name':'a'}]}}",
     "Service \"s\" is invalid: spec.ports[1].name: Duplicate value: \"a\"", 1,
     "spec.ports[1].name", "FieldValueDuplicate"},
    {SVCS, "{'metadata':{'name':'s'},'spec':{'ports':[{'port':65536,'protocol':'HTTP'}]}}",
     "Service \"s\" is invalid: [spec.ports[0].port: Invalid value: 65536: must be between 1 and "
     "65535, inclusive, spec.ports[0].protocol: Unsupported value: \"HTTP\": supported values: "
     "\"SCTP\", \"TCP\", \"UDP\", spec.ports[0].targetPort: Invalid value: 65536: must be "
     "between 1 and 65535, inclusive]",
     3, "spec.ports[0].port", "FieldValueInvalid"},
    {SVCS, "{'metadata':{'name':'s'},'spec':{'type':'Magic','ports':[{'port':80}]}}",
     "Service \"s\" is invalid: spec.type: Unsupported value: \"Magic\": supported values: "
     "\"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\"",
     1, "spec.type", "FieldValueNotSupported"},
    {SVCS, "{'metadata':{'name':'s'},'spec':{'type':'ExternalName'}}",
     "Service \"s\" is invalid: spec.externalName: Required value", 1, "spec.externalName",
     "FieldValueRequired"},
    {SVCS, "{'metadata':{'name':'s'},'spec':{'clusterIP':'1.2.3.4','ports':[{'port':80}]}}",
     "Service \"s\" is invalid: spec.clusterIPs: Invalid value: []string{\"1.2.3.4\"}: failed to "
     "allocate IP 1.2.3.4: the provided IP (1.2.3.4) is not in the valid range. The range of "
     "valid IPs is 10.96.0.0/12",
     1, "spec.clusterIPs", "FieldValueInvalid"},
    {SVCS, "{'metadata':{'name':'s'},'spec':{'clusterIP':'ten','ports':[{'port':80}]}}",
     "Service \"s\" is invalid: spec.clusterIPs[0]: Invalid value: \"ten\": must be a valid IP "
     "address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
     1, "spec.clusterIPs[0]", "FieldValueInvalid"},
    {SVCS,
     "{'metadata':{'name':'s'},'spec':{'type':'NodePort','ports':[{'port':80,'nodePort':80}]}}",
     "Service \"s\" is invalid: spec.ports[0].nodePort: Invalid value: 80: provided port is not in "
     "the valid range. The range of valid ports is 30000-32767",
     1, "spec.ports[0].nodePort", "FieldValueInvalid"},
    {CMS, "{'metadata':{'name':'c'},'data':{'a b':'x','..x':'y'}}",
     "ConfigMap \"c\" is invalid: [data[a b]: Invalid value: \"a b\": a valid config key must "
     "consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or "
     "'key-name', regex used for validation is '[-._a-zA-Z0-9]+'), data[..x]: Invalid value: "
     "\"..x\": must not start with '..']",
     2, "data[a b]", "FieldValueInvalid"},
    {CMS, "{'metadata':{'name':'c'},'data':{'k':'x'},'binaryData':{'k':'eA=='}}",
     "ConfigMap \"c\" is invalid: binaryData[k]: Invalid value: \"k\": duplicate of key present "
     "in data",
     1, "binaryData[k]", "FieldValueInvalid"},
    {SECRETS, "{'metadata':{'name':'s'},'data':{'a/b':'eA=='}}",
     "Secret \"s\" is invalid: data[a/b]: Invalid value: \"a/b\": a valid config key must consist "
     "of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or "
     "'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
     1, "data[a/b]", "FieldValueInvalid"},
    {SECRETS, "{'metadata':{'name':'s'},'type':'kubernetes.io/tls','data':{'tls.crt':'eA=='}}",
     "Secret \"s\" is invalid: data[tls.key]: Required value", 1, "data[tls.key]",
     "FieldValueRequired"},
};

Test(builtin_valid, rules_are_422_with_the_servers_causes)
{
    unsigned long long before = rev();
    for (size_t i = 0; i < sizeof bad_rules / sizeof bad_rules[0]; i++) {
        const bad_rule *b = &bad_rules[i];
        json_t *st = req_fail(422, "Invalid", "POST", b->path, b->body);
        cr_assert_str_eq(jstr(st, "message"), b->message, "case %zu", i);
        json_t *causes = jget(st, "details.causes");
        cr_assert_eq(json_array_size(causes), (size_t)b->causes, "case %zu", i);
        cr_assert_str_eq(jstr(json_array_get(causes, 0), "field"), b->field, "case %zu", i);
        cr_assert_str_eq(jstr(json_array_get(causes, 0), "reason"), b->reason, "case %zu", i);
        cr_assert_not_null(jstr(st, "details.name"), "case %zu", i);
        json_decref(st);
    }
    cr_assert_eq(rev(), before, "nothing invalid was stored");
}

/* ---- unknown fields ------------------------------------------------------------ */

typedef struct answer {
    long status;
    char body[16384];
    size_t len;
    char warnings[4096];
} answer;

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    answer *a = ud;
    size_t len = size * n, room = sizeof a->body - 1 - a->len;
    memcpy(a->body + a->len, p, len < room ? len : room);
    a->len += len < room ? len : room;
    a->body[a->len] = '\0';
    return size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    answer *a = ud;
    size_t len = size * n;
    if (len > 9 && !strncasecmp(p, "Warning: ", 9)) {
        size_t had = strlen(a->warnings);
        snprintf(a->warnings + had, sizeof a->warnings - had, "%.*s\n", (int)(len - 11), p + 9);
    }
    return len;
}

/* A request with its Warning headers (one a line, CRLF cut). */
static json_t *send_warned(const char *method, const char *path, const char *ctype,
                           const char *body, answer *a)
{
    char url[2048];
    snprintf(url, sizeof url, "%s%s", fakeapi_url(srv), path);
    char *b = strdup(body);
    for (char *p = b; *p; p++)
        if (*p == '\'')
            *p = '"';
    memset(a, 0, sizeof *a);
    CURL *h = curl_easy_init();
    struct curl_slist *hdrs = curl_slist_append(NULL, ctype);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, b);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, a);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, a);
    cr_assert_eq(curl_easy_perform(h), CURLE_OK);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a->status);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    free(b);
    return json_loads(a->body, 0, NULL);
}

#define TYPO_DEPLOY                                                                                \
    "{'metadata':{'name':'%s','labelz':{}},'spec':{'replicaz':3," SEL                              \
    "'template':{'metadata':{'labels':" WEB "},'spec':{'containers':[{'name':'c','image':'x',"     \
    "'imagePullPolicyy':'Never','resources':{'limitz':{}}}]}}}}"
#define JSON_CT "Content-Type: application/json"

Test(builtin_valid, unknown_fields_follow_field_validation)
{
    unsigned long long before = rev();
    answer a;
    /* Strict: all of them, in document order, and nothing stored. */
    json_t *st =
        send_warned("POST", DEPLOYS "?fieldValidation=Strict", JSON_CT, S(TYPO_DEPLOY, "s"), &a);
    cr_assert_eq(a.status, 400, "%s", a.body);
    assert_failure(st, 400, "BadRequest");
    cr_assert_str_eq(jstr(st, "message"),
                     "strict decoding error: unknown field \"metadata.labelz\", unknown field "
                     "\"spec.replicaz\", unknown field "
                     "\"spec.template.spec.containers[0].imagePullPolicyy\", unknown field "
                     "\"spec.template.spec.containers[0].resources.limitz\"");
    json_decref(st);
    cr_assert_eq(rev(), before);
    cr_assert(gone(DEPLOYS "/s"));

    /* Warn, and no parameter at all (the server's default): a warning each, dropped. */
    static const char *const warned[] = {"?fieldValidation=Warn", ""};
    for (size_t i = 0; i < 2; i++) {
        char name[8];
        snprintf(name, sizeof name, "w%zu", i);
        json_t *d =
            send_warned("POST", S(DEPLOYS "%s", warned[i]), JSON_CT, S(TYPO_DEPLOY, name), &a);
        cr_assert_eq(a.status, 201, "%s", a.body);
        cr_assert_str_eq(a.warnings,
                         "299 - \"unknown field \\\"metadata.labelz\\\"\"\n"
                         "299 - \"unknown field \\\"spec.replicaz\\\"\"\n"
                         "299 - \"unknown field "
                         "\\\"spec.template.spec.containers[0].imagePullPolicyy\\\"\"\n"
                         "299 - \"unknown field "
                         "\\\"spec.template.spec.containers[0].resources.limitz\\\"\"\n");
        cr_assert_null(jget(d, "spec.replicaz"));
        cr_assert_null(jget(d, "metadata.labelz"));
        json_t *got = req(200, "GET", S(DEPLOYS "/%s", name), NULL);
        cr_assert_null(jget(got, "spec.replicaz"), "never stored");
        json_t *ctr = json_array_get(jget(got, "spec.template.spec.containers"), 0);
        cr_assert_null(json_object_get(ctr, "imagePullPolicyy"));
        cr_assert_str_eq(jstr(ctr, "imagePullPolicy"), "Always", "the real field is defaulted");
        cr_assert_eq(jint(got, "spec.replicas"), 1);
        json_decref(got);
        json_decref(d);
    }

    /* Ignore: dropped without a word. */
    json_t *d =
        send_warned("POST", DEPLOYS "?fieldValidation=Ignore", JSON_CT, S(TYPO_DEPLOY, "i"), &a);
    cr_assert_eq(a.status, 201, "%s", a.body);
    cr_assert_str_eq(a.warnings, "");
    cr_assert_null(jget(d, "spec.replicaz"));
    json_decref(d);

    /* A patch's result is checked the same way. */
    st = send_warned("PATCH", DEPLOYS "/i?fieldValidation=Strict", "Content-Type: " MERGE,
                     "{'spec':{'pausd':true}}", &a);
    cr_assert_eq(a.status, 400, "%s", a.body);
    cr_assert_str_eq(jstr(st, "message"), "strict decoding error: unknown field \"spec.pausd\"");
    json_decref(st);
    d = send_warned("PATCH", DEPLOYS "/i", "Content-Type: " MERGE, "{'spec':{'pausd':true}}", &a);
    cr_assert_eq(a.status, 200, "%s", a.body);
    cr_assert_str_eq(a.warnings, "299 - \"unknown field \\\"spec.pausd\\\"\"\n");
    cr_assert_null(jget(d, "spec.pausd"));
    json_decref(d);

    /* A repeated key: Strict refuses it, Warn keeps the last and warns. */
    before = rev();
    st = send_warned("POST", DEPLOYS "?fieldValidation=Strict", JSON_CT,
                     "{'metadata':{'name':'dup'},'spec':{'replicas':1,'replicas':2," SEL
                     "'template':{'metadata':{'labels':" WEB "},'spec':{'containers':[{'name':'c',"
                     "'image':'x','image':'y'}]}}}}",
                     &a);
    cr_assert_eq(a.status, 400, "%s", a.body);
    cr_assert_str_eq(jstr(st, "message"),
                     "strict decoding error: duplicate field \"spec.replicas\", duplicate field "
                     "\"spec.template.spec.containers[0].image\"");
    json_decref(st);
    cr_assert_eq(rev(), before);
    d = send_warned("POST", CMS, JSON_CT, "{'metadata':{'name':'dup'},'data':{'k':'1','k':'2'}}",
                    &a);
    cr_assert_eq(a.status, 201, "%s", a.body);
    cr_assert_str_eq(a.warnings, "299 - \"duplicate field \\\"data.k\\\"\"\n");
    cr_assert_str_eq(jstr(d, "data.k"), "2", "the last one wins");
    json_decref(d);

    /* Fields a kind has at its root and in metadata are not unknown. */
    d = send_warned("POST", PODS "?fieldValidation=Strict", JSON_CT,
                    "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'ok','labels':{'a':'b'},"
                    "'annotations':{'x':'y'}},'spec':{'containers':[{'name':'c','image':'x',"
                    "'env':[{'name':'E','valueFrom':{'fieldRef':{'fieldPath':'metadata.name'}}}],"
                    "'resources':{'limits':{'cpu':'1'}}}],'volumes':[{'name':'v','emptyDir':{}}]}}",
                    &a);
    cr_assert_eq(a.status, 201, "%s", a.body);
    cr_assert_str_eq(a.warnings, "");
    json_decref(d);
}

/* Custom resources: the schema prunes what it does not declare, with the same warnings. */
Test(builtin_valid, custom_resources_warn_about_pruned_fields)
{
    json_decref(mk_crd());
    answer a;
    json_t *w =
        send_warned("POST", WIDGETS, JSON_CT,
                    "{'apiVersion':'example.com/v1','kind':'Widget','metadata':{'name':'w'},"
                    "'spec':{'size':1,'color':'blue','colour':'red'}}",
                    &a);
    cr_assert_eq(a.status, 201, "%s", a.body);
    cr_assert(strstr(a.warnings, "299 - \"unknown field \\\"spec.colour\\\"\"\n"), "%s",
              a.warnings);
    cr_assert_null(jget(w, "spec.colour"));
    json_decref(w);
    w = send_warned("POST", WIDGETS "?fieldValidation=Ignore", JSON_CT,
                    "{'apiVersion':'example.com/v1','kind':'Widget','metadata':{'name':'v'},"
                    "'spec':{'size':1,'color':'blue','colour':'red'}}",
                    &a);
    cr_assert_eq(a.status, 201, "%s", a.body);
    cr_assert_str_eq(a.warnings, "");
    json_decref(w);
}

/* ---- updates and patches ---------------------------------------------------------- */

Test(builtin_valid, updates_and_patches_are_validated_too)
{
    json_t *d = req(201, "POST", DEPLOYS, DEPLOY(SEL TMPL(WEB, CTR)));
    unsigned long long before = rev();
    json_t *st =
        req_fail_ct(422, "Invalid", "PATCH", DEPLOYS "/d", MERGE, "{'spec':{'replicas':-3}}");
    cr_assert_str_eq(jstr(st, "details.causes.0.field"), "spec.replicas");
    json_decref(st);
    st = req_fail_ct(422, "Invalid", "PATCH", DEPLOYS "/d", MERGE,
                     "{'spec':{'template':{'metadata':{'labels':{'app':'other'}}}}}");
    cr_assert_str_eq(jstr(st, "details.causes.0.field"), "spec.template.metadata.labels");
    json_decref(st);
    /* A patch whose result does not decode is 422, as the server's patch handler answers. */
    st = req_fail_ct(422, "Invalid", "PATCH", DEPLOYS "/d", MERGE, "{'spec':{'paused':'yes'}}");
    cr_assert_str_eq(jstr(st, "details.causes.0.field"), "patch");
    json_decref(st);
    cr_assert_eq(rev(), before, "nothing written");
    /* apps/v1 selectors are immutable. */
    st = req_fail_ct(422, "Invalid", "PATCH", DEPLOYS "/d", MERGE,
                     "{'spec':{'selector':{'matchLabels':{'app':'web','v':'2'}},'template':{"
                     "'metadata':{'labels':{'app':'web','v':'2'}}}}}");
    cr_assert_str_eq(
        jstr(st, "message"),
        "Deployment.apps \"d\" is invalid: spec.selector: Invalid value: "
        "v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web\", \"v\":\"2\"}, "
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable");
    json_decref(st);
    cr_assert_eq(rev(), before, "nothing written");
    json_t *got = req(200, "GET", DEPLOYS "/d", NULL);
    cr_assert_eq(jint(got, "spec.replicas"), 1);
    json_decref(got);
    json_decref(d);

    /* A StatefulSet's spec changes only in its mutable fields. */
    json_decref(req(201, "POST", STS,
                    "{'metadata':{'name':'s'},'spec':{'serviceName':'a'," SEL TMPL(WEB, CTR) "}}"));
    json_decref(req_ct(200, "PATCH", STS "/s", MERGE, "{'spec':{'replicas':4}}"));
    st = req_fail_ct(422, "Invalid", "PATCH", STS "/s", MERGE, "{'spec':{'serviceName':'b'}}");
    cr_assert_str_eq(jstr(st, "details.causes.0.reason"), "FieldValueForbidden");
    cr_assert_str_eq(jstr(st, "details.causes.0.field"), "spec");
    json_decref(st);

    /* A Secret's type is fixed once set. */
    json_decref(req(201, "POST", SECRETS, "{'metadata':{'name':'s'},'data':{'k':'eA=='}}"));
    st = req_fail(422, "Invalid", "PUT", SECRETS "/s",
                  "{'metadata':{'name':'s'},'type':'kubernetes.io/basic-auth',"
                  "'data':{'username':'eA=='}}");
    cr_assert_str_eq(jstr(st, "message"),
                     "Secret \"s\" is invalid: type: Invalid value: \"kubernetes.io/basic-auth\": "
                     "field is immutable");
    json_decref(st);

    /* A Service keeps its cluster IP; it may not move. */
    json_t *s =
        req(201, "POST", SVCS, "{'metadata':{'name':'web'},'spec':{'ports':[{'port':80}]}}");
    const char *ip = jstr(s, "spec.clusterIP");
    json_t *u =
        req(200, "PUT", SVCS "/web", "{'metadata':{'name':'web'},'spec':{'ports':[{'port':81}]}}");
    cr_assert_str_eq(jstr(u, "spec.clusterIP"), ip, "kept when left out");
    json_decref(u);
    st = req_fail_ct(422, "Invalid", "PATCH", SVCS "/web", MERGE,
                     "{'spec':{'clusterIP':'10.96.9.9','clusterIPs':['10.96.9.9']}}");
    cr_assert_str_eq(jstr(st, "details.causes.0.field"), "spec.clusterIPs[0]");
    json_decref(st);
    json_decref(s);
}

Test(builtin_valid, a_jobs_selector_is_generated_unless_manual)
{
    unsigned long long before = rev();
    json_t *st = req_fail(422, "Invalid", "POST", JOBS,
                          "{'metadata':{'name':'j'},'spec':{'selector':{'matchLabels':{'app':'x'}},"
                          "'template':{'metadata':{'labels':{'app':'x'}},'spec':{'restartPolicy':"
                          "'Never'," CTR "}}}}");
    const char *msg = jstr(st, "message");
    cr_assert(strstr(msg, "Job.batch \"j\" is invalid: spec.selector: Invalid value: "
                          "v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"x\", "
                          "\"batch.kubernetes.io/controller-uid\":\"") == msg,
              "%s", msg);
    cr_assert(strstr(msg, "\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` "
                          "not auto-generated"),
              "%s", msg);
    json_decref(st);
    cr_assert_eq(rev(), before);
    cr_assert(gone(JOBS "/j"));
    /* With manualSelector the user's selector is kept, and must match. */
    json_t *j = req(201, "POST", JOBS,
                    "{'metadata':{'name':'m'},'spec':{'manualSelector':true,'selector':{"
                    "'matchLabels':{'app':'x'}},'template':{'metadata':{'labels':{'app':'x'}},"
                    "'spec':{'restartPolicy':'Never'," CTR "}}}}");
    cr_assert_eq(json_object_size(jget(j, "spec.selector.matchLabels")), 1);
    cr_assert_null(jget(j, "spec.template.metadata.labels.controller-uid"));
    json_decref(j);
}

Test(builtin_valid, dry_run_answers_the_same_errors)
{
    unsigned long long before = rev();
    json_t *st = req_fail(422, "Invalid", "POST", PODS "?dryRun=All", POD("'containers':[]"));
    cr_assert_str_eq(jstr(st, "details.causes.0.field"), "spec.containers");
    json_decref(st);
    cr_assert_eq(rev(), before);
}
