#!/usr/bin/env bash
# test_record_replay_helm.sh - Helm 4 installs and upgrades the chart
# fixtures/charts/kh-demo (a CRD, a custom resource, a ConfigMap, a Secret,
# a Service, a Deployment; server-side apply) against `fakeapi serve
# --record`; `scenario import audit` turns the record into a scenario, and
# `scenario run` replays it to the same objects, with the same writes (the
# run's own record compared with the session's). Helm comes from
# scripts/clients.sh's cache; without it the script is skipped.
#   bash test_record_replay_helm.sh /path/to/fakeapi /path/to/scenario
. "$(dirname "$0")/lib.sh"
need_helm

SCENARIO=${2:-}
[ -x "$SCENARIO" ] || bail "usage: $0 FAKEAPI SCENARIO (got '$SCENARIO')"
CHART=$(cd "$(dirname "$0")/../../fixtures/charts/kh-demo" && pwd) ||
    bail "fixtures/charts/kh-demo not found"
REC="$E2E_TMP/audit.jsonl"
server_start --record "$REC"
D=$SERVER_DIR
export HELM_CACHE_HOME="$D/helm/cache" HELM_CONFIG_HOME="$D/helm/config" \
    HELM_DATA_HOME="$D/helm/data"
hm() { timeout "$KC_TIMEOUT" "$HELM" --kubeconfig "$KUBECONFIG_FILE" -n default "$@"; }

check "helm install" expect_out 'STATUS: deployed' hm install demo "$CHART"
check "helm upgrade" expect_out 'STATUS: deployed' hm upgrade demo "$CHART" --set mode=fast
kubectl get configmaps,services,deployments,secrets,widgets -n default -o json >"$E2E_TMP/final.json" ||
    bail "cannot read the final state"
server_stop || bail "the server did not stop cleanly: $OUT"

OUTS="$E2E_TMP/helm.yaml"
check "scenario import audit reads the record" \
    "$SCENARIO" import audit "$REC" --name recorded-helm -o "$OUTS"
python3 - "$E2E_TMP/final.json" >>"$OUTS" <<'PY'
import json, sys
def flow(v):
    return json.dumps(v, separators=(",", ":"), sort_keys=True)
for o in json.load(open(sys.argv[1]))["items"]:
    m = o["metadata"]
    if m["name"] == "kube-root-ca.crt" or o["kind"] == "Secret":
        continue
    ref = '{"apiVersion":%s,"kind":%s,"namespace":%s,"name":%s' % (
        flow(o["apiVersion"]), flow(o["kind"]), flow(m["namespace"]), flow(m["name"]))
    for path, val in ((".data", o.get("data")), (".spec", o.get("spec")),
                      (".metadata.labels", m.get("labels"))):
        if val is not None:
            print('  - expect: {"field":%s,"path":%s,"equals":%s}}' % (ref, flow(path), flow(val)))
PY
check "the replay ends with Helm's objects ($(grep -c 'expect:' "$OUTS") checks)" \
    expect_out "^PASS recorded-helm" "$SCENARIO" run "$OUTS" --seed 1 --record "$E2E_TMP/replay.jsonl"
check "the replay makes Helm's writes" python3 - "$REC" "$E2E_TMP/replay.jsonl" <<'PY'
import json, sys
def writes(path, agent=None):
    out = []
    for line in open(path):
        e = json.loads(line)
        if e["verb"] in ("create", "update", "patch", "delete") and \
                200 <= e["responseStatus"]["code"] < 300 and \
                (agent is None or e.get("userAgent") == agent):
            out.append((e["verb"], e["requestURI"], e["responseStatus"]["code"]))
    return out
a, b = writes(sys.argv[1]), writes(sys.argv[2], "fakeapi-inprocess")
assert a == b, "\nrecorded: %r\nreplayed: %r" % (a, b)
print(len(a), "writes")
PY
finish
