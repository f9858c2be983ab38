#!/usr/bin/env bash
# test_node_openapi.sh - the godaddy `kubernetes-client` (Node.js), which
# builds its whole API from /openapi/v2 as JSON: loading the spec, creating,
# listing and patching built-in kinds through the operations it declares, and
# a CRD it creates, whose kind is there once it loads the spec again.
# Skipped when scripts/node_client.sh has not fetched the client. TAP on
# stdout.
. "$(dirname "$0")/lib.sh"

NODE_CLIENT=${NODE_CLIENT:-$(dirname "$0")/../../scripts/node_client.sh}
if ! command -v node >/dev/null 2>&1; then
    echo "1..0 # SKIP node not found"
    exit 0
fi
if ! NODE_MODS=$("$NODE_CLIENT" --cached 2>/dev/null); then
    echo "1..0 # SKIP the godaddy kubernetes-client is not fetched (run scripts/node_client.sh; needs the npm registry)"
    exit 0
fi

server_start

node_run() {
    OUT=$(NODE_PATH=$NODE_MODS timeout 60 node "$(dirname "$0")/node_openapi.js" \
        "$KUBECONFIG_FILE" 2>&1)
}
node_run
NODE_OUT=$OUT
has() { # LINE: the client printed it
    OUT=$NODE_OUT
    printf '%s\n' "$NODE_OUT" | grep -qx -- "$1"
}
check "the client loads /openapi/v2" has 'ok spec loaded'
check "it creates a Deployment through the v2 operations" has 'ok deployment created 201'
check "it lists Deployments" has 'ok deployments nodeweb'
check "it patches a Deployment" has 'ok deployment replicas 3'
check "it creates a ConfigMap" has 'ok configmap created 201'
check "it creates a CRD" has 'ok crd created 201'
check "a CRD's kind appears in the reloaded spec" has 'ok gadget created 201 speed 4'
check "the Deployment is stored" \
    expect_eq '3' kc get deploy nodeweb -n default -o 'jsonpath={.spec.replicas}'

finish
