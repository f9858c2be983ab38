/*
 * config.c - ctrl_config from kubeconfig files, from in-cluster service
 * account files, or from a URL.
 *
 * A kubeconfig is read with kh_yaml_load into jansson, then the named lists
 * (clusters, contexts, users) of every file are merged into one index with
 * client-go's rule (the first file to define a name wins), each entry
 * remembering the directory of its file to resolve relative paths.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config_int.h"
#include "error_int.h"
#include "kh/yaml.h"

#define MAX_FILE_BYTES (16 * 1024 * 1024)
#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

void ctrl_config_free(ctrl_config *cfg)
{
    if (!cfg)
        return;
    free(cfg->server);
    free(cfg->context);
    free(cfg->ns);
    free(cfg->token);
    free(cfg->token_file);
    free(cfg->username);
    if (cfg->password)
        memset(cfg->password, 0, strlen(cfg->password));
    free(cfg->password);
    free(cfg->tls_server_name);
    free(cfg->ca);
    free(cfg->cert);
    if (cfg->key)
        memset(cfg->key, 0, cfg->key_len);
    free(cfg->key);
    free(cfg);
}

static int dup_str(char **dst, const char *src)
{
    char *c = NULL;
    if (src && !(c = strdup(src)))
        return CTRL_ERR_NOMEM;
    free(*dst);
    *dst = c;
    return 0;
}

static int dup_bytes(unsigned char **dst, size_t *dlen, const unsigned char *src, size_t len)
{
    *dst = NULL;
    *dlen = 0;
    if (!src)
        return 0;
    if (!(*dst = malloc(len ? len : 1)))
        return CTRL_ERR_NOMEM;
    memcpy(*dst, src, len);
    *dlen = len;
    return 0;
}

ctrl_config *ctrl_config_copy(const ctrl_config *cfg)
{
    ctrl_config *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->insecure = cfg->insecure;
    c->rt = cfg->rt;
    if (dup_str(&c->server, cfg->server) || dup_str(&c->context, cfg->context) ||
        dup_str(&c->ns, cfg->ns) || dup_str(&c->token, cfg->token) ||
        dup_str(&c->token_file, cfg->token_file) || dup_str(&c->username, cfg->username) ||
        dup_str(&c->password, cfg->password) ||
        dup_str(&c->tls_server_name, cfg->tls_server_name) ||
        dup_bytes(&c->ca, &c->ca_len, cfg->ca, cfg->ca_len) ||
        dup_bytes(&c->cert, &c->cert_len, cfg->cert, cfg->cert_len) ||
        dup_bytes(&c->key, &c->key_len, cfg->key, cfg->key_len)) {
        ctrl_config_free(c);
        return NULL;
    }
    return c;
}

int ctrl_config_set_roundtripper(ctrl_config *cfg, const ctrl_roundtripper *rt)
{
    if (!cfg)
        return CTRL_ERR_ARG;
    if (rt && rt->roundtrip)
        cfg->rt = *rt;
    else
        memset(&cfg->rt, 0, sizeof cfg->rt);
    return 0;
}

const ctrl_roundtripper *ctrl_config_roundtripper(const ctrl_config *cfg)
{
    return cfg && cfg->rt.roundtrip ? &cfg->rt : NULL;
}

const char *ctrl_config_server(const ctrl_config *cfg)
{
    return cfg->server;
}
const char *ctrl_config_context(const ctrl_config *cfg)
{
    return cfg->context;
}
const char *ctrl_config_namespace(const ctrl_config *cfg)
{
    return cfg->ns ? cfg->ns : "default";
}
const char *ctrl_config_token(const ctrl_config *cfg)
{
    return cfg->token;
}
const char *ctrl_config_token_file(const ctrl_config *cfg)
{
    return cfg->token_file;
}
const char *ctrl_config_username(const ctrl_config *cfg)
{
    return cfg->username;
}
const char *ctrl_config_password(const ctrl_config *cfg)
{
    return cfg->password;
}
const char *ctrl_config_tls_server_name(const ctrl_config *cfg)
{
    return cfg->tls_server_name;
}
bool ctrl_config_insecure(const ctrl_config *cfg)
{
    return cfg->insecure;
}
const unsigned char *ctrl_config_ca_data(const ctrl_config *cfg, size_t *len)
{
    *len = cfg->ca_len;
    return cfg->ca;
}
const unsigned char *ctrl_config_cert_data(const ctrl_config *cfg, size_t *len)
{
    *len = cfg->cert_len;
    return cfg->cert;
}
const unsigned char *ctrl_config_key_data(const ctrl_config *cfg, size_t *len)
{
    *len = cfg->key_len;
    return cfg->key;
}

int ctrl_config_set_token(ctrl_config *cfg, const char *token)
{
    return dup_str(&cfg->token, token);
}
int ctrl_config_set_namespace(ctrl_config *cfg, const char *ns)
{
    return dup_str(&cfg->ns, ns);
}
void ctrl_config_set_insecure(ctrl_config *cfg, bool insecure)
{
    cfg->insecure = insecure;
}

int ctrl__read_file(const char *path, unsigned char **out, size_t *len, ctrl_error *err)
{
    FILE *f = fopen(path, "rbe");
    if (!f)
        return ctrl__error_set(err, CTRL_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    size_t cap = 4096, n = 0;
    unsigned char *buf = malloc(cap + 1);
    int rc = 0;
    if (!buf) {
        rc = ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory reading %s", path);
        goto out;
    }
    for (;;) {
        if (n == cap) {
            if (cap >= MAX_FILE_BYTES) {
                rc = ctrl__error_set(err, CTRL_ERR_IO, "%s is larger than %d bytes", path,
                                     MAX_FILE_BYTES);
                goto out;
            }
            unsigned char *nb = realloc(buf, cap * 2 + 1);
            if (!nb) {
                rc = ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory reading %s", path);
                goto out;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f))
                rc = ctrl__error_set(err, CTRL_ERR_IO, "cannot read %s: %s", path, strerror(errno));
            break;
        }
    }
out:
    fclose(f);
    if (rc < 0) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

int ctrl__read_token(const char *path, char **out, ctrl_error *err)
{
    unsigned char *buf;
    size_t len;
    int rc = ctrl__read_file(path, &buf, &len, err);
    if (rc < 0)
        return rc;
    while (len > 0 && isspace(buf[len - 1]))
        buf[--len] = '\0';
    if (strlen((char *)buf) != len) {
        free(buf);
        return ctrl__error_set(err, CTRL_ERR_CONFIG, "token file %s holds a NUL byte", path);
    }
    *out = (char *)buf;
    return 0;
}

/* RFC 4648 base64 with padding optional and whitespace ignored. */
static int b64_value(int c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

int ctrl__base64_decode(const char *in, unsigned char **out, size_t *len)
{
    size_t n = strlen(in);
    unsigned char *buf = malloc(n / 4 * 3 + 3);
    if (!buf)
        return CTRL_ERR_NOMEM;
    uint32_t acc = 0;
    int bits = 0, pad = 0;
    size_t o = 0, digits = 0;
    for (size_t i = 0; i < n; i++) {
        int c = (unsigned char)in[i];
        if (isspace(c))
            continue;
        if (c == '=') {
            pad++;
            continue;
        }
        int v = b64_value(c);
        if (v < 0 || pad) {
            free(buf);
            return CTRL_ERR_CONFIG;
        }
        digits++;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            buf[o++] = (unsigned char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    if (digits % 4 == 1 || pad > 2 || (pad && (digits + (size_t)pad) % 4 != 0)) {
        free(buf);
        return CTRL_ERR_CONFIG;
    }
    *out = buf;
    *len = o;
    return 0;
}

/* Normalise a server address: scheme required (https assumed), no trailing '/'. */
static int set_server(ctrl_config *cfg, const char *server, ctrl_error *err)
{
    if (!server || !*server)
        return ctrl__error_set(err, CTRL_ERR_CONFIG, "no server found for the cluster");
    char *s;
    if (!strncmp(server, "http://", 7) || !strncmp(server, "https://", 8)) {
        s = strdup(server);
    } else if (strstr(server, "://")) {
        return ctrl__error_set(err, CTRL_ERR_CONFIG, "unsupported scheme in server \"%s\"", server);
    } else {
        size_t l = strlen(server) + 9;
        s = malloc(l);
        if (s)
            snprintf(s, l, "https://%s", server);
    }
    if (!s)
        return ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
    size_t l = strlen(s);
    while (l > 0 && s[l - 1] == '/')
        s[--l] = '\0';
    const char *host = strstr(s, "://") + 3;
    if (!*host) {
        free(s);
        return ctrl__error_set(err, CTRL_ERR_CONFIG, "server \"%s\" has no host", server);
    }
    free(cfg->server);
    cfg->server = s;
    return 0;
}

int ctrl_config_from_url(const char *url, ctrl_config **out, ctrl_error *err)
{
    if (!url || !out)
        return ctrl__error_set(err, CTRL_ERR_ARG, "url and out are required");
    ctrl_config *cfg = calloc(1, sizeof *cfg);
    if (!cfg)
        return ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
    int rc = set_server(cfg, url, err);
    if (rc < 0) {
        ctrl_config_free(cfg);
        return rc;
    }
    *out = cfg;
    return 0;
}

/* --- kubeconfig --------------------------------------------------------- */

/* The merged view of one or more kubeconfig files. */
typedef struct merged {
    json_t *clusters; /* name -> {"v": cluster object, "dir": base dir} */
    json_t *contexts;
    json_t *users;
    char *current; /* first current-context set */
} merged;

static void merged_deinit(merged *m)
{
    json_decref(m->clusters);
    json_decref(m->contexts);
    json_decref(m->users);
    free(m->current);
}

/* Add the entries of one named list ("clusters", field "cluster") not yet known. */
static int merge_list(json_t *index, json_t *doc, const char *list, const char *field,
                      const char *dir, const char *origin, ctrl_error *err)
{
    json_t *arr = json_object_get(doc, list);
    if (!arr || json_is_null(arr))
        return 0;
    if (!json_is_array(arr))
        return ctrl__error_set(err, CTRL_ERR_CONFIG, "%s: \"%s\" is not a list", origin, list);
    size_t i;
    json_t *item;
    json_array_foreach(arr, i, item)
    {
        const char *name = json_string_value(json_object_get(item, "name"));
        json_t *v = json_object_get(item, field);
        if (!name)
            return ctrl__error_set(err, CTRL_ERR_CONFIG, "%s: an entry of \"%s\" has no name",
                                   origin, list);
        if (v && !json_is_object(v) && !json_is_null(v))
            return ctrl__error_set(err, CTRL_ERR_CONFIG, "%s: %s \"%s\" is not a mapping", origin,
                                   field, name);
        if (json_object_get(index, name))
            continue; /* the first file to define a name wins */
        json_t *e =
            json_pack("{s:o, s:s}", "v", v && json_is_object(v) ? json_incref(v) : json_object(),
                      "dir", dir ? dir : "");
        if (!e || json_object_set_new(index, name, e) < 0)
            return ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
    }
    return 0;
}

static int merge_doc(merged *m, const char *text, size_t len, const char *dir, const char *origin,
                     ctrl_error *err)
{
    json_t *docs = NULL;
    kh_yaml_error yerr = {0};
    if (kh_yaml_load(text, len, &docs, &yerr) < 0)
        return ctrl__error_set(err, CTRL_ERR_CONFIG, "%s:%d:%d: %s", origin, yerr.line, yerr.column,
                               yerr.message);
    int rc = 0;
    json_t *doc = json_array_get(docs, 0);
    if (json_array_size(docs) == 0 || json_is_null(doc))
        goto out; /* an empty file is an empty config */
    if (!json_is_object(doc)) {
        rc = ctrl__error_set(err, CTRL_ERR_CONFIG, "%s: not a kubeconfig mapping", origin);
        goto out;
    }
    if ((rc = merge_list(m->clusters, doc, "clusters", "cluster", dir, origin, err)) < 0 ||
        (rc = merge_list(m->contexts, doc, "contexts", "context", dir, origin, err)) < 0 ||
        (rc = merge_list(m->users, doc, "users", "user", dir, origin, err)) < 0)
        goto out;
    const char *cur = json_string_value(json_object_get(doc, "current-context"));
    if (!m->current && cur && *cur && !(m->current = strdup(cur)))
        rc = ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
out:
    json_decref(docs);
    return rc;
}

/* path relative to dir, unless absolute or dir empty. Caller frees. */
static char *resolve_path(const char *dir, const char *path)
{
    if (path[0] == '/' || !dir || !*dir)
        return strdup(path);
    size_t l = strlen(dir) + strlen(path) + 2;
    char *p = malloc(l);
    if (p)
        snprintf(p, l, "%s/%s", dir, path);
    return p;
}

/* PEM bytes from "<field>-data" (base64) or "<field>" (a file), data first. */
static int load_pem(json_t *obj, const char *field, const char *dir, unsigned char **out,
                    size_t *len, ctrl_error *err)
{
    char data_field[64];
    snprintf(data_field, sizeof data_field, "%s-data", field);
    const char *data = json_string_value(json_object_get(obj, data_field));
    const char *file = json_string_value(json_object_get(obj, field));
    if (data && *data) {
        int rc = ctrl__base64_decode(data, out, len);
        if (rc == CTRL_ERR_NOMEM)
            return ctrl__error_set(err, rc, "out of memory");
        if (rc < 0)
            return ctrl__error_set(err, CTRL_ERR_CONFIG, "%s is not valid base64", data_field);
        return 0;
    }
    if (file && *file) {
        char *p = resolve_path(dir, file);
        if (!p)
            return ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
        int rc = ctrl__read_file(p, out, len, err);
        free(p);
        return rc;
    }
    return 0;
}

/* Look up a merged entry: its value and its directory. */
static json_t *entry(json_t *index, const char *name, const char **dir)
{
    json_t *e = json_object_get(index, name);
    if (!e)
        return NULL;
    *dir = json_string_value(json_object_get(e, "dir"));
    return json_object_get(e, "v");
}

static int apply_cluster(ctrl_config *cfg, json_t *c, const char *dir, ctrl_error *err)
{
    int rc = set_server(cfg, json_string_value(json_object_get(c, "server")), err);
    if (rc < 0)
        return rc;
    cfg->insecure = json_is_true(json_object_get(c, "insecure-skip-tls-verify"));
    if ((rc = load_pem(c, "certificate-authority", dir, &cfg->ca, &cfg->ca_len, err)) < 0)
        return rc;
    if (cfg->insecure && cfg->ca)
        return ctrl__error_set(err, CTRL_ERR_CONFIG,
                               "specifying a root certificates file with the insecure flag is "
                               "not allowed");
    return dup_str(&cfg->tls_server_name, json_string_value(json_object_get(c, "tls-server-name")))
               ? ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory")
               : 0;
}

static int apply_user(ctrl_config *cfg, json_t *u, const char *dir, ctrl_error *err)
{
    const char *token = json_string_value(json_object_get(u, "token"));
    const char *token_file = json_string_value(json_object_get(u, "tokenFile"));
    int rc;
    if (token && *token) {
        if (dup_str(&cfg->token, token))
            return ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
    } else if (token_file && *token_file) {
        char *p = resolve_path(dir, token_file);
        if (!p)
            return ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
        cfg->token_file = p;
        if ((rc = ctrl__read_token(p, &cfg->token, err)) < 0)
            return rc;
    }
    if ((rc = load_pem(u, "client-certificate", dir, &cfg->cert, &cfg->cert_len, err)) < 0 ||
        (rc = load_pem(u, "client-key", dir, &cfg->key, &cfg->key_len, err)) < 0)
        return rc;
    if (!cfg->cert != !cfg->key)
        return ctrl__error_set(err, CTRL_ERR_CONFIG,
                               "a client certificate needs a client key, and a key a certificate");
    if (dup_str(&cfg->username, json_string_value(json_object_get(u, "username"))) ||
        dup_str(&cfg->password, json_string_value(json_object_get(u, "password"))))
        return ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
    bool plugin = json_object_get(u, "exec") || json_object_get(u, "auth-provider");
    if (plugin && !cfg->token && !cfg->cert && !cfg->username)
        return ctrl__error_set(err, CTRL_ERR_UNSUPPORTED,
                               "exec and auth-provider credential plugins are not supported");
    return 0;
}

static int build_config(merged *m, const char *context, ctrl_config **out, ctrl_error *err)
{
    const char *name = context && *context ? context : m->current;
    if (!name)
        return ctrl__error_set(err, CTRL_ERR_CONFIG,
                               "no context chosen and no current-context "
                               "set in the kubeconfig");
    const char *cdir = NULL, *kdir = NULL, *udir = NULL;
    json_t *ctx = entry(m->contexts, name, &cdir);
    if (!ctx)
        return ctrl__error_set(err, CTRL_ERR_CONFIG, "context \"%s\" does not exist", name);
    const char *cluster_name = json_string_value(json_object_get(ctx, "cluster"));
    const char *user_name = json_string_value(json_object_get(ctx, "user"));
    json_t *cluster = cluster_name ? entry(m->clusters, cluster_name, &kdir) : NULL;
    if (!cluster)
        return ctrl__error_set(err, CTRL_ERR_CONFIG,
                               "cluster \"%s\" of context \"%s\" does not "
                               "exist",
                               cluster_name ? cluster_name : "", name);
    json_t *user = NULL;
    if (user_name && *user_name && !(user = entry(m->users, user_name, &udir)))
        return ctrl__error_set(err, CTRL_ERR_CONFIG, "user \"%s\" of context \"%s\" does not exist",
                               user_name, name);
    ctrl_config *cfg = calloc(1, sizeof *cfg);
    if (!cfg)
        return ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
    int rc = apply_cluster(cfg, cluster, kdir, err);
    if (rc == 0 && user)
        rc = apply_user(cfg, user, udir, err);
    const char *ns = json_string_value(json_object_get(ctx, "namespace"));
    if (rc == 0 && (dup_str(&cfg->context, name) || dup_str(&cfg->ns, ns && *ns ? ns : NULL)))
        rc = ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
    if (rc < 0) {
        ctrl_config_free(cfg);
        return rc;
    }
    *out = cfg;
    return 0;
}

static int merged_init(merged *m, ctrl_error *err)
{
    memset(m, 0, sizeof *m);
    m->clusters = json_object();
    m->contexts = json_object();
    m->users = json_object();
    if (!m->clusters || !m->contexts || !m->users) {
        merged_deinit(m);
        return ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
    }
    return 0;
}

int ctrl_config_from_kubeconfig_data(const char *text, size_t len, const char *base_dir,
                                     const char *context, ctrl_config **out, ctrl_error *err)
{
    if ((!text && len) || !out)
        return ctrl__error_set(err, CTRL_ERR_ARG, "text and out are required");
    merged m;
    int rc = merged_init(&m, err);
    if (rc < 0)
        return rc;
    if ((rc = merge_doc(&m, text, len, base_dir, "kubeconfig", err)) == 0)
        rc = build_config(&m, context, out, err);
    merged_deinit(&m);
    return rc;
}

/* Directory part of a path ("." for a bare name). Caller frees. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* Merge one file; a missing file is skipped when optional. */
static int merge_file(merged *m, const char *path, bool optional, ctrl_error *err)
{
    struct stat st;
    if (optional && stat(path, &st) < 0 && errno == ENOENT)
        return 0;
    unsigned char *buf;
    size_t len;
    int rc = ctrl__read_file(path, &buf, &len, err);
    if (rc < 0)
        return rc;
    char *dir = dir_of(path);
    if (!dir)
        rc = ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
    else
        rc = merge_doc(m, (const char *)buf, len, dir, path, err);
    free(dir);
    free(buf);
    return rc;
}

int ctrl_config_from_kubeconfig(const char *path, const char *context, ctrl_config **out,
                                ctrl_error *err)
{
    if (!out)
        return ctrl__error_set(err, CTRL_ERR_ARG, "out is required");
    merged m;
    int rc = merged_init(&m, err);
    if (rc < 0)
        return rc;
    const char *env = getenv("KUBECONFIG");
    if (path) {
        rc = merge_file(&m, path, false, err);
    } else if (env && *env) {
        char *list = strdup(env), *save = NULL;
        if (!list) {
            rc = ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
            goto out;
        }
        for (char *p = strtok_r(list, ":", &save); p && rc == 0; p = strtok_r(NULL, ":", &save))
            rc = merge_file(&m, p, true, err);
        free(list);
    } else {
        const char *home = getenv("HOME");
        if (!home || !*home) {
            rc = ctrl__error_set(err, CTRL_ERR_CONFIG, "no kubeconfig: KUBECONFIG and HOME unset");
            goto out;
        }
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/.kube/config", home);
        rc = merge_file(&m, p, false, err);
    }
    if (rc == 0)
        rc = build_config(&m, context, out, err);
out:
    merged_deinit(&m);
    return rc;
}

/* --- in-cluster --------------------------------------------------------- */

int ctrl_config_in_cluster(const char *sa_dir, ctrl_config **out, ctrl_error *err)
{
    if (!out)
        return ctrl__error_set(err, CTRL_ERR_ARG, "out is required");
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    if (!host || !*host || !port || !*port)
        return ctrl__error_set(err, CTRL_ERR_CONFIG,
                               "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST "
                               "and KUBERNETES_SERVICE_PORT must be defined");
    if (!sa_dir)
        sa_dir = SA_DIR;
    ctrl_config *cfg = calloc(1, sizeof *cfg);
    if (!cfg)
        return ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
    char url[512], path[PATH_MAX];
    bool v6 = strchr(host, ':') != NULL;
    snprintf(url, sizeof url, "https://%s%s%s:%s", v6 ? "[" : "", host, v6 ? "]" : "", port);
    int rc = set_server(cfg, url, err);
    if (rc < 0)
        goto out;
    snprintf(path, sizeof path, "%s/token", sa_dir);
    if (!(cfg->token_file = strdup(path))) {
        rc = ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
        goto out;
    }
    if ((rc = ctrl__read_token(path, &cfg->token, err)) < 0)
        goto out;
    /* client-go logs and goes on without a CA; so do we, without the log. */
    snprintf(path, sizeof path, "%s/ca.crt", sa_dir);
    ctrl_error ignored = {0};
    if (ctrl__read_file(path, &cfg->ca, &cfg->ca_len, &ignored) < 0) {
        cfg->ca = NULL;
        cfg->ca_len = 0;
    }
    ctrl_error_deinit(&ignored);
    snprintf(path, sizeof path, "%s/namespace", sa_dir);
    char *ns = NULL;
    if (ctrl__read_token(path, &ns, &ignored) == 0 && *ns)
        cfg->ns = ns;
    else
        free(ns);
    ctrl_error_deinit(&ignored);
    rc = dup_str(&cfg->context, NULL);
out:
    if (rc < 0) {
        ctrl_config_free(cfg);
        return rc;
    }
    *out = cfg;
    return 0;
}

int ctrl_config_load(const char *context, ctrl_config **out, ctrl_error *err)
{
    const char *env = getenv("KUBECONFIG");
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    if ((!env || !*env) && host && *host)
        return ctrl_config_in_cluster(NULL, out, err);
    return ctrl_config_from_kubeconfig(NULL, context, out, err);
}
