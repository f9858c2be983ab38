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
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One step from the root: a field, a list position or a map key. */
typedef struct step {
    const char *key; /* field or map key; NULL for a list position */
    long index;
    bool map_key;
} step;

#define MAX_DEPTH 64

/* An unknown field found on the way: where it is, deleted only at the end. */
typedef struct found {
    json_t *parent;
    const char *key;
} found;

typedef struct walk {
    fakeapi__decode_error *err;
    step steps[MAX_DEPTH];
    int depth;
    json_t *unknown; /* paths of unknown fields, or NULL */
    found *found;
    size_t nfound, cap;
    bool oom;
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

/* ---- kinds to messages --------------------------------------------------------- */

/* Every served kind's root message, hashed by "group/version\nkind": built
 * once, read by any thread. */
#define KIND_SLOTS 1024
static struct {
    const char *gv, *kind;
    const fakeapi__tmsg *msg;
} kind_table[KIND_SLOTS];
static pthread_once_t kind_once = PTHREAD_ONCE_INIT;

static unsigned kind_hash(const char *gv, const char *kind)
{
    unsigned h = 2166136261u;
    for (const char *p = gv; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    h = (h ^ '\n') * 16777619u;
    for (const char *p = kind; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    return h;
}

static void kind_table_build(void)
{
    for (size_t i = 0; i < fakeapi__ntress; i++) {
        const fakeapi__tres *r = &fakeapi__tress[i];
        if (r->msg < 0 || strchr(r->resource, '/'))
            continue;
        unsigned h = kind_hash(r->kind_group_version, r->kind) % KIND_SLOTS;
        while (kind_table[h].gv && (strcmp(kind_table[h].gv, r->kind_group_version) ||
                                    strcmp(kind_table[h].kind, r->kind)))
            h = (h + 1) % KIND_SLOTS;
        if (kind_table[h].gv)
            continue;
        kind_table[h].gv = r->kind_group_version;
        kind_table[h].kind = r->kind;
        kind_table[h].msg = &fakeapi__tmsgs[r->msg];
    }
}

const fakeapi__tmsg *fakeapi__builtin_msg(const fakeapi__resource *res)
{
    if (!res || res->custom)
        return NULL;
    pthread_once(&kind_once, kind_table_build);
    unsigned h = kind_hash(res->group_version, res->kind) % KIND_SLOTS;
    for (unsigned n = 0; n < KIND_SLOTS && kind_table[h].gv; n++, h = (h + 1) % KIND_SLOTS)
        if (!strcmp(kind_table[h].gv, res->group_version) && !strcmp(kind_table[h].kind, res->kind))
            return kind_table[h].msg;
    return NULL;
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
        [FAKEAPI__T_STRING] = "string",  [FAKEAPI__T_BOOL] = "bool",
        [FAKEAPI__T_INT32] = "int32",    [FAKEAPI__T_INT64] = "int64",
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

/* ---- paths, formatted only when something is reported ------------------------ */

static bool enter(walk *w, const char *key, long index, bool map_key)
{
    if (w->depth >= MAX_DEPTH)
        return false;
    w->steps[w->depth++] = (step){key, index, map_key};
    return true;
}

static void leave(walk *w)
{
    w->depth--;
}

static void add_part(char *buf, size_t cap, size_t *at, const char *s)
{
    size_t l = strlen(s);
    if (*at + l >= cap)
        l = cap - 1 - *at;
    memcpy(buf + *at, s, l);
    *at += l;
    buf[*at] = '\0';
}

/* Go's field stack: JSON field names only, '.'-joined. */
static void go_path(const walk *w, char *buf, size_t cap)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < w->depth; i++)
        if (w->steps[i].key && !w->steps[i].map_key) {
            if (at)
                add_part(buf, cap, &at, ".");
            add_part(buf, cap, &at, w->steps[i].key);
        }
}

/* ".a.b[0].c", map keys as ".k" (decode.h's full_path), or as strict
 * decoding names a field: "a.b[0].c", map keys in brackets. */
static void full_path(const walk *w, char *buf, size_t cap, bool strict)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < w->depth; i++) {
        const step *s = &w->steps[i];
        char num[24];
        if (!s->key) {
            snprintf(num, sizeof num, "[%ld]", s->index);
            add_part(buf, cap, &at, num);
        } else if (strict && s->map_key) {
            add_part(buf, cap, &at, "[");
            add_part(buf, cap, &at, s->key);
            add_part(buf, cap, &at, "]");
        } else {
            if (!strict || at)
                add_part(buf, cap, &at, ".");
            add_part(buf, cap, &at, s->key);
        }
    }
}

static int fail(walk *w, fakeapi__decode_code code, const char *holder, const char *go_type,
                const char *target, const json_t *v)
{
    fakeapi__decode_error *e = w->err;
    e->code = code;
    snprintf(e->go_struct, sizeof e->go_struct, "%s", holder);
    go_path(w, e->go_path, sizeof e->go_path);
    full_path(w, e->full_path, sizeof e->full_path, false);
    snprintf(e->go_type, sizeof e->go_type, "%s", go_type);
    snprintf(e->target, sizeof e->target, "%s", target);
    e->value = v;
    return -1;
}

/* An unknown key of parent, the walk standing on it. */
static void unknown_at(walk *w, json_t *parent, const char *key)
{
    if (w->unknown) {
        char path[512];
        full_path(w, path, sizeof path, true);
        if (json_array_append_new(w->unknown, json_string(path)) < 0)
            w->oom = true;
    }
    if (w->nfound == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 8;
        found *f = realloc(w->found, cap * sizeof *f);
        if (!f) {
            w->oom = true;
            return;
        }
        w->found = f;
        w->cap = cap;
    }
    w->found[w->nfound++] = (found){parent, key};
}

/* ---- resource.Quantity ---------------------------------------------------- */

static const char quantity_format[] =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/* ParseQuantity's verdict on s: NULL when it parses, else its message. */
static const char *quantity_error(const char *s)
{
    static const char *const suffixes[] = {"",  "n", "u",  "m",  "k",  "M",  "G",  "T",
                                           "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
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

/* ---- meta/v1 Time and MicroTime: Go's time.Parse ---------------------------------- */

static int digits(const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

static int days_in(int month, int year)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month == 2 && leap ? 29 : days[month - 1];
}

/*
 * time.Parse(layout, s) for RFC 3339 (micro: with ".000000"): NULL when it
 * parses, else Go's message in buf. Go walks the layout element by element
 * and reports where the value stops matching ("cannot parse "x" as "2006"")
 * or a field out of range.
 */
static const char *time_error(const char *s, bool micro, char *buf, size_t len)
{
    const char *layout = micro ? "2006-01-02T15:04:05.000000Z07:00" : "2006-01-02T15:04:05Z07:00";
    static const struct {
        const char *elem, *sep; /* sep: the literal after it */
        int min_digits, max_digits, lo, hi;
        const char *range;
    } parts[] = {
        {"2006", "-", 4, 4, 0, 9999, NULL}, {"01", "-", 2, 2, 1, 12, "month"},
        {"02", "T", 2, 2, 0, 99, NULL},     {"15", ":", 1, 2, 0, 23, "hour"},
        {"04", ":", 2, 2, 0, 59, "minute"}, {"05", "", 2, 2, 0, 59, "second"},
    };
    const char *v = s;
    int val[6];
#define CANNOT(rest, elem)                                                                         \
    (snprintf(buf, len, "parsing time \"%s\" as \"%s\": cannot parse \"%s\" as \"%s\"", s, layout, \
              rest, elem),                                                                         \
     buf)
    for (size_t i = 0; i < 6; i++) {
        int n = 0;
        while (n < parts[i].max_digits && isdigit((unsigned char)v[n]))
            n++;
        if (n < parts[i].min_digits)
            return CANNOT(v, parts[i].elem);
        val[i] = digits(v, n);
        if (val[i] < parts[i].lo || val[i] > parts[i].hi) {
            if (parts[i].range)
                return snprintf(buf, len, "parsing time \"%s\": %s out of range", s,
                                parts[i].range),
                       buf;
        }
        v += n;
        size_t sl = strlen(parts[i].sep);
        if (sl && strncmp(v, parts[i].sep, sl))
            return CANNOT(v, parts[i].sep);
        v += sl;
    }
    if (micro) {
        if (v[0] != '.' || digits(v + 1, 6) < 0)
            return CANNOT(v, ".000000");
        v += 7;
    } else if ((v[0] == '.' || v[0] == ',') && isdigit((unsigned char)v[1])) {
        /* A fraction the layout does not name is still read. */
        v++;
        while (isdigit((unsigned char)*v))
            v++;
    }
    if (*v == 'Z') {
        v++;
    } else {
        if ((v[0] != '+' && v[0] != '-') || digits(v + 1, 2) < 0 || v[3] != ':' ||
            digits(v + 4, 2) < 0)
            return CANNOT(v, "Z07:00");
        if (digits(v + 1, 2) > 24)
            return snprintf(buf, len, "parsing time \"%s\": time zone offset hour out of range", s),
                   buf;
        if (digits(v + 4, 2) > 60)
            return snprintf(buf, len, "parsing time \"%s\": time zone offset minute out of range",
                            s),
                   buf;
        v += 6;
    }
    if (*v)
        return snprintf(buf, len, "parsing time \"%s\": extra text: \"%s\"", s, v), buf;
    if (val[2] < 1 || val[2] > days_in(val[1], val[0]))
        return snprintf(buf, len, "parsing time \"%s\": day out of range", s), buf;
#undef CANNOT
    return NULL;
}

/* ---- the walk --------------------------------------------------------------- */

static int check_msg(walk *w, const fakeapi__tmsg *m, json_t *obj, bool root);

/* A value of a hand-decoded type (not null). */
static int check_special(walk *w, const fakeapi__tmsg *hm, const char *holder,
                         const fakeapi__tfield *f, const fakeapi__tmsg *m, const json_t *v)
{
    char go[160];
#define GO (elem_go(hm, f, go, sizeof go), go)
    switch (m->special) {
    case FAKEAPI__S_TIME:
    case FAKEAPI__S_MICROTIME:
        /* Their UnmarshalJSON reads a string first, losing the context. */
        if (!json_is_string(v))
            return fail(w, FAKEAPI__DECODE_TIME, holder, "string", "string", v);
        {
            char msg[sizeof w->err->detail];
            if (!time_error(json_string_value(v), m->special == FAKEAPI__S_MICROTIME, msg,
                            sizeof msg))
                return 0;
            fail(w, FAKEAPI__DECODE_QUANTITY, holder, GO, "struct", v);
            snprintf(w->err->detail, sizeof w->err->detail, "%s", msg);
            w->err->text = w->err->detail;
            return -1;
        }
    case FAKEAPI__S_DURATION:
        return json_is_string(v) ? 0 : fail(w, FAKEAPI__DECODE_TIME, holder, "string", "string", v);
    case FAKEAPI__S_QUANTITY:
        if (json_is_number(v) || (json_is_string(v) && !quantity_error(json_string_value(v))))
            return 0;
        fail(w, FAKEAPI__DECODE_QUANTITY, holder, GO, "struct", v);
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
            return fail(w, FAKEAPI__DECODE_TYPE, holder, GO, "slice", v);
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
#undef GO
}

/* One value of f (not null) inside struct holder (message hm). */
static int check_one(walk *w, const fakeapi__tmsg *hm, const char *holder, const fakeapi__tfield *f,
                     const json_t *v)
{
    /* The Go type is worked out only for an error (most values are fine). */
    char go[160];
#define GO (elem_go(hm, f, go, sizeof go), go)
    const char *kind = elem_kind(f);
    switch (f->type) {
    case FAKEAPI__T_STRING:
        return json_is_string(v) ? 0 : fail(w, FAKEAPI__DECODE_TYPE, holder, GO, kind, v);
    case FAKEAPI__T_BOOL:
        return json_is_boolean(v) ? 0 : fail(w, FAKEAPI__DECODE_TYPE, holder, GO, kind, v);
    case FAKEAPI__T_INT32:
    case FAKEAPI__T_INT64:
        if (json_is_integer(v)) {
            json_int_t n = json_integer_value(v);
            if (f->type == FAKEAPI__T_INT64 || (n >= INT32_MIN && n <= INT32_MAX))
                return 0;
            fail(w, FAKEAPI__DECODE_NUMBER, holder, GO, kind, v);
            snprintf(w->err->number, sizeof w->err->number, "%lld", (long long)n);
            return -1;
        }
        if (json_is_real(v)) {
            fail(w, FAKEAPI__DECODE_NUMBER, holder, GO, kind, v);
            fakeapi__go_float(w->err->number, sizeof w->err->number, json_real_value(v));
            return -1;
        }
        return fail(w, FAKEAPI__DECODE_TYPE, holder, GO, kind, v);
    case FAKEAPI__T_DOUBLE:
        return json_is_number(v) ? 0 : fail(w, FAKEAPI__DECODE_TYPE, holder, GO, kind, v);
    case FAKEAPI__T_BYTES: {
        if (!json_is_string(v))
            return fail(w, FAKEAPI__DECODE_TYPE, holder, GO, kind, v);
        long off = fakeapi__base64_error(json_string_value(v), json_string_length(v));
        if (off < 0)
            return 0;
        fail(w, FAKEAPI__DECODE_BASE64, holder, GO, kind, v);
        w->err->offset = (size_t)off;
        return -1;
    }
    default: {
        const fakeapi__tmsg *m = fakeapi__type_at(f->msg);
        if (!m)
            return 0;
        if (m->special != FAKEAPI__S_NONE)
            return check_special(w, hm, holder, f, m, v);
        if (!json_is_object(v))
            return fail(w, FAKEAPI__DECODE_TYPE, holder, GO, "struct", v);
        return check_msg(w, m, (json_t *)v, false);
    }
    }
#undef GO
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
            if (!enter(w, k, 0, true))
                continue;
            int rc = check_one(w, hm, holder, f, e);
            leave(w);
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
            if (!enter(w, NULL, (long)i, false))
                continue;
            int rc = check_one(w, hm, holder, f, e);
            leave(w);
            if (rc < 0)
                return -1;
        }
        return 0;
    }
    return check_one(w, hm, holder, f, v);
}

/* Fields in document order: Go's decoder reports the first error it meets.
 * Keys the type does not have are noted on the way. */
static int check_msg(walk *w, const fakeapi__tmsg *m, json_t *obj, bool root)
{
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v)
    {
        if (root && (!strcmp(k, "apiVersion") || !strcmp(k, "kind")))
            continue;
        const fakeapi__tmsg *owner = NULL;
        const fakeapi__tfield *f = fakeapi__type_field_json(m, k, strlen(k), &owner);
        if (!enter(w, k, 0, false))
            continue;
        int rc = 0;
        if (!f || (f->flags & FAKEAPI__F_NOJSON))
            unknown_at(w, obj, k);
        else if (!json_is_null(v))
            /* A promoted field's error names the struct it was decoded into. */
            rc = check_field(w, owner ? owner : m, m->short_name, f, v);
        leave(w);
        if (rc < 0)
            return -1;
    }
    return 0;
}

int fakeapi__builtin_decode(const fakeapi__tmsg *m, json_t *obj, fakeapi__decode_error *err,
                            json_t *unknown, bool drop)
{
    fakeapi__decode_error scratch;
    walk w = {.err = err ? err : &scratch, .unknown = unknown};
    memset(w.err, 0, sizeof *w.err);
    /* The serializer reads apiVersion and kind first, into an unnamed struct. */
    static const char *const typemeta[] = {"apiVersion", "kind"};
    for (size_t i = 0; i < 2; i++) {
        const json_t *v = json_object_get(obj, typemeta[i]);
        if (v && !json_is_string(v) && !json_is_null(v)) {
            enter(&w, typemeta[i], 0, false);
            return fail(&w, FAKEAPI__DECODE_TYPEMETA, "", "string", "string", v);
        }
    }
    int rc = check_msg(&w, m, obj, true);
    if (rc == 0 && w.oom)
        rc = -2;
    if (rc == 0) {
        /* Deepest first is not needed: a found key's parent is never itself found. */
        for (size_t i = 0; drop && i < w.nfound; i++)
            json_object_del(w.found[i].parent, w.found[i].key);
        rc = (int)w.nfound;
    }
    free(w.found);
    return rc;
}
