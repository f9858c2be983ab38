/*
 * webhook_config.c - defaults and validation of the webhook configuration
 * kinds (webhook_config.h). Messages are worded as apimachinery's
 * field.Error prints them: "Required value: ...", "Invalid value: \"x\":
 * ...", "Unsupported value: \"x\": supported values: ...", "Duplicate
 * value: \"x\"".
 */
#include "webhook_config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objmeta.h"
#include "strbuf.h"

/* ---- defaults ---- */

static int def_str(json_t *o, const char *key, const char *v)
{
    if (!json_is_object(o) || json_object_get(o, key))
        return 0;
    return json_object_set_new(o, key, json_string(v));
}

static int def_obj(json_t *o, const char *key)
{
    if (!json_is_object(o) || json_object_get(o, key))
        return 0;
    return json_object_set_new(o, key, json_object());
}

static int def_int(json_t *o, const char *key, json_int_t v)
{
    if (!json_is_object(o) || json_object_get(o, key))
        return 0;
    return json_object_set_new(o, key, json_integer(v));
}

int fakeapi__webhook_config_default(bool mutating, json_t *obj)
{
    int rc = 0;
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(obj, "webhooks"), i, w)
    {
        if (!json_is_object(w))
            continue;
        rc |= def_str(w, "failurePolicy", "Fail") | def_str(w, "matchPolicy", "Equivalent") |
              def_obj(w, "namespaceSelector") | def_obj(w, "objectSelector") |
              def_int(w, "timeoutSeconds", 10);
        if (mutating)
            rc |= def_str(w, "reinvocationPolicy", "Never");
        size_t j;
        json_t *r;
        json_array_foreach(json_object_get(w, "rules"), j, r)
        {
            rc |= def_str(r, "scope", "*");
        }
        rc |= def_int(json_object_get(json_object_get(w, "clientConfig"), "service"), "port", 443);
    }
    return rc ? -1 : 0;
}

/* ---- validation ---- */

typedef struct vctx {
    json_t *causes;
    int n;
} vctx;

static void add(vctx *v, const char *reason, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add(vctx *v, const char *reason, const char *field, const char *fmt, ...)
{
    char msg[1400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_array_append_new(
        v->causes, json_pack("{s:s, s:s, s:s}", "reason", reason, "message", msg, "field", field));
    v->n++;
}

static void required(vctx *v, const char *field, const char *detail)
{
    add(v, "FieldValueRequired", field, "Required value%s%s", *detail ? ": " : "", detail);
}

/* value must be one of ok (sorted, as Go's sets.List gives them). */
static void supported(vctx *v, const char *field, const json_t *val, const char *const *ok)
{
    const char *s = json_string_value(val);
    if (!val)
        return;
    for (const char *const *o = ok; s && *o; o++)
        if (!strcmp(s, *o))
            return;
    char list[300] = "";
    size_t off = 0;
    for (const char *const *o = ok; *o && off < sizeof list; o++)
        off += (size_t)snprintf(list + off, sizeof list - off, "%s\"%s\"", o == ok ? "" : ", ", *o);
    add(v, "FieldValueNotSupported", field, "Unsupported value: \"%s\": supported values: %s",
        s ? s : "", list);
}

static bool nonempty_array(const json_t *a)
{
    return json_is_array(a) && json_array_size(a) > 0;
}

/* utilvalidation.IsFullyQualifiedName. */
static void qualified_name(vctx *v, const char *field, const char *name)
{
    char msg[512];
    if (!name || !*name) {
        required(v, field, "");
        return;
    }
    if (fakeapi__name_check(FAKEAPI__NAME_SUBDOMAIN, name, msg, sizeof msg) < 0) {
        add(v, "FieldValueInvalid", field, "Invalid value: \"%s\": %s", name, msg);
        return;
    }
    int dots = 0;
    for (const char *p = name; *p; p++)
        dots += *p == '.';
    if (dots < 2)
        add(v, "FieldValueInvalid", field,
            "Invalid value: \"%s\": should be a domain with at least three segments separated by "
            "dots",
            name);
}

static void rule(vctx *v, const json_t *r, const char *base)
{
    static const char *const ops[] = {"*", "CONNECT", "CREATE", "DELETE", "UPDATE", NULL};
    static const char *const scopes[] = {"*", "Cluster", "Namespaced", NULL};
    char f[200];
    const json_t *o = json_object_get(r, "operations");
    snprintf(f, sizeof f, "%s.operations", base);
    if (!nonempty_array(o))
        required(v, f, "");
    size_t i;
    json_t *e;
    json_array_foreach(o, i, e)
    {
        char fi[240];
        snprintf(fi, sizeof fi, "%s[%zu]", f, i);
        supported(v, fi, e, ops);
    }
    static const char *const lists[] = {"apiGroups", "apiVersions", "resources"};
    for (size_t k = 0; k < 3; k++) {
        snprintf(f, sizeof f, "%s.%s", base, lists[k]);
        if (!nonempty_array(json_object_get(r, lists[k])))
            required(v, f, "");
    }
    snprintf(f, sizeof f, "%s.scope", base);
    supported(v, f, json_object_get(r, "scope"), scopes);
}

/* webhook.ValidateWebhookURL with https forced. */
static void url_rules(vctx *v, const char *field, const char *url)
{
    static const char form[] = "; desired format: https://host[/path]";
    const char *colon = strstr(url, "://");
    char scheme[64] = "";
    if (colon && (size_t)(colon - url) < sizeof scheme)
        snprintf(scheme, sizeof scheme, "%.*s", (int)(colon - url), url);
    if (strcmp(scheme, "https"))
        add(v, "FieldValueInvalid", field,
            "Invalid value: \"%s\": 'https' is the only allowed URL scheme%s", scheme, form);
    const char *auth = colon ? colon + 3 : "";
    size_t an = strcspn(auth, "/?#");
    const char *at = memchr(auth, '@', an);
    const char *host = at ? at + 1 : auth;
    size_t hn = an - (size_t)(host - auth);
    if (!colon || hn == 0)
        add(v, "FieldValueInvalid", field, "Invalid value: \"\": host must be provided%s", form);
    if (at)
        add(v, "FieldValueInvalid", field,
            "Invalid value: \"%.*s\": user information is not permitted in the URL",
            (int)(at - auth), auth);
    const char *hash = strchr(url, '#');
    const char *q = strchr(url, '?');
    if (q && hash && q > hash)
        q = NULL;
    if (hash && hash[1])
        add(v, "FieldValueInvalid", field,
            "Invalid value: \"%s\": fragments are not permitted in the URL", hash + 1);
    if (q && q[1] && q[1] != '#')
        add(v, "FieldValueInvalid", field,
            "Invalid value: \"%.*s\": query parameters are not permitted in the URL",
            (int)(hash ? hash - q - 1 : (long)strlen(q + 1)), q + 1);
}

/* webhook.ValidateWebhookService. */
static void service_rules(vctx *v, const char *base, const json_t *svc)
{
    char f[220], msg[512];
    const char *name = json_string_value(json_object_get(svc, "name"));
    const char *ns = json_string_value(json_object_get(svc, "namespace"));
    if (!name || !*name) {
        snprintf(f, sizeof f, "%s.name", base);
        required(v, f, "service name is required");
    }
    if (!ns || !*ns) {
        snprintf(f, sizeof f, "%s.namespace", base);
        required(v, f, "service namespace is required");
    }
    json_int_t port = json_integer_value(json_object_get(svc, "port"));
    if (port < 1 || port > 65535) {
        snprintf(f, sizeof f, "%s.port", base);
        add(v, "FieldValueInvalid", f,
            "Invalid value: %lld: port is not valid: must be between 1 and 65535, inclusive",
            (long long)port);
    }
    const char *path = json_string_value(json_object_get(svc, "path"));
    if (!path || !*path || !strcmp(path, "/"))
        return;
    snprintf(f, sizeof f, "%s.path", base);
    if (!strcmp(path, "//")) {
        add(v, "FieldValueInvalid", f, "Invalid value: \"%s\": segment[0] may not be empty", path);
        return;
    }
    if (path[0] != '/')
        add(v, "FieldValueInvalid", f, "Invalid value: \"%s\": must start with a '/'", path);
    const char *p = path + 1;
    size_t len = strlen(p);
    if (len && p[len - 1] == '/')
        len--;
    for (size_t i = 0, start = 0; start <= len; i++) {
        size_t end = start;
        while (end < len && p[end] != '/')
            end++;
        char seg[256];
        size_t sn = end - start;
        if (sn == 0)
            add(v, "FieldValueInvalid", f, "Invalid value: \"%s\": segment[%zu] may not be empty",
                path, i);
        else if (sn >= sizeof seg)
            add(v, "FieldValueInvalid", f,
                "Invalid value: \"%s\": segment[%zu]: must be no more than 253 characters", path,
                i);
        else {
            memcpy(seg, p + start, sn);
            seg[sn] = '\0';
            if (fakeapi__name_check(FAKEAPI__NAME_SUBDOMAIN, seg, msg, sizeof msg) < 0)
                add(v, "FieldValueInvalid", f, "Invalid value: \"%s\": segment[%zu]: %s", path, i,
                    msg);
        }
        start = end + 1;
    }
}

static void client_config(vctx *v, const json_t *cc, const char *base)
{
    char f[100];
    const json_t *url = json_object_get(cc, "url"), *svc = json_object_get(cc, "service");
    bool has_url = json_is_string(url), has_svc = json_is_object(svc);
    snprintf(f, sizeof f, "%s.clientConfig", base);
    if (has_url == has_svc) {
        required(v, f, "exactly one of url or service is required");
        return;
    }
    char sub[140];
    snprintf(sub, sizeof sub, "%s.%s", f, has_url ? "url" : "service");
    if (has_url)
        url_rules(v, sub, json_string_value(url));
    else
        service_rules(v, sub, svc);
}

static void review_versions(vctx *v, const json_t *vs, const char *base)
{
    char f[120];
    snprintf(f, sizeof f, "%s.admissionReviewVersions", base);
    if (!nonempty_array(vs)) {
        required(v, f, "must specify one of v1, v1beta1");
        return;
    }
    bool accepted = false;
    fakeapi__strbuf shown = {.max = 4096};
    fakeapi__strbuf_adds(&shown, "[]string{");
    size_t i;
    json_t *e;
    json_array_foreach(vs, i, e)
    {
        const char *s = json_string_value(e);
        fakeapi__strbuf_addf(&shown, "%s\"%s\"", i ? ", " : "", s ? s : "");
        for (size_t j = 0; s && j < i; j++) {
            const char *prev = json_string_value(json_array_get(vs, j));
            if (prev && !strcmp(prev, s)) {
                char fi[150];
                snprintf(fi, sizeof fi, "%s[%zu]", f, i);
                add(v, "FieldValueInvalid", fi, "Invalid value: \"%s\": duplicate version", s);
                break;
            }
        }
        accepted |= s && (!strcmp(s, "v1") || !strcmp(s, "v1beta1"));
    }
    fakeapi__strbuf_adds(&shown, "}");
    char *text = fakeapi__strbuf_take(&shown, NULL);
    if (!accepted)
        add(v, "FieldValueInvalid", f,
            "Invalid value: %s: must include at least one of v1, v1beta1",
            text ? text : "[]string{}");
    free(text);
}

static void webhook(vctx *v, bool mutating, const json_t *w, const char *base)
{
    static const char *const failure[] = {"Fail", "Ignore", NULL};
    static const char *const match[] = {"Equivalent", "Exact", NULL};
    static const char *const effects[] = {"None", "NoneOnDryRun", NULL};
    static const char *const reinvoke[] = {"IfNeeded", "Never", NULL};
    char f[120];
    snprintf(f, sizeof f, "%s.name", base);
    qualified_name(v, f, json_string_value(json_object_get(w, "name")));
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(w, "rules"), i, r)
    {
        snprintf(f, sizeof f, "%s.rules[%zu]", base, i);
        rule(v, r, f);
    }
    snprintf(f, sizeof f, "%s.failurePolicy", base);
    supported(v, f, json_object_get(w, "failurePolicy"), failure);
    snprintf(f, sizeof f, "%s.matchPolicy", base);
    supported(v, f, json_object_get(w, "matchPolicy"), match);
    snprintf(f, sizeof f, "%s.sideEffects", base);
    if (!json_object_get(w, "sideEffects"))
        required(v, f, "must specify one of None, NoneOnDryRun");
    else
        supported(v, f, json_object_get(w, "sideEffects"), effects);
    const json_t *t = json_object_get(w, "timeoutSeconds");
    if (json_is_integer(t) && (json_integer_value(t) < 1 || json_integer_value(t) > 30)) {
        snprintf(f, sizeof f, "%s.timeoutSeconds", base);
        add(v, "FieldValueInvalid", f,
            "Invalid value: %lld: the timeout value must be between 1 and 30 seconds",
            (long long)json_integer_value(t));
    }
    if (mutating) {
        snprintf(f, sizeof f, "%s.reinvocationPolicy", base);
        supported(v, f, json_object_get(w, "reinvocationPolicy"), reinvoke);
    }
    client_config(v, json_object_get(w, "clientConfig"), base);
}

int fakeapi__webhook_config_validate(bool mutating, const json_t *obj, json_t *causes)
{
    vctx v = {.causes = causes};
    const json_t *hooks = json_object_get(obj, "webhooks");
    size_t i;
    json_t *w;
    json_array_foreach(hooks, i, w)
    {
        char base[64];
        snprintf(base, sizeof base, "webhooks[%zu]", i);
        webhook(&v, mutating, w, base);
        review_versions(&v, json_object_get(w, "admissionReviewVersions"), base);
        const char *name = json_string_value(json_object_get(w, "name"));
        for (size_t j = 0; name && *name && j < i; j++) {
            const char *prev = json_string_value(json_object_get(json_array_get(hooks, j), "name"));
            if (prev && !strcmp(prev, name)) {
                char f[80];
                snprintf(f, sizeof f, "%s.name", base);
                add(&v, "FieldValueDuplicate", f, "Duplicate value: \"%s\"", name);
                break;
            }
        }
    }
    return v.n;
}
