/*
 * table_cols_misc.c - Table columns of the cluster-plumbing kinds: RBAC
 * bindings, coordination Leases, networking (Ingress, IngressClass,
 * NetworkPolicy), discovery EndpointSlices, storage (StorageClass,
 * CSIDriver, CSINode, VolumeAttachment, CSIStorageCapacity), scheduling
 * PriorityClasses, node RuntimeClasses, certificates CSRs, admission
 * webhook configurations and validating admission policies, flow control
 * (FlowSchema, PriorityLevelConfiguration), apiregistration APIServices and
 * the newer kinds (VolumeAttributesClass, ServiceCIDR, IPAddress,
 * ClusterTrustBundle, StorageVersionMigration, mutating admission policies),
 * as the real server prints them. Kinds the real server has no printer for (Role,
 * ClusterRole, CustomResourceDefinition, ...) get the default Name and
 * Created At columns from table_cols.c.
 *
 * Thread-safety: reentrant; the printers are constant data.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table_cols.h"
#include "timefmt.h"

#define DIG fakeapi__dig
#define DIG_STR fakeapi__dig_str

/* ---- rbac ---- */

static json_t *binding_role(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    const char *kind = DIG_STR(o, "roleRef.kind");
    const char *name = DIG_STR(o, "roleRef.name");
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    fakeapi__cb_addf(&b, "%s/%s", kind ? kind : "", name ? name : "");
    return json_string(b.s);
}

/* rbac.SubjectsStrings: the subjects of one kind, ", "-joined; service accounts as ns/name. */
static json_t *binding_subjects(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    const char *want = arg;
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    size_t i;
    const json_t *s;
    json_array_foreach(json_object_get(o, "subjects"), i, s)
    {
        const char *kind = json_string_value(json_object_get(s, "kind"));
        const char *name = json_string_value(json_object_get(s, "name"));
        if (!kind || strcmp(kind, want) != 0)
            continue;
        if (b.len)
            fakeapi__cb_add(&b, ", ");
        if (!strcmp(kind, "ServiceAccount")) {
            const char *ns = json_string_value(json_object_get(s, "namespace"));
            fakeapi__cb_addf(&b, "%s/%s", ns ? ns : "", name ? name : "");
        } else {
            fakeapi__cb_add(&b, name ? name : "");
        }
    }
    return json_string(b.s);
}

#define BINDING_COLS(what)                                                                         \
    FAKEAPI__COL_NAME,                                                                             \
        {"Role",                                                                                   \
         "string",                                                                                 \
         "",                                                                                       \
         0,                                                                                        \
         "RoleRef can reference a Role in the current namespace or a "                             \
         "ClusterRole in the global namespace.",                                                   \
         binding_role,                                                                             \
         NULL},                                                                                    \
        FAKEAPI__COL_AGE,                                                                          \
        {"Users", "string", "", 1, "Users in the " what, binding_subjects, "User"},                \
        {"Groups", "string", "", 1, "Groups in the " what, binding_subjects, "Group"},             \
    {                                                                                              \
        "ServiceAccounts", "string", "", 1, "ServiceAccounts in the " what, binding_subjects,      \
            "ServiceAccount"                                                                       \
    }

static const fakeapi__colspec rb_cols[] = {BINDING_COLS("roleBinding")};
static const fakeapi__colspec crb_cols[] = {BINDING_COLS("clusterRoleBinding")};

/* ---- coordination ---- */

static const fakeapi__field f_lease_holder = {"spec.holderIdentity", "", 0};

static const fakeapi__colspec lease_cols[] = {
    FAKEAPI__COL_NAME,
    {"Holder", "string", "", 0,
     "holderIdentity contains the identity of the holder of a current "
     "lease.",
     fakeapi__cell_str, &f_lease_holder},
    FAKEAPI__COL_AGE,
};

/* ---- networking ---- */

static const fakeapi__field f_ing_class = {"spec.ingressClassName", "<none>", 0};

static json_t *ing_hosts(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    const json_t *rules = DIG(o, "spec.rules");
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    size_t shown = 0, i;
    bool more = false;
    const json_t *r;
    json_array_foreach(rules, i, r)
    {
        if (shown == 3)
            more = true;
        const char *host = json_string_value(json_object_get(r, "host"));
        if (!more && host && *host) {
            fakeapi__cb_join(&b, ",", host);
            shown++;
        }
    }
    if (!shown)
        return json_string("*");
    if (more)
        fakeapi__cb_addf(&b, " + %zu more...", json_array_size(rules) - 3);
    return json_string(b.s);
}

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static json_t *ing_address(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    const char *addrs[64];
    size_t n = 0, i;
    const json_t *v;
    json_array_foreach(DIG(o, "status.loadBalancer.ingress"), i, v)
    {
        const char *ip = json_string_value(json_object_get(v, "ip"));
        const char *host = json_string_value(json_object_get(v, "hostname"));
        const char *a = ip && *ip ? ip : host && *host ? host : NULL;
        if (a && n < sizeof addrs / sizeof addrs[0])
            addrs[n++] = a;
    }
    qsort(addrs, n, sizeof addrs[0], cmp_cstr);
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    for (size_t j = 0; j < n; j++)
        if (!j || strcmp(addrs[j], addrs[j - 1]) != 0)
            fakeapi__cb_join(&b, ",", addrs[j]);
    return json_string(b.s);
}

static json_t *ing_ports(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    return json_string(json_array_size(DIG(o, "spec.tls")) ? "80, 443" : "80");
}

static const fakeapi__colspec ing_cols[] = {
    FAKEAPI__COL_NAME,
    {"Class", "string", "", 0,
     "The name of the IngressClass resource that should be used for additional configuration",
     fakeapi__cell_str, &f_ing_class},
    {"Hosts", "string", "", 0,
     "Hosts that incoming requests are matched against before the ingress rule", ing_hosts, NULL},
    {"Address", "string", "", 0,
     "Address is a list containing ingress points for the load-balancer", ing_address, NULL},
    {"Ports", "string", "", 0, "Ports of TLS configurations that open", ing_ports, NULL},
    FAKEAPI__COL_AGE,
};

static json_t *ingclass_params(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    const json_t *p = DIG(o, "spec.parameters");
    if (!json_is_object(p))
        return json_string("<none>");
    const char *kind = json_string_value(json_object_get(p, "kind"));
    const char *group = json_string_value(json_object_get(p, "apiGroup"));
    const char *name = json_string_value(json_object_get(p, "name"));
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    fakeapi__cb_add(&b, kind ? kind : "");
    if (group)
        fakeapi__cb_addf(&b, ".%s", group);
    fakeapi__cb_addf(&b, "/%s", name ? name : "");
    return json_string(b.s);
}

static const fakeapi__field f_ingclass_ctrl = {"spec.controller", "", 0};

static const fakeapi__colspec ingclass_cols[] = {
    FAKEAPI__COL_NAME,
    {"Controller", "string", "", 0, "Controller that is responsible for handling this class",
     fakeapi__cell_str, &f_ingclass_ctrl},
    {"Parameters", "string", "", 0, "A reference to a resource with additional parameters",
     ingclass_params, NULL},
    FAKEAPI__COL_AGE,
};

static const fakeapi__colspec netpol_cols[] = {
    FAKEAPI__COL_NAME,
    {"Pod-Selector", "string", "", 0,
     "podSelector selects the pods to which this NetworkPolicy object applies.",
     fakeapi__cell_selector, "spec.podSelector"},
    FAKEAPI__COL_AGE,
};

/* ---- discovery ---- */

/* At most three items, then "+ N more..."; "<unset>" when there are none. */
static json_t *list_with_more(fakeapi__cellbuf *b, size_t count)
{
    if (count > 3)
        fakeapi__cb_addf(b, " + %zu more...", count - 3);
    return fakeapi__cb_or(b, "<unset>");
}

static json_t *eps_ports(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    size_t i;
    const json_t *p;
    const json_t *ports = json_object_get(o, "ports");
    json_array_foreach(ports, i, p)
    {
        if (i == 3)
            break;
        const json_t *port = json_object_get(p, "port");
        const char *name = json_string_value(json_object_get(p, "name"));
        if (i)
            fakeapi__cb_add(&b, ",");
        if (json_is_integer(port))
            fakeapi__cb_addf(&b, "%" JSON_INTEGER_FORMAT, json_integer_value(port));
        else
            fakeapi__cb_add(&b, name ? name : "*");
    }
    return list_with_more(&b, json_array_size(ports));
}

static json_t *eps_endpoints(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    size_t count = 0, i, j;
    const json_t *e, *a;
    json_array_foreach(json_object_get(o, "endpoints"), i, e)
    {
        json_array_foreach(json_object_get(e, "addresses"), j, a)
        {
            if (count < 3 && json_string_value(a))
                fakeapi__cb_join(&b, ",", json_string_value(a));
            count++;
        }
    }
    return list_with_more(&b, count);
}

static const fakeapi__field f_eps_type = {"addressType", "", 0};

static const fakeapi__colspec eps_cols[] = {
    FAKEAPI__COL_NAME,
    {"AddressType", "string", "", 0,
     "addressType specifies the type of address carried by this "
     "EndpointSlice.",
     fakeapi__cell_str, &f_eps_type},
    {"Ports", "string", "", 0,
     "ports specifies the list of network ports exposed by each "
     "endpoint in this slice.",
     eps_ports, NULL},
    {"Endpoints", "string", "", 0, "endpoints is a list of unique endpoints in this slice.",
     eps_endpoints, NULL},
    FAKEAPI__COL_AGE,
};

/* ---- storage ---- */

/* The name, with " (default)" for the cluster's default class. */
static json_t *sc_name(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    const json_t *ann = DIG(o, "metadata.annotations");
    const char *v =
        json_string_value(json_object_get(ann, "storageclass.kubernetes.io/is-default-class"));
    const char *beta =
        json_string_value(json_object_get(ann, "storageclass.beta.kubernetes.io/is-default-class"));
    const char *name = DIG_STR(o, "metadata.name");
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    fakeapi__cb_add(&b, name ? name : "");
    if ((v && !strcmp(v, "true")) || (beta && !strcmp(beta, "true")))
        fakeapi__cb_add(&b, " (default)");
    return json_string(b.s);
}

static const fakeapi__field f_sc_prov = {"provisioner", "", 0};
static const fakeapi__field f_sc_reclaim = {"reclaimPolicy", "Delete", 0};
static const fakeapi__field f_sc_binding = {"volumeBindingMode", "Immediate", 0};
static const fakeapi__field f_sc_expand = {"allowVolumeExpansion", NULL, 0};

static const fakeapi__colspec sc_cols[] = {
    {"Name", "string", "name", 0, fakeapi__desc_name, sc_name, NULL},
    {"Provisioner", "string", "", 0, "provisioner indicates the type of the provisioner.",
     fakeapi__cell_str, &f_sc_prov},
    {"ReclaimPolicy", "string", "", 0,
     "reclaimPolicy controls the reclaimPolicy for dynamically "
     "provisioned PersistentVolumes of this storage class.",
     fakeapi__cell_str, &f_sc_reclaim},
    {"VolumeBindingMode", "string", "", 0,
     "volumeBindingMode indicates how PersistentVolumeClaims "
     "should be provisioned and bound.",
     fakeapi__cell_str, &f_sc_binding},
    {"AllowVolumeExpansion", "string", "", 0,
     "allowVolumeExpansion shows whether the storage "
     "class allow volume expand.",
     fakeapi__cell_bool, &f_sc_expand},
    FAKEAPI__COL_AGE,
};

static const fakeapi__field f_csi_attach = {"spec.attachRequired", NULL, 1};
static const fakeapi__field f_csi_podinfo = {"spec.podInfoOnMount", NULL, 0};
static const fakeapi__field f_csi_capacity = {"spec.storageCapacity", NULL, 0};
static const fakeapi__field f_csi_republish = {"spec.requiresRepublish", NULL, 0};

static json_t *csi_tokens(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    const json_t *t = DIG(o, "spec.tokenRequests");
    if (!json_is_array(t))
        return json_string("<unset>");
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    size_t i;
    const json_t *r;
    json_array_foreach(t, i, r)
    {
        const char *aud = json_string_value(json_object_get(r, "audience"));
        if (i)
            fakeapi__cb_add(&b, ",");
        fakeapi__cb_add(&b, aud ? aud : "");
    }
    return json_string(b.s);
}

static json_t *csi_modes(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    size_t i;
    const json_t *m;
    json_array_foreach(DIG(o, "spec.volumeLifecycleModes"), i, m)
    {
        if (json_string_value(m))
            fakeapi__cb_join(&b, ",", json_string_value(m));
    }
    return fakeapi__cb_or(&b, "<none>");
}

static const fakeapi__colspec csidriver_cols[] = {
    FAKEAPI__COL_NAME,
    {"AttachRequired", "boolean", "", 0,
     "attachRequired indicates this CSI volume driver "
     "requires an attach operation.",
     fakeapi__cell_bool, &f_csi_attach},
    {"PodInfoOnMount", "boolean", "", 0,
     "podInfoOnMount indicates this CSI volume driver "
     "requires additional pod information during mount.",
     fakeapi__cell_bool, &f_csi_podinfo},
    {"StorageCapacity", "boolean", "", 0,
     "storageCapacity indicates that the CSI volume driver "
     "wants pod scheduling to consider storage capacity.",
     fakeapi__cell_bool, &f_csi_capacity},
    {"TokenRequests", "string", "", 0,
     "tokenRequests indicates the CSI driver needs pods' "
     "service account tokens.",
     csi_tokens, NULL},
    {"RequiresRepublish", "boolean", "", 0,
     "requiresRepublish indicates the CSI driver wants "
     "NodePublishVolume being periodically called.",
     fakeapi__cell_bool, &f_csi_republish},
    {"Modes", "string", "", 0,
     "volumeLifecycleModes defines what kind of volumes this CSI "
     "volume driver supports.",
     csi_modes, NULL},
    FAKEAPI__COL_AGE,
};

static const fakeapi__field f_csinode_drivers = {"spec.drivers", NULL, 0};

static const fakeapi__colspec csinode_cols[] = {
    FAKEAPI__COL_NAME,
    {"Drivers", "integer", "", 0,
     "Drivers indicates the number of CSI drivers registered on "
     "the node",
     fakeapi__cell_count, &f_csinode_drivers},
    FAKEAPI__COL_AGE,
};

/* ---- scheduling, node ---- */

static const fakeapi__field f_pc_value = {"value", NULL, 0};
static const fakeapi__field f_pc_default = {"globalDefault", NULL, 0};
/* The API default, when the object does not say. */
static const fakeapi__field f_pc_preempt = {"preemptionPolicy", "PreemptLowerPriority", 0};

static const fakeapi__colspec pc_cols[] = {
    FAKEAPI__COL_NAME,
    {"Value", "integer", "", 0, "value represents the integer value of this priority class.",
     fakeapi__cell_int, &f_pc_value},
    {"Global-Default", "boolean", "", 0,
     "globalDefault specifies whether this PriorityClass "
     "should be considered as the default priority for pods "
     "that do not have any priority class.",
     fakeapi__cell_bool, &f_pc_default},
    FAKEAPI__COL_AGE,
    {"PreemptionPolicy", "string", "", 0,
     "preemptionPolicy is the Policy for preempting pods "
     "with lower priority.",
     fakeapi__cell_str, &f_pc_preempt},
};

static const fakeapi__field f_rc_handler = {"handler", "", 0};

static const fakeapi__colspec runtimeclass_cols[] = {
    FAKEAPI__COL_NAME,
    {"Handler", "string", "", 0,
     "handler specifies the underlying runtime and configuration "
     "that the CRI implementation will use.",
     fakeapi__cell_str, &f_rc_handler},
    FAKEAPI__COL_AGE,
};

/* ---- certificates ---- */

static json_t *csr_condition(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    bool approved = false, denied = false, failed = false;
    size_t i;
    const json_t *c;
    json_array_foreach(DIG(o, "status.conditions"), i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (!t)
            continue;
        approved |= !strcmp(t, "Approved");
        denied |= !strcmp(t, "Denied");
        failed |= !strcmp(t, "Failed");
    }
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    fakeapi__cb_add(&b, denied ? "Denied" : approved ? "Approved" : "Pending");
    if (failed)
        fakeapi__cb_add(&b, ",Failed");
    const char *cert = DIG_STR(o, "status.certificate");
    if (cert && *cert)
        fakeapi__cb_add(&b, ",Issued");
    return json_string(b.s);
}

static json_t *csr_duration(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    const json_t *secs = DIG(o, "spec.expirationSeconds");
    if (!json_is_integer(secs))
        return json_string("<none>");
    char buf[32];
    fakeapi__human_duration((int64_t)json_integer_value(secs) * INT64_C(1000000000), buf,
                            sizeof buf);
    return json_string(buf);
}

static const fakeapi__field f_csr_signer = {"spec.signerName", "<none>", 0};
static const fakeapi__field f_csr_user = {"spec.username", "", 0};

static const fakeapi__colspec csr_cols[] = {
    FAKEAPI__COL_NAME,
    FAKEAPI__COL_AGE,
    {"SignerName", "string", "", 0, "signerName indicates the requested signer.", fakeapi__cell_str,
     &f_csr_signer},
    {"Requestor", "string", "", 0,
     "username contains the name of the user that created the "
     "CertificateSigningRequest.",
     fakeapi__cell_str, &f_csr_user},
    {"RequestedDuration", "string", "", 0,
     "expirationSeconds is the requested duration of "
     "validity of the issued certificate.",
     csr_duration, NULL},
    {"Condition", "string", "", 0, "conditions applied to the request.", csr_condition, NULL},
};

static const fakeapi__field f_va_attacher = {"spec.attacher", "", 0};
static const fakeapi__field f_va_pv = {"spec.source.persistentVolumeName", "", 0};
static const fakeapi__field f_va_node = {"spec.nodeName", "", 0};
static const fakeapi__field f_va_attached = {"status.attached", NULL, 0};

static const fakeapi__colspec va_cols[] = {
    FAKEAPI__COL_NAME,
    /* The real definition marks this column as a name too. */
    {"Attacher", "string", "name", 0,
     "attacher indicates the name of the volume driver that "
     "MUST handle this request.",
     fakeapi__cell_str, &f_va_attacher},
    {"PV", "string", "", 0,
     "persistentVolumeName represents the name of the persistent volume "
     "to attach.",
     fakeapi__cell_str, &f_va_pv},
    {"Node", "string", "", 0,
     "nodeName represents the node that the volume should be attached "
     "to.",
     fakeapi__cell_str, &f_va_node},
    {"Attached", "boolean", "", 0, "attached indicates the volume is successfully attached.",
     fakeapi__cell_bool, &f_va_attached},
    FAKEAPI__COL_AGE,
};

static const fakeapi__field f_csc_class = {"storageClassName", "", 0};
static const fakeapi__field f_csc_capacity = {"capacity", "<unset>", 0};

static const fakeapi__colspec csc_cols[] = {
    FAKEAPI__COL_NAME,
    {"StorageClassName", "string", "", 0,
     "storageClassName represents the name of the "
     "StorageClass that the reported capacity applies to.",
     fakeapi__cell_str, &f_csc_class},
    {"Capacity", "string", "", 0,
     "capacity is the value reported by the CSI driver in its "
     "GetCapacityResponse.",
     fakeapi__cell_str, &f_csc_capacity},
};

/* ---- flow control ---- */

static json_t *fs_distinguisher(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    const json_t *d = DIG(o, "spec.distinguisherMethod");
    if (!json_is_object(d))
        return json_string("<none>");
    return fakeapi__str_or(json_string_value(json_object_get(d, "type")), "");
}

static json_t *fs_missing_pl(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    size_t i;
    const json_t *c;
    json_array_foreach(DIG(o, "status.conditions"), i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t && !strcmp(t, "Dangling"))
            return fakeapi__str_or(json_string_value(json_object_get(c, "status")), "");
    }
    return json_string("?");
}

static const fakeapi__field f_fs_pl = {"spec.priorityLevelConfiguration.name", "", 0};
static const fakeapi__field f_fs_prec = {"spec.matchingPrecedence", NULL, 0};

static const fakeapi__colspec fs_cols[] = {
    FAKEAPI__COL_NAME,
    {"PriorityLevel", "string", "", 0,
     "`name` is the name of the priority level configuration "
     "being referenced",
     fakeapi__cell_str, &f_fs_pl},
    {"MatchingPrecedence", "string", "", 0,
     "`matchingPrecedence` is used to choose among the "
     "FlowSchemas that match a given request.",
     fakeapi__cell_int, &f_fs_prec},
    {"DistinguisherMethod", "string", "", 0,
     "`distinguisherMethod` defines how to compute the "
     "flow distinguisher for requests that match this "
     "schema.",
     fs_distinguisher, NULL},
    FAKEAPI__COL_AGE,
    {"MissingPL", "string", "", 0,
     "references a broken or non-existent "
     "PriorityLevelConfiguration",
     fs_missing_pl, NULL},
};

/* FlowSchemas list in the order the server matches them: precedence, then name. */
static int fs_order(const json_t *a, const json_t *b)
{
    json_int_t pa = fakeapi__dig_int(a, "spec.matchingPrecedence", 0);
    json_int_t pb = fakeapi__dig_int(b, "spec.matchingPrecedence", 0);
    if (pa != pb)
        return pa < pb ? -1 : 1;
    const char *na = DIG_STR(a, "metadata.name"), *nb = DIG_STR(b, "metadata.name");
    return strcmp(na ? na : "", nb ? nb : "");
}

/* A limited priority level's number at path (under spec.limited), or "<none>". */
static json_t *plc_number(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    const json_t *limited = DIG(o, "spec.limited");
    if (!json_is_object(limited))
        return json_string("<none>");
    const char *path = arg;
    if (!strcmp(path, "nominalConcurrencyShares")) /* defaulted to 30 in v1 */
        return json_integer(fakeapi__dig_int(limited, path, 30));
    const json_t *q = DIG(limited, "limitResponse.queuing");
    if (!json_is_object(q))
        return json_string("<none>");
    return json_integer(fakeapi__dig_int(q, path, 0));
}

static const fakeapi__field f_plc_type = {"spec.type", "", 0};

static const fakeapi__colspec plc_cols[] = {
    FAKEAPI__COL_NAME,
    {"Type", "string", "", 0,
     "`type` indicates whether this priority level is subject to "
     "limitation on request execution.",
     fakeapi__cell_str, &f_plc_type},
    {"NominalConcurrencyShares", "string", "", 0,
     "`nominalConcurrencyShares` (NCS) contributes "
     "to the computation of the "
     "NominalConcurrencyLimit (NominalCL) of this "
     "level.",
     plc_number, "nominalConcurrencyShares"},
    {"Queues", "string", "", 0, "`queues` is the number of queues for this priority level.",
     plc_number, "queues"},
    {"HandSize", "string", "", 0,
     "`handSize` is a small positive number that configures the "
     "shuffle sharding of requests into queues.",
     plc_number, "handSize"},
    {"QueueLengthLimit", "string", "", 0,
     "`queueLengthLimit` is the maximum number of requests "
     "allowed to be waiting in a given queue of this "
     "priority level at a time.",
     plc_number, "queueLengthLimit"},
    FAKEAPI__COL_AGE,
};

/* ---- apiregistration ---- */

static json_t *apisvc_service(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    const json_t *svc = DIG(o, "spec.service");
    if (!json_is_object(svc))
        return json_string("Local");
    const char *ns = json_string_value(json_object_get(svc, "namespace"));
    const char *name = json_string_value(json_object_get(svc, "name"));
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    fakeapi__cb_addf(&b, "%s/%s", ns ? ns : "", name ? name : "");
    return json_string(b.s);
}

/* The Available condition: "True", or "False (Reason)". */
static json_t *apisvc_available(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    size_t i;
    const json_t *c;
    json_array_foreach(DIG(o, "status.conditions"), i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (!t || strcmp(t, "Available") != 0)
            continue;
        const char *st = json_string_value(json_object_get(c, "status"));
        const char *reason = json_string_value(json_object_get(c, "reason"));
        fakeapi__cellbuf b;
        fakeapi__cb_init(&b);
        fakeapi__cb_add(&b, st ? st : "");
        if (!(st && !strcmp(st, "True")) && reason && *reason)
            fakeapi__cb_addf(&b, " (%s)", reason);
        return json_string(b.s);
    }
    return json_string("Unknown");
}

static const fakeapi__colspec apisvc_cols[] = {
    FAKEAPI__COL_NAME,
    {"Service", "string", "", 0, "The reference to the service that hosts this API endpoint.",
     apisvc_service, NULL},
    {"Available", "string", "", 0, "Whether this service is available.", apisvc_available, NULL},
    FAKEAPI__COL_AGE,
};

/* ---- admission ---- */

static const fakeapi__field f_webhooks = {"webhooks", NULL, 0};

static const fakeapi__colspec webhook_cols[] = {
    FAKEAPI__COL_NAME,
    {"Webhooks", "integer", "", 0,
     "Webhooks indicates the number of webhooks registered in this configuration",
     fakeapi__cell_count, &f_webhooks},
    FAKEAPI__COL_AGE,
};

static json_t *vap_param_kind(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    const json_t *pk = DIG(o, "spec.paramKind");
    if (!json_is_object(pk))
        return json_string("<unset>");
    const char *api = json_string_value(json_object_get(pk, "apiVersion"));
    const char *kind = json_string_value(json_object_get(pk, "kind"));
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    fakeapi__cb_addf(&b, "%s/%s", api ? api : "", kind ? kind : "");
    return json_string(b.s);
}

static const fakeapi__field f_vap_validations = {"spec.validations", NULL, 0};

static const fakeapi__colspec vap_cols[] = {
    FAKEAPI__COL_NAME,
    {"Validations", "integer", "", 0,
     "Validations indicates the number of validation rules defined in this configuration",
     fakeapi__cell_count, &f_vap_validations},
    {"ParamKind", "string", "", 0,
     "ParamKind specifies the kind of resources used to parameterize this policy", vap_param_kind,
     NULL},
    FAKEAPI__COL_AGE,
};

/* The binding's paramRef: "ns/name", "*\/name" without a namespace, or its selector. */
static json_t *vapb_param_ref(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    const json_t *pr = DIG(o, "spec.paramRef");
    if (!json_is_object(pr))
        return json_string("<unset>");
    const char *name = json_string_value(json_object_get(pr, "name"));
    const char *ns = json_string_value(json_object_get(pr, "namespace"));
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    if (name && *name) {
        fakeapi__cb_addf(&b, "%s/%s", ns && *ns ? ns : "*", name);
        return json_string(b.s);
    }
    /* The real server prints the selector's Go struct dump here; its selector form is kinder. */
    if (json_is_object(json_object_get(pr, "selector"))) {
        fakeapi__selector_text(json_object_get(pr, "selector"), &b);
        return json_string(b.s);
    }
    return json_string("<unset>");
}

static const fakeapi__field f_vapb_policy = {"spec.policyName", "", 0};

static const fakeapi__colspec vapb_cols[] = {
    FAKEAPI__COL_NAME,
    {"PolicyName", "string", "", 0,
     "PolicyName indicates the policy definition which the policy binding binded to",
     fakeapi__cell_str, &f_vapb_policy},
    {"ParamRef", "string", "", 0,
     "ParamRef indicates the param resource which sets the configration param", vapb_param_ref,
     NULL},
    FAKEAPI__COL_AGE,
};

static const fakeapi__field f_map_mutations = {"spec.mutations", NULL, 0};

static const fakeapi__colspec map_cols[] = {
    FAKEAPI__COL_NAME,
    {"Mutations", "integer", "", 0,
     "Mutation indicates the number of mutations rules defined in this configuration",
     fakeapi__cell_count, &f_map_mutations},
    {"ParamKind", "string", "", 0,
     "ParamKind specifies the kind of resources used to parameterize this policy", vap_param_kind,
     NULL},
    FAKEAPI__COL_AGE,
};

/* ---- newer storage, networking, certificates, migration ---- */

/* A VolumeAttributesClass's name, with " (default)" for the default class. */
static json_t *vac_name(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    const json_t *ann = DIG(o, "metadata.annotations");
    const char *v =
        json_string_value(json_object_get(ann, "storage.kubernetes.io/is-default-class"));
    const char *name = DIG_STR(o, "metadata.name");
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    fakeapi__cb_add(&b, name ? name : "");
    if (v && !strcmp(v, "true"))
        fakeapi__cb_add(&b, " (default)");
    return json_string(b.s);
}

static const fakeapi__field f_vac_driver = {"driverName", "", 0};

static const fakeapi__colspec vac_cols[] = {
    {"Name", "string", "name", 0, fakeapi__desc_name, vac_name, NULL},
    {"DriverName", "string", "", 0, "Name of the CSI driver", fakeapi__cell_str, &f_vac_driver},
    FAKEAPI__COL_AGE,
};

static json_t *cidrs(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    size_t i;
    const json_t *c;
    json_array_foreach(DIG(o, "spec.cidrs"), i, c)
    {
        if (i)
            fakeapi__cb_add(&b, ",");
        fakeapi__cb_add(&b, json_string_value(c) ? json_string_value(c) : "");
    }
    return json_string(b.s);
}

static const fakeapi__colspec servicecidr_cols[] = {
    FAKEAPI__COL_NAME,
    {"CIDRs", "string", "", 0, "CIDRs defines the IP blocks in CIDR notation", cidrs, NULL},
    FAKEAPI__COL_AGE,
};

/* "resource.group/namespace/name" of the IPAddress's parent, lower case. */
static json_t *ip_parent(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    const json_t *p = DIG(o, "spec.parentRef");
    if (!json_is_object(p))
        return json_string("<none>");
    const char *res = json_string_value(json_object_get(p, "resource"));
    const char *group = json_string_value(json_object_get(p, "group"));
    const char *ns = json_string_value(json_object_get(p, "namespace"));
    const char *name = json_string_value(json_object_get(p, "name"));
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    fakeapi__cb_add(&b, res ? res : "");
    if (group && *group)
        fakeapi__cb_addf(&b, ".%s", group);
    for (size_t i = 0; i < b.len; i++)
        if (b.s[i] >= 'A' && b.s[i] <= 'Z')
            b.s[i] = (char)(b.s[i] - 'A' + 'a');
    if (ns && *ns)
        fakeapi__cb_addf(&b, "/%s", ns);
    fakeapi__cb_addf(&b, "/%s", name ? name : "");
    return json_string(b.s);
}

static const fakeapi__colspec ipaddress_cols[] = {
    FAKEAPI__COL_NAME,
    {"ParentRef", "string", "", 0,
     "ParentRef references the resource that an IPAddress is "
     "attached to.",
     ip_parent, NULL},
    FAKEAPI__COL_AGE,
};

static const fakeapi__field f_ctb_signer = {"spec.signerName", "<none>", 0};

static const fakeapi__colspec ctb_cols[] = {
    FAKEAPI__COL_NAME,
    {"SignerName", "string", "", 0, "signerName indicates the associated signer, if any.",
     fakeapi__cell_str, &f_ctb_signer},
};

static json_t *svm_resource(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    const char *res = DIG_STR(o, "spec.resource.resource");
    const char *ver = DIG_STR(o, "spec.resource.version");
    const char *group = DIG_STR(o, "spec.resource.group");
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    fakeapi__cb_addf(&b, "%s.%s.%s", res ? res : "", ver ? ver : "", group ? group : "");
    return json_string(b.s);
}

static const fakeapi__colspec svm_cols[] = {
    FAKEAPI__COL_NAME,
    {"Resource", "string", "", 0, "Fully qualified resource to migrate", svm_resource, NULL},
};

const fakeapi__printer fakeapi__printers_misc[] = {
    {"rbac.authorization.k8s.io", "RoleBinding", FAKEAPI__COLS(rb_cols), NULL, NULL},
    {"rbac.authorization.k8s.io", "ClusterRoleBinding", FAKEAPI__COLS(crb_cols), NULL, NULL},
    {"coordination.k8s.io", "Lease", FAKEAPI__COLS(lease_cols), NULL, NULL},
    {"networking.k8s.io", "Ingress", FAKEAPI__COLS(ing_cols), NULL, NULL},
    {"networking.k8s.io", "IngressClass", FAKEAPI__COLS(ingclass_cols), NULL, NULL},
    {"networking.k8s.io", "NetworkPolicy", FAKEAPI__COLS(netpol_cols), NULL, NULL},
    {"discovery.k8s.io", "EndpointSlice", FAKEAPI__COLS(eps_cols), NULL, NULL},
    {"storage.k8s.io", "StorageClass", FAKEAPI__COLS(sc_cols), NULL, NULL},
    {"storage.k8s.io", "CSIDriver", FAKEAPI__COLS(csidriver_cols), NULL, NULL},
    {"storage.k8s.io", "CSINode", FAKEAPI__COLS(csinode_cols), NULL, NULL},
    {"scheduling.k8s.io", "PriorityClass", FAKEAPI__COLS(pc_cols), NULL, NULL},
    {"node.k8s.io", "RuntimeClass", FAKEAPI__COLS(runtimeclass_cols), NULL, NULL},
    {"certificates.k8s.io", "CertificateSigningRequest", FAKEAPI__COLS(csr_cols), NULL, NULL},
    {"admissionregistration.k8s.io", "MutatingWebhookConfiguration", FAKEAPI__COLS(webhook_cols),
     NULL, NULL},
    {"admissionregistration.k8s.io", "ValidatingWebhookConfiguration", FAKEAPI__COLS(webhook_cols),
     NULL, NULL},
    {"admissionregistration.k8s.io", "ValidatingAdmissionPolicy", FAKEAPI__COLS(vap_cols), NULL,
     NULL},
    {"admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding", FAKEAPI__COLS(vapb_cols),
     NULL, NULL},
    {"storage.k8s.io", "VolumeAttachment", FAKEAPI__COLS(va_cols), NULL, NULL},
    {"storage.k8s.io", "CSIStorageCapacity", FAKEAPI__COLS(csc_cols), NULL, NULL},
    {"flowcontrol.apiserver.k8s.io", "FlowSchema", FAKEAPI__COLS(fs_cols), NULL, fs_order},
    {"flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration", FAKEAPI__COLS(plc_cols), NULL,
     NULL},
    {"apiregistration.k8s.io", "APIService", FAKEAPI__COLS(apisvc_cols), NULL, NULL},
    {"admissionregistration.k8s.io", "MutatingAdmissionPolicy", FAKEAPI__COLS(map_cols), NULL,
     NULL},
    /* A mutating binding has the validating one's columns. */
    {"admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding", FAKEAPI__COLS(vapb_cols),
     NULL, NULL},
    {"storage.k8s.io", "VolumeAttributesClass", FAKEAPI__COLS(vac_cols), NULL, NULL},
    {"networking.k8s.io", "ServiceCIDR", FAKEAPI__COLS(servicecidr_cols), NULL, NULL},
    {"networking.k8s.io", "IPAddress", FAKEAPI__COLS(ipaddress_cols), NULL, NULL},
    {"certificates.k8s.io", "ClusterTrustBundle", FAKEAPI__COLS(ctb_cols), NULL, NULL},
    {"storagemigration.k8s.io", "StorageVersionMigration", FAKEAPI__COLS(svm_cols), NULL, NULL},
};
const size_t fakeapi__printers_misc_n =
    sizeof fakeapi__printers_misc / sizeof fakeapi__printers_misc[0];
