/*
 * pbenc.c - JSON to Kubernetes protobuf, driven by the built-in type tables
 * (see pbenc.h).
 *
 * One growable buffer, capped at FAKEAPI__PBENC_MAX. A nested message is
 * written in place and its length prefix inserted in front of it once its
 * size is known (a memmove of the nested bytes: the cost is depth x size,
 * small for API objects).
 *
 * Reentrant; no global state; any thread.
 */
#include "pbenc.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protobuf.h"

#define ENC_MAX_DEPTH 100

typedef struct {
    uint8_t *p;
    size_t n, cap;
    char *err;
    size_t errlen;
    bool failed;
} enc;

__attribute__((format(printf, 2, 3))) static int efail(enc *e, const char *fmt, ...)
{
    if (!e->failed && e->err && e->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->err, e->errlen, fmt, ap);
        va_end(ap);
    }
    e->failed = true;
    return -1;
}

static int put(enc *e, const void *data, size_t n)
{
    if (n > FAKEAPI__PBENC_MAX - e->n)
        return efail(e, "protobuf encoding larger than %u bytes", FAKEAPI__PBENC_MAX);
    if (e->n + n > e->cap) {
        size_t cap = e->cap ? e->cap : 256;
        while (cap < e->n + n)
            cap *= 2;
        uint8_t *q = realloc(e->p, cap);
        if (!q)
            return efail(e, "protobuf: out of memory");
        e->p = q;
        e->cap = cap;
    }
    if (n)
        memcpy(e->p + e->n, data, n);
    e->n += n;
    return 0;
}

static size_t varint_bytes(uint64_t v, uint8_t out[10])
{
    size_t i = 0;
    do {
        uint8_t b = (uint8_t)(v & 0x7f);
        v >>= 7;
        out[i++] = (uint8_t)(b | (v ? 0x80 : 0));
    } while (v);
    return i;
}

static int put_varint(enc *e, uint64_t v)
{
    uint8_t b[10];
    return put(e, b, varint_bytes(v, b));
}

static int put_tag(enc *e, uint32_t num, unsigned wt)
{
    return put_varint(e, ((uint64_t)num << 3) | wt);
}

static int put_bytes(enc *e, uint32_t num, const void *data, size_t n)
{
    if (put_tag(e, num, 2) < 0 || put_varint(e, n) < 0)
        return -1;
    return put(e, data, n);
}

/* Starts a nested message: its tag now, its length when it ends. */
static int begin(enc *e, uint32_t num, size_t *mark)
{
    if (put_tag(e, num, 2) < 0)
        return -1;
    *mark = e->n;
    return 0;
}

static int end(enc *e, size_t mark)
{
    uint8_t b[10];
    size_t body = e->n - mark, k = varint_bytes(body, b);
    if (put(e, b, k) < 0) /* room for the prefix */
        return -1;
    memmove(e->p + mark + k, e->p + mark, body);
    memcpy(e->p + mark, b, k);
    return 0;
}

/* Standard base64, padding required, as Go's StdEncoding reads it. */
static int unbase64(enc *e, const char *s, size_t n, uint8_t **out, size_t *outlen,
                    const char *what)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (n % 4)
        return efail(e, "%s: illegal base64 data (length %zu)", what, n);
    uint8_t *buf = malloc(n / 4 * 3 + 1);
    size_t o = 0;
    if (!buf)
        return efail(e, "protobuf: out of memory");
    for (size_t i = 0; i < n; i += 4) {
        uint32_t acc = 0;
        int pad = 0;
        for (int k = 0; k < 4; k++) {
            char ch = s[i + k];
            const char *q = ch ? strchr(alphabet, ch) : NULL;
            if (ch == '=' && i + 4 == n && k >= 2 && (k == 3 || s[i + 3] == '=')) {
                pad++;
                acc <<= 6;
            } else if (q && !pad) {
                acc = (acc << 6) | (uint32_t)(q - alphabet);
            } else {
                free(buf);
                return efail(e, "%s: illegal base64 data at input byte %zu", what, i + (size_t)k);
            }
        }
        buf[o++] = (uint8_t)(acc >> 16);
        if (pad < 2)
            buf[o++] = (uint8_t)(acc >> 8);
        if (pad < 1)
            buf[o++] = (uint8_t)acc;
    }
    *out = buf;
    *outlen = o;
    return 0;
}

/* A Go duration string ("1h2m3.5s", "-1.5ms", "0") in nanoseconds, exactly
 * (integer arithmetic, as time.ParseDuration). */
static int parse_duration(const char *s, int64_t *out)
{
    static const struct {
        const char *unit;
        uint64_t ns;
    } units[] = {{"ns", 1},
                 {"us", 1000},
                 {"\xc2\xb5s", 1000},
                 {"\xce\xbcs", 1000},
                 {"ms", 1000000},
                 {"s", UINT64_C(1000000000)},
                 {"m", UINT64_C(60000000000)},
                 {"h", UINT64_C(3600000000000)}};
    const uint64_t limit = (uint64_t)INT64_MAX + 1;
    uint64_t total = 0;
    bool neg = false;
    if (*s == '-' || *s == '+')
        neg = *s++ == '-';
    if (!strcmp(s, "0")) {
        *out = 0;
        return 0;
    }
    if (!*s)
        return -1;
    while (*s) {
        uint64_t whole = 0, frac = 0, scale = 1;
        bool digits = false;
        for (; *s >= '0' && *s <= '9'; s++, digits = true) {
            if (whole > (limit - 9) / 10)
                return -1;
            whole = whole * 10 + (uint64_t)(*s - '0');
        }
        if (*s == '.') {
            for (s++; *s >= '0' && *s <= '9'; s++, digits = true) {
                if (scale <= UINT64_C(100000000000000000)) {
                    frac = frac * 10 + (uint64_t)(*s - '0');
                    scale *= 10;
                }
            }
        }
        if (!digits)
            return -1;
        size_t best = 0, bi = 0;
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
            size_t l = strlen(units[i].unit);
            if (!strncmp(s, units[i].unit, l) && l > best) {
                best = l;
                bi = i;
            }
        }
        if (!best)
            return -1;
        uint64_t u = units[bi].ns;
        if (whole > limit / u)
            return -1;
        /* frac/scale of a unit: exact when scale divides u (what Go's own
         * strings need), rounded down otherwise, as Go does. */
        uint64_t part = u % scale == 0
                            ? frac * (u / scale)
                            : (uint64_t)((long double)frac * (long double)u / (long double)scale);
        uint64_t v = whole * u + part;
        if (v > limit || total > limit - v)
            return -1;
        total += v;
        s += best;
    }
    if (total > limit - 1 && !neg)
        return -1;
    *out = neg ? (int64_t)(0 - total) : (int64_t)total;
    return 0;
}

static bool digits_at(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* RFC 3339 ("2006-01-02T15:04:05.999999Z07:00"), years 0001-9999, to
 * seconds and nanoseconds. */
static int parse_rfc3339(const char *s, int64_t *secs, int64_t *nanos)
{
    int y, mo, d, h, mi, sec;
    if (strlen(s) < 20 || !digits_at(s, 4, &y) || s[4] != '-' || !digits_at(s + 5, 2, &mo) ||
        s[7] != '-' || !digits_at(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
        !digits_at(s + 11, 2, &h) || s[13] != ':' || !digits_at(s + 14, 2, &mi) || s[16] != ':' ||
        !digits_at(s + 17, 2, &sec))
        return -1;
    if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59)
        return -1;
    const char *p = s + 19;
    int64_t frac = 0, scale = 100000000;
    if (*p == '.') {
        if (!(p[1] >= '0' && p[1] <= '9'))
            return -1;
        for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
            frac += (*p - '0') * scale;
    }
    int64_t offset = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int oh, om;
        if (!digits_at(p + 1, 2, &oh) || p[3] != ':' || !digits_at(p + 4, 2, &om) || oh > 23 ||
            om > 59)
            return -1;
        offset = (oh * 3600 + om * 60) * (*p == '-' ? -1 : 1);
        p += 6;
    } else {
        return -1;
    }
    if (*p)
        return -1;
    *secs =
        days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + sec - offset;
    *nanos = frac;
    return 0;
}

static int encode_fields(enc *e, const fakeapi__tmsg *m, const json_t *obj, int depth);
static int encode_body(enc *e, const fakeapi__tmsg *m, const json_t *v, int depth);

static const char *jtype(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a bool";
    default:
        return "null";
    }
}

/* One value of field number num, of the given type (a message: sub). */
static int encode_value(enc *e, const fakeapi__tmsg *m, const fakeapi__tfield *f, uint8_t type,
                        uint32_t num, const json_t *v, int depth)
{
    const fakeapi__tmsg *sub = type == FAKEAPI__T_MSG ? fakeapi__type_at(f->msg) : NULL;
    const char *name = f->json[0] ? f->json : f->proto;
    size_t mark;
    switch (type) {
    case FAKEAPI__T_STRING:
        if (!json_is_string(v))
            return efail(e, "%s of %s: want a string, not %s", name, m->short_name, jtype(v));
        return put_bytes(e, num, json_string_value(v), json_string_length(v));
    case FAKEAPI__T_BYTES: {
        uint8_t *b = NULL;
        size_t bn = 0;
        if (!json_is_string(v))
            return efail(e, "%s of %s: want a base64 string, not %s", name, m->short_name,
                         jtype(v));
        if (unbase64(e, json_string_value(v), json_string_length(v), &b, &bn, name) < 0)
            return -1;
        int rc = put_bytes(e, num, b, bn);
        free(b);
        return rc;
    }
    case FAKEAPI__T_BOOL:
        if (!json_is_boolean(v))
            return efail(e, "%s of %s: want a bool, not %s", name, m->short_name, jtype(v));
        return put_tag(e, num, 0) < 0 ? -1 : put_varint(e, json_is_true(v));
    case FAKEAPI__T_INT32:
    case FAKEAPI__T_INT64: {
        json_int_t i;
        if (json_is_integer(v))
            i = json_integer_value(v);
        else if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) &&
                 fabs(json_real_value(v)) < 9.2e18)
            i = (json_int_t)json_real_value(v);
        else
            return efail(e, "%s of %s: want an integer, not %s", name, m->short_name, jtype(v));
        if (type == FAKEAPI__T_INT32 && (i < INT32_MIN || i > INT32_MAX))
            return efail(e, "%s of %s: %lld does not fit in 32 bits", name, m->short_name,
                         (long long)i);
        return put_tag(e, num, 0) < 0 ? -1 : put_varint(e, (uint64_t)(int64_t)i);
    }
    case FAKEAPI__T_DOUBLE: {
        if (!json_is_number(v))
            return efail(e, "%s of %s: want a number, not %s", name, m->short_name, jtype(v));
        double d = json_number_value(v);
        uint64_t x;
        uint8_t b[8];
        memcpy(&x, &d, sizeof x);
        for (int i = 0; i < 8; i++)
            b[i] = (uint8_t)(x >> (8 * i));
        return put_tag(e, num, 1) < 0 ? -1 : put(e, b, 8);
    }
    case FAKEAPI__T_MSG:
        if (!sub)
            return efail(e, "protobuf: internal error: no message for %s", name);
        if (begin(e, num, &mark) < 0 || encode_body(e, sub, v, depth + 1) < 0)
            return -1;
        return end(e, mark);
    default:
        return efail(e, "protobuf: internal error: type %d", (int)type);
    }
}

static int encode_map(enc *e, const fakeapi__tmsg *m, const fakeapi__tfield *f, const json_t *v,
                      int depth)
{
    const char *key;
    const json_t *val;
    if (!json_is_object(v))
        return efail(e, "%s of %s: want an object, not %s", f->json, m->short_name, jtype(v));
    json_object_foreach((json_t *)v, key, val)
    {
        size_t mark;
        if (json_is_null(val) && f->type != FAKEAPI__T_MSG)
            continue;
        if (begin(e, f->number, &mark) < 0)
            return -1;
        if (f->map_key == FAKEAPI__T_STRING) {
            if (put_bytes(e, 1, key, strlen(key)) < 0)
                return -1;
        } else if (f->map_key == FAKEAPI__T_BOOL) {
            if (strcmp(key, "true") && strcmp(key, "false"))
                return efail(e, "%s of %s: key \"%s\" is not a bool", f->json, m->short_name, key);
            if (put_tag(e, 1, 0) < 0 || put_varint(e, !strcmp(key, "true")) < 0)
                return -1;
        } else {
            char *endp;
            long long k = strtoll(key, &endp, 10);
            if (!*key || *endp)
                return efail(e, "%s of %s: key \"%s\" is not an integer", f->json, m->short_name,
                             key);
            if (put_tag(e, 1, 0) < 0 || put_varint(e, (uint64_t)k) < 0)
                return -1;
        }
        if (!json_is_null(val) && encode_value(e, m, f, f->type, 2, val, depth) < 0)
            return -1;
        if (end(e, mark) < 0)
            return -1;
    }
    return 0;
}

static int encode_fields(enc *e, const fakeapi__tmsg *m, const json_t *obj, int depth)
{
    if (depth > ENC_MAX_DEPTH)
        return efail(e, "protobuf: objects nested deeper than %d levels", ENC_MAX_DEPTH);
    if (!json_is_object(obj))
        return efail(e, "%s: want an object, not %s", m->short_name, jtype(obj));
    for (uint16_t i = 0; i < m->nfields; i++) {
        const fakeapi__tfield *f = &m->fields[i];
        const json_t *v;
        size_t mark;
        if (f->flags & FAKEAPI__F_INLINE) {
            const fakeapi__tmsg *sub = fakeapi__type_at(f->msg);
            if (!sub || begin(e, f->number, &mark) < 0 ||
                encode_fields(e, sub, obj, depth + 1) < 0 || end(e, mark) < 0)
                return sub ? -1 : efail(e, "protobuf: internal error: inline %s", f->proto);
            continue;
        }
        if ((f->flags & FAKEAPI__F_NOJSON) || !(v = json_object_get(obj, f->json)) ||
            json_is_null(v))
            continue;
        if (f->flags & FAKEAPI__F_MAP) {
            if (encode_map(e, m, f, v, depth) < 0)
                return -1;
        } else if (f->flags & FAKEAPI__F_REPEATED) {
            size_t k;
            const json_t *el;
            if (!json_is_array(v))
                return efail(e, "%s of %s: want an array, not %s", f->json, m->short_name,
                             jtype(v));
            json_array_foreach(v, k, el)
            {
                if (encode_value(e, m, f, f->type, f->number, el, depth) < 0)
                    return -1;
            }
        } else if (encode_value(e, m, f, f->type, f->number, v, depth) < 0) {
            return -1;
        }
    }
    return 0;
}

/* A field of a special message by its proto name. */
static const fakeapi__tfield *field_named(const fakeapi__tmsg *m, const char *proto)
{
    for (uint16_t i = 0; i < m->nfields; i++)
        if (!strcmp(m->fields[i].proto, proto))
            return &m->fields[i];
    return NULL;
}

static int encode_time(enc *e, const fakeapi__tmsg *m, const json_t *v)
{
    int64_t secs, nanos;
    if (!json_is_string(v) || parse_rfc3339(json_string_value(v), &secs, &nanos) < 0)
        return efail(e, "%s: want an RFC 3339 time, not %s", m->short_name, jtype(v));
    if (put_tag(e, 1, 0) < 0 || put_varint(e, (uint64_t)secs) < 0)
        return -1;
    /* Time carries whole seconds; MicroTime its microseconds. */
    nanos = m->special == FAKEAPI__S_MICROTIME ? nanos / 1000 * 1000 : 0;
    return put_tag(e, 2, 0) < 0 ? -1 : put_varint(e, (uint64_t)nanos);
}

static int encode_body(enc *e, const fakeapi__tmsg *m, const json_t *v, int depth)
{
    char buf[64];
    char *text;
    int64_t d;
    int rc;
    if (depth > ENC_MAX_DEPTH)
        return efail(e, "protobuf: objects nested deeper than %d levels", ENC_MAX_DEPTH);
    switch (m->special) {
    case FAKEAPI__S_NONE:
        return encode_fields(e, m, v, depth);
    case FAKEAPI__S_TIME:
    case FAKEAPI__S_MICROTIME:
        return encode_time(e, m, v);
    case FAKEAPI__S_DURATION:
        if (!json_is_string(v) || parse_duration(json_string_value(v), &d) < 0)
            return efail(e, "Duration: want a Go duration string, not %s", jtype(v));
        return put_tag(e, 1, 0) < 0 ? -1 : put_varint(e, (uint64_t)d);
    case FAKEAPI__S_QUANTITY:
        if (json_is_integer(v)) {
            snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
            return put_bytes(e, 1, buf, strlen(buf));
        }
        if (json_is_real(v)) {
            snprintf(buf, sizeof buf, "%.17g", json_real_value(v));
            return put_bytes(e, 1, buf, strlen(buf));
        }
        if (!json_is_string(v))
            return efail(e, "Quantity: want a string or number, not %s", jtype(v));
        return put_bytes(e, 1, json_string_value(v), json_string_length(v));
    case FAKEAPI__S_INTORSTRING:
        /* go-to-protobuf writes all three fields. */
        if (json_is_integer(v)) {
            if (json_integer_value(v) < INT32_MIN || json_integer_value(v) > INT32_MAX)
                return efail(e, "IntOrString: %lld does not fit in 32 bits",
                             (long long)json_integer_value(v));
            return put_tag(e, 1, 0) < 0 || put_varint(e, 0) < 0 || put_tag(e, 2, 0) < 0 ||
                           put_varint(e, (uint64_t)json_integer_value(v)) < 0
                       ? -1
                       : put_bytes(e, 3, "", 0);
        }
        if (!json_is_string(v))
            return efail(e, "IntOrString: want a number or string, not %s", jtype(v));
        return put_tag(e, 1, 0) < 0 || put_varint(e, 1) < 0 || put_tag(e, 2, 0) < 0 ||
                       put_varint(e, 0) < 0
                   ? -1
                   : put_bytes(e, 3, json_string_value(v), json_string_length(v));
    case FAKEAPI__S_RAW:
        if (!(text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY)))
            return efail(e, "protobuf: out of memory");
        rc = put_bytes(e, 1, text, strlen(text));
        free(text);
        return rc;
    case FAKEAPI__S_SLICE: {
        size_t k;
        const json_t *el;
        if (!m->nfields)
            return 0;
        if (!json_is_array(v))
            return efail(e, "%s: want an array, not %s", m->short_name, jtype(v));
        json_array_foreach(v, k, el)
        {
            if (encode_value(e, m, &m->fields[0], m->fields[0].type, m->fields[0].number, el,
                             depth) < 0)
                return -1;
        }
        return 0;
    }
    default:
        break;
    }
    /* The custom ones: GroupVersion and the JSONSchemaPropsOr* unions. */
    const fakeapi__tfield *schema = field_named(m, "schema");
    if (!strcmp(m->short_name, "GroupVersion")) {
        const char *s = json_string_value(v), *slash = s ? strchr(s, '/') : NULL;
        if (!s)
            return efail(e, "GroupVersion: want a string, not %s", jtype(v));
        if (slash && put_bytes(e, 1, s, (size_t)(slash - s)) < 0)
            return -1;
        return put_bytes(e, 2, slash ? slash + 1 : s, strlen(slash ? slash + 1 : s));
    }
    if (!strcmp(m->short_name, "JSONSchemaPropsOrBool") && schema) {
        if (json_is_boolean(v))
            return put_tag(e, 1, 0) < 0 ? -1 : put_varint(e, json_is_true(v));
        return put_tag(e, 1, 0) < 0 || put_varint(e, 1) < 0
                   ? -1
                   : encode_value(e, m, schema, FAKEAPI__T_MSG, schema->number, v, depth);
    }
    if (m->nfields == 2 && schema && !strncmp(m->short_name, "JSONSchemaPropsOr", 17)) {
        const fakeapi__tfield *list = &m->fields[schema == &m->fields[0] ? 1 : 0];
        if (json_is_array(v)) {
            size_t k;
            const json_t *el;
            json_array_foreach(v, k, el)
            {
                if (encode_value(e, m, list, list->type, list->number, el, depth) < 0)
                    return -1;
            }
            return 0;
        }
        return encode_value(e, m, schema, FAKEAPI__T_MSG, schema->number, v, depth);
    }
    return efail(e, "%s has no JSON form this encoder knows", m->short_name);
}

int fakeapi__pb_encode_msg(const fakeapi__tmsg *m, const json_t *v, uint8_t **out, size_t *len,
                           char *err, size_t errlen)
{
    enc e = {NULL, 0, 0, err, errlen, false};
    if (err && errlen)
        err[0] = '\0';
    if (encode_body(&e, m, v, 0) < 0 || put(&e, "", 0) < 0) {
        free(e.p);
        return -1;
    }
    if (!e.p && !(e.p = malloc(1))) {
        return efail(&e, "protobuf: out of memory");
    }
    *out = e.p;
    *len = e.n;
    return 0;
}

int fakeapi__pb_encode(const json_t *obj, uint8_t **out, size_t *len, char *err, size_t errlen)
{
    enc e = {NULL, 0, 0, err, errlen, false};
    const char *api_version = json_string_value(json_object_get(obj, "apiVersion"));
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const fakeapi__tmsg *m;
    size_t mark, tm;
    if (err && errlen)
        err[0] = '\0';
    if (!api_version || !kind)
        return efail(&e, "protobuf: the object has no apiVersion or kind");
    if (!(m = fakeapi__pb_kind_msg(api_version, kind)))
        return efail(&e, "protobuf: no kind \"%s\" is registered for version \"%s\"", kind,
                     api_version);
    if (put(&e, "k8s", 4) < 0 || begin(&e, 1, &tm) < 0 ||
        put_bytes(&e, 1, api_version, strlen(api_version)) < 0 ||
        put_bytes(&e, 2, kind, strlen(kind)) < 0 || end(&e, tm) < 0 || begin(&e, 2, &mark) < 0 ||
        encode_fields(&e, m, obj, 1) < 0 || end(&e, mark) < 0 || put_bytes(&e, 3, "", 0) < 0 ||
        put_bytes(&e, 4, "", 0) < 0) {
        free(e.p);
        return -1;
    }
    *out = e.p;
    *len = e.n;
    return 0;
}
