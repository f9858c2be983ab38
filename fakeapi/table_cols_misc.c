/*
 * table_cols_misc.c - Table columns of the cluster-plumbing kinds: RBAC
 * bindings, coordination Leases, networking (Ingress, IngressClass,
 * NetworkPolicy), discovery EndpointSlices, storage (StorageClass,
 * CSIDriver, CSINode), scheduling PriorityClasses, node RuntimeClasses,
 * certificates CSRs and admission webhook configurations, as the real
 * server prints them. Kinds the real server has no printer for (Role,
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
static const fakeapi__field f_pc_preempt = {"preemptionPolicy", "", 0};

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

/* ---- admission ---- */

static const fakeapi__field f_webhooks = {"webhooks", NULL, 0};

static const fakeapi__colspec webhook_cols[] = {
    FAKEAPI__COL_NAME,
    {"Webhooks", "integer", "", 0,
     "Webhooks indicates the number of webhooks registered in this configuration",
     fakeapi__cell_count, &f_webhooks},
    FAKEAPI__COL_AGE,
};

const fakeapi__printer fakeapi__printers_misc[] = {
    {"rbac.authorization.k8s.io", "RoleBinding", FAKEAPI__COLS(rb_cols), NULL},
    {"rbac.authorization.k8s.io", "ClusterRoleBinding", FAKEAPI__COLS(crb_cols), NULL},
    {"coordination.k8s.io", "Lease", FAKEAPI__COLS(lease_cols), NULL},
    {"networking.k8s.io", "Ingress", FAKEAPI__COLS(ing_cols), NULL},
    {"networking.k8s.io", "IngressClass", FAKEAPI__COLS(ingclass_cols), NULL},
    {"networking.k8s.io", "NetworkPolicy", FAKEAPI__COLS(netpol_cols), NULL},
    {"discovery.k8s.io", "EndpointSlice", FAKEAPI__COLS(eps_cols), NULL},
    {"storage.k8s.io", "StorageClass", FAKEAPI__COLS(sc_cols), NULL},
    {"storage.k8s.io", "CSIDriver", FAKEAPI__COLS(csidriver_cols), NULL},
    {"storage.k8s.io", "CSINode", FAKEAPI__COLS(csinode_cols), NULL},
    {"scheduling.k8s.io", "PriorityClass", FAKEAPI__COLS(pc_cols), NULL},
    {"node.k8s.io", "RuntimeClass", FAKEAPI__COLS(runtimeclass_cols), NULL},
    {"certificates.k8s.io", "CertificateSigningRequest", FAKEAPI__COLS(csr_cols), NULL},
    {"admissionregistration.k8s.io", "MutatingWebhookConfiguration", FAKEAPI__COLS(webhook_cols),
     NULL},
    {"admissionregistration.k8s.io", "ValidatingWebhookConfiguration", FAKEAPI__COLS(webhook_cols),
     NULL},
};
const size_t fakeapi__printers_misc_n =
    sizeof fakeapi__printers_misc / sizeof fakeapi__printers_misc[0];
