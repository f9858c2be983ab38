/*
 * table_cols_apps.c - Table columns of the workload kinds: apps/v1
 * (Deployment, ReplicaSet, StatefulSet, DaemonSet, ControllerRevision),
 * core/v1 ReplicationController, batch/v1 (Job, CronJob),
 * autoscaling HorizontalPodAutoscaler (v1 and v2) and policy/v1
 * PodDisruptionBudget, as the real server prints them.
 *
 * Thread-safety: reentrant; the printers are constant data.
 */
#include <stdio.h>
#include <string.h>

#include "table_cols.h"
#include "timefmt.h"

#define DIG fakeapi__dig
#define DIG_STR fakeapi__dig_str
#define DIG_INT fakeapi__dig_int

/* "ready/desired" with desired defaulting to 1, as spec.replicas does. */
static json_t *ready_of_desired(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    char buf[64];
    snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT,
             DIG_INT(o, "status.readyReplicas", 0), DIG_INT(o, "spec.replicas", 1));
    return json_string(buf);
}

static const fakeapi__field f_updated = {"status.updatedReplicas", NULL, 0};
static const fakeapi__field f_available = {"status.availableReplicas", NULL, 0};
static const fakeapi__field f_desired = {"spec.replicas", NULL, 1};
static const fakeapi__field f_current = {"status.replicas", NULL, 0};
static const fakeapi__field f_ready = {"status.readyReplicas", NULL, 0};

#define TEMPLATE "spec.template.spec"

static const fakeapi__colspec deploy_cols[] = {
    FAKEAPI__COL_NAME,
    {"Ready", "string", "", 0, "Number of the pod with ready state", ready_of_desired, NULL},
    {"Up-to-date", "string", "", 0,
     "Total number of non-terminated pods targeted by this deployment that have the desired "
     "template spec.",
     fakeapi__cell_int, &f_updated},
    {"Available", "string", "", 0,
     "Total number of available pods (ready for at least minReadySeconds) targeted by this "
     "deployment.",
     fakeapi__cell_int, &f_available},
    FAKEAPI__COL_AGE,
    FAKEAPI__COL_CONTAINERS(TEMPLATE),
    FAKEAPI__COL_IMAGES(TEMPLATE),
    {"Selector", "string", "", 1, "Label selector for pods.", fakeapi__cell_selector,
     "spec.selector"},
};

#define REPLICA_COLS(selector_cell)                                                                \
    FAKEAPI__COL_NAME,                                                                             \
        {"Desired",         "integer", "", 0, "Replicas is the number of desired replicas.",       \
         fakeapi__cell_int, &f_desired},                                                           \
        {"Current",                                                                                \
         "integer",                                                                                \
         "",                                                                                       \
         0,                                                                                        \
         "Replicas is the most recently observed number of replicas.",                             \
         fakeapi__cell_int,                                                                        \
         &f_current},                                                                              \
        {"Ready", "integer", "", 0, "The number of ready replicas.", fakeapi__cell_int, &f_ready}, \
        FAKEAPI__COL_AGE, FAKEAPI__COL_CONTAINERS(TEMPLATE), FAKEAPI__COL_IMAGES(TEMPLATE),        \
    {                                                                                              \
        "Selector", "string", "", 1, "Selector is a label query over pods.", selector_cell,        \
            "spec.selector"                                                                        \
    }

static const fakeapi__colspec rs_cols[] = {REPLICA_COLS(fakeapi__cell_selector)};
/* A ReplicationController's selector is a plain label map. */
static const fakeapi__colspec rc_cols[] = {REPLICA_COLS(fakeapi__cell_labels)};

static const fakeapi__colspec sts_cols[] = {
    FAKEAPI__COL_NAME,
    {"Ready", "string", "", 0, "Number of the pod with ready state", ready_of_desired, NULL},
    FAKEAPI__COL_AGE,
    FAKEAPI__COL_CONTAINERS(TEMPLATE),
    FAKEAPI__COL_IMAGES(TEMPLATE),
};

static const fakeapi__field f_ds_desired = {"status.desiredNumberScheduled", NULL, 0};
static const fakeapi__field f_ds_current = {"status.currentNumberScheduled", NULL, 0};
static const fakeapi__field f_ds_ready = {"status.numberReady", NULL, 0};
static const fakeapi__field f_ds_updated = {"status.updatedNumberScheduled", NULL, 0};
static const fakeapi__field f_ds_available = {"status.numberAvailable", NULL, 0};

static const fakeapi__colspec ds_cols[] = {
    FAKEAPI__COL_NAME,
    {"Desired", "integer", "", 0,
     "The total number of nodes that should be running the daemon pod.", fakeapi__cell_int,
     &f_ds_desired},
    {"Current", "integer", "", 0, "The number of nodes running at least one daemon pod.",
     fakeapi__cell_int, &f_ds_current},
    {"Ready", "integer", "", 0,
     "The number of nodes that should be running the daemon pod and have one or more of the "
     "daemon pod running and ready.",
     fakeapi__cell_int, &f_ds_ready},
    {"Up-to-date", "integer", "", 0,
     "The total number of nodes that are running updated daemon pod", fakeapi__cell_int,
     &f_ds_updated},
    {"Available", "integer", "", 0,
     "The number of nodes that should be running the daemon pod and have one or more of the "
     "daemon pod running and available.",
     fakeapi__cell_int, &f_ds_available},
    {"Node Selector", "string", "", 0,
     "NodeSelector is a selector which must be true for the pod to fit on a node.",
     fakeapi__cell_labels, "spec.template.spec.nodeSelector"},
    FAKEAPI__COL_AGE,
    FAKEAPI__COL_CONTAINERS(TEMPLATE),
    FAKEAPI__COL_IMAGES(TEMPLATE),
    {"Selector", "string", "", 1, "A label query over pods that are managed by the daemon set.",
     fakeapi__cell_selector, "spec.selector"},
};

/* ControllerRevision: the controller owner as "kind.group/name". */
static json_t *cr_controller(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    size_t i;
    const json_t *ref;
    json_array_foreach(DIG(o, "metadata.ownerReferences"), i, ref)
    {
        if (!json_is_true(json_object_get(ref, "controller")))
            continue;
        const char *api = json_string_value(json_object_get(ref, "apiVersion"));
        const char *kind = json_string_value(json_object_get(ref, "kind"));
        const char *name = json_string_value(json_object_get(ref, "name"));
        const char *slash = api ? strchr(api, '/') : NULL;
        fakeapi__cellbuf b;
        fakeapi__cb_init(&b);
        for (const char *p = kind ? kind : ""; *p; p++)
            fakeapi__cb_addf(&b, "%c", (*p >= 'A' && *p <= 'Z') ? *p - 'A' + 'a' : *p);
        if (slash && b.len) {
            fakeapi__cb_add(&b, ".");
            for (const char *p = api; p < slash; p++)
                fakeapi__cb_addf(&b, "%c", (*p >= 'A' && *p <= 'Z') ? *p - 'A' + 'a' : *p);
        }
        if (b.len)
            fakeapi__cb_add(&b, "/");
        fakeapi__cb_add(&b, name ? name : "");
        return json_string(b.s);
    }
    return json_string("<none>");
}

static const fakeapi__field f_revision = {"revision", NULL, 0};

static const fakeapi__colspec cr_cols[] = {
    FAKEAPI__COL_NAME,
    {"Controller", "string", "", 0, "Controller of the object", cr_controller, NULL},
    {"Revision", "string", "", 0,
     "Revision indicates the revision of the state represented by "
     "Data.",
     fakeapi__cell_int, &f_revision},
    FAKEAPI__COL_AGE,
};

/* ---- batch ---- */

static json_t *job_status(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    const char *c = "status.conditions";
    if (fakeapi__has_condition(o, c, "Complete"))
        return json_string("Complete");
    if (fakeapi__has_condition(o, c, "Failed"))
        return json_string("Failed");
    if (DIG_STR(o, "metadata.deletionTimestamp"))
        return json_string("Terminating");
    if (fakeapi__has_condition(o, c, "Suspended"))
        return json_string("Suspended");
    if (fakeapi__has_condition(o, c, "FailureTarget"))
        return json_string("FailureTarget");
    return json_string("Running");
}

static json_t *job_completions(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    char buf[96];
    json_int_t ok = DIG_INT(o, "status.succeeded", 0);
    const json_t *completions = DIG(o, "spec.completions");
    json_int_t parallelism = DIG_INT(o, "spec.parallelism", 0);
    if (json_is_integer(completions))
        snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT, ok,
                 json_integer_value(completions));
    else if (parallelism > 1)
        snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT "/1 of %" JSON_INTEGER_FORMAT, ok,
                 parallelism);
    else
        snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT "/1", ok);
    return json_string(buf);
}

static json_t *job_duration(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)arg;
    char buf[32];
    int64_t start, end = now_ns;
    if (fakeapi__parse_time(DIG_STR(o, "status.startTime"), &start) < 0)
        return json_string("");
    const char *done = DIG_STR(o, "status.completionTime");
    if (done && fakeapi__parse_time(done, &end) < 0)
        end = now_ns;
    fakeapi__human_duration(end - start, buf, sizeof buf);
    return json_string(buf);
}

static const fakeapi__colspec job_cols[] = {
    FAKEAPI__COL_NAME,
    {"Status", "string", "", 0, "Status of the job.", job_status, NULL},
    {"Completions", "string", "", 0, "The number of pods which reached phase Succeeded.",
     job_completions, NULL},
    {"Duration", "string", "", 0, "Time required to complete the job.", job_duration, NULL},
    FAKEAPI__COL_AGE,
    FAKEAPI__COL_CONTAINERS(TEMPLATE),
    FAKEAPI__COL_IMAGES(TEMPLATE),
    {"Selector", "string", "", 1, "A label query over pods that should match the pod count.",
     fakeapi__cell_selector, "spec.selector"},
};

#define CJ_TEMPLATE "spec.jobTemplate.spec.template.spec"

static const fakeapi__field f_cj_schedule = {"spec.schedule", "", 0};
static const fakeapi__field f_cj_tz = {"spec.timeZone", "<none>", 0};
static const fakeapi__field f_cj_active = {"status.active", NULL, 0};
static const fakeapi__field f_cj_last = {"status.lastScheduleTime", "<none>", 0};

static json_t *cj_timezone(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    /* A set but empty timeZone prints as itself, as a non-nil pointer does. */
    const char *tz = DIG_STR(o, ((const fakeapi__field *)arg)->path);
    return json_string(tz ? tz : "<none>");
}

/* printBoolPtr: "True"/"False"; an absent suspend is the API default, false. */
static json_t *cj_suspend(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    return json_string(json_is_true(DIG(o, "spec.suspend")) ? "True" : "False");
}

static const fakeapi__colspec cronjob_cols[] = {
    FAKEAPI__COL_NAME,
    {"Schedule", "string", "", 0, "The schedule in Cron format.", fakeapi__cell_str,
     &f_cj_schedule},
    {"Timezone", "string", "", 0, "The time zone name for the given schedule.", cj_timezone,
     &f_cj_tz},
    {"Suspend", "boolean", "", 0,
     "This flag tells the controller to suspend subsequent executions.", cj_suspend, NULL},
    {"Active", "integer", "", 0, "A list of pointers to currently running jobs.",
     fakeapi__cell_count, &f_cj_active},
    {"Last Schedule", "string", "", 0,
     "Information when was the last time the job was successfully scheduled.", fakeapi__cell_since,
     &f_cj_last},
    FAKEAPI__COL_AGE,
    FAKEAPI__COL_CONTAINERS(CJ_TEMPLATE),
    FAKEAPI__COL_IMAGES(CJ_TEMPLATE),
    {"Selector", "string", "", 1, "A label query over pods that should match the pod count.",
     fakeapi__cell_selector, "spec.jobTemplate.spec.selector"},
};

/* ---- autoscaling ---- */

static json_t *hpa_reference(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    const char *kind = DIG_STR(o, "spec.scaleTargetRef.kind");
    const char *name = DIG_STR(o, "spec.scaleTargetRef.name");
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    fakeapi__cb_addf(&b, "%s/%s", kind ? kind : "", name ? name : "");
    return json_string(b.s);
}

/* A quantity as the API returns it: a string, or a bare number from a lax client. */
static const char *qty(const json_t *v, char *buf, size_t len)
{
    if (json_is_string(v))
        return json_string_value(v);
    if (json_is_integer(v)) {
        snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return buf;
    }
    if (json_is_real(v)) {
        snprintf(buf, len, "%g", json_real_value(v));
        return buf;
    }
    return NULL;
}

/* One metric of formatHPAMetrics: spec is the MetricSpec, st its MetricStatus (may be NULL). */
static void hpa_metric(const json_t *spec, const json_t *st, fakeapi__cellbuf *b)
{
    const char *type = json_string_value(json_object_get(spec, "type"));
    char t1[64], t2[64];
    static const struct {
        const char *type, *key;
    } srcs[] = {{"External", "external"},
                {"Pods", "pods"},
                {"Object", "object"},
                {"Resource", "resource"},
                {"ContainerResource", "containerResource"}};
    const char *key = NULL;
    for (size_t i = 0; type && i < sizeof srcs / sizeof srcs[0]; i++)
        if (!strcmp(type, srcs[i].type))
            key = srcs[i].key;
    if (!key) {
        fakeapi__cb_add(b, "<unknown type>");
        return;
    }
    const json_t *target = DIG(json_object_get(spec, key), "target");
    const json_t *cur = DIG(json_object_get(st, key), "current");
    bool resource = !strcmp(key, "resource") || !strcmp(key, "containerResource");
    const char *avg_target = qty(json_object_get(target, "averageValue"), t1, sizeof t1);
    if (resource) {
        const char *name = json_string_value(json_object_get(json_object_get(spec, key), "name"));
        fakeapi__cb_addf(b, "%s: ", name ? name : "");
        if (avg_target) {
            const char *c = qty(json_object_get(cur, "averageValue"), t2, sizeof t2);
            fakeapi__cb_addf(b, "%s/%s", c && st ? c : "<unknown>", avg_target);
        } else {
            const json_t *cu = json_object_get(cur, "averageUtilization");
            const json_t *tu = json_object_get(target, "averageUtilization");
            if (json_is_integer(cu))
                fakeapi__cb_addf(b, "%" JSON_INTEGER_FORMAT "%%", json_integer_value(cu));
            else
                fakeapi__cb_add(b, "<unknown>");
            if (json_is_integer(tu))
                fakeapi__cb_addf(b, "/%" JSON_INTEGER_FORMAT "%%", json_integer_value(tu));
            else
                fakeapi__cb_add(b, "/<auto>");
        }
        return;
    }
    bool pods = !strcmp(key, "pods");
    if (avg_target || pods) {
        const char *c = qty(json_object_get(cur, "averageValue"), t2, sizeof t2);
        fakeapi__cb_addf(b, "%s/%s%s", c && st ? c : "<unknown>", avg_target ? avg_target : "0",
                         pods ? "" : " (avg)");
    } else {
        const char *c = qty(json_object_get(cur, "value"), t2, sizeof t2);
        const char *tv = qty(json_object_get(target, "value"), t1, sizeof t1);
        fakeapi__cb_addf(b, "%s/%s", st ? (c ? c : "0") : "<unknown>", tv ? tv : "0");
    }
}

static json_t *hpa_targets(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    const json_t *specs = DIG(o, "spec.metrics");
    const json_t *statuses = DIG(o, "status.currentMetrics");
    const json_t *v1_target = DIG(o, "spec.targetCPUUtilizationPercentage");
    if (json_is_integer(v1_target)) {
        /* autoscaling/v1: the one CPU utilisation target, printed as a Resource metric. */
        const json_t *cur = DIG(o, "status.currentCPUUtilizationPercentage");
        fakeapi__cb_add(&b, "cpu: ");
        if (json_is_integer(cur))
            fakeapi__cb_addf(&b, "%" JSON_INTEGER_FORMAT "%%", json_integer_value(cur));
        else
            fakeapi__cb_add(&b, "<unknown>");
        fakeapi__cb_addf(&b, "/%" JSON_INTEGER_FORMAT "%%", json_integer_value(v1_target));
        return json_string(b.s);
    }
    size_t n = json_array_size(specs);
    if (!n)
        return json_string("<none>");
    for (size_t i = 0; i < n && i < 2; i++) {
        if (i)
            fakeapi__cb_add(&b, ", ");
        hpa_metric(json_array_get(specs, i), json_array_get(statuses, i), &b);
    }
    if (n > 2)
        fakeapi__cb_addf(&b, " + %zu more...", n - 2);
    return json_string(b.s);
}

static json_t *hpa_min(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    const json_t *v = DIG(o, "spec.minReplicas");
    if (!json_is_integer(v))
        return json_string("<unset>");
    char buf[32];
    snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    return json_string(buf);
}

static const fakeapi__field f_hpa_max = {"spec.maxReplicas", NULL, 0};
static const fakeapi__field f_hpa_cur = {"status.currentReplicas", NULL, 0};

static const fakeapi__colspec hpa_cols[] = {
    FAKEAPI__COL_NAME,
    {"Reference", "string", "", 0, "scaleTargetRef points to the target resource to scale.",
     hpa_reference, NULL},
    {"Targets", "string", "", 0,
     "metrics contains the specifications for which to use to "
     "calculate the desired replica count.",
     hpa_targets, NULL},
    {"MinPods", "string", "", 0, "minReplicas is the lower limit for the number of replicas.",
     hpa_min, NULL},
    {"MaxPods", "string", "", 0, "maxReplicas is the upper limit for the number of replicas.",
     fakeapi__cell_int, &f_hpa_max},
    {"Replicas", "string", "", 0, "currentReplicas is current number of replicas of pods.",
     fakeapi__cell_int, &f_hpa_cur},
    FAKEAPI__COL_AGE,
};

/* ---- policy ---- */

/* An IntOrString as its String(): the number or the text; "N/A" when unset. */
static json_t *int_or_string(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    const json_t *v = DIG(o, arg);
    char buf[32];
    if (json_is_integer(v)) {
        snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return json_string(buf);
    }
    if (json_is_string(v))
        return json_string(json_string_value(v));
    return json_string("N/A");
}

static const fakeapi__field f_pdb_allowed = {"status.disruptionsAllowed", NULL, 0};

static const fakeapi__colspec pdb_cols[] = {
    FAKEAPI__COL_NAME,
    {"Min Available", "string", "", 0, "The minimum number of pods that must be available.",
     int_or_string, "spec.minAvailable"},
    {"Max Unavailable", "string", "", 0, "The maximum number of pods that may be unavailable.",
     int_or_string, "spec.maxUnavailable"},
    {"Allowed Disruptions", "integer", "", 0,
     "Calculated number of pods that may be disrupted at this time.", fakeapi__cell_int,
     &f_pdb_allowed},
    FAKEAPI__COL_AGE,
};

const fakeapi__printer fakeapi__printers_apps[] = {
    {"apps", "Deployment", FAKEAPI__COLS(deploy_cols), NULL, NULL},
    {"apps", "ReplicaSet", FAKEAPI__COLS(rs_cols), NULL, NULL},
    {"", "ReplicationController", FAKEAPI__COLS(rc_cols), NULL, NULL},
    {"apps", "StatefulSet", FAKEAPI__COLS(sts_cols), NULL, NULL},
    {"apps", "DaemonSet", FAKEAPI__COLS(ds_cols), NULL, NULL},
    {"apps", "ControllerRevision", FAKEAPI__COLS(cr_cols), NULL, NULL},
    {"batch", "Job", FAKEAPI__COLS(job_cols), NULL, NULL},
    {"batch", "CronJob", FAKEAPI__COLS(cronjob_cols), NULL, NULL},
    {"autoscaling", "HorizontalPodAutoscaler", FAKEAPI__COLS(hpa_cols), NULL, NULL},
    {"policy", "PodDisruptionBudget", FAKEAPI__COLS(pdb_cols), NULL, NULL},
};
const size_t fakeapi__printers_apps_n =
    sizeof fakeapi__printers_apps / sizeof fakeapi__printers_apps[0];
