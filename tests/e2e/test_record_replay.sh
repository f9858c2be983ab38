#!/usr/bin/env bash
# test_record_replay.sh - a kubectl session against `fakeapi serve --record`
# (create, apply, patch, label, scale, delete; a Secret) and the official
# Python client's (create, replace, patch, delete), imported by
# `scenario import audit` into a scenario that `scenario run` replays to
# the same final state: every object the session left is there with the
# same data, spec, labels and annotations (uid, resourceVersion, timestamps
# and managedFields masked), and the deleted ones are absent. The record
# itself is checked as an audit log: one Event per request, kubectl's
# protobuf bodies decoded, the Secret's values redacted, watches at
# ResponseStarted.
#   bash test_record_replay.sh /path/to/fakeapi /path/to/scenario
. "$(dirname "$0")/lib.sh"

SCENARIO=${2:-}
[ -x "$SCENARIO" ] || bail "usage: $0 FAKEAPI SCENARIO (got '$SCENARIO')"
command -v python3 >/dev/null 2>&1 || bail "python3 not found"

REC="$E2E_TMP/audit.jsonl"
server_start --record "$REC"

cat >"$E2E_TMP/web.yaml" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default, labels: {app: web}}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: nginx, image: "nginx:1.25"}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: default}
data: {mode: safe}
YAML
check "kubectl create configmap" kubectl create configmap app-config --from-literal=mode=safe
check "kubectl apply (create)" kubectl apply -f "$E2E_TMP/web.yaml"
sed -i 's/mode: safe/mode: fast/; s/nginx:1.25/nginx:1.26/' "$E2E_TMP/web.yaml"
check "kubectl apply (patch)" kubectl apply -f "$E2E_TMP/web.yaml"
check "kubectl patch (strategic)" kubectl patch configmap app-config -p '{"data":{"level":"2"}}'
check "kubectl patch (json)" kubectl patch configmap app-config --type=json \
    -p '[{"op":"add","path":"/data/extra","value":"x"}]'
check "kubectl patch (merge)" kubectl patch deployment web --type=merge \
    -p '{"metadata":{"annotations":{"team":"blue"}}}'
check "kubectl label" kubectl label configmap settings tier=backend
check "kubectl scale" kubectl scale deployment web --replicas=4
check "kubectl create secret" kubectl create secret generic db --from-literal=password=hunter2
check "kubectl create configmap (to delete)" kubectl create configmap doomed --from-literal=a=1
check "kubectl delete" kubectl delete configmap doomed
check "kubectl apply --server-side" kubectl apply --server-side --field-manager=ops -f - <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: ssa, namespace: default}
data: {owner: ops}
YAML
# Another language's client: the official Python one (create, replace,
# patch, delete), when it is installed.
if /usr/bin/python3 -c 'import kubernetes' >/dev/null 2>&1; then
    check "the official Python client's writes" timeout 60 /usr/bin/python3 - "$KUBECONFIG_FILE" <<'PY'
import sys
from kubernetes import client, config
config.load_kube_config(sys.argv[1])
v1 = client.CoreV1Api()
cm = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-made", labels={"by": "python"}),
                        data={"step": "1"})
v1.create_namespaced_config_map("default", cm)
got = v1.read_namespaced_config_map("py-made", "default")
got.data["step"] = "2"
v1.replace_namespaced_config_map("py-made", "default", got)
v1.patch_namespaced_config_map("py-made", "default", {"data": {"extra": "yes"}})
v1.create_namespaced_config_map("default", client.V1ConfigMap(
    metadata=client.V1ObjectMeta(name="py-doomed")))
v1.delete_namespaced_config_map("py-doomed", "default")
PY
else
    skip "the official Python client's writes" "python3-kubernetes is not installed"
fi
timeout 5 kubectl get configmaps --watch --request-timeout=1s >/dev/null 2>&1
kubectl get configmaps,deployments,secrets -n default -o json >"$E2E_TMP/final.json" ||
    bail "cannot read the final state"
server_stop || bail "the server did not stop cleanly: $OUT"

# ---- the record is an audit log ----
check "the record holds one audit.k8s.io/v1 Event per line" python3 - "$REC" <<'PY'
import json, sys
n = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    assert e["kind"] == "Event" and e["apiVersion"] == "audit.k8s.io/v1", e
    assert e["level"] == "RequestResponse"
    for k in ("auditID", "stage", "requestURI", "verb", "user", "requestReceivedTimestamp",
              "stageTimestamp", "responseStatus"):
        assert k in e, (k, e)
    n += 1
assert n > 20, n
PY
check "kubectl's protobuf create bodies are recorded as objects" python3 - "$REC" <<'PY'
import json, sys
creates = [json.loads(l) for l in open(sys.argv[1]) if '"verb":"create"' in l]
cm = [e for e in creates if e["objectRef"]["resource"] == "configmaps"
      and e["userAgent"].startswith("kubectl")]
assert cm and all(e["requestObject"]["kind"] == "ConfigMap" for e in cm), cm
assert cm[0]["annotations"]["kube-harness.dev/content-type"]
PY
check "the Secret's value is redacted" python3 - "$REC" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
assert "hunter2" not in text and "aHVudGVyMg==" not in text
sec = [json.loads(l) for l in text.splitlines() if '"resource":"secrets"' in l and '"create"' in l]
assert sec[0]["requestObject"]["data"]["password"] == "KHJlZGFjdGVkKQ==", sec[0]
PY
check "a watch is recorded when it starts, without bodies" python3 - "$REC" <<'PY'
import json, sys
w = [json.loads(l) for l in open(sys.argv[1]) if '"verb":"watch"' in l]
assert w and all(e["stage"] == "ResponseStarted" and "responseObject" not in e for e in w), w
PY

# ---- import and replay ----
OUTS="$E2E_TMP/session.yaml"
check "scenario import audit reads the record" \
    "$SCENARIO" import audit "$REC" --name recorded-session -o "$OUTS"
# the checks: the final state, nondeterministic fields masked
python3 - "$E2E_TMP/final.json" >>"$OUTS" <<'PY'
import json, sys
items = json.load(open(sys.argv[1]))["items"]
def flow(v):
    return json.dumps(v, separators=(",", ":"), sort_keys=True)
kinds = {}
for o in items:
    m = o["metadata"]
    if o["kind"] == "ConfigMap" and m["name"] == "kube-root-ca.crt":
        continue
    kinds.setdefault((o["apiVersion"], o["kind"]), 0)
    kinds[(o["apiVersion"], o["kind"])] += 1
    ref = '{"apiVersion":%s,"kind":%s,"namespace":%s,"name":%s' % (
        flow(o["apiVersion"]), flow(o["kind"]), flow(m["namespace"]), flow(m["name"]))
    for path, val in ((".data", o.get("data")), (".spec", o.get("spec")),
                      (".metadata.labels", m.get("labels")),
                      (".metadata.annotations", m.get("annotations"))):
        if val is None or (o["kind"] == "Secret" and path == ".data"):
            continue
        print('  - expect: {"field":%s,"path":%s,"equals":%s}}' % (ref, flow(path), flow(val)))
for (av, kind), n in sorted(kinds.items()):
    print('  - expect: {"count":{"apiVersion":%s,"kind":%s,"namespace":"default","equals":%d}}'
          % (flow(av), flow(kind), n))
print('  - expect: {"absent":{"apiVersion":"v1","kind":"ConfigMap","namespace":"default","name":"doomed"}}')
PY
check "the replay ends in the session's final state ($(grep -c 'expect:' "$OUTS") checks)" \
    expect_out "^PASS recorded-session" "$SCENARIO" run "$OUTS" --seed 1 --record "$E2E_TMP/replay.jsonl"

# record -> import -> run -> record: the same writes, in the same order,
# with the same outcomes and bodies (what a replay cannot repeat masked)
check "the replay's own record holds the session's writes" python3 - "$REC" "$E2E_TMP/replay.jsonl" <<'PY'
import json, sys
WRITES = ("create", "update", "patch", "delete", "deletecollection")
def masked(v):
    if isinstance(v, dict):
        return {k: masked(x) for k, x in v.items()
                if k not in ("uid", "resourceVersion", "creationTimestamp", "generation",
                             "managedFields", "selfLink")}
    if isinstance(v, list):
        return [masked(x) for x in v]
    return v
def writes(path, agent=None):
    out = []
    for line in open(path):
        e = json.loads(line)
        if e["verb"] not in WRITES or not (200 <= e["responseStatus"]["code"] < 300):
            continue
        if agent and e.get("userAgent") != agent:
            continue
        body = e.get("requestObject")
        if body and e["verb"] in ("delete", "deletecollection"):
            body = {k: v for k, v in body.items() if k not in ("kind", "apiVersion")}
        out.append((e["verb"], e["requestURI"], e["responseStatus"]["code"], masked(body)))
    return out
a, b = writes(sys.argv[1]), writes(sys.argv[2], "fakeapi-inprocess")
assert len(a) == len(b), (len(a), len(b))
for x, y in zip(a, b):
    assert x == y, "\nrecorded: %r\nreplayed: %r" % (x, y)
print(len(a), "writes")
PY
finish
