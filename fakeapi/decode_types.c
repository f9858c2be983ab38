/*
 * decode_types.c - the typed fields of the built-in kinds fakeapi serves,
 * for decode.c: written by hand from ../shared/k8s-types (field names and
 * types of the upstream messages, JSON names from their Go struct tags).
 *
 * Deliberately small: ObjectMeta in full, the kinds whose data sits at the
 * top level (ConfigMap, Secret, ServiceAccount, Event, Lease's spec, RBAC,
 * Namespace) field by field, and for every other kind only that spec and
 * status are objects. A table generated from ../shared/k8s-types can take
 * the place of this file: same shapes (decode.h), same two symbols.
 *
 * Go type names are what reflect prints ("v1.ObjectMeta"); a named string
 * type keeps its name ("v1.SecretType") where the proto only says string.
 */
#include "decode.h"

#define F(json, type)                                                                              \
    {                                                                                              \
        json, FAKEAPI__D_##type, FAKEAPI__D_ONE, NULL, NULL                                        \
    }
#define LIST(json, type)                                                                           \
    {                                                                                              \
        json, FAKEAPI__D_##type, FAKEAPI__D_LIST, NULL, NULL                                       \
    }
#define MAP(json, type)                                                                            \
    {                                                                                              \
        json, FAKEAPI__D_##type, FAKEAPI__D_MAP, NULL, NULL                                        \
    }
#define NAMED(json, go)                                                                            \
    {                                                                                              \
        json, FAKEAPI__D_STRING, FAKEAPI__D_ONE, NULL, go                                          \
    }
#define MSG(json, m)                                                                               \
    {                                                                                              \
        json, FAKEAPI__D_MESSAGE, FAKEAPI__D_ONE, &m, NULL                                         \
    }
#define MSGS(json, m)                                                                              \
    {                                                                                              \
        json, FAKEAPI__D_MESSAGE, FAKEAPI__D_LIST, &m, NULL                                        \
    }
#define END                                                                                        \
    {                                                                                              \
        NULL, FAKEAPI__D_ANY, FAKEAPI__D_ONE, NULL, NULL                                           \
    }

/* A struct checked only for being an object. */
#define OPAQUE(var, go) static const fakeapi__dmsg var = {go, NULL}

/* ---- meta/v1 -------------------------------------------------------------- */

static const fakeapi__dfield owner_ref_fields[] = {
    F("apiVersion", STRING),
    F("kind", STRING),
    F("name", STRING),
    F("uid", STRING),
    F("controller", BOOL),
    F("blockOwnerDeletion", BOOL),
    END,
};
static const fakeapi__dmsg owner_ref = {"v1.OwnerReference", owner_ref_fields};

static const fakeapi__dfield managed_fields_fields[] = {
    F("manager", STRING),     NAMED("operation", "v1.ManagedFieldsOperationType"),
    F("apiVersion", STRING),  F("time", TIME),
    F("fieldsType", STRING),  F("fieldsV1", ANY),
    F("subresource", STRING), END,
};
static const fakeapi__dmsg managed_fields = {"v1.ManagedFieldsEntry", managed_fields_fields};

static const fakeapi__dfield object_meta_fields[] = {
    F("name", STRING),
    F("generateName", STRING),
    F("namespace", STRING),
    F("selfLink", STRING),
    NAMED("uid", "types.UID"),
    F("resourceVersion", STRING),
    F("generation", INT64),
    F("creationTimestamp", TIME),
    F("deletionTimestamp", TIME),
    F("deletionGracePeriodSeconds", INT64),
    MAP("labels", STRING),
    MAP("annotations", STRING),
    MSGS("ownerReferences", owner_ref),
    LIST("finalizers", STRING),
    MSGS("managedFields", managed_fields),
    END,
};
static const fakeapi__dmsg object_meta = {"v1.ObjectMeta", object_meta_fields};

#define TYPE_META F("apiVersion", STRING), F("kind", STRING)
#define META MSG("metadata", object_meta)

const fakeapi__dfield fakeapi__decode_custom_root[] = {TYPE_META, META, END};

/* ---- core/v1 -------------------------------------------------------------- */

static const fakeapi__dfield configmap_fields[] = {
    TYPE_META, META, F("immutable", BOOL), MAP("data", STRING), MAP("binaryData", BYTES), END,
};

static const fakeapi__dfield secret_fields[] = {
    TYPE_META,
    META,
    F("immutable", BOOL),
    MAP("data", BYTES),
    MAP("stringData", STRING),
    NAMED("type", "v1.SecretType"),
    END,
};

static const fakeapi__dfield namespace_spec_fields[] = {
    {"finalizers", FAKEAPI__D_STRING, FAKEAPI__D_LIST, NULL, "v1.FinalizerName"},
    END,
};
static const fakeapi__dmsg namespace_spec = {"v1.NamespaceSpec", namespace_spec_fields};
OPAQUE(namespace_condition, "v1.NamespaceCondition");
static const fakeapi__dfield namespace_status_fields[] = {
    NAMED("phase", "v1.NamespacePhase"),
    MSGS("conditions", namespace_condition),
    END,
};
static const fakeapi__dmsg namespace_status = {"v1.NamespaceStatus", namespace_status_fields};
static const fakeapi__dfield namespace_fields[] = {
    TYPE_META, META, MSG("spec", namespace_spec), MSG("status", namespace_status), END,
};

OPAQUE(object_ref, "v1.ObjectReference");
OPAQUE(local_object_ref, "v1.LocalObjectReference");
static const fakeapi__dfield serviceaccount_fields[] = {
    TYPE_META,
    META,
    MSGS("secrets", object_ref),
    MSGS("imagePullSecrets", local_object_ref),
    F("automountServiceAccountToken", BOOL),
    END,
};

OPAQUE(event_source, "v1.EventSource");
OPAQUE(core_event_series, "v1.EventSeries");
static const fakeapi__dfield core_event_fields[] = {
    TYPE_META,
    META,
    MSG("involvedObject", object_ref),
    F("reason", STRING),
    F("message", STRING),
    MSG("source", event_source),
    F("firstTimestamp", TIME),
    F("lastTimestamp", TIME),
    F("count", INT32),
    F("type", STRING),
    F("eventTime", TIME),
    MSG("series", core_event_series),
    F("action", STRING),
    MSG("related", object_ref),
    F("reportingComponent", STRING),
    F("reportingInstance", STRING),
    END,
};

OPAQUE(endpoint_subset, "v1.EndpointSubset");
static const fakeapi__dfield endpoints_fields[] = {
    TYPE_META,
    META,
    MSGS("subsets", endpoint_subset),
    END,
};

/* Kinds whose spec and status are only checked for being objects. */
#define SPEC_STATUS(name, spec_go, status_go)                                                      \
    OPAQUE(name##_spec, spec_go);                                                                  \
    OPAQUE(name##_status, status_go);                                                              \
    static const fakeapi__dfield name##_fields[] = {                                               \
        TYPE_META, META, MSG("spec", name##_spec), MSG("status", name##_status), END,              \
    }

SPEC_STATUS(pod, "v1.PodSpec", "v1.PodStatus");
SPEC_STATUS(service, "v1.ServiceSpec", "v1.ServiceStatus");
SPEC_STATUS(node, "v1.NodeSpec", "v1.NodeStatus");
SPEC_STATUS(pvc, "v1.PersistentVolumeClaimSpec", "v1.PersistentVolumeClaimStatus");

/* ---- apps/v1, batch/v1 ------------------------------------------------------ */

SPEC_STATUS(deployment, "v1.DeploymentSpec", "v1.DeploymentStatus");
SPEC_STATUS(replicaset, "v1.ReplicaSetSpec", "v1.ReplicaSetStatus");
SPEC_STATUS(statefulset, "v1.StatefulSetSpec", "v1.StatefulSetStatus");
SPEC_STATUS(daemonset, "v1.DaemonSetSpec", "v1.DaemonSetStatus");
SPEC_STATUS(job, "v1.JobSpec", "v1.JobStatus");
SPEC_STATUS(cronjob, "v1.CronJobSpec", "v1.CronJobStatus");

/* ---- coordination.k8s.io/v1 ------------------------------------------------- */

static const fakeapi__dfield lease_spec_fields[] = {
    F("holderIdentity", STRING),  F("leaseDurationSeconds", INT32),
    F("acquireTime", TIME),       F("renewTime", TIME),
    F("leaseTransitions", INT32), NAMED("strategy", "v1.CoordinatedLeaseStrategy"),
    F("preferredHolder", STRING), END,
};
static const fakeapi__dmsg lease_spec = {"v1.LeaseSpec", lease_spec_fields};
static const fakeapi__dfield lease_fields[] = {TYPE_META, META, MSG("spec", lease_spec), END};

/* ---- events.k8s.io/v1 ------------------------------------------------------- */

OPAQUE(events_series, "v1.EventSeries");
static const fakeapi__dfield events_event_fields[] = {
    TYPE_META,
    META,
    F("eventTime", TIME),
    MSG("series", events_series),
    F("reportingController", STRING),
    F("reportingInstance", STRING),
    F("action", STRING),
    F("reason", STRING),
    MSG("regarding", object_ref),
    MSG("related", object_ref),
    F("note", STRING),
    F("type", STRING),
    MSG("deprecatedSource", event_source),
    F("deprecatedFirstTimestamp", TIME),
    F("deprecatedLastTimestamp", TIME),
    F("deprecatedCount", INT32),
    END,
};

/* ---- rbac.authorization.k8s.io/v1 ------------------------------------------- */

OPAQUE(policy_rule, "v1.PolicyRule");
OPAQUE(subject, "v1.Subject");
OPAQUE(role_ref, "v1.RoleRef");
OPAQUE(aggregation_rule, "v1.AggregationRule");
static const fakeapi__dfield role_fields[] = {TYPE_META, META, MSGS("rules", policy_rule), END};
static const fakeapi__dfield clusterrole_fields[] = {
    TYPE_META, META, MSGS("rules", policy_rule), MSG("aggregationRule", aggregation_rule), END,
};
static const fakeapi__dfield binding_fields[] = {
    TYPE_META, META, MSGS("subjects", subject), MSG("roleRef", role_ref), END,
};

/* ---- apiextensions.k8s.io/v1 ------------------------------------------------ */

SPEC_STATUS(crd, "v1.CustomResourceDefinitionSpec", "v1.CustomResourceDefinitionStatus");

const fakeapi__dkind fakeapi__decode_kinds[] = {
    {"", "Namespace", namespace_fields},
    {"", "Pod", pod_fields},
    {"", "Service", service_fields},
    {"", "Endpoints", endpoints_fields},
    {"", "ConfigMap", configmap_fields},
    {"", "Secret", secret_fields},
    {"", "ServiceAccount", serviceaccount_fields},
    {"", "Event", core_event_fields},
    {"", "Node", node_fields},
    {"", "PersistentVolumeClaim", pvc_fields},
    {"apps", "Deployment", deployment_fields},
    {"apps", "ReplicaSet", replicaset_fields},
    {"apps", "StatefulSet", statefulset_fields},
    {"apps", "DaemonSet", daemonset_fields},
    {"batch", "Job", job_fields},
    {"batch", "CronJob", cronjob_fields},
    {"coordination.k8s.io", "Lease", lease_fields},
    {"events.k8s.io", "Event", events_event_fields},
    {"rbac.authorization.k8s.io", "Role", role_fields},
    {"rbac.authorization.k8s.io", "RoleBinding", binding_fields},
    {"rbac.authorization.k8s.io", "ClusterRole", clusterrole_fields},
    {"rbac.authorization.k8s.io", "ClusterRoleBinding", binding_fields},
    {"apiextensions.k8s.io", "CustomResourceDefinition", crd_fields},
    {NULL, NULL, NULL},
};
