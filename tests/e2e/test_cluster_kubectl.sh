#!/usr/bin/env bash
# test_cluster_kubectl.sh - a cluster that moves (`fakeapi serve --cluster`,
# docs/cluster.md) as kubectl sees it: nodes, a Deployment that rolls out,
# a new image rolled out and undone, scaling, a Service's Endpoints, a Job
# that completes, a StatefulSet that comes up in order, and a drain that
# moves pods elsewhere.  TAP on stdout.
. "$(dirname "$0")/lib.sh"

cat >"$E2E_TMP/cluster.yaml" <<'YAML'
nodes: 3
YAML
server_start --cluster="$E2E_TMP/cluster.yaml"

jp() { # KIND/NAME JSONPATH
    kc -n default get "$1" -o "jsonpath=$2"
}
node_states() { kc get nodes --no-headers | awk '{printf "%s %s,", $1, $2}'; }
running_web_pods_with_ip() {
    jp pods '{range .items[*]}{.metadata.labels.app} {.status.phase} {.status.podIP}{"\n"}{end}' |
        grep -cE '^web Running [0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$'
}
revisions() { kc rollout history deployment/web | awk '$1 ~ /^[0-9]+$/ {printf "%s ", $1}'; }
image_and_revision() {
    jp deployment/web '{.spec.template.spec.containers[0].image}/{.metadata.annotations.deployment\.kubernetes\.io/revision}'
}
db_pods_in_creation_order() {
    kc get pods -l app=db --sort-by=.metadata.creationTimestamp \
        -o 'jsonpath={range .items[*]}{.metadata.name}{" "}{end}'
}
web_whole_elsewhere() { # NODE: 5 available, none of them on NODE
    [ "$(jp deployment/web '{.status.availableReplicas}')" = 5 ] &&
        ! kc get pods -l app=web -o 'jsonpath={.items[*].spec.nodeName}' | grep -qw "$1"
}

# --- nodes -------------------------------------------------------------------
check "three nodes, all Ready" \
    wait_for 10 expect_eq 'node-0 Ready,node-1 Ready,node-2 Ready,' node_states

# --- a Deployment: create, roll out, set image, history, undo, scale -----------
check "kubectl create deployment" \
    expect_out 'deployment.apps/web created' kc create deployment web --image=nginx:1.26 --replicas=3
check "kubectl rollout status completes" \
    expect_out 'successfully rolled out' kc rollout status deployment/web --timeout=60s
check "three pods Running, each with an IP" \
    expect_eq 3 running_web_pods_with_ip
check "the Deployment says Available" \
    expect_eq 'True' jp deployment/web '{.status.conditions[?(@.type=="Available")].status}'
check "kubectl set image" \
    expect_out 'image updated' kc set image deployment/web nginx=nginx:1.27
check "kubectl rollout status of the new image completes" \
    expect_out 'successfully rolled out' kc rollout status deployment/web --timeout=60s
check "every pod runs the new image" \
    wait_for 30 expect_eq 'nginx:1.27 nginx:1.27 nginx:1.27 ' \
    jp pods '{range .items[?(@.metadata.labels.app=="web")]}{.spec.containers[0].image}{" "}{end}'
check "kubectl rollout history lists two revisions" \
    expect_eq '1 2 ' revisions
check "kubectl rollout undo" \
    expect_out 'rolled back' kc rollout undo deployment/web
check "the undo rolls out" \
    expect_out 'successfully rolled out' kc rollout status deployment/web --timeout=60s
check "the Deployment is back on the first image, at revision 3" \
    expect_eq 'nginx:1.26/3' image_and_revision
check "kubectl scale" \
    expect_out 'scaled' kc scale deployment/web --replicas=5
check "five replicas available after scaling" \
    wait_for 30 expect_eq '5' jp deployment/web '{.status.availableReplicas}'

# --- a Service's endpoints -------------------------------------------------------
check "kubectl expose" \
    expect_out 'exposed' kc expose deployment/web --port=80
check "the Service's Endpoints list the five pods" \
    wait_for 30 expect_out '^([0-9.]+ ){5}$' jp endpoints/web '{range .subsets[*].addresses[*]}{.ip}{" "}{end}'

# --- a Job -----------------------------------------------------------------------
check "kubectl create job" \
    expect_out 'job.batch/pi created' kc create job pi --image=busybox -- sh -c 'exit 0'
check "kubectl wait --for=condition=complete returns" \
    expect_out 'condition met' kc wait --for=condition=complete job/pi --timeout=60s

# --- a StatefulSet comes up in order --------------------------------------------
kc apply -f - >/dev/null <<'YAML'
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: default}
spec:
  replicas: 3
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: postgres:16}]}
YAML
check "kubectl rollout status of a StatefulSet completes" \
    expect_out 'roll(ing)? ?(update|out).*complete|partitioned roll out complete' \
    kc rollout status statefulset/db --timeout=60s
check "its pods are db-0, db-1, db-2, created in that order" \
    expect_eq 'db-0 db-1 db-2 ' db_pods_in_creation_order

# --- drain ------------------------------------------------------------------------
NODE=$(kc get pods -l app=web -o 'jsonpath={.items[0].spec.nodeName}' 2>/dev/null)
check "kubectl drain evicts the pods of a node" \
    expect_out 'drained' kc drain "$NODE" --ignore-daemonsets --delete-emptydir-data --timeout=60s
check "the Deployment is whole again, on the other nodes" \
    wait_for 60 web_whole_elsewhere "$NODE"
check "kubectl uncordon" \
    expect_out 'uncordoned' kc uncordon "$NODE"

finish
