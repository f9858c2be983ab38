/*
 * builtin_valid.c - per-kind validation rules (builtin_valid.h).
 *
 * Facts of upstream's pkg/apis/core/validation, apps/validation and
 * batch/validation for the common kinds, in their order and with their
 * wording: "Required value", "Invalid value: <Go %#v>: <why>",
 * "Unsupported value: \"x\": supported values: ...", "Duplicate value".
 * Values show as Go prints them: strings quoted, maps as
 * map[string]string{"k":"v"}. Only the rules common clients meet are here.
 *
 * Reentrant; any thread.
 */
#include "builtin_valid.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "decode.h"
#include "objmeta.h"
#include "strbuf.h"
#include "webhook_config.h"

typedef struct vctx {
    json_t *causes;
    int n;
} vctx;

static void add(vctx *v, const char *reason, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void add(vctx *v, const char *reason, const char *field, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_array_append_new(
        v->causes, json_pack("{s:s, s:s, s:s}", "reason", reason, "message", msg, "field", field));
    v->n++;
}

static void required(vctx *v, const char *field)
{
    add(v, "FieldValueRequired", field, "Required value");
}

/* Unsupported value: "x": supported values: "a", "b" (NULL-terminated list). */
static void check_enum(vctx *v, const char *field, const char *val, const char *const *ok)
{
    if (!val || !*val) {
        required(v, field);
        return;
    }
    for (const char *const *o = ok; *o; o++)
        if (!strcmp(*o, val))
            return;
    char list[256] = "";
    size_t off = 0;
    for (const char *const *o = ok; *o && off < sizeof list; o++)
        off += (size_t)snprintf(list + off, sizeof list - off, "%s\"%s\"", o == ok ? "" : ", ", *o);
    add(v, "FieldValueNotSupported", field, "Unsupported value: \"%s\": supported values: %s", val,
        list);
}

static const char *str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static void path(char *buf, size_t len, const char *base, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void path(char *buf, size_t len, const char *base, const char *fmt, ...)
{
    int n = snprintf(buf, len, "%s", base);
    if (n < 0 || (size_t)n >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, len - (size_t)n, fmt, ap);
    va_end(ap);
}

static int key_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Go's %#v of a map[string]string (keys sorted), as a new string. */
static char *go_map(const json_t *m)
{
    fakeapi__strbuf b = {.max = 64 << 10};
    if (!json_is_object(m)) {
        fakeapi__strbuf_adds(&b, "map[string]string(nil)");
        return fakeapi__strbuf_take(&b, NULL);
    }
    size_t n = json_object_size(m), i = 0;
    const char **keys = calloc(n ? n : 1, sizeof *keys);
    const char *k;
    json_t *e;
    if (!keys)
        return NULL;
    json_object_foreach((json_t *)m, k, e)
    {
        keys[i++] = k;
    }
    qsort(keys, n, sizeof *keys, key_cmp);
    fakeapi__strbuf_adds(&b, "map[string]string{");
    for (i = 0; i < n; i++) {
        if (i)
            fakeapi__strbuf_adds(&b, ", ");
        fakeapi__go_quote(&b, keys[i]);
        fakeapi__strbuf_adds(&b, ":");
        const char *s = json_string_value(json_object_get(m, keys[i]));
        fakeapi__go_quote(&b, s ? s : "");
    }
    fakeapi__strbuf_adds(&b, "}");
    free(keys);
    return fakeapi__strbuf_take(&b, NULL);
}

static void nonnegative(vctx *v, const json_t *o, const char *key, const char *base)
{
    const json_t *n = json_object_get(o, key);
    if (json_is_integer(n) && json_integer_value(n) < 0) {
        char f[256];
        path(f, sizeof f, base, "%s", key);
        add(v, "FieldValueInvalid", f, "Invalid value: %lld: must be greater than or equal to 0",
            (long long)json_integer_value(n));
    }
}

static void port_range(vctx *v, const char *field, const json_t *n, bool zero_required)
{
    if (!json_is_integer(n) || json_integer_value(n) == 0) {
        if (zero_required)
            required(v, field);
        return;
    }
    json_int_t p = json_integer_value(n);
    if (p < 1 || p > 65535)
        add(v, "FieldValueInvalid", field,
            "Invalid value: %lld: must be between 1 and 65535, inclusive", (long long)p);
}

static const char *const protocols[] = {"SCTP", "TCP", "UDP", NULL};

/* ---- label selectors ------------------------------------------------------- */

static bool has_value(const json_t *values, const char *s)
{
    size_t i;
    json_t *e;
    json_array_foreach(values, i, e)
    {
        if (s && json_string_value(e) && !strcmp(json_string_value(e), s))
            return true;
    }
    return false;
}

/* Does a LabelSelector (not null) select labels? An empty one selects everything. */
static bool selector_matches(const json_t *sel, const json_t *labels)
{
    const char *k;
    json_t *e;
    json_object_foreach(json_object_get(sel, "matchLabels"), k, e)
    {
        const char *have = str(labels, k);
        if (!have || !json_string_value(e) || strcmp(have, json_string_value(e)))
            return false;
    }
    size_t i;
    json_array_foreach(json_object_get(sel, "matchExpressions"), i, e)
    {
        const char *key = str(e, "key"), *op = str(e, "operator");
        const char *have = key ? str(labels, key) : NULL;
        const json_t *values = json_object_get(e, "values");
        if (!op)
            return false;
        if (!strcmp(op, "In") && !(have && has_value(values, have)))
            return false;
        if (!strcmp(op, "NotIn") && have && has_value(values, have))
            return false;
        if (!strcmp(op, "Exists") && !have)
            return false;
        if (!strcmp(op, "DoesNotExist") && have)
            return false;
    }
    return true;
}

static bool selector_empty(const json_t *sel)
{
    return json_object_size(json_object_get(sel, "matchLabels")) == 0 &&
           json_array_size(json_object_get(sel, "matchExpressions")) == 0;
}

/* ---- pod specs -------------------------------------------------------------- */

/* Env names (RelaxedEnvironmentVariableValidation, on by default in 1.32)
 * and volume mounts, which must name a volume of the pod. */
static void validate_env_mounts(vctx *v, const json_t *ctr, const char *base, const json_t *vols)
{
    char f[600];
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(ctr, "env"), i, e)
    {
        const char *name = str(e, "name");
        path(f, sizeof f, base, ".env[%zu].name", i);
        if (!name || !*name) {
            required(v, f);
            continue;
        }
        bool ok = true;
        for (const char *p = name; *p; p++)
            ok &= *p >= 0x20 && *p < 0x7f && *p != '=';
        if (!ok)
            add(v, "FieldValueInvalid", f,
                "Invalid value: \"%s\": a valid environment variable name must consist only of "
                "printable ASCII characters other than '='",
                name);
    }
    json_array_foreach(json_object_get(ctr, "volumeMounts"), i, e)
    {
        const char *name = str(e, "name"), *mp = str(e, "mountPath");
        path(f, sizeof f, base, ".volumeMounts[%zu].name", i);
        if (!name || !*name)
            required(v, f);
        else if (!json_object_get(vols, name))
            add(v, "FieldValueNotFound", f, "Not found: \"%s\"", name);
        path(f, sizeof f, base, ".volumeMounts[%zu].mountPath", i);
        if (!mp || !*mp)
            required(v, f);
    }
}

/* Volume names: required, DNS labels, unique; the set of them into vols. */
static void validate_volumes(vctx *v, const json_t *spec, const char *base, json_t *vols)
{
    char f[600], msg[512];
    size_t i;
    json_t *vol;
    json_array_foreach(json_object_get(spec, "volumes"), i, vol)
    {
        const char *name = str(vol, "name");
        path(f, sizeof f, base, ".volumes[%zu].name", i);
        if (!name || !*name)
            required(v, f);
        else if (fakeapi__name_check(FAKEAPI__NAME_LABEL, name, msg, sizeof msg) < 0)
            add(v, "FieldValueInvalid", f, "Invalid value: \"%s\": %s", name, msg);
        else if (json_object_get(vols, name))
            add(v, "FieldValueDuplicate", f, "Duplicate value: \"%s\"", name);
        else
            json_object_set_new(vols, name, json_true());
    }
}

static void validate_container(vctx *v, const json_t *ctr, const char *base, json_t *names,
                               const json_t *vols)
{
    char f[512], msg[512];
    const char *name = str(ctr, "name");
    path(f, sizeof f, base, ".name");
    if (!name || !*name)
        required(v, f);
    else if (fakeapi__name_check(FAKEAPI__NAME_LABEL, name, msg, sizeof msg) < 0)
        add(v, "FieldValueInvalid", f, "Invalid value: \"%s\": %s", name, msg);
    if (name && *name) {
        if (json_object_get(names, name))
            add(v, "FieldValueDuplicate", f, "Duplicate value: \"%s\"", name);
        else
            json_object_set_new(names, name, json_true());
    }
    const char *image = str(ctr, "image");
    path(f, sizeof f, base, ".image");
    if (!image || !*image)
        required(v, f);
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(ctr, "ports"), i, p)
    {
        char pb[512];
        path(pb, sizeof pb, base, ".ports[%zu]", i);
        path(f, sizeof f, pb, ".containerPort");
        port_range(v, f, json_object_get(p, "containerPort"), true);
        path(f, sizeof f, pb, ".hostPort");
        port_range(v, f, json_object_get(p, "hostPort"), false);
        path(f, sizeof f, pb, ".protocol");
        check_enum(v, f, str(p, "protocol"), protocols);
    }
    validate_env_mounts(v, ctr, base, vols);
    static const char *const pulls[] = {"Always", "IfNotPresent", "Never", NULL};
    static const char *const tmp[] = {"File", "FallbackToLogsOnError", NULL};
    path(f, sizeof f, base, ".terminationMessagePolicy");
    check_enum(v, f, str(ctr, "terminationMessagePolicy"), tmp);
    path(f, sizeof f, base, ".imagePullPolicy");
    check_enum(v, f, str(ctr, "imagePullPolicy"), pulls);
}

static void validate_pod_spec(vctx *v, const json_t *spec, const char *base)
{
    char f[512];
    json_t *names = json_object(), *vols = json_object();
    validate_volumes(v, spec, base, vols);
    static const char *const lists[] = {"initContainers", "containers"};
    for (size_t k = 0; k < 2; k++) {
        const json_t *ctrs = json_object_get(spec, lists[k]);
        if (k == 1 && json_array_size(ctrs) == 0) {
            path(f, sizeof f, base, ".containers");
            required(v, f);
        }
        size_t i;
        json_t *c;
        json_array_foreach(ctrs, i, c)
        {
            char cb[512];
            path(cb, sizeof cb, base, ".%s[%zu]", lists[k], i);
            validate_container(v, c, cb, names, vols);
        }
    }
    json_decref(names);
    json_decref(vols);
    static const char *const restarts[] = {"Always", "OnFailure", "Never", NULL};
    static const char *const dns[] = {"ClusterFirstWithHostNet", "ClusterFirst", "Default", "None",
                                      NULL};
    path(f, sizeof f, base, ".restartPolicy");
    check_enum(v, f, str(spec, "restartPolicy"), restarts);
    path(f, sizeof f, base, ".dnsPolicy");
    check_enum(v, f, str(spec, "dnsPolicy"), dns);
    char b[520];
    snprintf(b, sizeof b, "%s.", base);
    nonnegative(v, spec, "terminationGracePeriodSeconds", b);
}

/* A workload's template: labels must match the selector; the pod spec must
 * validate; restartPolicy limited to only (NULL: any). */
static void validate_template(vctx *v, const json_t *tmpl, const char *base, const json_t *sel,
                              bool check_sel, const char *const *only)
{
    char f[512];
    const json_t *labels = json_object_get(json_object_get(tmpl, "metadata"), "labels");
    if (check_sel && (!sel || !selector_empty(sel)) && (!sel || !selector_matches(sel, labels))) {
        char *shown = go_map(labels);
        path(f, sizeof f, base, ".metadata.labels");
        add(v, "FieldValueInvalid", f,
            "Invalid value: %s: `selector` does not match template `labels`", shown ? shown : "");
        free(shown);
    }
    const json_t *spec = json_object_get(tmpl, "spec");
    path(f, sizeof f, base, ".spec");
    validate_pod_spec(v, spec, f);
    const char *rp = str(spec, "restartPolicy");
    if (only && rp && *rp) {
        bool ok = false;
        for (const char *const *o = only; *o; o++)
            ok |= !strcmp(*o, rp);
        if (!ok) {
            /* The general check already said so for a value no pod takes. */
            static const char *const any[] = {"Always", "OnFailure", "Never"};
            bool general = false;
            for (size_t i = 0; i < 3; i++)
                general |= !strcmp(any[i], rp);
            path(f, sizeof f, base, ".spec.restartPolicy");
            if (general)
                check_enum(v, f, rp, only);
        }
    }
}

/* ---- workloads ---------------------------------------------------------------- */

static void validate_workload(vctx *v, const json_t *obj, const char *what, bool replicas)
{
    const json_t *spec = json_object_get(obj, "spec");
    if (replicas)
        nonnegative(v, spec, "replicas", "spec.");
    const json_t *sel = json_object_get(spec, "selector");
    if (!json_is_object(sel))
        required(v, "spec.selector");
    else if (selector_empty(sel))
        add(v, "FieldValueInvalid", "spec.selector",
            "Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), "
            "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for "
            "%s",
            what);
    static const char *const always[] = {"Always", NULL};
    validate_template(v, json_object_get(spec, "template"), "spec.template",
                      json_is_object(sel) ? sel : NULL, true, always);
    nonnegative(v, spec, "minReadySeconds", "spec.");
    nonnegative(v, spec, "revisionHistoryLimit", "spec.");
}

static const char *const job_restarts[] = {"OnFailure", "Never", NULL};

static void validate_job_spec(vctx *v, const json_t *spec, const char *base, bool manual_check)
{
    char b[256];
    snprintf(b, sizeof b, "%s.", base);
    nonnegative(v, spec, "parallelism", b);
    nonnegative(v, spec, "completions", b);
    nonnegative(v, spec, "activeDeadlineSeconds", b);
    nonnegative(v, spec, "backoffLimit", b);
    const json_t *sel = json_object_get(spec, "selector");
    bool manual = json_is_true(json_object_get(spec, "manualSelector"));
    char f[300];
    if (manual_check && manual && !json_is_object(sel)) {
        path(f, sizeof f, base, ".selector");
        required(v, f);
    }
    path(f, sizeof f, base, ".template");
    validate_template(v, json_object_get(spec, "template"), f, sel, manual && json_is_object(sel),
                      job_restarts);
}

/* robfig/cron's standard parser, for its errors: NULL if schedule parses. */
static const char *cron_error(const char *schedule, char *buf, size_t len)
{
    static const char *const months[] = {"jan", "feb", "mar", "apr", "may", "jun", "jul",
                                         "aug", "sep", "oct", "nov", "dec", NULL};
    static const char *const days[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL};
    static const struct {
        int min, max;
        const char *const *names;
    } ranges[5] = {
        {0, 59, NULL}, {0, 23, NULL}, {1, 31, NULL}, {1, 12, months}, {0, 6, days},
    };
    static const char *const descriptors[] = {"@yearly", "@annually", "@monthly", "@weekly",
                                              "@daily",  "@midnight", "@hourly",  NULL};
    char copy[512];
    snprintf(copy, sizeof copy, "%s", schedule);
    char *fields[16];
    int n = 0;
    for (char *save = NULL, *t = strtok_r(copy, " \t\n", &save); t;
         t = strtok_r(NULL, " \t\n", &save))
        if (n < 16)
            fields[n++] = t;
    if (n == 0)
        return snprintf(buf, len, "empty spec string"), buf;
    if (fields[0][0] == '@') {
        for (const char *const *d = descriptors; *d; d++)
            if (!strcmp(*d, schedule))
                return NULL;
        if (!strncmp(schedule, "@every ", 7))
            return NULL;
        return snprintf(buf, len, "unrecognized descriptor: %s", schedule), buf;
    }
    if (n != 5) {
        size_t off = (size_t)snprintf(buf, len, "expected exactly 5 fields, found %d: [", n);
        for (int i = 0; i < n && off < len; i++)
            off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? " " : "", fields[i]);
        if (off < len)
            snprintf(buf + off, len - off, "]");
        return buf;
    }
    for (int i = 0; i < 5; i++) {
        char part[128];
        snprintf(part, sizeof part, "%s", fields[i]);
        for (char *save = NULL, *expr = strtok_r(part, ",", &save); expr;
             expr = strtok_r(NULL, ",", &save)) {
            char range[128], *slash = strchr(expr, '/');
            snprintf(range, sizeof range, "%.*s", slash ? (int)(slash - expr) : (int)strlen(expr),
                     expr);
            if (slash && strchr(slash + 1, '/'))
                return snprintf(buf, len, "too many slashes: %s", expr), buf;
            long lo = ranges[i].min, hi = ranges[i].max, step = 1;
            char *dash = strchr(range, '-');
            const char *ends[2] = {range, dash ? dash + 1 : NULL};
            if (dash) {
                *dash = '\0';
                if (strchr(dash + 1, '-'))
                    return snprintf(buf, len, "too many hyphens: %s", expr), buf;
            }
            if (strcmp(range, "*") && strcmp(range, "?")) {
                long vals[2];
                for (int e = 0; e < (dash ? 2 : 1); e++) {
                    const char *s = ends[e];
                    bool named = false;
                    for (int k = 0; ranges[i].names && ranges[i].names[k]; k++)
                        if (!strcasecmp(s, ranges[i].names[k])) {
                            vals[e] = k + ranges[i].min;
                            named = true;
                        }
                    if (named)
                        continue;
                    char *endp;
                    long x = strtol(s, &endp, 10);
                    if (!*s || *endp)
                        return snprintf(buf, len,
                                        "failed to parse int from %s: strconv.Atoi: parsing "
                                        "\"%s\": invalid syntax",
                                        s, s),
                               buf;
                    if (x < 0)
                        return snprintf(buf, len, "negative number (%ld) not allowed: %s", x, s),
                               buf;
                    vals[e] = x;
                }
                lo = vals[0];
                hi = dash ? vals[1] : (slash ? ranges[i].max : vals[0]);
            }
            if (slash) {
                char *endp;
                step = strtol(slash + 1, &endp, 10);
                if (!slash[1] || *endp)
                    return snprintf(buf, len,
                                    "failed to parse int from %s: strconv.Atoi: parsing \"%s\": "
                                    "invalid syntax",
                                    slash + 1, slash + 1),
                           buf;
            }
            if (lo < ranges[i].min)
                return snprintf(buf, len, "beginning of range (%ld) below minimum (%d): %s", lo,
                                ranges[i].min, expr),
                       buf;
            if (hi > ranges[i].max)
                return snprintf(buf, len, "end of range (%ld) above maximum (%d): %s", hi,
                                ranges[i].max, expr),
                       buf;
            if (lo > hi)
                return snprintf(buf, len, "beginning of range (%ld) beyond end of range (%ld): %s",
                                lo, hi, expr),
                       buf;
            if (step <= 0)
                return snprintf(buf, len, "step of range should be a positive number: %s", expr),
                       buf;
        }
    }
    return NULL;
}

static void validate_cronjob(vctx *v, const json_t *obj)
{
    const json_t *spec = json_object_get(obj, "spec");
    const char *name = str(json_object_get(obj, "metadata"), "name");
    if (name && strlen(name) > 52)
        add(v, "FieldValueInvalid", "metadata.name",
            "Invalid value: \"%s\": must be no more than 52 characters", name);
    const char *sched = str(spec, "schedule");
    char err[512];
    if (!sched || !*sched)
        required(v, "spec.schedule");
    else if (strstr(sched, "TZ"))
        add(v, "FieldValueInvalid", "spec.schedule",
            "Invalid value: \"%s\": cannot use TZ or CRON_TZ in schedule, use timeZone field "
            "instead",
            sched);
    else if (cron_error(sched, err, sizeof err))
        add(v, "FieldValueInvalid", "spec.schedule", "Invalid value: \"%s\": %s", sched, err);
    static const char *const policies[] = {"Allow", "Forbid", "Replace", NULL};
    check_enum(v, "spec.concurrencyPolicy", str(spec, "concurrencyPolicy"), policies);
    nonnegative(v, spec, "startingDeadlineSeconds", "spec.");
    nonnegative(v, spec, "successfulJobsHistoryLimit", "spec.");
    nonnegative(v, spec, "failedJobsHistoryLimit", "spec.");
    validate_job_spec(v, json_object_get(json_object_get(spec, "jobTemplate"), "spec"),
                      "spec.jobTemplate.spec", true);
}

static void validate_pod(vctx *v, const json_t *obj)
{
    validate_pod_spec(v, json_object_get(obj, "spec"), "spec");
}

/* ---- services ------------------------------------------------------------------------ */

static void validate_service(vctx *v, const json_t *obj)
{
    const json_t *spec = json_object_get(obj, "spec");
    const char *type = str(spec, "type");
    const char *ip = str(spec, "clusterIP");
    bool headless = ip && !strcmp(ip, "None");
    bool external = type && !strcmp(type, "ExternalName");
    const json_t *ports = json_object_get(spec, "ports");
    if (json_array_size(ports) == 0 && !headless && !external)
        required(v, "spec.ports");
    static const char *const types[] = {"ClusterIP", "ExternalName", "LoadBalancer", "NodePort",
                                        NULL};
    check_enum(v, "spec.type", type, types);
    if (external && (!str(spec, "externalName") || !*str(spec, "externalName")))
        required(v, "spec.externalName");
    json_t *names = json_object();
    bool need_name = json_array_size(ports) > 1;
    size_t i;
    json_t *p;
    json_array_foreach(ports, i, p)
    {
        char f[128], msg[512];
        const char *name = str(p, "name");
        snprintf(f, sizeof f, "spec.ports[%zu].name", i);
        if (need_name && (!name || !*name))
            required(v, f);
        else if (name && *name) {
            if (fakeapi__name_check(FAKEAPI__NAME_LABEL, name, msg, sizeof msg) < 0)
                add(v, "FieldValueInvalid", f, "Invalid value: \"%s\": %s", name, msg);
            else if (json_object_get(names, name))
                add(v, "FieldValueDuplicate", f, "Duplicate value: \"%s\"", name);
            else
                json_object_set_new(names, name, json_true());
        }
        snprintf(f, sizeof f, "spec.ports[%zu].port", i);
        port_range(v, f, json_object_get(p, "port"), false);
        if (json_integer_value(json_object_get(p, "port")) == 0)
            add(v, "FieldValueInvalid", f,
                "Invalid value: 0: must be between 1 and 65535, inclusive");
        snprintf(f, sizeof f, "spec.ports[%zu].protocol", i);
        check_enum(v, f, str(p, "protocol"), protocols);
        const json_t *tp = json_object_get(p, "targetPort");
        snprintf(f, sizeof f, "spec.ports[%zu].targetPort", i);
        if (json_is_integer(tp))
            port_range(v, f, tp, false);
    }
    json_decref(names);
    static const char *const affinities[] = {"ClientIP", "None", NULL};
    check_enum(v, "spec.sessionAffinity", str(spec, "sessionAffinity"), affinities);
}

/* ---- ConfigMaps and Secrets ------------------------------------------------------------- */

static void config_keys(vctx *v, const json_t *obj, const char *map, const char *other)
{
    const char *k;
    json_t *e;
    json_object_foreach(json_object_get(obj, map), k, e)
    {
        char f[512];
        snprintf(f, sizeof f, "%s[%s]", map, k);
        size_t n = strlen(k);
        bool ok = n > 0;
        for (size_t i = 0; i < n; i++)
            ok &= isalnum((unsigned char)k[i]) || strchr("-._", k[i]) != NULL;
        if (n > 253)
            add(v, "FieldValueInvalid", f,
                "Invalid value: \"%s\": must be no more than 253 characters", k);
        if (!ok)
            add(v, "FieldValueInvalid", f,
                "Invalid value: \"%s\": a valid config key must consist of alphanumeric "
                "characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', "
                "regex used for validation is '[-._a-zA-Z0-9]+')",
                k);
        if (!strcmp(k, "."))
            add(v, "FieldValueInvalid", f, "Invalid value: \"%s\": must not be '.'", k);
        else if (!strcmp(k, ".."))
            add(v, "FieldValueInvalid", f, "Invalid value: \"%s\": must not be '..'", k);
        else if (!strncmp(k, "..", 2))
            add(v, "FieldValueInvalid", f, "Invalid value: \"%s\": must not start with '..'", k);
        if (other && json_object_get(json_object_get(obj, other), k))
            add(v, "FieldValueInvalid", f, "Invalid value: \"%s\": duplicate of key present in %s",
                k, other);
    }
}

static void validate_secret(vctx *v, const json_t *obj, const json_t *cur)
{
    config_keys(v, obj, "data", NULL);
    const char *type = str(obj, "type");
    const json_t *data = json_object_get(obj, "data");
    static const struct {
        const char *type;
        const char *keys[2];
    } needs[] = {
        {"kubernetes.io/tls", {"tls.crt", "tls.key"}},
        {"kubernetes.io/dockerconfigjson", {".dockerconfigjson", NULL}},
        {"kubernetes.io/dockercfg", {".dockercfg", NULL}},
        {"kubernetes.io/ssh-auth", {"ssh-privatekey", NULL}},
    };
    for (size_t i = 0; type && i < sizeof needs / sizeof needs[0]; i++) {
        if (strcmp(type, needs[i].type))
            continue;
        for (size_t k = 0; k < 2 && needs[i].keys[k]; k++)
            if (!json_object_get(data, needs[i].keys[k])) {
                char f[128];
                snprintf(f, sizeof f, "data[%s]", needs[i].keys[k]);
                required(v, f);
            }
    }
    if (type && !strcmp(type, "kubernetes.io/basic-auth") && !json_object_get(data, "username") &&
        !json_object_get(data, "password")) {
        required(v, "data[username]");
        required(v, "data[password]");
    }
    if (type && !strcmp(type, "kubernetes.io/service-account-token") &&
        !str(json_object_get(json_object_get(obj, "metadata"), "annotations"),
             "kubernetes.io/service-account.name"))
        required(v, "metadata.annotations[kubernetes.io/service-account.name]");
    const char *was = cur ? str(cur, "type") : NULL;
    if (was && type && strcmp(was, type))
        add(v, "FieldValueInvalid", "type", "Invalid value: \"%s\": field is immutable", type);
}

/* ---- updates --------------------------------------------------------------------------- */

static void go_strings(fakeapi__strbuf *b, const json_t *arr)
{
    if (!json_is_array(arr)) {
        fakeapi__strbuf_adds(b, "[]string(nil)");
        return;
    }
    fakeapi__strbuf_adds(b, "[]string{");
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e)
    {
        if (i)
            fakeapi__strbuf_adds(b, ", ");
        fakeapi__go_quote(b, json_string_value(e) ? json_string_value(e) : "");
    }
    fakeapi__strbuf_adds(b, "}");
}

/* Go's %#v of a metav1.LabelSelector, as a new string. */
static char *go_selector(const json_t *sel)
{
    fakeapi__strbuf b = {.max = 64 << 10};
    char *labels = go_map(json_object_get(sel, "matchLabels"));
    fakeapi__strbuf_addf(
        &b, "v1.LabelSelector{MatchLabels:%s, MatchExpressions:", labels ? labels : "");
    free(labels);
    const json_t *exprs = json_object_get(sel, "matchExpressions");
    if (!json_is_array(exprs)) {
        fakeapi__strbuf_adds(&b, "[]v1.LabelSelectorRequirement(nil)}");
        return fakeapi__strbuf_take(&b, NULL);
    }
    fakeapi__strbuf_adds(&b, "[]v1.LabelSelectorRequirement{");
    size_t i;
    json_t *e;
    json_array_foreach(exprs, i, e)
    {
        fakeapi__strbuf_adds(&b, i ? ", v1.LabelSelectorRequirement{Key:"
                                   : "v1.LabelSelectorRequirement{Key:");
        fakeapi__go_quote(&b, str(e, "key") ? str(e, "key") : "");
        fakeapi__strbuf_adds(&b, ", Operator:");
        fakeapi__go_quote(&b, str(e, "operator") ? str(e, "operator") : "");
        fakeapi__strbuf_adds(&b, ", Values:");
        go_strings(&b, json_object_get(e, "values"));
        fakeapi__strbuf_adds(&b, "}");
    }
    fakeapi__strbuf_adds(&b, "}}");
    return fakeapi__strbuf_take(&b, NULL);
}

/* apps/v1 selectors never change once set. */
static void selector_immutable(vctx *v, const json_t *obj, const json_t *cur)
{
    const json_t *was = json_object_get(json_object_get(cur, "spec"), "selector");
    const json_t *now = json_object_get(json_object_get(obj, "spec"), "selector");
    if (!was || json_equal(was, now) || !json_is_object(now))
        return;
    char *shown = go_selector(now);
    add(v, "FieldValueInvalid", "spec.selector", "Invalid value: %s: field is immutable",
        shown ? shown : "");
    free(shown);
}

/* A StatefulSet's spec may change only in these fields. */
static void statefulset_update(vctx *v, const json_t *obj, const json_t *cur)
{
    static const char *const mutable_fields[] = {"replicas",
                                                 "ordinals",
                                                 "template",
                                                 "updateStrategy",
                                                 "persistentVolumeClaimRetentionPolicy",
                                                 "minReadySeconds",
                                                 NULL};
    json_t *a = json_deep_copy(json_object_get(obj, "spec"));
    json_t *b = json_deep_copy(json_object_get(cur, "spec"));
    for (const char *const *f = mutable_fields; *f; f++) {
        json_object_del(a, *f);
        json_object_del(b, *f);
    }
    if (a && b && !json_equal(a, b))
        add(v, "FieldValueForbidden", "spec",
            "Forbidden: updates to statefulset spec for fields other than 'replicas', "
            "'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' "
            "and 'minReadySeconds' are forbidden");
    json_decref(a);
    json_decref(b);
}

int fakeapi__builtin_validate(const fakeapi__resource *res, const json_t *obj, const json_t *cur,
                              json_t *causes)
{
    if (res->custom || !json_is_object(obj))
        return 0;
    vctx v = {.causes = causes};
    const char *g = res->group, *k = res->kind;
    if (!strcmp(g, "")) {
        if (!strcmp(k, "Pod"))
            validate_pod(&v, obj);
        else if (!strcmp(k, "Service"))
            validate_service(&v, obj);
        else if (!strcmp(k, "ConfigMap")) {
            config_keys(&v, obj, "data", NULL);
            config_keys(&v, obj, "binaryData", "data");
        } else if (!strcmp(k, "Secret"))
            validate_secret(&v, obj, cur);
    } else if (!strcmp(g, "apps")) {
        if (!strcmp(k, "Deployment"))
            validate_workload(&v, obj, "deployment", true);
        else if (!strcmp(k, "ReplicaSet"))
            validate_workload(&v, obj, "deployment", true);
        else if (!strcmp(k, "StatefulSet"))
            validate_workload(&v, obj, "statefulset", true);
        else if (!strcmp(k, "DaemonSet"))
            validate_workload(&v, obj, "daemonset", false);
        if (cur && strcmp(k, "ControllerRevision")) {
            selector_immutable(&v, obj, cur);
            if (!strcmp(k, "StatefulSet"))
                statefulset_update(&v, obj, cur);
        }
    } else if (!strcmp(g, "batch")) {
        if (!strcmp(k, "Job"))
            validate_job_spec(&v, json_object_get(obj, "spec"), "spec", true);
        else if (!strcmp(k, "CronJob"))
            validate_cronjob(&v, obj);
    } else if (!strcmp(g, "admissionregistration.k8s.io") &&
               (!strcmp(k, "MutatingWebhookConfiguration") ||
                !strcmp(k, "ValidatingWebhookConfiguration"))) {
        v.n += fakeapi__webhook_config_validate(!strcmp(k, "MutatingWebhookConfiguration"), obj,
                                                causes);
    }
    return v.n;
}

int fakeapi__builtin_validate_generated(const fakeapi__resource *res, const json_t *obj,
                                        json_t *causes)
{
    if (res->custom || strcmp(res->group, "batch") || strcmp(res->kind, "Job"))
        return 0;
    const json_t *spec = json_object_get(obj, "spec");
    const json_t *sel = json_object_get(spec, "selector");
    const char *uid = str(json_object_get(obj, "metadata"), "uid");
    if (json_is_true(json_object_get(spec, "manualSelector")) || !json_is_object(sel) || !uid)
        return 0;
    vctx v = {.causes = causes};
    json_t *expected =
        json_pack("{s:s, s:s}", "batch.kubernetes.io/controller-uid", uid, "controller-uid", uid);
    if (expected && !selector_matches(sel, expected)) {
        char *shown = go_selector(sel);
        add(&v, "FieldValueInvalid", "spec.selector",
            "Invalid value: %s: `selector` not auto-generated", shown ? shown : "");
        free(shown);
    }
    json_decref(expected);
    return v.n;
}
