#!/usr/bin/env bash
# test_kubectl_get.sh - `kubectl get` columns against `fakeapi serve`: objects
# made with `kubectl apply -f`, their status written with
# `kubectl patch --subresource=status`, then the headers and cells kubectl
# prints from the server's Tables, with and without `-o wide`.  TAP on stdout.
. "$(dirname "$0")/lib.sh"

server_start
D=$SERVER_DIR
N="-n tables"

cat >"$D/objects.yaml" <<'EOF_YAML'
apiVersion: v1
kind: Namespace
metadata:
  name: tables
---
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: tables
spec:
  nodeName: node-1
  containers:
  - name: a
    image: nginx
  - name: b
    image: busybox
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: tables
spec:
  replicas: 3
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: tables
spec:
  type: NodePort
  clusterIP: 10.96.0.20
  selector:
    app: web
  ports:
  - port: 80
    nodePort: 30080
    protocol: TCP
---
apiVersion: v1
kind: Event
metadata:
  name: web.pulled
  namespace: tables
involvedObject:
  kind: Pod
  name: web
  namespace: tables
  fieldPath: spec.containers{a}
reason: Pulled
message: Successfully pulled image
type: Normal
count: 3
source:
  component: kubelet
  host: node-1
---
apiVersion: events.k8s.io/v1
kind: Event
metadata:
  name: web.scaled
  namespace: tables
regarding:
  kind: Deployment
  name: web
  namespace: tables
reason: ScalingReplicaSet
note: Scaled up to 3
type: Normal
action: Scale
reportingController: deployment-controller
reportingInstance: kcm-1
eventTime: "2026-01-01T00:00:00.000000Z"
---
apiVersion: v1
kind: Node
metadata:
  name: node-1
  labels:
    node-role.kubernetes.io/control-plane: ""
---
apiVersion: batch/v1
kind: Job
metadata:
  name: pi
  namespace: tables
spec:
  completions: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: pi
        image: perl
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: tick
  namespace: tables
spec:
  schedule: "*/5 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: t
            image: busybox
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: leader
  namespace: tables
spec:
  holderIdentity: manager-0
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  namespace: tables
data:
  a: "1"
  b: "2"
  c: "3"
---
apiVersion: v1
kind: Secret
metadata:
  name: tls
  namespace: tables
type: kubernetes.io/tls
data:
  tls.crt: ""
  tls.key: ""
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: robot
  namespace: tables
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: reader
  namespace: tables
rules:
- apiGroups: [""]
  resources: [pods]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: read
  namespace: tables
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: reader
subjects:
- kind: User
  name: alice
- kind: ServiceAccount
  name: robot
  namespace: tables
EOF_YAML

cat >"$D/more.yaml" <<'EOF_YAML'
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: tables}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 10
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: tables}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: tables}
spec:
  ingressClassName: nginx
  tls: [{hosts: [web.example.com]}]
  rules:
  - host: web.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend: {service: {name: web, port: {number: 80}}}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny, namespace: tables}
spec:
  podSelector: {matchLabels: {app: web}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: fast
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: csi.example.com
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: tables}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Endpoints
metadata: {name: web, namespace: tables}
subsets:
- addresses: [{ip: 10.1.0.4}]
  ports: [{port: 8080}]
EOF_YAML

check "apply -f every kind" expect_out 'rolebinding.rbac.authorization.k8s.io/read created' \
    kc apply -f "$D/objects.yaml"

# Kinds another part of the server may not serve yet are TODO there, not failures.
if kc api-resources 2>/dev/null | grep -q '^horizontalpodautoscalers'; then
    check "apply -f hpa, pdb, ingress, netpol, storageclass, priorityclass, pvc, endpoints" \
        expect_out 'endpoints/web created' kc apply -f "$D/more.yaml"
    MORE=1
else
    skip "apply -f hpa, pdb, ingress, ..." "autoscaling not served"
    MORE=""
fi

check "patch pod status" kc patch pod web $N --subresource=status --type=merge -p '
{"status":{"phase":"Running","podIP":"10.1.0.4","podIPs":[{"ip":"10.1.0.4"}],
 "containerStatuses":[
  {"name":"a","ready":true,"restartCount":0,"image":"nginx","imageID":"",
   "state":{"running":{"startedAt":"2026-01-01T00:00:00Z"}}},
  {"name":"b","ready":false,"restartCount":2,"image":"busybox","imageID":"",
   "state":{"waiting":{"reason":"CrashLoopBackOff"}},
   "lastState":{"terminated":{"exitCode":1,"finishedAt":"2026-01-01T00:00:00Z"}}}]}}'
check "patch deployment status" kc patch deployment web $N --subresource=status --type=merge \
    -p '{"status":{"replicas":3,"readyReplicas":2,"updatedReplicas":3,"availableReplicas":2}}'
check "patch node status" kc patch node node-1 --subresource=status --type=merge -p '
{"status":{"conditions":[{"type":"Ready","status":"True"}],
 "addresses":[{"type":"InternalIP","address":"192.168.0.10"}],
 "nodeInfo":{"kubeletVersion":"v1.32.0","osImage":"Debian GNU/Linux 12","kernelVersion":"6.1.0",
  "containerRuntimeVersion":"containerd://1.7.0","machineID":"","systemUUID":"","bootID":"",
  "kubeProxyVersion":"","operatingSystem":"linux","architecture":"amd64"}}}'
check "patch job status" kc patch job pi $N --subresource=status --type=merge \
    -p '{"status":{"startTime":"2026-01-01T00:00:00Z","succeeded":1}}'

AGE='[0-9]+[smhdy][0-9smhdy]*'

# --- pods ------------------------------------------------------------------
check "get pods: header" expect_out '^NAME +READY +STATUS +RESTARTS +AGE$' kc get pods $N
check "get pods: READY, STATUS from container states, RESTARTS with the last restart" \
    expect_out "^web +1/2 +CrashLoopBackOff +2 \\($AGE ago\\) +$AGE\$" kc get pods $N
check "get pods -o wide: header" \
    expect_out '^NAME +READY +STATUS +RESTARTS +AGE +IP +NODE +NOMINATED NODE +READINESS GATES$' \
    kc get pods $N -o wide
check "get pods -o wide: IP and node" \
    expect_out "^web +1/2 +CrashLoopBackOff +.* +10\\.1\\.0\\.4 +node-1 +<none> +<none>\$" \
    kc get pods $N -o wide

# --- deployments -------------------------------------------------------------
check "get deploy: header" expect_out '^NAME +READY +UP-TO-DATE +AVAILABLE +AGE$' \
    kc get deploy $N
check "get deploy: cells" expect_out "^web +2/3 +3 +2 +$AGE\$" kc get deploy $N
check "get deploy -o wide: containers, images, selector" \
    expect_out "^web +2/3 +3 +2 +$AGE +nginx +nginx:1\\.27 +app=web\$" kc get deploy $N -o wide

# --- services ----------------------------------------------------------------
check "get svc: header" expect_out '^NAME +TYPE +CLUSTER-IP +EXTERNAL-IP +PORT\(S\) +AGE$' \
    kc get svc $N
check "get svc: cells" expect_out "^web +NodePort +10\\.96\\.0\\.20 +<none> +80:30080/TCP +$AGE\$" \
    kc get svc $N
check "get svc -o wide: selector" expect_out "^web +NodePort .* +app=web\$" kc get svc $N -o wide

# --- events --------------------------------------------------------------------
check "get events: header" expect_out '^LAST SEEN +TYPE +REASON +OBJECT +MESSAGE$' \
    kc get events $N
check "get events: cells" \
    expect_out '^[^ ]+ +Normal +Pulled +pod/web +Successfully pulled image$' kc get events $N
check "get events -o wide: header" \
    expect_out '^LAST SEEN +TYPE +REASON +OBJECT +SUBOBJECT +SOURCE +MESSAGE +FIRST SEEN +COUNT +NAME$' \
    kc get events $N -o wide
check "get events -o wide: subobject, source, count, name" \
    expect_out 'pod/web +spec\.containers\{a\} +kubelet, node-1 +Successfully pulled image +[^ ]+ +3 +web\.pulled$' \
    kc get events $N -o wide
check "get events.events.k8s.io: the same columns" \
    expect_out '^LAST SEEN +TYPE +REASON +OBJECT +MESSAGE$' kc get events.v1.events.k8s.io $N
check "get events.events.k8s.io: note as the message, regarding as the object" \
    expect_out '^[^ ]+ +Normal +ScalingReplicaSet +deployment/web +Scaled up to 3$' \
    kc get events.v1.events.k8s.io $N
check "get events.events.k8s.io -o wide: reporting controller as the source, count 1" \
    expect_out 'deployment/web +deployment-controller, kcm-1 +Scaled up to 3 +[^ ]+ +1 +web\.scaled$' \
    kc get events.v1.events.k8s.io $N -o wide

# --- nodes -----------------------------------------------------------------------
check "get nodes: header" expect_out '^NAME +STATUS +ROLES +AGE +VERSION$' kc get nodes
check "get nodes: cells" expect_out "^node-1 +Ready +control-plane +$AGE +v1\\.32\\.0\$" kc get nodes
check "get nodes -o wide: addresses and node info" \
    expect_out "^node-1 +Ready +control-plane +$AGE +v1\\.32\\.0 +192\\.168\\.0\\.10 +<none> +Debian GNU/Linux 12 +6\\.1\\.0 +containerd://1\\.7\\.0\$" \
    kc get nodes -o wide

# --- batch -----------------------------------------------------------------------
check "get jobs: header" expect_out '^NAME +STATUS +COMPLETIONS +DURATION +AGE$' kc get jobs $N
check "get jobs: cells" expect_out "^pi +Running +1/2 +$AGE +$AGE\$" kc get jobs $N
check "get jobs -o wide: header" \
    expect_out '^NAME +STATUS +COMPLETIONS +DURATION +AGE +CONTAINERS +IMAGES +SELECTOR$' \
    kc get jobs $N -o wide
check "get cronjobs: header" \
    expect_out '^NAME +SCHEDULE +TIMEZONE +SUSPEND +ACTIVE +LAST SCHEDULE +AGE$' kc get cronjobs $N
check "get cronjobs: cells" \
    expect_out "^tick +\\*/5 \\* \\* \\* \\* +<none> +False +0 +<none> +$AGE\$" kc get cronjobs $N

# --- the rest ----------------------------------------------------------------------
check "get leases" expect_out "^leader +manager-0 +$AGE\$" kc get leases $N
check "get leases: header" expect_out '^NAME +HOLDER +AGE$' kc get leases $N
check "get cm: header and cells" expect_out "^cfg +3 +$AGE\$" kc get cm cfg $N
check "get cm: header" expect_out '^NAME +DATA +AGE$' kc get cm cfg $N
check "get secrets: cells" expect_out "^tls +kubernetes\\.io/tls +2 +$AGE\$" kc get secret tls $N
check "get secrets: header" expect_out '^NAME +TYPE +DATA +AGE$' kc get secret tls $N
check "get ns: cells" expect_out "^tables +Active +$AGE\$" kc get ns tables
check "get ns: header" expect_out '^NAME +STATUS +AGE$' kc get ns tables
check "get sa: header and cells" expect_out "^robot +0 +$AGE\$" kc get sa robot $N
check "get roles: NAME and CREATED AT" \
    expect_out '^reader +[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$' kc get roles $N
check "get rolebindings -o wide: subjects" \
    expect_out "^read +Role/reader +$AGE +alice +tables/robot\$" kc get rolebindings $N -o wide
# --sort-by makes kubectl ask for includeObject=Object: rows must carry the whole object.
first_sorted() { kc get cm $N --sort-by=.data.a --no-headers 2>&1 | awk 'NR == 1 { print $1 }'; }
check "apply a second configmap" kc apply -f - <<'EOF_YAML'
apiVersion: v1
kind: ConfigMap
metadata:
  name: zero
  namespace: tables
data:
  a: "0"
EOF_YAML
check "get cm --sort-by a data field" \
    expect_eq zero first_sorted
check "get rolebindings -o wide: header" \
    expect_out '^NAME +ROLE +AGE +USERS +GROUPS +SERVICEACCOUNTS$' kc get rolebindings $N -o wide

# --- kinds of the other GA groups ---------------------------------------------------
if [ -n "$MORE" ]; then
    check "get hpa: header" \
        expect_out '^NAME +REFERENCE +TARGETS +MINPODS +MAXPODS +REPLICAS +AGE$' kc get hpa $N
    check "get hpa: cells" \
        expect_out "^web +Deployment/web +cpu: <unknown>/80% +2 +10 +0 +$AGE\$" kc get hpa $N
    check "get pdb" \
        expect_out "^web +1 +N/A +0 +$AGE\$" kc get pdb $N
    check "get pdb: header" \
        expect_out '^NAME +MIN AVAILABLE +MAX UNAVAILABLE +ALLOWED DISRUPTIONS +AGE$' kc get pdb $N
    check "get ingress" \
        expect_out "^web +nginx +web\\.example\\.com +80, 443 +$AGE\$" kc get ingress $N
    check "get ingress: header" \
        expect_out '^NAME +CLASS +HOSTS +ADDRESS +PORTS +AGE$' kc get ingress $N
    check "get netpol" expect_out "^deny +app=web +$AGE\$" kc get netpol $N
    check "get storageclass: default marked" \
        expect_out "^fast \\(default\\) +csi\\.example\\.com +Delete +Immediate +false +$AGE\$" \
        kc get storageclass
    check "get priorityclass" \
        expect_out "^high +1000 +false +$AGE +PreemptLowerPriority\$" kc get priorityclass high
    check "get pvc" \
        expect_out "^data +Pending +fast +<unset> +$AGE\$" kc get pvc $N
    check "get pvc -o wide: header" \
        expect_out '^NAME +STATUS +VOLUME +CAPACITY +ACCESS MODES +STORAGECLASS +VOLUMEATTRIBUTESCLASS +AGE +VOLUMEMODE$' \
        kc get pvc $N -o wide
    check "get endpoints" expect_out "^web +10\\.1\\.0\\.4:8080 +$AGE\$" kc get endpoints $N
fi

finish
