#!/usr/bin/env bash
# test_kubectl_crd.sh - a CustomResourceDefinition through kubectl: schema
# validation, printer columns, short names, explain, and cascading delete.
# TAP on stdout.
. "$(dirname "$0")/lib.sh"

server_start
D=$SERVER_DIR

cat >"$D/crd.yaml" <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
    shortNames: [wdg]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
    additionalPrinterColumns:
    - name: Size
      type: integer
      jsonPath: .spec.size
    - name: Color
      type: string
      jsonPath: .spec.color
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
    schema:
      openAPIV3Schema:
        type: object
        description: A Widget is a thing made for the end-to-end tests.
        properties:
          spec:
            type: object
            description: WidgetSpec says how big and which colour the widget is.
            required: [size]
            properties:
              size:
                type: integer
                minimum: 1
                maximum: 10
                description: How many units wide the widget is.
              color:
                type: string
                enum: [red, green, blue]
                description: The colour of the widget's paint.
          status:
            type: object
            properties:
              ready:
                type: boolean
EOF
check "apply the CRD" \
    expect_out 'customresourcedefinition.apiextensions.k8s.io/widgets.example.com created' \
    kc apply -f "$D/crd.yaml"
check "get crd" expect_out '^widgets\.example\.com ' kc get crd widgets.example.com
check "the CRD becomes Established" \
    kc wait crd/widgets.example.com --for=condition=Established --timeout=10s
check "api-resources lists widgets with its short name" \
    expect_out '^widgets +wdg +example\.com/v1 +true +Widget' kc api-resources --api-group=example.com
check "api-versions lists example.com/v1" expect_out '^example\.com/v1$' kc api-versions

for w in "small 2 red" "big 9 blue" "mid 5 green"; do
    set -- $w
    cat >"$D/w-$1.yaml" <<EOF
apiVersion: example.com/v1
kind: Widget
metadata:
  name: $1
  namespace: default
  labels:
    size: "$1"
spec:
  size: $2
  color: $3
EOF
done
check "create -f a custom object" expect_out 'widget.example.com/small created' kc create -f "$D/w-small.yaml"
check "apply -f custom objects" expect_out 'widget.example.com/mid created' \
    kc apply -f "$D/w-big.yaml" -f "$D/w-mid.yaml"
check "list custom objects by plural" expect_eq 'widget.example.com/big
widget.example.com/mid
widget.example.com/small' kc get widgets -o name
check "list custom objects by short name" expect_out '^small ' kc get wdg
check "list custom objects by kind" expect_out '^big ' kc get widget
check "get shows the printer columns header" \
    expect_out '^NAME +SIZE +COLOR +AGE$' kc get widgets
check "get shows the printer column values" \
    expect_out '^big +9 +blue +[0-9]+[smhd]' kc get widgets
check "get -l on custom objects" expect_eq 'widget.example.com/mid' kc get wdg -l size=mid -o name
check "get -o jsonpath on a custom object" expect_eq '5' kc get widget mid -o 'jsonpath={.spec.size}'

sed 's/size: 5/size: 6/' "$D/w-mid.yaml" >"$D/w-mid2.yaml"
check "apply a change to a custom object (merge patch)" \
    expect_out 'widget.example.com/mid configured' kc apply -f "$D/w-mid2.yaml"
check "change visible" expect_eq '6' kc get widget mid -o 'jsonpath={.spec.size}'
check "patch --type=merge a custom object" expect_out 'patched' \
    kc patch widget mid --type=merge -p '{"spec":{"color":"red"}}'
check "patch (strategic) on a custom object is refused" \
    expect_fail 'strategic|not supported|415|UnsupportedMediaType' \
    kc patch widget mid -p '{"spec":{"color":"blue"}}'

# Invalid objects are rejected and the offending field is named.
cat >"$D/w-bad.yaml" <<'EOF'
apiVersion: example.com/v1
kind: Widget
metadata:
  name: bad
spec:
  size: 99
  color: purple
EOF
check "an invalid object is rejected, naming spec.size" \
    expect_fail 'spec\.size' kc create -f "$D/w-bad.yaml"
check "an invalid object is rejected, naming spec.color" \
    expect_fail 'spec\.color' kc create -f "$D/w-bad.yaml"
check "the invalid object was not stored" expect_fail 'not found' kc get widget bad
cat >"$D/w-nosize.yaml" <<'EOF'
apiVersion: example.com/v1
kind: Widget
metadata:
  name: nosize
spec:
  color: red
EOF
check "a missing required field is rejected, naming spec.size" \
    expect_fail 'spec\.size.*Required|Required.*spec\.size|spec\.size: Required' kc create -f "$D/w-nosize.yaml"
check "a patch making an object invalid is rejected" \
    expect_fail 'spec\.size' kc patch widget mid --type=merge -p '{"spec":{"size":0}}'
cat >"$D/w-unknown.yaml" <<'EOF'
apiVersion: example.com/v1
kind: Widget
metadata:
  name: unknown
spec:
  size: 3
  shape: round
EOF
check "an unknown field is rejected by strict validation, naming it" \
    expect_fail 'shape' kc create -f "$D/w-unknown.yaml"

# explain reads the CRD's schema through OpenAPI v3.
if need_kubectl 27; then
    check "explain widget shows the kind description" \
        expect_out 'A Widget is a thing made for the end-to-end tests' kc explain widget
    check "explain widget.spec shows the spec description" \
        expect_out 'WidgetSpec says how big and which colour the widget is' kc explain widget.spec
    check "explain widget.spec shows the field descriptions" \
        expect_out 'How many units wide the widget is' kc explain widget.spec
    check "explain widget.spec.color" \
        expect_out "The colour of the widget's paint" kc explain widget.spec.color
else
    for d in "explain widget" "explain widget.spec" "explain widget.spec fields" \
        "explain widget.spec.color"; do
        skip "$d" "needs kubectl >= 1.27"
    done
fi

# The status subresource.
check "patch --subresource=status on a custom object" expect_out 'patched' \
    kc patch widget small --subresource=status --type=merge -p '{"status":{"ready":true}}'
check "status written" expect_eq 'true' kc get widget small -o 'jsonpath={.status.ready}'
check "delete a custom object" expect_out 'widget.example.com "small" deleted' kc delete widget small

# Deleting the CRD removes its objects.
check "delete the CRD" \
    expect_out 'customresourcedefinition.apiextensions.k8s.io "widgets.example.com" deleted' \
    kc delete -f "$D/crd.yaml"
check "the CRD is gone" expect_fail 'not found' kc get crd widgets.example.com
check "its kind is gone from discovery" \
    expect_fail "the server doesn't have a resource type|not found|NotFound" kc get widgets
check "re-apply the CRD" expect_out 'created' kc apply -f "$D/crd.yaml"
check "the old objects went with the CRD" expect_eq '' kc get widgets -o name
check "clean up the CRD" expect_out 'deleted' kc delete crd widgets.example.com

finish
