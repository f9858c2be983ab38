#!/usr/bin/env bash
# test_kubectl_explain.sh - the OpenAPI documents through kubectl: explain of
# built-in fields (typed from the type tables) and of a CRD, /openapi/v2 as
# JSON and as protobuf, and strategic merge with the merge keys the tables give: kubectl
# patch, and client-side apply (kubectl computes its patch from the OpenAPI
# it downloads, the server merges it). TAP on stdout.
. "$(dirname "$0")/lib.sh"

server_start
D=$SERVER_DIR

# --- explain ----------------------------------------------------------------

check "explain deployment.spec.replicas is an integer" \
    expect_out 'FIELD: replicas <integer>' kc explain deployment.spec.replicas
check "explain deployment.spec.template.spec.containers.image is a string" \
    expect_out 'FIELD: image <string>' kc explain deployment.spec.template.spec.containers.image
check "explain deployment lists spec as a DeploymentSpec" \
    expect_out 'spec[[:space:]]+<DeploymentSpec>' kc explain deployment
check "explain pods.spec.containers --recursive reaches env[].valueFrom" \
    expect_out 'configMapKeyRef[[:space:]]+<ConfigMapKeySelector>' \
    kc explain pods.spec.containers --recursive
check "explain pods.spec.containers --recursive marks name required" \
    expect_out 'name[[:space:]]+<string> -required-' kc explain pods.spec.containers --recursive
check "explain svc.spec.ports: a list of ServicePort with a required port" \
    expect_out 'port[[:space:]]+<integer> -required-' kc explain svc.spec.ports
check "explain svc.spec.ports names the element type" \
    expect_out 'ports <\[\]ServicePort>' kc explain svc.spec.ports
check "explain cm.data is a map of strings" \
    expect_out 'data <map\[string\]string>' kc explain cm.data
check "explain of a field that does not exist fails" \
    expect_fail 'does not exist' kc explain deployment.spec.nosuchfield

cat >"$D/crd.yaml" <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              speed: {type: integer, description: How fast the gadget turns.}
EOF
check "apply a CRD" kc apply -f "$D/crd.yaml"
check "explain on the CRD's field" \
    wait_for 10 expect_out 'How fast the gadget turns' kc explain gadget.spec.speed

# --- /openapi/v2 --------------------------------------------------------------

v2_has() { # PYTHON-EXPR over d (the document): exit 0 when true
    kc get --raw /openapi/v2 >"$D/v2.json" 2>&1 || return 1
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($1) else 1)" \
        "$D/v2.json"
}
check "/openapi/v2 is Swagger 2.0 JSON" v2_has "d['swagger'] == '2.0'"
check "/openapi/v2 has Deployment with its group-version-kind" \
    v2_has "d['definitions']['io.k8s.api.apps.v1.Deployment']['x-kubernetes-group-version-kind'] == [{'group':'apps','version':'v1','kind':'Deployment'}]"
check "/openapi/v2 refers from DeploymentSpec to PodTemplateSpec" \
    v2_has "d['definitions']['io.k8s.api.apps.v1.DeploymentSpec']['properties']['template']['\$ref'] == '#/definitions/io.k8s.api.core.v1.PodTemplateSpec'"
check "/openapi/v2 carries the containers merge key" \
    v2_has "d['definitions']['io.k8s.api.core.v1.PodSpec']['properties']['containers']['x-kubernetes-patch-merge-key'] == 'name'"
check "/openapi/v2 has the CRD's definition" \
    v2_has "'com.example.v1.Gadget' in d['definitions']"
check "/openapi/v2 has the CRD's paths" \
    v2_has "'/apis/example.com/v1/namespaces/{namespace}/gadgets/{name}' in d['paths']"

v2_not_acceptable() {
    curl -s -o "$D/v2406.out" -w '%{http_code}' \
        -H 'Accept: application/vnd.kubernetes.protobuf' \
        "$SERVER_URL/openapi/v2" >"$D/v2406.code" || return 1
    OUT=$(cat "$D/v2406.code" "$D/v2406.out")
    [ "$(cat "$D/v2406.code")" = 406 ] && grep -q '"reason":"NotAcceptable"' "$D/v2406.out"
}
if command -v curl >/dev/null 2>&1; then
    check "/openapi/v2 asked for another protobuf: 406 NotAcceptable" v2_not_acceptable
else
    skip "/openapi/v2 asked for another protobuf: 406 NotAcceptable" "no curl"
fi
# Every document is valid OpenAPI (Swagger 2.0, OpenAPI 3.0), as a validator reads it.
validate_all() {
    python3 - "$SERVER_URL" <<'PY'
import json, sys, urllib.request
from openapi_spec_validator import validate
url = sys.argv[1]
get = lambda p: json.load(urllib.request.urlopen(url + p))
validate(get("/openapi/v2"))
root = get("/openapi/v3")
for key, ref in root["paths"].items():
    try:
        validate(get(ref["serverRelativeURL"]))
    except Exception as e:
        sys.exit("%s: %s" % (key, str(e)[:400]))
print("%d v3 documents valid" % len(root["paths"]))
PY
}
if python3 -c 'import openapi_spec_validator' 2>/dev/null; then
    check "/openapi/v2 and every /openapi/v3 document validate" validate_all
else
    skip "/openapi/v2 and every /openapi/v3 document validate" "no openapi_spec_validator"
fi
# kubectl reads the v2 document as protobuf (gnostic's openapi.v2.Document).
check "explain --output=plaintext-openapiv2 deployment.spec.replicas" \
    expect_out 'FIELD: +replicas <integer>' \
    kc explain deployment.spec.replicas --output=plaintext-openapiv2
check "explain --output=plaintext-openapiv2 svc.spec.ports: port required" \
    expect_out 'port[[:space:]]+<integer> -required-' \
    kc explain svc.spec.ports --output=plaintext-openapiv2
check "explain --output=plaintext-openapiv2 on the CRD's field" \
    expect_out 'How fast the gadget turns' \
    kc explain gadget.spec.speed --output=plaintext-openapiv2

# --- strategic merge from the type tables ------------------------------------

cat >"$D/d1.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: nginx:1
        env:
        - {name: MODE, value: one}
        - {name: KEEP, value: "yes"}
      - name: sidecar
        image: busybox:1
      tolerations:
      - {key: a, operator: Exists}
      - {key: b, operator: Exists}
EOF
cat >"$D/d2.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: nginx:1
        env:
        - {name: MODE, value: two}
        - {name: KEEP, value: "yes"}
      tolerations:
      - {key: c, operator: Exists}
EOF
jp() { kc get deploy web -n default -o "jsonpath=$1"; }
check "apply a Deployment with two containers" kc apply -f "$D/d1.yaml"
check "both containers stored" expect_eq 'app sidecar' jp '{.spec.template.spec.containers[*].name}'
check "re-apply with the sidecar removed and an env var changed" kc apply -f "$D/d2.yaml"
check "exactly the new containers are stored" \
    expect_eq 'app' jp '{.spec.template.spec.containers[*].name}'
check "the env var changed, the other kept, in order" \
    expect_eq 'MODE=two KEEP=yes |' \
    jp '{range .spec.template.spec.containers[0].env[*]}{.name}={.value}{" "}{end}{"|"}'
check "tolerations (no merge key) replaced whole" \
    expect_eq 'c' jp '{.spec.template.spec.tolerations[*].key}'

check "kubectl patch: a container merged by name" \
    kc patch deploy web -n default -p \
    '{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:2"}]}}}}'
check "the image changed and the env stayed" \
    expect_eq 'nginx:2 MODE KEEP' \
    jp '{.spec.template.spec.containers[0].image} {.spec.template.spec.containers[0].env[*].name}'
check "kubectl patch: a container added by name goes first" \
    kc patch deploy web -n default -p \
    '{"spec":{"template":{"spec":{"containers":[{"name":"log","image":"busybox:2"}]}}}}'
check "both containers after the patch" \
    expect_eq 'log app' jp '{.spec.template.spec.containers[*].name}'
check "kubectl patch: the strategy replaced by \$retainKeys" \
    kc patch deploy web -n default -p \
    '{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}'
check "the strategy is Recreate without rollingUpdate" \
    expect_eq 'Recreate|' jp '{.spec.strategy.type}|{.spec.strategy.rollingUpdate}'

cat >"$D/svc.yaml" <<'EOF'
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: 8080}
  - {name: https, port: 443, targetPort: 8443}
EOF
check "create a Service with two ports" kc apply -f "$D/svc.yaml"
check "kubectl patch: a Service port merged by port" \
    kc patch svc web -n default -p '{"spec":{"ports":[{"port":80,"targetPort":9090}]}}'
check "the port changed, the other kept" \
    expect_eq '80:9090 443:8443 |' \
    kc get svc web -n default -o 'jsonpath={range .spec.ports[*]}{.port}:{.targetPort}{" "}{end}{"|"}'

check "kubectl patch: finalizers merge as a set" \
    kc patch deploy web -n default -p '{"metadata":{"finalizers":["example.com/a"]}}'
check "kubectl patch: a second finalizer is added, not replacing" \
    kc patch deploy web -n default -p '{"metadata":{"finalizers":["example.com/b"]}}'
check "both finalizers stored" \
    expect_out 'example.com/a.*example.com/b|example.com/b.*example.com/a' jp '{.metadata.finalizers}'
check "kubectl patch --type=json clears the finalizers" \
    kc patch deploy web -n default --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]'

cat >"$D/g1.yaml" <<'EOF'
apiVersion: example.com/v1
kind: Gadget
metadata: {name: g1, namespace: default}
spec: {speed: 1}
EOF
check "create a Gadget" kc apply -f "$D/g1.yaml"
check "strategic merge on a custom resource is refused (415)" \
    expect_fail 'UnsupportedMediaType|415|unknown format' \
    kc patch gadget g1 -n default --type=strategic -p '{"spec":{"speed":2}}'

finish
