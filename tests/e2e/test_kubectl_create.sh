#!/usr/bin/env bash
# test_kubectl_create.sh - kubectl's generator commands against `fakeapi
# serve`: create deployment/job/cronjob/service clusterip/role/rolebinding/
# clusterrole/clusterrolebinding, create job --from=cronjob, autoscale, explain
# of built-in fields and the columns of `get events`.  Each create is followed
# by a read that checks what was stored.  TAP on stdout.
#
# kubectl sends these create bodies as protobuf (application/vnd.kubernetes.protobuf).
. "$(dirname "$0")/lib.sh"

server_start
D=$SERVER_DIR
NS=(-n default)

jp() { # KIND/NAME JSONPATH: the value kubectl prints
    kc "${NS[@]}" get "$1" -o "jsonpath=$2"
}

# --- the same objects through JSON (kubectl create -f sends JSON) -----------
# What `create deployment` would send, made client-side and created as JSON:
# this path does not wait for protobuf, so it is strict.
check "create deployment --dry-run=client -o json | create -f - (JSON body)" \
    expect_out 'deployment\.apps/viajson created' \
    sh -c "kubectl --kubeconfig '$KUBECONFIG_FILE' --cache-dir '$D/cache' ${NS[*]} \
        create deployment viajson --image=nginx:1.25 --replicas=2 --dry-run=client -o json |
        kubectl --kubeconfig '$KUBECONFIG_FILE' --cache-dir '$D/cache' ${NS[*]} create -f -"
check "the JSON-made deployment has its image, replicas and selector" \
    expect_eq 'nginx:1.25 2 viajson' \
    jp deploy/viajson '{.spec.template.spec.containers[0].image} {.spec.replicas} {.spec.selector.matchLabels.app}'

# --- deployment --------------------------------------------------------------
check "create deployment" \
    expect_out 'deployment\.apps/web created' \
    kc "${NS[@]}" create deployment web --image=nginx:1.25 --replicas=3 --port=80
check "the deployment has the image, replicas and port asked for" \
    expect_eq 'nginx:1.25 3 80' \
    jp deploy/web '{.spec.template.spec.containers[0].image} {.spec.replicas} {.spec.template.spec.containers[0].ports[0].containerPort}'
check "the deployment selects its template's labels (app=web)" \
    expect_eq 'web web' \
    jp deploy/web '{.spec.selector.matchLabels.app} {.spec.template.metadata.labels.app}'
check "get deploy lists it with the Deployment columns" \
    expect_out '^web +0/3 ' kc "${NS[@]}" get deploy web

# --- job, cronjob, job --from=cronjob ----------------------------------------
check "create job with a command" \
    expect_out 'job\.batch/once created' \
    kc "${NS[@]}" create job once --image=busybox:1.36 -- echo hello
check "the job has the image and the command" \
    expect_eq 'busybox:1.36 ["echo","hello"]' \
    jp job/once '{.spec.template.spec.containers[0].image} {.spec.template.spec.containers[0].command}'
check "the job's pods never restart (restartPolicy Never)" \
    expect_eq 'Never' jp job/once '{.spec.template.spec.restartPolicy}'

check "create cronjob" \
    expect_out 'cronjob\.batch/tick created' \
    kc "${NS[@]}" create cronjob tick --image=busybox:1.36 --schedule='*/5 * * * *' -- date
check "the cronjob has the schedule and the image" \
    expect_eq '*/5 * * * * busybox:1.36' \
    jp cronjob/tick '{.spec.schedule} {.spec.jobTemplate.spec.template.spec.containers[0].image}'

check "create job --from=cronjob/tick" \
    expect_out 'job\.batch/tick-now created' \
    kc "${NS[@]}" create job tick-now --from=cronjob/tick
check "the job from the cronjob is owned by it and copies its template" \
    expect_eq 'CronJob tick busybox:1.36' \
    jp job/tick-now '{.metadata.ownerReferences[0].kind} {.metadata.ownerReferences[0].name} {.spec.template.spec.containers[0].image}'
check "the job from the cronjob is marked as started by hand" \
    expect_eq 'manual' \
    jp job/tick-now '{.metadata.annotations.cronjob\.kubernetes\.io/instantiate}'

# --- service clusterip -------------------------------------------------------
check "create service clusterip" \
    expect_out 'service/front created' \
    kc "${NS[@]}" create service clusterip front --tcp=80:8080
check "the service has type ClusterIP, the port, the target port and the selector" \
    expect_eq 'ClusterIP 80 8080 front' \
    jp svc/front '{.spec.type} {.spec.ports[0].port} {.spec.ports[0].targetPort} {.spec.selector.app}'

# --- RBAC --------------------------------------------------------------------
check "create role" \
    expect_out 'role\.rbac\.authorization\.k8s\.io/reader created' \
    kc "${NS[@]}" create role reader --verb=get,list --resource=pods
check "the role has the verbs and the resource" \
    expect_eq '["get","list"] ["pods"]' \
    jp role/reader '{.rules[0].verbs} {.rules[0].resources}'
check "create rolebinding" \
    expect_out 'rolebinding\.rbac\.authorization\.k8s\.io/reader-alice created' \
    kc "${NS[@]}" create rolebinding reader-alice --role=reader --user=alice
check "the rolebinding binds the role to the user" \
    expect_eq 'Role reader User alice' \
    jp rolebinding/reader-alice '{.roleRef.kind} {.roleRef.name} {.subjects[0].kind} {.subjects[0].name}'
check "create clusterrole" \
    expect_out 'clusterrole\.rbac\.authorization\.k8s\.io/node-viewer created' \
    kc create clusterrole node-viewer --verb=get,watch --resource=nodes
check "the clusterrole has the verbs and the resource" \
    expect_eq '["get","watch"] ["nodes"]' \
    kc get clusterrole node-viewer -o 'jsonpath={.rules[0].verbs} {.rules[0].resources}'
check "create clusterrolebinding" \
    expect_out 'clusterrolebinding\.rbac\.authorization\.k8s\.io/node-viewer-bob created' \
    kc create clusterrolebinding node-viewer-bob --clusterrole=node-viewer --user=bob
check "the clusterrolebinding binds the clusterrole to the user" \
    expect_eq 'ClusterRole node-viewer User bob' \
    kc get clusterrolebinding node-viewer-bob \
    -o 'jsonpath={.roleRef.kind} {.roleRef.name} {.subjects[0].kind} {.subjects[0].name}'

# --- autoscale ---------------------------------------------------------------
# kubectl 1.32 creates an autoscaling/v1 HPA (protobuf), 1.33+ an
# autoscaling/v2 one; either way the stored v2 object has the CPU metric.
check "autoscale deployment" \
    expect_out 'horizontalpodautoscaler\.autoscaling/web autoscaled' \
    kc "${NS[@]}" autoscale deployment web --min=2 --max=5 --cpu-percent=80
check "the HPA targets the deployment with the bounds asked for" \
    expect_eq 'Deployment web 2 5' \
    jp hpa/web '{.spec.scaleTargetRef.kind} {.spec.scaleTargetRef.name} {.spec.minReplicas} {.spec.maxReplicas}'
check "the HPA's CPU target is a v2 Utilization metric" \
    expect_eq 'cpu Utilization 80' \
    jp hpa/web '{.spec.metrics[0].resource.name} {.spec.metrics[0].resource.target.type} {.spec.metrics[0].resource.target.averageUtilization}'
check "read through autoscaling/v1 it is targetCPUUtilizationPercentage" \
    expect_out '"targetCPUUtilizationPercentage":80' \
    kc get --raw /apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/web

# --- explain (OpenAPI of the built-in kinds) ---------------------------------
check "explain configmap.data" \
    expect_out '^FIELD: *data <map\[string\]string>' kc explain configmap.data
check "explain deployment.spec.replicas" \
    expect_out '^FIELD: *replicas <integer>' kc explain deployment.spec.replicas
check "explain deployment.spec.template.spec.containers.image" \
    expect_out '^FIELD: *image <string>' kc explain deployment.spec.template.spec.containers.image
check "explain of a field no kind has fails" \
    expect_fail 'does not exist' kc explain deployment.spec.nosuchfield

# --- events --------------------------------------------------------------
cat >"$D/event.json" <<'EOF'
{"apiVersion": "v1", "kind": "Event",
 "metadata": {"name": "web.scaled", "namespace": "default"},
 "involvedObject": {"kind": "Deployment", "name": "web", "namespace": "default",
                    "apiVersion": "apps/v1"},
 "reason": "ScalingReplicaSet", "message": "Scaled up replica set web-1 to 3",
 "type": "Normal", "count": 1,
 "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:00:00Z",
 "source": {"component": "deployment-controller"}}
EOF
check "create an Event (JSON)" expect_out 'event/web\.scaled created' kc create -f "$D/event.json"
check "get events -o name lists it" expect_out '^event/web\.scaled$' kc "${NS[@]}" get events -o name
check "get events has the columns LAST SEEN, TYPE, REASON, OBJECT, MESSAGE" \
    expect_out '^LAST SEEN +TYPE +REASON +OBJECT +MESSAGE' kc "${NS[@]}" get events
check "get events shows the event's type, reason, object and message" \
    expect_out 'Normal +ScalingReplicaSet +deployment/web +Scaled up replica set web-1 to 3' \
    kc "${NS[@]}" get events

finish
