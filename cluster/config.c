/*
 * config.c - the cluster document (kc/cluster.h): parse, defaults, and
 * reference counting.
 *
 * Unknown keys are errors, so that a misspelt key is not silently a
 * default. Every error names the key.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_int.h"
#include "kh/yaml.h"

#define DEFAULT_NODES 3
#define MAX_NODES 5000
#define DEFAULT_CIDR "10.244.0.0/16"

static const char *const all_keys[] = {"nodes",   "node",   "podCIDR",        "controllers",
                                       "disable", "stages", "nodeLeaseRenew", "caCert", /* cacert.c */
                                       NULL};
static const char *const node_keys[] = {"name",   "cpu",    "memory", "pods", "ephemeral-storage",
                                        "labels", "taints", NULL};

__attribute__((format(printf, 3, 4))) static int fail(char *errbuf, size_t errlen, const char *fmt,
                                                      ...)
{
    if (errbuf && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(errbuf, errlen, fmt, ap);
        va_end(ap);
    }
    return KC_ERR_INPUT;
}

static bool known(const char *key, const char *const *keys)
{
    for (; *keys; keys++)
        if (!strcmp(key, *keys))
            return true;
    return false;
}

static int check_keys(const json_t *obj, const char *const *keys, const char *where, char *errbuf,
                      size_t errlen)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v)
    {
        if (!known(k, keys))
            return fail(errbuf, errlen, "%s: unknown key \"%s\"", where, k);
    }
    return 0;
}

static void node_spec_clear(kc_node_spec *n)
{
    free(n->name);
    json_decref(n->capacity);
    json_decref(n->labels);
    json_decref(n->taints);
}

static void config_destroy(kc_config *cfg)
{
    for (size_t i = 0; i < cfg->n_nodes; i++)
        node_spec_clear(&cfg->nodes[i]);
    free(cfg->nodes);
    free(cfg->base_dir);
    json_decref(cfg->enabled);
    json_decref(cfg->stages);
    kc__stages_free(cfg->st);
    json_decref(cfg->doc);
    free(cfg);
}

kc_config *kc_config_ref(kc_config *cfg)
{
    if (cfg)
        __atomic_add_fetch(&cfg->refs, 1, __ATOMIC_RELAXED);
    return cfg;
}

void kc_config_free(kc_config *cfg)
{
    if (cfg && __atomic_sub_fetch(&cfg->refs, 1, __ATOMIC_ACQ_REL) == 0)
        config_destroy(cfg);
}

void kc__config_unref(void *cfg)
{
    kc_config_free(cfg);
}

bool kc_config_enabled(const kc_config *cfg, const char *name)
{
    return cfg && name && json_is_true(json_object_get(cfg->enabled, name));
}

/* A quantity given as a string or a number: kept as the string. */
static int quantity(const json_t *v, const char *where, json_t **out, char *errbuf, size_t errlen)
{
    char buf[64];
    if (json_is_string(v) && json_string_length(v) > 0 && json_string_length(v) < 32) {
        *out = json_string(json_string_value(v));
    } else if (json_is_integer(v) && json_integer_value(v) >= 0) {
        snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
        *out = json_string(buf);
    } else {
        return fail(errbuf, errlen, "%s: a quantity (\"4\", \"16Gi\") or a non-negative integer",
                    where);
    }
    return *out ? 0 : KC_ERR_NOMEM;
}

/* Fill n from the template tmpl and then spec (either may be NULL). */
static int node_spec(kc_node_spec *n, const json_t *tmpl, const json_t *spec, size_t index,
                     char *errbuf, size_t errlen)
{
    static const char *const res[] = {"cpu", "memory", "pods", "ephemeral-storage"};
    static const char *const def[] = {"4", "16Gi", "110", "100Gi"};
    char where[96];
    n->capacity = json_object();
    n->labels = json_object();
    n->taints = json_array();
    if (!n->capacity || !n->labels || !n->taints)
        return KC_ERR_NOMEM;
    for (size_t i = 0; i < 4; i++)
        json_object_set_new(n->capacity, res[i], json_string(def[i]));
    const json_t *layers[2] = {tmpl, spec};
    for (int l = 0; l < 2; l++) {
        const json_t *s = layers[l];
        if (!s)
            continue;
        snprintf(where, sizeof where, l ? "nodes[%zu]" : "node", index);
        if (!json_is_object(s))
            return fail(errbuf, errlen, "%s: a mapping", where);
        int rc = check_keys(s, node_keys, where, errbuf, errlen);
        if (rc < 0)
            return rc;
        for (size_t i = 0; i < 4; i++) {
            json_t *v = json_object_get(s, res[i]), *q = NULL;
            if (!v)
                continue;
            char w2[128];
            snprintf(w2, sizeof w2, "%s.%s", where, res[i]);
            if ((rc = quantity(v, w2, &q, errbuf, errlen)) < 0)
                return rc;
            json_object_set_new(n->capacity, res[i], q);
        }
        json_t *labels = json_object_get(s, "labels");
        if (labels) {
            const char *k;
            json_t *v;
            if (!json_is_object(labels))
                return fail(errbuf, errlen, "%s.labels: a mapping of strings", where);
            json_object_foreach(labels, k, v)
            {
                if (!json_is_string(v))
                    return fail(errbuf, errlen, "%s.labels.%s: a string", where, k);
                json_object_set(n->labels, k, v);
            }
        }
        json_t *taints = json_object_get(s, "taints");
        if (taints) {
            size_t i;
            json_t *t;
            if (!json_is_array(taints))
                return fail(errbuf, errlen, "%s.taints: a list", where);
            json_array_foreach(taints, i, t)
            {
                const char *eff = json_string_value(json_object_get(t, "effect"));
                if (!json_is_object(t) || !json_is_string(json_object_get(t, "key")) || !eff ||
                    (strcmp(eff, "NoSchedule") && strcmp(eff, "PreferNoSchedule") &&
                     strcmp(eff, "NoExecute")))
                    return fail(errbuf, errlen,
                                "%s.taints[%zu]: {key, value?, effect: NoSchedule|"
                                "PreferNoSchedule|NoExecute}",
                                where, i);
                json_array_append(n->taints, t);
            }
        }
        json_t *name = json_object_get(s, "name");
        if (name) {
            if (!json_is_string(name) || !json_string_length(name))
                return fail(errbuf, errlen, "%s.name: a non-empty string", where);
            free(n->name);
            n->name = strdup(json_string_value(name));
        }
    }
    if (!n->name) {
        char buf[32];
        snprintf(buf, sizeof buf, "node-%zu", index);
        n->name = strdup(buf);
    }
    if (!n->name)
        return KC_ERR_NOMEM;
    json_object_set_new(n->labels, "kubernetes.io/hostname", json_string(n->name));
    if (!json_object_get(n->labels, "kubernetes.io/os"))
        json_object_set_new(n->labels, "kubernetes.io/os", json_string("linux"));
    if (!json_object_get(n->labels, "kubernetes.io/arch"))
        json_object_set_new(n->labels, "kubernetes.io/arch", json_string("amd64"));
    return 0;
}

static int parse_nodes(kc_config *cfg, const json_t *doc, char *errbuf, size_t errlen)
{
    const json_t *nodes = json_object_get(doc, "nodes"), *tmpl = json_object_get(doc, "node");
    size_t n = DEFAULT_NODES;
    if (json_is_integer(nodes)) {
        if (json_integer_value(nodes) < 0 || json_integer_value(nodes) > MAX_NODES)
            return fail(errbuf, errlen, "nodes: 0 to %d, or a list of node specs", MAX_NODES);
        n = (size_t)json_integer_value(nodes);
    } else if (json_is_array(nodes)) {
        n = json_array_size(nodes);
        if (n > MAX_NODES)
            return fail(errbuf, errlen, "nodes: at most %d", MAX_NODES);
    } else if (nodes) {
        return fail(errbuf, errlen, "nodes: a count or a list of node specs");
    }
    size_t subnets = (size_t)1 << (24 - cfg->pod_cidr_bits);
    if (n > subnets)
        return fail(errbuf, errlen, "podCIDR: /%d has room for %zu nodes' /24s, not %zu",
                    cfg->pod_cidr_bits, subnets, n);
    cfg->nodes = calloc(n ? n : 1, sizeof *cfg->nodes);
    if (!cfg->nodes)
        return KC_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        cfg->n_nodes = i + 1;
        int rc =
            node_spec(&cfg->nodes[i], tmpl, json_is_array(nodes) ? json_array_get(nodes, i) : NULL,
                      i, errbuf, errlen);
        if (rc < 0)
            return rc;
        cfg->nodes[i].pod_net = cfg->pod_cidr + ((uint32_t)i << 8);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(cfg->nodes[j].name, cfg->nodes[i].name))
                return fail(errbuf, errlen, "nodes[%zu].name: \"%s\" twice", i, cfg->nodes[i].name);
    }
    return 0;
}

static int parse_cidr(kc_config *cfg, const json_t *v, char *errbuf, size_t errlen)
{
    const char *s = v ? json_string_value(v) : DEFAULT_CIDR;
    char addr[64];
    const char *slash = s ? strchr(s, '/') : NULL;
    if (!slash || (size_t)(slash - s) >= sizeof addr)
        return fail(errbuf, errlen, "podCIDR: an IPv4 CIDR such as 10.244.0.0/16");
    memcpy(addr, s, (size_t)(slash - s));
    addr[slash - s] = 0;
    struct in_addr a;
    char *end;
    errno = 0;
    long bits = strtol(slash + 1, &end, 10);
    if (inet_pton(AF_INET, addr, &a) != 1 || *end || errno || bits < 8 || bits > 24)
        return fail(errbuf, errlen, "podCIDR: an IPv4 CIDR from /8 to /24, not \"%s\"", s);
    uint32_t mask = bits ? ~(uint32_t)0 << (32 - bits) : 0;
    cfg->pod_cidr = ntohl(a.s_addr) & mask;
    cfg->pod_cidr_bits = (int)bits;
    return 0;
}

static int parse_controllers(kc_config *cfg, const json_t *doc, char *errbuf, size_t errlen)
{
    const json_t *only = json_object_get(doc, "controllers"),
                 *off = json_object_get(doc, "disable");
    const char *const *names = kc_controller_names();
    cfg->enabled = json_object();
    if (!cfg->enabled)
        return KC_ERR_NOMEM;
    const json_t *lists[2] = {only, off};
    const char *keys[2] = {"controllers", "disable"};
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *v;
        if (lists[l] && !json_is_array(lists[l]))
            return fail(errbuf, errlen, "%s: a list of controller names", keys[l]);
        json_array_foreach(lists[l], i, v)
        {
            const char *name = json_string_value(v);
            bool found = false;
            for (const char *const *n = names; name && *n; n++)
                found |= !strcmp(*n, name);
            if (!found)
                return fail(errbuf, errlen, "%s[%zu]: no built-in controller named \"%s\"", keys[l],
                            i, name ? name : "(not a string)");
        }
    }
    for (const char *const *n = names; *n; n++) {
        bool on = !only;
        size_t i;
        json_t *v;
        json_array_foreach(only, i, v) on |= !strcmp(json_string_value(v), *n);
        json_array_foreach(off, i, v) on &= !!strcmp(json_string_value(v), *n);
        if (on)
            json_object_set_new(cfg->enabled, *n, json_true());
    }
    return 0;
}

static int parse_stages(kc_config *cfg, const json_t *v, char *errbuf, size_t errlen)
{
    if (!v) {
        cfg->stages = json_array();
        return cfg->stages ? 0 : KC_ERR_NOMEM;
    }
    if (json_is_array(v)) {
        cfg->stages = json_deep_copy(v);
        return cfg->stages ? 0 : KC_ERR_NOMEM;
    }
    if (!json_is_string(v))
        return fail(errbuf, errlen, "stages: a file name or a list of rules");
    const char *file = json_string_value(v);
    char path[4096];
    if (file[0] == '/' || !cfg->base_dir)
        snprintf(path, sizeof path, "%s", file);
    else
        snprintf(path, sizeof path, "%s/%s", cfg->base_dir, file);
    json_t *docs = NULL;
    kh_yaml_error yerr;
    if (kh_yaml_load_file(path, &docs, &yerr) < 0)
        return fail(errbuf, errlen, "stages: %s:%d: %s", path, yerr.line, yerr.message);
    /* A file holds a list of rules, a mapping {stages: [...]}, or one rule
     * per document. */
    json_t *first = json_array_get(docs, 0);
    if (json_array_size(docs) == 1 && json_is_array(first))
        cfg->stages = json_incref(first);
    else if (json_array_size(docs) == 1 && json_is_array(json_object_get(first, "stages")))
        cfg->stages = json_incref(json_object_get(first, "stages"));
    else
        cfg->stages = json_incref(docs);
    json_decref(docs);
    return 0;
}

int kc_config_new(const json_t *doc, const char *base_dir, kc_config **out, char *errbuf,
                  size_t errlen)
{
    if (errbuf && errlen)
        *errbuf = 0;
    if (!out)
        return fail(errbuf, errlen, "no output");
    if (doc && !json_is_object(doc))
        return fail(errbuf, errlen, "the cluster document: a mapping");
    kc_config *cfg = calloc(1, sizeof *cfg);
    if (!cfg)
        return KC_ERR_NOMEM;
    cfg->refs = 1;
    cfg->doc = doc ? json_deep_copy(doc) : json_object();
    cfg->base_dir = base_dir ? strdup(base_dir) : NULL;
    int rc = (!cfg->doc || (base_dir && !cfg->base_dir)) ? KC_ERR_NOMEM : 0;
    if (!rc)
        rc = check_keys(cfg->doc, all_keys, "cluster", errbuf, errlen);
    if (!rc)
        rc = parse_cidr(cfg, json_object_get(cfg->doc, "podCIDR"), errbuf, errlen);
    if (!rc)
        rc = parse_nodes(cfg, cfg->doc, errbuf, errlen);
    if (!rc)
        rc = parse_controllers(cfg, cfg->doc, errbuf, errlen);
    if (!rc)
        rc = parse_stages(cfg, json_object_get(cfg->doc, "stages"), errbuf, errlen);
    if (!rc)
        rc = kc__stages_parse(cfg->stages, &cfg->st, errbuf, errlen);
    if (rc < 0) {
        config_destroy(cfg);
        return rc;
    }
    *out = cfg;
    return 0;
}

int kc_config_load(const char *path, kc_config **out, char *errbuf, size_t errlen)
{
    json_t *docs = NULL;
    kh_yaml_error yerr;
    if (!path)
        return fail(errbuf, errlen, "no file");
    if (kh_yaml_load_file(path, &docs, &yerr) < 0)
        return fail(errbuf, errlen, "%s:%d: %s", path, yerr.line, yerr.message);
    if (json_array_size(docs) > 1) {
        json_decref(docs);
        return fail(errbuf, errlen, "%s: one document, not %zu", path, json_array_size(docs));
    }
    char *copy = strdup(path);
    if (!copy) {
        json_decref(docs);
        return KC_ERR_NOMEM;
    }
    json_t *doc = json_array_get(docs, 0);
    int rc = kc_config_new(json_is_null(doc) ? NULL : doc, dirname(copy), out, errbuf, errlen);
    free(copy);
    json_decref(docs);
    return rc;
}
