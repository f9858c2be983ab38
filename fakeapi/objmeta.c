#include "objmeta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *fakeapi__meta(json_t *obj)
{
    if (!json_is_object(obj))
        return NULL;
    json_t *m = json_object_get(obj, "metadata");
    if (json_is_object(m))
        return m;
    m = json_object();
    if (json_object_set_new(obj, "metadata", m) < 0)
        return NULL;
    return m;
}

const char *fakeapi__meta_str(const json_t *obj, const char *field)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
}

int fakeapi__meta_set_str(json_t *obj, const char *field, const char *value)
{
    json_t *m = fakeapi__meta(obj);
    return m ? json_object_set_new(m, field, json_string(value)) : -1;
}

long long fakeapi__meta_rv(const json_t *obj)
{
    const char *rv = fakeapi__meta_str(obj, "resourceVersion");
    if (!rv || !*rv)
        return 0;
    char *end;
    long long n = strtoll(rv, &end, 10);
    return (*end || n < 0) ? -1 : n;
}

static bool is_alnum_lower(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])? of any length. */
static int check_label_chars(const char *s, size_t n)
{
    if (n == 0 || !is_alnum_lower(s[0]) || !is_alnum_lower(s[n - 1]))
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!is_alnum_lower(s[i]) && s[i] != '-')
            return -1;
    return 0;
}

static int check_label(const char *s, size_t n)
{
    return n > 63 ? -1 : check_label_chars(s, n);
}

static int check_subdomain(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 253)
        return -1;
    const char *p = s;
    for (;;) {
        const char *dot = strchr(p, '.');
        size_t l = dot ? (size_t)(dot - p) : strlen(p);
        /* Like IsDNS1123Subdomain: only the whole name is limited (253), not
         * each dot-separated part. */
        if (check_label_chars(p, l) < 0)
            return -1;
        if (!dot)
            return 0;
        p = dot + 1;
    }
}

int fakeapi__name_check(fakeapi__namerule rule, const char *name, char *msg, size_t len)
{
    switch (rule) {
    case FAKEAPI__NAME_LABEL:
        if (check_label(name, strlen(name)) == 0)
            return 0;
        snprintf(msg, len,
                 "a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
                 "or '-', and must start and end with an alphanumeric character (e.g. "
                 "'my-name',  or '123-abc', regex used for validation is "
                 "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
        return -1;
    case FAKEAPI__NAME_PATHSEGMENT:
        if (*name && strcmp(name, ".") && strcmp(name, "..") && !strpbrk(name, "/%"))
            return 0;
        snprintf(msg, len, "may not be '.' or '..' and may not contain '/' or '%%'");
        return -1;
    case FAKEAPI__NAME_SUBDOMAIN:
    default:
        if (check_subdomain(name) == 0)
            return 0;
        snprintf(msg, len,
                 "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                 "characters, '-' or '.', and must start and end with an alphanumeric character "
                 "(e.g. 'example.com', regex used for validation is "
                 "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
        return -1;
    }
}

int fakeapi__generate_name_check(fakeapi__namerule rule, const char *prefix, char *msg, size_t len)
{
    if (rule == FAKEAPI__NAME_PATHSEGMENT) {
        const char *bad = strchr(prefix, '/') ? "/" : strchr(prefix, '%') ? "%" : NULL;
        if (!bad)
            return 0;
        snprintf(msg, len, "may not contain '%s'", bad);
        return -1;
    }
    /* Upstream drops the last two characters and appends an 'a' ("ab-" is
     * checked as "aa"): kept as it is, quirk and all. */
    size_t n = strlen(prefix);
    char *masked = strdup(prefix);
    if (!masked) {
        snprintf(msg, len, "out of memory");
        return -1;
    }
    if (n > 1 && prefix[n - 1] == '-') {
        masked[n - 2] = 'a';
        masked[n - 1] = '\0';
    }
    int rc = fakeapi__name_check(rule, masked, msg, len);
    free(masked);
    return rc;
}

static json_t *finalizers(const json_t *obj)
{
    return json_object_get(json_object_get(obj, "metadata"), "finalizers");
}

bool fakeapi__has_finalizer(const json_t *obj, const char *s)
{
    size_t i;
    json_t *f;
    json_array_foreach(finalizers(obj), i, f)
    {
        if (json_string_value(f) && !strcmp(json_string_value(f), s))
            return true;
    }
    return false;
}

bool fakeapi__remove_finalizer(json_t *obj, const char *s)
{
    json_t *fs = finalizers(obj);
    bool removed = false;
    for (size_t i = json_array_size(fs); i-- > 0;) {
        const char *v = json_string_value(json_array_get(fs, i));
        if (v && !strcmp(v, s)) {
            json_array_remove(fs, i);
            removed = true;
        }
    }
    if (fs && json_array_size(fs) == 0)
        json_object_del(json_object_get(obj, "metadata"), "finalizers");
    return removed;
}

size_t fakeapi__finalizer_count(const json_t *obj)
{
    return json_array_size(finalizers(obj));
}

bool fakeapi__grace_pending(const json_t *obj)
{
    const json_t *g =
        json_object_get(json_object_get(obj, "metadata"), "deletionGracePeriodSeconds");
    return json_is_integer(g) && json_integer_value(g) > 0;
}

char *fakeapi__labels_text(const json_t *obj)
{
    json_t *l = json_object_get(json_object_get(obj, "metadata"), "labels");
    if (!json_is_object(l) || json_object_size(l) == 0)
        return NULL;
    return json_dumps(l, JSON_COMPACT | JSON_SORT_KEYS);
}

/* Compare a and b over every top-level key but the skipped ones. */
static bool equal_except(const json_t *a, const json_t *b, const char *const *skip)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)a, k, v)
    {
        bool skipped = false;
        for (const char *const *s = skip; *s; s++)
            skipped |= !strcmp(k, *s);
        if (!skipped && !json_equal(v, json_object_get(b, k)))
            return false;
    }
    json_object_foreach((json_t *)b, k, v)
    {
        bool skipped = false;
        for (const char *const *s = skip; *s; s++)
            skipped |= !strcmp(k, *s);
        if (!skipped && !json_object_get(a, k))
            return false;
    }
    return true;
}

bool fakeapi__spec_changed(const json_t *a, const json_t *b)
{
    static const char *const skip[] = {"metadata", "status", "apiVersion", "kind", NULL};
    return !equal_except(a, b, skip);
}

bool fakeapi__same_object(const json_t *a, const json_t *b)
{
    static const char *const top[] = {"metadata", NULL};
    static const char *const meta[] = {"resourceVersion", "managedFields", NULL};
    return equal_except(a, b, top) &&
           equal_except(json_object_get(a, "metadata"), json_object_get(b, "metadata"), meta);
}

json_t *fakeapi__owner_uids(const json_t *obj)
{
    json_t *out = json_array();
    size_t i;
    json_t *ref;
    json_array_foreach(json_object_get(json_object_get(obj, "metadata"), "ownerReferences"), i, ref)
    {
        const char *uid = json_string_value(json_object_get(ref, "uid"));
        if (uid && out)
            json_array_append_new(out, json_string(uid));
    }
    return out;
}

static bool is_alnum_any(char c)
{
    return is_alnum_lower(c) || (c >= 'A' && c <= 'Z');
}

/* A label name or value: <= 63 of [A-Za-z0-9._-], alphanumeric at both ends. */
static bool qualified_part_ok(const char *s, size_t n, bool may_be_empty)
{
    if (n == 0)
        return may_be_empty;
    if (n > 63 || !is_alnum_any(s[0]) || !is_alnum_any(s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!is_alnum_any(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return false;
    return true;
}

static bool qualified_key_ok(const char *key)
{
    const char *slash = strchr(key, '/');
    if (!slash)
        return qualified_part_ok(key, strlen(key), false);
    char prefix[254];
    size_t plen = (size_t)(slash - key);
    if (plen == 0 || plen >= sizeof prefix)
        return false;
    memcpy(prefix, key, plen);
    prefix[plen] = '\0';
    return check_subdomain(prefix) == 0 && qualified_part_ok(slash + 1, strlen(slash + 1), false);
}

int fakeapi__labels_check(const json_t *obj, char *field, size_t flen, char *msg, size_t mlen)
{
    json_t *meta = json_object_get(obj, "metadata");
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(meta, "labels"), k, v)
    {
        const char *val = json_string_value(v);
        snprintf(field, flen, "metadata.labels");
        if (!qualified_key_ok(k)) {
            snprintf(msg, mlen,
                     "Invalid value: \"%s\": name part must consist of alphanumeric characters, "
                     "'-', '_' or '.', and must start and end with an alphanumeric character",
                     k);
            return -1;
        }
        if (val && !qualified_part_ok(val, strlen(val), true)) {
            snprintf(msg, mlen,
                     "Invalid value: \"%s\": a valid label must be an empty string or consist "
                     "of alphanumeric characters, '-', '_' or '.', and must start and end with "
                     "an alphanumeric character (at most 63 characters)",
                     val);
            return -1;
        }
    }
    size_t total = 0;
    json_object_foreach(json_object_get(meta, "annotations"), k, v)
    {
        snprintf(field, flen, "metadata.annotations");
        if (!qualified_key_ok(k)) {
            snprintf(msg, mlen,
                     "Invalid value: \"%s\": name part must consist of alphanumeric "
                     "characters, '-', '_' or '.'",
                     k);
            return -1;
        }
        total += strlen(k) + (json_string_value(v) ? strlen(json_string_value(v)) : 0);
    }
    if (total > 256 * 1024) {
        snprintf(msg, mlen, "Too long: must have at most 262144 bytes");
        return -1;
    }
    return 0;
}
