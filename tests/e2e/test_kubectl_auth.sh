#!/usr/bin/env bash
# test_kubectl_auth.sh - what kubectl asks of the review APIs and the pod
# subresources: `auth can-i`, `auth can-i --list`, `auth whoami`,
# `create token` (the JWT's claims decoded), TokenReview, `drain` through
# pods/eviction with and without a PodDisruptionBudget that allows it,
# `logs`, and exec/attach/port-forward refused with a clear message.
# kubectl 1.32 sends the review and TokenRequest bodies as protobuf; each
# check is repeated with a JSON body through `kubectl create --raw`, and the
# official Python client (JSON too) does the same through its typed API.
# TAP on stdout.
. "$(dirname "$0")/lib.sh"

server_start
D=$SERVER_DIR

# The claims of a JWT (its middle part, base64url) as JSON on stdout.
jwt_payload() {
    local p
    p=$(printf '%s' "$1" | cut -d. -f2 | tr '_-' '/+')
    while [ $(( ${#p} % 4 )) -ne 0 ]; do p="$p="; done
    printf '%s' "$p" | base64 -d
}

# claims_ok TOKEN AUD SECONDS: sub, aud and exp - iat as expected.
claims_ok() {
    local c
    c=$(jwt_payload "$1") || { echo "not a JWT: $1"; return 1; }
    echo "$c"
    printf '%s' "$c" | grep -q '"sub":"system:serviceaccount:default:robot"' || return 1
    printf '%s' "$c" | grep -q "\"aud\":\\[\"$2\"\\]" || return 1
    local iat exp
    iat=$(printf '%s' "$c" | sed -n 's/.*"iat":\([0-9]*\).*/\1/p')
    exp=$(printf '%s' "$c" | sed -n 's/.*"exp":\([0-9]*\).*/\1/p')
    [ -n "$iat" ] && [ -n "$exp" ] && [ $((exp - iat)) -eq "$3" ] ||
        { echo "exp - iat = $((exp - iat)), want $3"; return 1; }
}

# --- may I, and who am I --------------------------------------------------

check "auth can-i create deployments says yes" \
    expect_eq yes kc auth can-i create deployments
check "auth can-i --list lists every resource" \
    expect_out '^\*\.\* +\[\] +\[\] +\[\*\]' kc auth can-i --list
check "auth whoami names the admin and its groups" \
    expect_out 'Groups +\[system:masters system:authenticated\]' kc auth whoami

cat >"$D/ssar.json" <<'EOF_'
{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview",
 "spec":{"resourceAttributes":{"verb":"create","group":"apps","resource":"deployments"}}}
EOF_
check "a SelfSubjectAccessReview in JSON is allowed" \
    expect_out '"allowed":true' kc create --raw /apis/authorization.k8s.io/v1/selfsubjectaccessreviews -f "$D/ssar.json"
cat >"$D/ssrr.json" <<'EOF_'
{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{"namespace":"default"}}
EOF_
check "a SelfSubjectRulesReview in JSON allows everything" \
    expect_out '"resourceRules":\[\{"verbs":\["\*"\],"apiGroups":\["\*"\],"resources":\["\*"\]\}\]' \
    kc create --raw /apis/authorization.k8s.io/v1/selfsubjectrulesreviews -f "$D/ssrr.json"
echo '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}' >"$D/ssr.json"
check "a SelfSubjectReview in JSON names the admin" \
    expect_out '"userInfo":\{"username":"fakeapi-admin","groups":\["system:masters","system:authenticated"\]\}' \
    kc create --raw /apis/authentication.k8s.io/v1/selfsubjectreviews -f "$D/ssr.json"
check "review kinds take only create" \
    expect_fail 'MethodNotAllowed|not allow|405' kc get --raw /apis/authentication.k8s.io/v1/tokenreviews

# --- tokens ---------------------------------------------------------------

cat >"$D/sa.yaml" <<'EOF_'
apiVersion: v1
kind: ServiceAccount
metadata:
  name: robot
EOF_
check "apply a service account" expect_out 'serviceaccount/robot created' kc apply -f "$D/sa.yaml"

run kc create token robot
TOKEN=$OUT
check "create token prints a token" test -n "$TOKEN" -a "$(printf '%s' "$TOKEN" | tr -cd . | wc -c)" -eq 2
check "its claims: sub, the issuer's audience, an hour" \
    claims_ok "$TOKEN" https://kubernetes.default.svc.cluster.local 3600
run kc create token robot --audience=vault --duration=2h
check "create token --audience --duration" claims_ok "$OUT" vault 7200
check "create token --duration=1m is refused (at least 10 minutes)" \
    expect_fail 'may not specify a duration less than 10 minutes' kc create token robot --duration=1m

echo '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"audiences":["vault"]}}' >"$D/tr.json"
run kc create --raw /api/v1/namespaces/default/serviceaccounts/robot/token -f "$D/tr.json"
JTOKEN=$(printf '%s' "$OUT" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
check "a TokenRequest in JSON answers a token" test -n "$JTOKEN"
check "its claims: sub, the requested audience, an hour" claims_ok "$JTOKEN" vault 3600
printf '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"%s","audiences":["vault"]}}' \
    "$JTOKEN" >"$D/review.json"
check "TokenReview authenticates it as the service account" \
    expect_out '"authenticated":true,"user":\{"username":"system:serviceaccount:default:robot"' \
    kc create --raw /apis/authentication.k8s.io/v1/tokenreviews -f "$D/review.json"
printf '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"%sx"}}' \
    "$JTOKEN" >"$D/bad-review.json"
check "TokenReview refuses a token whose signature is wrong" \
    expect_out '"status":\{"user":\{\},"error":"invalid bearer token' \
    kc create --raw /apis/authentication.k8s.io/v1/tokenreviews -f "$D/bad-review.json"

# --- drain through pods/eviction ---------------------------------------------
# kubectl 1.32 sends its Eviction as JSON (and the DeleteOptions of its
# fallback delete as protobuf). No kubelet runs here: with a grace period
# (the default 30 s) a bound pod would stay Terminating, so these have none.

cat >"$D/node.yaml" <<'EOF_'
apiVersion: v1
kind: Node
metadata:
  name: n1
---
apiVersion: v1
kind: Pod
metadata:
  name: w1
  labels: {app: w}
spec:
  nodeName: n1
  terminationGracePeriodSeconds: 0
  containers: [{name: c, image: nginx:1}]
---
apiVersion: v1
kind: Pod
metadata:
  name: w2
  labels: {app: w}
spec:
  nodeName: n1
  terminationGracePeriodSeconds: 0
  containers: [{name: c, image: nginx:1}]
EOF_
cat >"$D/pdb.yaml" <<'EOF_'
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: w
spec:
  maxUnavailable: 2
  selector:
    matchLabels: {app: w}
EOF_

# Pods on n1, running (fakeapi has no kubelet: the status is patched in).
pods_running() {
    kc apply -f "$D/node.yaml" >/dev/null &&
        kc patch pod w1 --subresource=status --type=merge -p '{"status":{"phase":"Running"}}' >/dev/null &&
        kc patch pod w2 --subresource=status --type=merge -p '{"status":{"phase":"Running"}}' >/dev/null
}
DRAIN="drain n1 --force --timeout=5s --ignore-daemonsets --delete-emptydir-data"

check "pods running on node n1" pods_running
check "apply a budget that allows two disruptions" kc apply -f "$D/pdb.yaml"
# shellcheck disable=SC2086
check "drain evicts both pods" expect_out 'pod/w1 evicted' kc $DRAIN
check "the evicted pods are gone" \
    expect_eq "" kc get pods --field-selector spec.nodeName=n1 -o name
check "uncordon n1" kc uncordon n1
check "pods running on n1 again" pods_running
check "the budget now allows none" \
    kc patch pdb w --type=merge -p '{"spec":{"maxUnavailable":0}}'
# shellcheck disable=SC2086
check "drain reports the evictions blocked by the budget" \
    expect_fail "Cannot evict pod as it would violate the pod's disruption budget" kc $DRAIN
check "both pods are still there" \
    expect_eq "$(printf 'pod/w1\npod/w2')" kc get pods --field-selector spec.nodeName=n1 -o name

# --- logs and what needs a kubelet ---------------------------------------------

check "logs of a pod with no simulated log are empty" expect_eq "" kc logs w1
check "annotate a simulated log" \
    kc annotate pod w1 "fakeapi.kube-harness.io/log=$(printf 'one\ntwo\nthree')"
check "logs prints it" expect_eq "$(printf 'one\ntwo\nthree')" kc logs w1
check "logs --tail=1" expect_eq three kc logs w1 --tail=1
check "logs -f returns what there is and ends" expect_eq "$(printf 'one\ntwo\nthree')" kc logs -f w1
check "logs -c of an unknown container is refused" \
    expect_fail 'container nope is not valid for pod w1' kc logs w1 -c nope
check "exec is refused: no containers run" \
    expect_fail 'fakeapi does not run containers: pods/exec is not supported' kc exec w1 -- ls
check "attach is refused" \
    expect_fail 'pods/attach is not supported' kc attach w1
check "port-forward is refused" \
    expect_fail 'pods/portforward is not supported' kc port-forward pod/w1 18080:80

# --- the official Python client, which sends JSON ---------------------------

PY=/usr/bin/python3
if "$PY" -c 'import kubernetes' >/dev/null 2>&1; then
    PYA="$(dirname "$0")/python_auth.py"
    check "Python: a SelfSubjectAccessReview is allowed" expect_eq ok "$PY" "$PYA" "$KUBECONFIG_FILE" ssar
    check "Python: a SelfSubjectReview names the admin" expect_eq ok "$PY" "$PYA" "$KUBECONFIG_FILE" whoami
    check "Python: a TokenRequest's token and its TokenReview" \
        expect_eq ok "$PY" "$PYA" "$KUBECONFIG_FILE" token
    check "Python: an eviction goes, the next is held by the budget" \
        expect_eq ok "$PY" "$PYA" "$KUBECONFIG_FILE" evict
    check "Python: a pod's log" expect_eq ok "$PY" "$PYA" "$KUBECONFIG_FILE" logs
else
    skip "the Python client's reviews, tokens, evictions and logs" "python3-kubernetes is not installed"
fi

finish
