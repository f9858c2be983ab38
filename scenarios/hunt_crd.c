/*
 * hunt_crd.c - base scenarios for `scenario hunt --crd`: read the
 * CustomResourceDefinition, make (or read) a custom resource, generate
 * change sequences from the schema (hunt_gen.c) and write each sequence as
 * a scenario document, parsed by the library's own parser so it is an
 * ordinary scenario (runnable, writable with scn_scenario_to_yaml).
 *
 * The documents name files by absolute path; each scenario's file is
 * "<crd_path>:hunt-<i>", so a relative name would start at the CRD's
 * directory, and messages say where the scenario came from.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hunt_gen.h"
#include "hunt_gen_int.h"
#include "kh/yaml.h"

#define NAME_MAX_LEN 240
#define DEFAULT_SETTLE_NS (30LL * 1000000000LL)

typedef struct {
    char api_version[256], kind[128], plural[128], ns[128], name[256];
    bool namespaced;
    const json_t *schema; /* borrowed from the CRD document */
} target;

__attribute__((format(printf, 4, 5))) static int fail(scn_error *err, int code, const char *file,
                                                      const char *fmt, ...)
{
    if (err) {
        va_list ap;
        memset(err, 0, sizeof *err);
        err->code = code;
        snprintf(err->file, sizeof err->file, "%.255s", file ? file : "");
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

static const char *str_at(const json_t *v, const char *a, const char *b, const char *c)
{
    v = json_object_get(v, a);
    if (b)
        v = json_object_get(v, b);
    if (c)
        v = json_object_get(v, c);
    return json_string_value(v);
}

/* The first document of a YAML file that is an object of kind (NULL: any). */
static int load_doc(const char *path, const char *kind, json_t **out, scn_error *err)
{
    json_t *docs = NULL, *d;
    kh_yaml_error ye;
    size_t i;
    if (kh_yaml_load_file(path, &docs, &ye) != 0) {
        int code = ye.line ? SCN_ERR_INPUT : SCN_ERR_IO;
        if (err) {
            fail(err, code, path, "%s", ye.message);
            err->line = ye.line;
        }
        return code;
    }
    json_array_foreach(docs, i, d)
    {
        const char *k = json_string_value(json_object_get(d, "kind"));
        if (json_is_object(d) && (!kind || (k && !strcmp(k, kind)))) {
            *out = json_incref(d);
            json_decref(docs);
            return 0;
        }
    }
    json_decref(docs);
    return fail(err, SCN_ERR_INPUT, path, "no %s in the file", kind ? kind : "object");
}

/* The version's schema and names from the CRD; version NULL: the storage one. */
static int read_crd(const json_t *crd, const char *version, target *t, const char *path,
                    scn_error *err)
{
    const json_t *spec = json_object_get(crd, "spec"), *vs = json_object_get(spec, "versions");
    const char *group = str_at(spec, "group", NULL, NULL);
    const char *kind = str_at(spec, "names", "kind", NULL);
    const char *plural = str_at(spec, "names", "plural", NULL);
    const char *scope = str_at(spec, "scope", NULL, NULL);
    const json_t *pick = NULL, *v;
    size_t i;
    if (!group || !kind || !plural)
        return fail(err, SCN_ERR_INPUT, path, "%s",
                    "the CRD lacks spec.group, spec.names.kind or spec.names.plural");
    json_array_foreach(vs, i, v)
    {
        const char *name = str_at(v, "name", NULL, NULL);
        if (!name)
            continue;
        if (version ? !strcmp(name, version) : json_is_true(json_object_get(v, "storage")))
            pick = v;
        if (!pick && !version && i + 1 == json_array_size(vs))
            pick = json_array_get(vs, 0);
    }
    if (!pick)
        return fail(err, SCN_ERR_INPUT, path, "the CRD has no version %s",
                    version ? version : "marked storage");
    t->schema = json_object_get(json_object_get(pick, "schema"), "openAPIV3Schema");
    if (!json_is_object(t->schema))
        return fail(err, SCN_ERR_INPUT, path, "version %s has no schema.openAPIV3Schema",
                    str_at(pick, "name", NULL, NULL));
    snprintf(t->api_version, sizeof t->api_version, "%.160s/%.80s", group,
             str_at(pick, "name", NULL, NULL));
    snprintf(t->kind, sizeof t->kind, "%s", kind);
    snprintf(t->plural, sizeof t->plural, "%s", plural);
    t->namespaced = !scope || strcmp(scope, "Cluster") != 0;
    return 0;
}

/* The custom resource: cr_path's, or a generated one. */
static int make_cr(const json_t *crd, const char *crd_path, const char *cr_path, target *t,
                   json_t **out, scn_error *err)
{
    json_t *cr = NULL;
    int rc;
    if (!cr_path) {
        if ((rc = read_crd(crd, NULL, t, crd_path, err)) != 0)
            return rc;
        if ((rc = scn_gen_instance(t->schema, &cr, err)) != 0) {
            if (err)
                snprintf(err->file, sizeof err->file, "%.255s", crd_path);
            return rc;
        }
        json_object_set_new(cr, "apiVersion", json_string(t->api_version));
        json_object_set_new(cr, "kind", json_string(t->kind));
        json_t *meta = json_pack("{s:s}", "name", "hunt");
        if (t->namespaced)
            json_object_set_new(meta, "namespace", json_string("default"));
        json_object_set_new(cr, "metadata", meta);
        snprintf(t->name, sizeof t->name, "hunt");
        snprintf(t->ns, sizeof t->ns, "%s", t->namespaced ? "default" : "");
        *out = cr;
        return 0;
    }
    if ((rc = load_doc(cr_path, NULL, &cr, err)) != 0)
        return rc;
    const char *av = json_string_value(json_object_get(cr, "apiVersion"));
    const char *kind = json_string_value(json_object_get(cr, "kind"));
    const char *name = str_at(cr, "metadata", "name", NULL);
    const char *slash = av ? strchr(av, '/') : NULL;
    const char *group = str_at(crd, "spec", "group", NULL);
    if (!slash || !group || strncmp(av, group, (size_t)(slash - av)) != 0 ||
        strlen(group) != (size_t)(slash - av) || !kind ||
        strcmp(kind, str_at(crd, "spec", "names", "kind") ? str_at(crd, "spec", "names", "kind")
                                                          : "") != 0) {
        json_decref(cr);
        return fail(err, SCN_ERR_INPUT, cr_path, "%s",
                    "the custom resource is not of the CRD's group and kind");
    }
    if (!name) {
        json_decref(cr);
        return fail(err, SCN_ERR_INPUT, cr_path, "%s", "the custom resource has no metadata.name");
    }
    if ((rc = read_crd(crd, slash + 1, t, cr_path, err)) != 0) {
        json_decref(cr);
        return rc;
    }
    snprintf(t->name, sizeof t->name, "%s", name);
    const char *ns = str_at(cr, "metadata", "namespace", NULL);
    snprintf(t->ns, sizeof t->ns, "%s", t->namespaced ? (ns ? ns : "default") : "");
    if (t->namespaced && !ns)
        json_object_set_new(json_object_get(cr, "metadata"), "namespace", json_string("default"));
    *out = cr;
    return 0;
}

static json_t *duration(int64_t ns)
{
    char buf[64];
    if (ns % 1000000000LL == 0)
        snprintf(buf, sizeof buf, "%" PRId64 "s", (int64_t)(ns / 1000000000LL));
    else
        snprintf(buf, sizeof buf, "%" PRId64 "ns", ns);
    return json_string(buf);
}

/* A JSON pointer as a condition path (".spec.items[0]['a.b']"), containers
 * read from obj to tell indexes from keys. */
static void cond_path(const json_t *obj, const char *ptr, char *buf, size_t len)
{
    size_t o = 0;
    const json_t *cur = obj;
    buf[0] = '\0';
    while (*ptr == '/' && o + 1 < len) {
        char tok[512];
        size_t t = 0;
        for (ptr++; *ptr && *ptr != '/'; ptr++) {
            char ch = *ptr;
            if (ch == '~' && (ptr[1] == '0' || ptr[1] == '1'))
                ch = *++ptr == '0' ? '~' : '/';
            if (t + 1 < sizeof tok)
                tok[t++] = ch;
        }
        tok[t] = '\0';
        int n;
        if (json_is_array(cur)) {
            n = snprintf(buf + o, len - o, "[%s]", tok);
            cur = json_array_get(cur, strtoul(tok, NULL, 10));
        } else {
            bool plain = t > 0 && strcspn(tok, ".[]'\" ") == t;
            n = snprintf(buf + o, len - o, plain ? ".%s" : "['%s']", tok);
            cur = json_object_get(cur, tok);
        }
        if (n < 0 || (size_t)n >= len - o)
            break;
        o += (size_t)n;
    }
    if (!buf[0])
        snprintf(buf, len, ".");
}

static json_t *object_ref(const target *t)
{
    json_t *r = json_pack("{s:s, s:s, s:s}", "apiVersion", t->api_version, "kind", t->kind, "name",
                          t->name);
    if (t->namespaced)
        json_object_set_new(r, "namespace", json_string(t->ns));
    return r;
}

/* The change as one JSON patch operation on obj. */
static json_t *patch_op(const json_t *obj, const scn_gen_change *c)
{
    if (!c->value)
        return json_pack("[{s:s, s:s}]", "op", "remove", "path", c->path);
    const char *op = scn__gen_pointer_get(obj, c->path) ? "replace" : "add";
    return json_pack("[{s:s, s:s, s:O}]", "op", op, "path", c->path, "value", c->value);
}

static void name_append(char *name, size_t len, const scn_gen_change *c, bool first)
{
    char val[40] = "";
    size_t o = strlen(name);
    if (c->value) {
        char *js = json_dumps(c->value, JSON_COMPACT | JSON_ENCODE_ANY);
        if (js && strlen(js) > 24)
            snprintf(val, sizeof val, "=%.21s...", js);
        else if (js)
            snprintf(val, sizeof val, "=%s", js);
        free(js);
    } else {
        snprintf(val, sizeof val, " removed");
    }
    if (o < len)
        snprintf(name + o, len - o, "%s%s%s (%s%s)", first ? ": " : "; ", c->field, val,
                 c->valid ? "" : "invalid: ", c->why);
}

/* The scenario document of one sequence. */
static json_t *sequence_doc(const target *t, const json_t *cr, const json_t *stored,
                            const scn_gen_seq *seq, size_t idx, const char *crd_abs,
                            const char *controller, char *const *fixtures, size_t n_fixtures,
                            int64_t settle_ns)
{
    char name[NAME_MAX_LEN + 64], cpath[1024];
    json_t *doc = json_object(), *steps = json_array(), *fx = json_array();
    json_t *model = json_deep_copy(stored);
    snprintf(name, sizeof name, "hunt %s %zu", t->kind, idx + 1);
    json_array_append_new(fx, json_string(crd_abs));
    for (size_t i = 0; i < n_fixtures; i++)
        json_array_append_new(fx, json_string(fixtures[i]));
    json_array_append_new(steps, json_pack("{s:{s:O}}", "apply", "manifest", cr));
    json_array_append_new(steps, json_pack("{s:o}", "advance", duration(settle_ns)));
    for (size_t i = 0; i < seq->n; i++) {
        const scn_gen_change *c = &seq->changes[i];
        json_t *op = patch_op(model, c);
        name_append(name, NAME_MAX_LEN, c, i == 0);
        if (c->valid) {
            json_t *p = object_ref(t);
            json_object_set_new(p, "type", json_string("json"));
            json_object_set_new(p, "patch", op);
            json_array_append_new(steps, json_pack("{s:o}", "patch", p));
            json_array_append_new(steps, json_pack("{s:o}", "advance", duration(settle_ns)));
            json_t *after = NULL;
            bool valid;
            if (scn_gen_apply(t->schema, model, c, &after, &valid) == 0) {
                json_decref(model);
                model = after;
            }
            continue;
        }
        char url[1024];
        if (t->namespaced)
            snprintf(url, sizeof url, "/apis/%s/namespaces/%s/%s/%s", t->api_version, t->ns,
                     t->plural, t->name);
        else
            snprintf(url, sizeof url, "/apis/%s/%s/%s", t->api_version, t->plural, t->name);
        json_array_append_new(steps,
                              json_pack("{s:{s:s, s:s, s:s, s:o, s:i}}", "request", "method",
                                        "PATCH", "path", url, "contentType",
                                        "application/json-patch+json", "body", op, "status", 422));
        /* rejected: the field is as it was */
        json_t *was = scn__gen_pointer_get(model, c->path);
        json_t *f = object_ref(t);
        cond_path(model, c->path, cpath, sizeof cpath);
        json_object_set_new(f, "path", json_string(cpath));
        if (was)
            json_object_set(f, "equals", was);
        else
            json_object_set_new(f, "exists", json_false());
        json_array_append_new(steps, json_pack("{s:{s:o}}", "expect", "field", f));
    }
    if (strlen(name) >= NAME_MAX_LEN)
        memcpy(name + NAME_MAX_LEN - 3, "...", 4);
    json_object_set_new(doc, "name", json_string(name));
    if (controller && *controller)
        json_object_set_new(doc, "controllers", json_pack("[s]", controller));
    json_object_set_new(doc, "fixtures", fx);
    json_object_set_new(doc, "steps", steps);
    json_decref(model);
    return doc;
}

static void free_scenarios(scn_scenario **s, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        scn_scenario_free(s[i]);
    free(s);
}

int scn_hunt_crd_bases(const char *crd_path, const char *controller, const char *cr_path,
                       const char *const *fixtures, size_t n_fixtures, const scn_gen_options *o,
                       scn_scenario ***out, size_t *n, scn_error *err)
{
    char crd_abs[PATH_MAX];
    char **fx_abs = NULL;
    json_t *crd = NULL, *cr = NULL, *stored = NULL;
    scn_gen_seq *seqs = NULL;
    scn_scenario **res = NULL;
    size_t nseq = 0, nres = 0;
    scn_gen_options def = {0};
    target t;
    int rc;
    memset(&t, 0, sizeof t);
    if (!o)
        o = &def;
    if (!crd_path || !realpath(crd_path, crd_abs))
        return fail(err, SCN_ERR_IO, crd_path, "%s", "cannot read the CRD file");
    fx_abs = calloc(n_fixtures ? n_fixtures : 1, sizeof *fx_abs);
    if (!fx_abs)
        return fail(err, SCN_ERR_NOMEM, crd_path, "%s", "out of memory");
    for (size_t i = 0; i < n_fixtures; i++) {
        char buf[PATH_MAX];
        if (!fixtures[i] || !realpath(fixtures[i], buf)) {
            rc = fail(err, SCN_ERR_IO, fixtures[i], "%s", "cannot read the fixture file");
            goto out;
        }
        if (!(fx_abs[i] = strdup(buf))) {
            rc = fail(err, SCN_ERR_NOMEM, crd_path, "%s", "out of memory");
            goto out;
        }
    }
    if ((rc = load_doc(crd_abs, "CustomResourceDefinition", &crd, err)) != 0 ||
        (rc = make_cr(crd, crd_abs, cr_path, &t, &cr, err)) != 0)
        goto out;
    stored = json_deep_copy(cr);
    if (!stored) {
        rc = fail(err, SCN_ERR_NOMEM, crd_path, "%s", "out of memory");
        goto out;
    }
    scn__gen_store(t.schema, stored);
    if ((rc = scn_gen_sequences(t.schema, stored, o, &seqs, &nseq, err)) != 0) {
        if (err && !err->file[0])
            snprintf(err->file, sizeof err->file, "%.255s", cr_path ? cr_path : crd_abs);
        goto out;
    }
    res = calloc(nseq ? nseq : 1, sizeof *res);
    if (!res) {
        rc = fail(err, SCN_ERR_NOMEM, crd_path, "%s", "out of memory");
        goto out;
    }
    for (size_t i = 0; i < nseq; i++) {
        json_t *doc = sequence_doc(&t, cr, stored, &seqs[i], i, crd_abs, controller, fx_abs,
                                   n_fixtures, o->settle_ns > 0 ? o->settle_ns : DEFAULT_SETTLE_NS);
        char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
        char file[PATH_MAX + 32];
        json_decref(doc);
        if (!text) {
            rc = fail(err, SCN_ERR_NOMEM, crd_path, "%s", "out of memory");
            goto out;
        }
        snprintf(file, sizeof file, "%s:hunt-%zu", crd_abs, i + 1);
        rc = scn_scenario_parse(file, text, strlen(text), &res[nres], err);
        free(text);
        if (rc != 0)
            goto out;
        nres++;
    }
    *out = res;
    *n = nres;
    res = NULL;
    nres = 0;
out:
    free_scenarios(res, nres);
    scn_gen_seqs_free(seqs, nseq);
    for (size_t i = 0; fx_abs && i < n_fixtures; i++)
        free(fx_abs[i]);
    free(fx_abs);
    json_decref(crd);
    json_decref(cr);
    json_decref(stored);
    return rc;
}
