#!/usr/bin/env bash
# test_webhook_example.sh - the webhook example (examples/webhook) end to
# end: widget-webhook serves a validating and a defaulting webhook over TLS
# and installs their configurations into `fakeapi serve`; kubectl then sees
# widgets rejected with the webhook's message, defaulted, warned about, and,
# once the webhook is gone, refused by failurePolicy Fail. TAP on stdout.
#   bash test_webhook_example.sh /path/to/fakeapi /path/to/widget-webhook CRD
. "$(dirname "$0")/lib.sh"

WEBHOOK=${2:-}
CRD=${3:-}
[ -x "$WEBHOOK" ] || bail "usage: $0 FAKEAPI WIDGET_WEBHOOK CRD (got '$WEBHOOK')"
[ -f "$CRD" ] || bail "no CRD file '$CRD'"
command -v openssl >/dev/null 2>&1 || { echo "1..0 # SKIP openssl(1) not found"; exit 0; }

server_start
D=$SERVER_DIR
mkdir -p "$D/certs"

# A throw-away CA, and a serving certificate for 127.0.0.1 it signs.
(
    cd "$D/certs" &&
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
            -keyout ca.key -out ca.crt -subj /CN=widget-webhook-ca -days 1 &&
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
            -keyout tls.key -out tls.csr -subj /CN=widget-webhook &&
        printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >ext &&
        openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 \
            -extfile ext -out tls.crt
) >"$D/openssl.out" 2>&1 || bail "openssl could not make certificates: $(cat "$D/openssl.out")"

check "the Widget CRD is created" kc apply -f "$CRD"
check "the Widget kind is served" wait_for 10 kc get widgets

bg_start hook 100 "$WEBHOOK" --kubeconfig "$KUBECONFIG_FILE" --cert-dir "$D/certs" \
    --addr 127.0.0.1:0 --install "$D/certs/ca.crt"
check "widget-webhook installs its configurations" \
    wait_for 20 kc get validatingwebhookconfiguration widget-webhook
check "and the mutating one" kc get mutatingwebhookconfiguration widget-webhook

widget() { # name, then spec fields as YAML flow
    printf 'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: %s\n%s\n' "$1" "${2:-}"
}

widget red 'spec: {color: red}' >"$D/red.yaml"
check "a red widget is rejected with the webhook's message" \
    expect_fail 'admission webhook "vwidget.example.com.widget-webhook" denied the request: spec.color must be blue or green, not red' \
    kc create -f "$D/red.yaml"
check "and is not stored" expect_fail 'NotFound|not found' kc get widget red

widget plain >"$D/plain.yaml"
check "a widget without a spec is created" kc create -f "$D/plain.yaml"
check "its color is defaulted" expect_eq blue kc get widget plain -o 'jsonpath={.spec.color}'
check "its size is defaulted" expect_eq 1 kc get widget plain -o 'jsonpath={.spec.size}'
check "it is labelled as defaulted" expect_eq true \
    kc get widget plain -o 'jsonpath={.metadata.labels.widgets\.example\.com/defaulted}'

widget big 'spec: {color: green, size: 7}' >"$D/big.yaml"
check "a large widget is created with the webhook's warning" \
    expect_out 'Warning: widget big is large \(size 7\)' kc create -f "$D/big.yaml"

widget huge 'spec: {color: green, size: 50}' >"$D/huge.yaml"
check "a too large widget is refused as Invalid" \
    expect_fail 'The request is invalid: .*denied the request: spec.size must be 1 to 10' \
    kc create -f "$D/huge.yaml"

widget applied >"$D/applied.yaml"
check "a server-side apply is defaulted too" kc apply --server-side -f "$D/applied.yaml"
check "its color is defaulted" expect_eq blue kc get widget applied -o 'jsonpath={.spec.color}'
check "a server-side apply of a red widget is refused" \
    expect_fail 'denied the request: spec.color must be blue or green, not red' \
    kc apply --server-side -f "$D/red.yaml"

check "changing the color is refused on update" \
    expect_fail 'spec.color is immutable \(was blue\)' \
    kc patch widget plain --type merge -p '{"spec":{"color":"green"}}'

check "a protected widget cannot be deleted" kc label widget plain widgets.example.com/protected=yes
check "the delete is refused" expect_fail 'widget plain is protected' kc delete widget plain
check "it is still there" kc get widget plain

check "a server-side dry run calls the webhooks too" \
    expect_fail 'spec.color must be blue or green, not red' kc create --dry-run=server -f "$D/red.yaml"

# The official Python client sees the same: a 403 ApiException with the
# webhook's Status, and a defaulted object.
py_widgets() {
    /usr/bin/python3 - "$KUBECONFIG_FILE" <<'PY'
import json, sys
from kubernetes import client, config
from kubernetes.client.rest import ApiException
config.load_kube_config(sys.argv[1])
api = client.CustomObjectsApi()
def widget(name, spec):
    return {"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": name}, "spec": spec}
try:
    api.create_namespaced_custom_object("example.com", "v1", "default", "widgets",
                                        widget("pyred", {"color": "red"}))
    sys.exit("created a red widget")
except ApiException as e:
    body = json.loads(e.body)
    assert e.status == 403, e.status
    assert body["reason"] == "Forbidden", body
    assert body["message"] == ('admission webhook "vwidget.example.com.widget-webhook" denied '
                               'the request: spec.color must be blue or green, not red'), body
made = api.create_namespaced_custom_object("example.com", "v1", "default", "widgets",
                                           widget("pyplain", {}))
assert made["spec"] == {"color": "blue", "size": 1}, made["spec"]
print("python ok")
PY
}
if /usr/bin/python3 -c 'import kubernetes' >/dev/null 2>&1; then
    check "the official Python client is denied and defaulted likewise" expect_out 'python ok' py_widgets
else
    skip "the official Python client is denied and defaulted likewise" "python3-kubernetes is not installed"
fi

# Without the webhook, failurePolicy Fail refuses writes it would have seen.
kill -TERM "$hook_pid" 2>/dev/null
wait "$hook_pid" 2>/dev/null
check "with the webhook gone, a write fails as kube-apiserver's does" \
    expect_fail 'Internal error occurred: failed calling webhook "mwidget.example.com.widget-webhook": failed to call webhook: Post "https://127.0.0.1:[0-9]+/mutate-example-com-v1-widget\?timeout=10s": dial tcp 127.0.0.1:[0-9]+: connect: connection refused' \
    kc create -f "$D/big.yaml"
check "deleting the configurations lets writes through again" \
    kc delete mutatingwebhookconfiguration,validatingwebhookconfiguration widget-webhook
check "and the delete goes through" kc delete widget plain

finish
