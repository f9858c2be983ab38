/*
 * builtin_check.c - the type walk of a built-in object over the generated
 * type tables (builtin_check.h).
 *
 * Go's encoding/json names the innermost struct holding the bad field (an
 * inline field's parent, its fields being promoted) and the JSON names from
 * the root without positions; the Go type decoded into, which for a list or
 * a map is the whole collection when the collection is of the wrong kind
 * and the element's otherwise. The proto tables say "string" where Go has a
 * named string type; the few named types messages commonly show are listed
 * here (go_named), since the tables do not carry Go type names.
 *
 * Strict decoding (sigs.k8s.io/json) names unknown fields by their path
 * with list positions ("spec.containers[0].x") and map keys in brackets.
 *
 * Reentrant; any thread.
 */
#include "builtin_check.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct walk {
    fakeapi__decode_error *err;
    char go[256]; /* JSON names from the root, '.'-joined */
    size_t glen;
    char full[512]; /* ".a.b[0].c" */
    size_t flen;
} walk;

/* Go named string types that messages show, by message and JSON name. */
static const struct {
    const char *msg, *json, *go;
} go_named[] = {
    {"ObjectMeta", "uid", "types.UID"},
    {"OwnerReference", "uid", "types.UID"},
    {"ManagedFieldsEntry", "operation", "v1.ManagedFieldsOperationType"},
    {"Secret", "type", "v1.SecretType"},
    {"NamespaceSpec", "finalizers", "v1.FinalizerName"},
    {"NamespaceStatus", "phase", "v1.NamespacePhase"},
    {"LeaseSpec", "strategy", "v1.CoordinatedLeaseStrategy"},
    {"PodSpec", "restartPolicy", "v1.RestartPolicy"},
    {"PodSpec", "dnsPolicy", "v1.DNSPolicy"},
    {"Container", "imagePullPolicy", "v1.PullPolicy"},
    {"Container", "terminationMessagePolicy", "v1.TerminationMessagePolicy"},
    {"ContainerPort", "protocol", "v1.Protocol"},
    {"ServicePort", "protocol", "v1.Protocol"},
    {"ServiceSpec", "type", "v1.ServiceType"},
    {"ServiceSpec", "sessionAffinity", "v1.ServiceAffinity"},
    {"ServiceSpec", "ipFamilies", "v1.IPFamily"},
    {"ServiceSpec", "ipFamilyPolicy", "v1.IPFamilyPolicy"},
    {"ServiceSpec", "externalTrafficPolicy", "v1.ServiceExternalTrafficPolicy"},
    {"ServiceSpec", "internalTrafficPolicy", "v1.ServiceInternalTrafficPolicy"},
    {"DeploymentStrategy", "type", "v1.DeploymentStrategyType"},
    {"StatefulSetSpec", "podManagementPolicy", "v1.PodManagementPolicyType"},
    {"JobSpec", "completionMode", "v1.CompletionMode"},
    {"JobSpec", "podReplacementPolicy", "v1.PodReplacementPolicy"},
    {"CronJobSpec", "concurrencyPolicy", "v1.ConcurrencyPolicy"},
    {"PersistentVolumeClaimSpec", "accessModes", "v1.PersistentVolumeAccessMode"},
    {"PersistentVolumeClaimSpec", "volumeMode", "v1.PersistentVolumeMode"},
};

const fakeapi__tmsg *fakeapi__builtin_msg(const fakeapi__resource *res)
{
    if (!res || res->custom)
        return NULL;
    return fakeapi__type_of_kind(res->group_version, res->kind);
}

/* Append to a path (cut at its size): sep and key ("." "a", "[" "k" "]"), or
 * "[index]" when key is NULL. Returns the length to pop back to. */
static size_t push(char *buf, size_t cap, size_t *len, const char *sep, const char *key,
                   const char *close, long index)
{
    size_t was = *len;
    int n = key ? snprintf(buf + was, cap - was, "%s%s%s", sep, key, close)
                : snprintf(buf + was, cap - was, "[%ld]", index);
    if (n > 0)
        *len = was + (size_t)n < cap ? was + (size_t)n : cap - 1;
    return was;
}

static void pop(char *buf, size_t *len, size_t was)
{
    *len = was;
    buf[was] = '\0';
}

/* "k8s.io.api.apps.v1.DeploymentSpec" -> "v1.DeploymentSpec". */
static void msg_go(const fakeapi__tmsg *m, char *buf, size_t len)
{
    const char *name = m->name, *last = strrchr(name, '.');
    const char *pkg = last;
    while (pkg && pkg > name && pkg[-1] != '.')
        pkg--;
    if (!last || !pkg || pkg == last)
        snprintf(buf, len, "%s", m->short_name);
    else
        snprintf(buf, len, "%.*s.%s", (int)(last - pkg), pkg, m->short_name);
}

/* The Go type of one value of f (an element, for lists and maps). */
static void elem_go(const fakeapi__tmsg *holder, const fakeapi__tfield *f, char *buf, size_t len)
{
    for (size_t i = 0; i < sizeof go_named / sizeof go_named[0]; i++)
        if (!strcmp(go_named[i].msg, holder->short_name) && !strcmp(go_named[i].json, f->json)) {
            snprintf(buf, len, "%s", go_named[i].go);
            return;
        }
    static const char *const scalar[] = {
        [FAKEAPI__T_STRING] = "string", [FAKEAPI__T_BOOL] = "bool",
        [FAKEAPI__T_INT32] = "int32",   [FAKEAPI__T_INT64] = "int64",
        [FAKEAPI__T_DOUBLE] = "float64", [FAKEAPI__T_BYTES] = "[]uint8",
    };
    const fakeapi__tmsg *m = fakeapi__type_at(f->msg);
    if (f->type == FAKEAPI__T_MSG && m)
        msg_go(m, buf, len);
    else if (f->type < FAKEAPI__T_MSG && scalar[f->type])
        snprintf(buf, len, "%s", scalar[f->type]);
    else
        snprintf(buf, len, "interface {}");
}

/* Its reflect kind, which the unstructured converter names. */
static const char *elem_kind(const fakeapi__tfield *f)
{
    switch (f->type) {
    case FAKEAPI__T_STRING:
        return "string";
    case FAKEAPI__T_BOOL:
        return "bool";
    case FAKEAPI__T_INT32:
        return "int32";
    case FAKEAPI__T_INT64:
        return "int64";
    case FAKEAPI__T_DOUBLE:
        return "float64";
    case FAKEAPI__T_BYTES:
        return "slice";
    default:
        return "struct";
    }
}

static int fail(walk *w, fakeapi__decode_code code, const char *holder, const char *go_type,
                const char *target, const json_t *v)
{
    fakeapi__decode_error *e = w->err;
    e->code = code;
    snprintf(e->go_struct, sizeof e->go_struct, "%s", holder);
    snprintf(e->go_path, sizeof e->go_path, "%s", w->go);
    snprintf(e->full_path, sizeof e->full_path, "%s", w->full);
    snprintf(e->go_type, sizeof e->go_type, "%s", go_type);
    snprintf(e->target, sizeof e->target, "%s", target);
    e->value = v;
    return -1;
}

/* ---- resource.Quantity ---------------------------------------------------- */

static const char quantity_format[] =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/* ParseQuantity's verdict on s: NULL when it parses, else its message. */
static const char *quantity_error(const char *s)
{
    static const char *const suffixes[] = {"",   "n",  "u",  "m",  "k",  "M",  "G", "T",
                                           "P",  "E",  "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    if (n == 0)
        return quantity_format;
    size_t i = 0;
    if (s[i] == '+' || s[i] == '-')
        i++;
    size_t digits = 0, dots = 0, start = i;
    for (; i < n && (isdigit((unsigned char)s[i]) || s[i] == '.'); i++) {
        if (s[i] == '.')
            dots++;
        else
            digits++;
    }
    if (i == start)
        return quantity_format;
    size_t suf = i;
    while (i < n && strchr("eEinumkKMGTP", s[i]))
        i++;
    if (i < n && (s[i] == '+' || s[i] == '-'))
        i++;
    while (i < n && isdigit((unsigned char)s[i]))
        i++;
    if (i != n)
        return quantity_format;
    if (dots > 1 || digits == 0)
        return "unable to parse numeric part of quantity";
    const char *sx = s + suf;
    size_t sl = n - suf;
    for (size_t k = 0; k < sizeof suffixes / sizeof suffixes[0]; k++)
        if (strlen(suffixes[k]) == sl && !strncmp(suffixes[k], sx, sl))
            return NULL;
    if (sl >= 2 && (sx[0] == 'e' || sx[0] == 'E')) {
        size_t j = 1;
        if (sx[j] == '+' || sx[j] == '-')
            j++;
        if (j < sl) {
            for (; j < sl && isdigit((unsigned char)sx[j]); j++)
                ;
            if (j == sl)
                return NULL;
        }
    }
    return "unable to parse quantity's suffix";
}

/* ---- the walk --------------------------------------------------------------- */

static int check_msg(walk *w, const fakeapi__tmsg *m, const json_t *obj, bool root);

/* A value of a hand-decoded type (not null). */
static int check_special(walk *w, const char *holder, const fakeapi__tmsg *m, const char *go,
                         const json_t *v)
{
    switch (m->special) {
    case FAKEAPI__S_TIME:
    case FAKEAPI__S_MICROTIME:
    case FAKEAPI__S_DURATION:
        /* Their UnmarshalJSON reads a string first, losing the context. */
        return json_is_string(v) ? 0 : fail(w, FAKEAPI__DECODE_TIME, holder, "string", "string", v);
    case FAKEAPI__S_QUANTITY:
        if (json_is_number(v) || (json_is_string(v) && !quantity_error(json_string_value(v))))
            return 0;
        fail(w, FAKEAPI__DECODE_QUANTITY, holder, go, "struct", v);
        w->err->text = json_is_string(v) ? quantity_error(json_string_value(v)) : quantity_format;
        return -1;
    case FAKEAPI__S_INTORSTRING:
        if (json_is_string(v))
            return 0;
        if (json_is_integer(v) && json_integer_value(v) >= INT32_MIN &&
            json_integer_value(v) <= INT32_MAX)
            return 0;
        fail(w, FAKEAPI__DECODE_VALUE, holder, "int32", "int32", v);
        if (json_is_integer(v))
            snprintf(w->err->number, sizeof w->err->number, "%lld",
                     (long long)json_integer_value(v));
        else if (json_is_real(v))
            fakeapi__go_float(w->err->number, sizeof w->err->number, json_real_value(v));
        return -1;
    case FAKEAPI__S_SLICE: {
        if (!json_is_array(v)) {
            char slice[160];
            snprintf(slice, sizeof slice, "%s", go);
            return fail(w, FAKEAPI__DECODE_TYPE, holder, slice, "slice", v);
        }
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e)
        {
            if (!json_is_null(e) && !json_is_string(e))
                return fail(w, FAKEAPI__DECODE_TYPE, holder, "string", "string", e);
        }
        return 0;
    }
    default: /* raw JSON and the other custom codecs take anything */
        return 0;
    }
}

/* One value of f (not null) inside struct holder (message hm). */
static int check_one(walk *w, const fakeapi__tmsg *hm, const char *holder, const fakeapi__tfield *f,
                     const json_t *v)
{
    char go[160];
    elem_go(hm, f, go, sizeof go);
    const char *kind = elem_kind(f);
    switch (f->type) {
    case FAKEAPI__T_STRING:
        return json_is_string(v) ? 0 : fail(w, FAKEAPI__DECODE_TYPE, holder, go, kind, v);
    case FAKEAPI__T_BOOL:
        return json_is_boolean(v) ? 0 : fail(w, FAKEAPI__DECODE_TYPE, holder, go, kind, v);
    case FAKEAPI__T_INT32:
    case FAKEAPI__T_INT64:
        if (json_is_integer(v)) {
            json_int_t n = json_integer_value(v);
            if (f->type == FAKEAPI__T_INT64 || (n >= INT32_MIN && n <= INT32_MAX))
                return 0;
            fail(w, FAKEAPI__DECODE_NUMBER, holder, go, kind, v);
            snprintf(w->err->number, sizeof w->err->number, "%lld", (long long)n);
            return -1;
        }
        if (json_is_real(v)) {
            fail(w, FAKEAPI__DECODE_NUMBER, holder, go, kind, v);
            fakeapi__go_float(w->err->number, sizeof w->err->number, json_real_value(v));
            return -1;
        }
        return fail(w, FAKEAPI__DECODE_TYPE, holder, go, kind, v);
    case FAKEAPI__T_DOUBLE:
        return json_is_number(v) ? 0 : fail(w, FAKEAPI__DECODE_TYPE, holder, go, kind, v);
    case FAKEAPI__T_BYTES: {
        if (!json_is_string(v))
            return fail(w, FAKEAPI__DECODE_TYPE, holder, go, kind, v);
        long off = fakeapi__base64_error(json_string_value(v), json_string_length(v));
        if (off < 0)
            return 0;
        fail(w, FAKEAPI__DECODE_BASE64, holder, go, kind, v);
        w->err->offset = (size_t)off;
        return -1;
    }
    default: {
        const fakeapi__tmsg *m = fakeapi__type_at(f->msg);
        if (!m)
            return 0;
        if (m->special != FAKEAPI__S_NONE)
            return check_special(w, holder, m, go, v);
        if (!json_is_object(v))
            return fail(w, FAKEAPI__DECODE_TYPE, holder, go, "struct", v);
        return check_msg(w, m, v, false);
    }
    }
}

static int check_field(walk *w, const fakeapi__tmsg *hm, const char *holder,
                       const fakeapi__tfield *f, const json_t *v)
{
    char go[160], whole[180];
    if (f->flags & FAKEAPI__F_MAP) {
        if (!json_is_object(v)) {
            elem_go(hm, f, go, sizeof go);
            snprintf(whole, sizeof whole, "map[string]%s", go);
            return fail(w, FAKEAPI__DECODE_TYPE, holder, whole, "map", v);
        }
        const char *k;
        json_t *e;
        json_object_foreach((json_t *)v, k, e)
        {
            if (json_is_null(e))
                continue;
            size_t was = push(w->full, sizeof w->full, &w->flen, ".", k, "", 0);
            int rc = check_one(w, hm, holder, f, e);
            pop(w->full, &w->flen, was);
            if (rc < 0)
                return -1;
        }
        return 0;
    }
    if (f->flags & FAKEAPI__F_REPEATED) {
        if (!json_is_array(v)) {
            elem_go(hm, f, go, sizeof go);
            snprintf(whole, sizeof whole, "[]%s", go);
            return fail(w, FAKEAPI__DECODE_TYPE, holder, whole, "slice", v);
        }
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e)
        {
            if (json_is_null(e))
                continue;
            size_t was = push(w->full, sizeof w->full, &w->flen, "", NULL, "", (long)i);
            int rc = check_one(w, hm, holder, f, e);
            pop(w->full, &w->flen, was);
            if (rc < 0)
                return -1;
        }
        return 0;
    }
    return check_one(w, hm, holder, f, v);
}

/* Fields in document order: Go's decoder reports the first error it meets. */
static int check_msg(walk *w, const fakeapi__tmsg *m, const json_t *obj, bool root)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v)
    {
        if (json_is_null(v) || (root && (!strcmp(k, "apiVersion") || !strcmp(k, "kind"))))
            continue;
        const fakeapi__tmsg *owner = NULL;
        const fakeapi__tfield *f = fakeapi__type_field_json(m, k, strlen(k), &owner);
        if (!f || (f->flags & FAKEAPI__F_NOJSON))
            continue;
        size_t g = push(w->go, sizeof w->go, &w->glen, w->glen ? "." : "", k, "", 0);
        size_t fl = push(w->full, sizeof w->full, &w->flen, ".", k, "", 0);
        /* A promoted field's error names the struct it was decoded into. */
        int rc = check_field(w, owner ? owner : m, m->short_name, f, v);
        pop(w->go, &w->glen, g);
        pop(w->full, &w->flen, fl);
        if (rc < 0)
            return -1;
    }
    return 0;
}

int fakeapi__builtin_typecheck(const fakeapi__tmsg *m, const char *kind, const json_t *obj,
                               fakeapi__decode_error *err)
{
    fakeapi__decode_error scratch;
    walk w = {.err = err ? err : &scratch};
    memset(w.err, 0, sizeof *w.err);
    /* The serializer reads apiVersion and kind first, into an unnamed struct. */
    static const char *const typemeta[] = {"apiVersion", "kind"};
    for (size_t i = 0; i < 2; i++) {
        const json_t *v = json_object_get(obj, typemeta[i]);
        if (v && !json_is_string(v) && !json_is_null(v)) {
            snprintf(w.go, sizeof w.go, "%s", typemeta[i]);
            snprintf(w.full, sizeof w.full, ".%s", typemeta[i]);
            return fail(&w, FAKEAPI__DECODE_TYPEMETA, "", "string", "string", v);
        }
    }
    (void)kind;
    return check_msg(&w, m, obj, true);
}

/* ---- unknown fields ----------------------------------------------------------- */

typedef struct unknown_walk {
    json_t *out;
    bool drop;
    int count;
    char path[512];
    size_t len;
} unknown_walk;

static void unknown_msg(unknown_walk *u, const fakeapi__tmsg *m, json_t *obj, bool root);

static void unknown_value(unknown_walk *u, const fakeapi__tfield *f, json_t *v)
{
    const fakeapi__tmsg *m = fakeapi__type_at(f->msg);
    if (f->type != FAKEAPI__T_MSG || !m || m->special != FAKEAPI__S_NONE || !json_is_object(v))
        return;
    unknown_msg(u, m, v, false);
}

static void unknown_field(unknown_walk *u, const fakeapi__tfield *f, json_t *v)
{
    if (f->type != FAKEAPI__T_MSG)
        return;
    if ((f->flags & FAKEAPI__F_MAP) && json_is_object(v)) {
        const char *k;
        json_t *e;
        json_object_foreach(v, k, e)
        {
            size_t was = push(u->path, sizeof u->path, &u->len, "[", k, "]", 0);
            unknown_value(u, f, e);
            pop(u->path, &u->len, was);
        }
    } else if ((f->flags & FAKEAPI__F_REPEATED) && json_is_array(v)) {
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e)
        {
            size_t was = push(u->path, sizeof u->path, &u->len, "", NULL, "", (long)i);
            unknown_value(u, f, e);
            pop(u->path, &u->len, was);
        }
    } else {
        unknown_value(u, f, v);
    }
}

static void unknown_msg(unknown_walk *u, const fakeapi__tmsg *m, json_t *obj, bool root)
{
    const char *k;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(obj, tmp, k, v)
    {
        if (root && (!strcmp(k, "apiVersion") || !strcmp(k, "kind")))
            continue;
        const fakeapi__tfield *f = fakeapi__type_field_json(m, k, strlen(k), NULL);
        size_t was = push(u->path, sizeof u->path, &u->len, u->len ? "." : "", k, "", 0);
        if (!f || (f->flags & FAKEAPI__F_NOJSON)) {
            u->count++;
            if (u->out)
                json_array_append_new(u->out, json_string(u->path));
            if (u->drop)
                json_object_del(obj, k);
        } else {
            unknown_field(u, f, v);
        }
        pop(u->path, &u->len, was);
    }
}

int fakeapi__builtin_unknown(const fakeapi__tmsg *m, json_t *obj, json_t *unknown, bool drop)
{
    unknown_walk u = {.out = unknown, .drop = drop};
    unknown_msg(&u, m, obj, true);
    return u.count;
}
