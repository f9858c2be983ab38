#!/usr/bin/env bash
# test_kubectl_builtin.sh - built-in kinds checked and defaulted as the real
# server does, seen through kubectl: a typo field is refused by `apply`
# (fieldValidation=Strict), warned about and dropped with --validate=warn,
# the kinds' rules answer 422 with their causes, `get -o yaml` shows the
# defaults, and the official Python client reads the defaulted objects.
# TAP on stdout.
. "$(dirname "$0")/lib.sh"

server_start
D=$SERVER_DIR

cat >"$D/typo.yaml" <<'EOF_'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicaz: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        imagePullPolicyy: Always
EOF_
check "apply of a Deployment with typo fields is refused, naming them" \
    expect_fail 'strict decoding error: unknown field "spec.replicaz", unknown field "spec.template.spec.containers\[0\].imagePullPolicyy"' \
    kc apply -f "$D/typo.yaml"
check "nothing was stored" expect_fail 'NotFound|not found' kc get deployment web
check "apply --validate=warn prints the server's warnings" \
    expect_out 'Warning: unknown field "spec.replicaz"' kc apply --validate=warn -f "$D/typo.yaml"
check "the unknown fields were dropped" \
    expect_eq '1 IfNotPresent' kc get deployment web \
    -o 'jsonpath={.spec.replicas} {.spec.template.spec.containers[0].imagePullPolicy}'

check "get -o yaml shows the Deployment's defaults" \
    expect_out 'progressDeadlineSeconds: 600' kc get deployment web -o yaml
check "strategy RollingUpdate 25%/25%, revisionHistoryLimit 10" \
    expect_eq 'RollingUpdate 25% 25% 10' kc get deployment web \
    -o 'jsonpath={.spec.strategy.type} {.spec.strategy.rollingUpdate.maxSurge} {.spec.strategy.rollingUpdate.maxUnavailable} {.spec.revisionHistoryLimit}'
check "the pod template's defaults" \
    expect_eq 'Always ClusterFirst default-scheduler 30 File /dev/termination-log' kc get deployment web \
    -o 'jsonpath={.spec.template.spec.restartPolicy} {.spec.template.spec.dnsPolicy} {.spec.template.spec.schedulerName} {.spec.template.spec.terminationGracePeriodSeconds} {.spec.template.spec.containers[0].terminationMessagePolicy} {.spec.template.spec.containers[0].terminationMessagePath}'
label_then_scale() {
    kc label deployment web x=y >/dev/null && kc scale deployment web --replicas=2 >/dev/null &&
        kc get deployment web -o 'jsonpath={.metadata.generation}'
}
check "generation 1, bumped by a spec change only" expect_eq '2' label_then_scale

cat >"$D/mismatch.yaml" <<'EOF_'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: odd
spec:
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
EOF_
check "a selector that does not match the template labels is refused (422)" \
    expect_fail '^\* spec.template.metadata.labels: Invalid value: map\[string\]string\{"app":"web"\}: `selector` does not match template `labels`$' \
    kc apply -f "$D/mismatch.yaml"
check "with each cause on its line, as kubectl shows the server's causes" \
    expect_fail '^\* spec.template.spec.containers\[0\].image: Required value$' kc apply -f "$D/mismatch.yaml"

cat >"$D/svc.yaml" <<'EOF_'
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - port: 80
EOF_
apply_service() {
    kc apply -f "$D/svc.yaml" >/dev/null && kc get service web -o \
        'jsonpath={.spec.clusterIP} {.spec.type} {.spec.sessionAffinity} {.spec.ports[0].targetPort} {.spec.ports[0].protocol} {.spec.ipFamilyPolicy}'
}
check "a Service gets a cluster IP from 10.96.0.0/12 and its defaults" \
    expect_eq '10.96.0.1 ClusterIP None 80 TCP SingleStack' apply_service
check "kubectl get svc shows the cluster IP" expect_out 'web +ClusterIP +10\.96\.0\.1 ' kc get services

run_pod() {
    kc run p --image=nginx:1.27 >/dev/null && kc get pod p -o \
        'jsonpath={.spec.serviceAccountName} {.spec.tolerations[0].tolerationSeconds} {.spec.containers[0].imagePullPolicy} {.spec.enableServiceLinks}'
}
check "kubectl run: a Pod with admission's defaults" \
    expect_eq 'default 300 IfNotPresent true' run_pod
configmap_generation() {
    kc create configmap c --from-literal=a=b >/dev/null &&
        kc get configmap c -o 'jsonpath={.metadata.generation}'
}
check "a ConfigMap has no generation" expect_eq '' configmap_generation

PY=/usr/bin/python3
if "$PY" -c 'import kubernetes' >/dev/null 2>&1; then
    check "the Python client reads the defaulted Deployment" \
        expect_eq '2 RollingUpdate 10.96.0.1' "$PY" -c '
import sys
from kubernetes import client, config
config.load_kube_config(sys.argv[1])
d = client.AppsV1Api().read_namespaced_deployment("web", "default")
s = client.CoreV1Api().read_namespaced_service("web", "default")
print(d.spec.replicas, d.spec.strategy.type, s.spec.cluster_ip)
' "$KUBECONFIG_FILE"
else
    skip "the Python client reads the defaulted Deployment" "python3-kubernetes is not installed"
fi

finish
