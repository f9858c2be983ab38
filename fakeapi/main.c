/*
 * main.c - the fakeapi program: `fakeapi serve`, a standalone fake
 * Kubernetes API server that kubectl and any client can use.
 * Uses only the public header.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fakeapi/fakeapi.h"
#include "kc/cluster.h"
#include "kh/yaml.h"

#define MAX_LOADS 64

typedef struct serve_args {
    fakeapi_options opts;
    const char *kubeconfig;
    const char *faults;
    const char *trace;
    const char *record;
    fakeapi_record_options record_opts;
    const char *loads[MAX_LOADS];
    int nloads;
    bool cluster;             /* --cluster: run the built-in controllers too */
    const char *cluster_file; /* --cluster=FILE: the cluster document */
} serve_args;

static void usage(FILE *out)
{
    fprintf(out, "usage: fakeapi serve [--host H] [--port N] [--db FILE] [--kubeconfig FILE]\n"
                 "                     [--seed N] [--load MANIFEST]... [--faults FILE]\n"
                 "                     [--trace FILE] [--tls [--tls-require-client-cert]]\n"
                 "                     [--conn-timeout SECONDS]\n"
                 "                     [--record FILE [--record-secrets] [--record-user U]]\n"
                 "                     [--cluster[=FILE]]\n"
                 "  Serve the Kubernetes API on http://H:N (default 127.0.0.1, a free port;\n"
                 "  H is an IPv4 address or a name such as localhost; anyone who can reach\n"
                 "  it can change everything, so keep it on loopback)\n"
                 "  from an in-memory store, or FILE with --db (kept across restarts).\n"
                 "  --kubeconfig FILE  write a kubeconfig for kubectl and clients there\n"
                 "  --load MANIFEST    apply a YAML/JSON manifest at start (repeatable)\n"
                 "  --faults FILE      fault rules (YAML or JSON, see docs/faults.md)\n"
                 "  --trace FILE       write every request, fault and watch event there\n"
                 "  --record FILE      write every request there as an audit.k8s.io/v1 Event\n"
                 "                     (RequestResponse level, one JSON line each) for\n"
                 "                     `scenario import audit`; Secrets' values are redacted\n"
                 "                     unless --record-secrets; requests without a token or\n"
                 "                     certificate are user U (default system:anonymous)\n"
                 "  --tls              serve https with a CA and certificates made at start;\n"
                 "                     the kubeconfig trusts the CA and holds a client\n"
                 "                     certificate (CN fakeapi-admin, O system:masters)\n"
                 "  --tls-require-client-cert  close connections without that certificate\n"
                 "  --conn-timeout SECONDS  close a connection whose request has not arrived\n"
                 "                     whole in that time, or that sits idle (default 60,\n"
                 "                     0 = never; watches are not affected)\n"
                 "  --cluster[=FILE]   also run a cluster that moves: the built-in controllers\n"
                 "                     (Deployment, ReplicaSet, Job, ...), fake nodes, a\n"
                 "                     scheduler and a kubelet stand-in, configured by the\n"
                 "                     cluster document FILE (docs/cluster.md; default:\n"
                 "                     3 nodes, every controller)\n");
}

static int parse_u64(const char *s, unsigned long long max, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || !*s || v > max)
        return -1;
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, serve_args *a)
{
    for (int i = 2; i < argc; i++) {
        const char *opt = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        unsigned long long n;
        if (!strcmp(opt, "-h") || !strcmp(opt, "--help")) {
            usage(stdout);
            exit(0);
        }
        if (!strcmp(opt, "--tls")) {
            a->opts.tls = true;
            continue;
        }
        if (!strcmp(opt, "--cluster") || !strncmp(opt, "--cluster=", 10)) {
            a->cluster = true;
            a->cluster_file = opt[9] == '=' ? opt + 10 : NULL;
            continue;
        }
        if (!strcmp(opt, "--record-secrets")) {
            a->record_opts.secrets = true;
            continue;
        }
        if (!strcmp(opt, "--tls-require-client-cert")) {
            a->opts.tls_require_client_cert = true;
            continue;
        }
        if (!val) {
            fprintf(stderr, "fakeapi: %s needs a value\n", opt);
            return -1;
        }
        i++;
        if (!strcmp(opt, "--host"))
            a->opts.host = val;
        else if (!strcmp(opt, "--port") && parse_u64(val, 65535, &n) == 0)
            a->opts.port = (uint16_t)n;
        else if (!strcmp(opt, "--db"))
            a->opts.db_path = val;
        else if (!strcmp(opt, "--kubeconfig"))
            a->kubeconfig = val;
        else if (!strcmp(opt, "--faults"))
            a->faults = val;
        else if (!strcmp(opt, "--trace"))
            a->trace = val;
        else if (!strcmp(opt, "--record"))
            a->record = val;
        else if (!strcmp(opt, "--record-user"))
            a->record_opts.user = val;
        else if (!strcmp(opt, "--seed") && parse_u64(val, UINT64_MAX, &n) == 0)
            a->opts.seed = n;
        else if (!strcmp(opt, "--conn-timeout") && parse_u64(val, INT32_MAX, &n) == 0)
            a->opts.conn_timeout_s = n ? (int)n : -1;
        else if (!strcmp(opt, "--load") && a->nloads < MAX_LOADS)
            a->loads[a->nloads++] = val;
        else {
            fprintf(stderr, "fakeapi: bad option or value: %s %s\n", opt, val);
            return -1;
        }
    }
    if ((a->record_opts.secrets || a->record_opts.user) && !a->record) {
        fprintf(stderr, "fakeapi: --record-secrets and --record-user need --record\n");
        return -1;
    }
    if (a->cluster && a->opts.tls && !a->kubeconfig) {
        fprintf(stderr, "fakeapi: --cluster with --tls needs --kubeconfig (its controllers "
                        "log in with the kubeconfig's certificate)\n");
        return -1;
    }
    if (a->opts.tls_require_client_cert && !a->opts.tls) {
        fprintf(stderr, "fakeapi: --tls-require-client-cert needs --tls\n");
        return -1;
    }
    return 0;
}

/* 127.0.0.0/8 or localhost (what the server resolves localhost to). */
static bool loopback_host(const char *host)
{
    struct in_addr a;
    if (!host || !strcasecmp(host, "localhost"))
        return true;
    return inet_pton(AF_INET, host, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

/* key: base64(text) on one line, as kubeconfig's *-data fields hold PEM. */
static void put_base64(FILE *f, const char *key, const char *text)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *p = (const unsigned char *)text;
    size_t n = strlen(text);
    fprintf(f, "    %s: ", key);
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)p[i] << 16;
        if (i + 1 < n)
            v |= (unsigned)p[i + 1] << 8;
        if (i + 2 < n)
            v |= p[i + 2];
        fputc(b64[(v >> 18) & 63], f);
        fputc(b64[(v >> 12) & 63], f);
        fputc(i + 1 < n ? b64[(v >> 6) & 63] : '=', f);
        fputc(i + 2 < n ? b64[v & 63] : '=', f);
    }
    fputc('\n', f);
}

/* With TLS: trust the generated CA and log in with its client certificate;
 * without: plain http (insecure-skip-tls-verify only matters for https). */
static int write_kubeconfig(const char *path, const fakeapi_server *srv)
{
    /* Private: with TLS it holds the client certificate's key. */
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    FILE *f = fd >= 0 && fchmod(fd, 0600) == 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    const char *ca = fakeapi_tls_ca_pem(srv);
    fprintf(f,
            "apiVersion: v1\n"
            "kind: Config\n"
            "clusters:\n"
            "- name: fakeapi\n"
            "  cluster:\n"
            "    server: %s\n",
            fakeapi_url(srv));
    if (ca)
        put_base64(f, "certificate-authority-data", ca);
    else
        fputs("    insecure-skip-tls-verify: true\n", f);
    fputs("users:\n"
          "- name: fakeapi\n"
          "  user:\n",
          f);
    if (ca) {
        put_base64(f, "client-certificate-data", fakeapi_tls_client_cert_pem(srv));
        put_base64(f, "client-key-data", fakeapi_tls_client_key_pem(srv));
    } else {
        fputs("    token: fakeapi\n", f);
    }
    fputs("contexts:\n"
          "- name: fakeapi\n"
          "  context:\n"
          "    cluster: fakeapi\n"
          "    user: fakeapi\n"
          "    namespace: default\n"
          "current-context: fakeapi\n",
          f);
    return fclose(f) == 0 ? 0 : -1;
}

/* A fault file is YAML or JSON: one rule, a list of rules, or {rules: [...]}. */
static int load_faults(fakeapi_server *srv, const char *path, fakeapi_error *err)
{
    json_t *docs = NULL;
    kh_yaml_error yerr;
    if (kh_yaml_load_file(path, &docs, &yerr) < 0) {
        snprintf(err->message, sizeof err->message, "%s:%d:%d: %s", path, yerr.line, yerr.column,
                 yerr.message);
        return -1;
    }
    int rc = 0;
    size_t i;
    json_t *doc;
    json_array_foreach(docs, i, doc)
    {
        json_t *rules = json_object_get(doc, "rules");
        char *text = json_dumps(rules ? rules : doc, JSON_COMPACT);
        rc = text ? fakeapi_fault_add_json(srv, text, err) : -1;
        free(text);
        if (rc < 0) {
            char inner[sizeof err->message];
            snprintf(inner, sizeof inner, "%s", err->message);
            snprintf(err->message, sizeof err->message, "%.200s: %.300s", path, inner);
            break;
        }
    }
    json_decref(docs);
    return rc;
}

/* The built-in controllers on a manager of their own, in this process,
 * reaching the server over HTTP like any client (kc/cluster.h). */
static int start_cluster(const serve_args *a, kc_config *cfg, fakeapi_server *srv, kc_cluster **out)
{
    char msg[512] = "";
    kc_cluster_options co = {.config = cfg, .kubeconfig = a->opts.tls ? a->kubeconfig : NULL};
    int rc = kc_cluster_start(fakeapi_url(srv), &co, out, msg, sizeof msg);
    if (rc < 0)
        fprintf(stderr, "fakeapi: --cluster: %s\n", msg[0] ? msg : kc_strerror(rc));
    return rc;
}

static int serve(int argc, char **argv)
{
    serve_args a = {0};
    if (parse_args(argc, argv, &a) < 0) {
        usage(stderr);
        return 2;
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* before any server thread starts */
    if (!loopback_host(a.opts.host))
        fprintf(stderr,
                "fakeapi: warning: --host %s is not a loopback address: whoever can reach it "
                "can read and change every object and add fault rules%s\n",
                a.opts.host,
                a.opts.tls_require_client_cert
                    ? " once they hold the client certificate"
                    : " (there is no authentication; --tls --tls-require-client-cert "
                      "asks for a certificate)");
    kc_config *cluster_cfg = NULL;
    if (a.cluster) {
        /* Read the cluster document first: a bad one is bad input (2),
         * before anything starts. */
        char msg[512] = "";
        int crc = a.cluster_file ? kc_config_load(a.cluster_file, &cluster_cfg, msg, sizeof msg)
                                 : kc_config_new(NULL, NULL, &cluster_cfg, msg, sizeof msg);
        if (crc < 0) {
            fprintf(stderr, "fakeapi: --cluster: %s\n", msg[0] ? msg : kc_strerror(crc));
            return 2;
        }
    }
    fakeapi_server *srv;
    int rc = fakeapi_start(&a.opts, &srv);
    if (rc < 0) {
        kc_config_free(cluster_cfg);
        fprintf(stderr, "fakeapi: cannot start: %s\n", fakeapi_strerror(rc));
        return 1;
    }
    fakeapi_error err = {0};
    if ((a.trace && fakeapi_trace_open(srv, a.trace, &err) < 0) ||
        (a.record && fakeapi_record_open(srv, a.record, &a.record_opts, &err) < 0) ||
        (a.faults && load_faults(srv, a.faults, &err) < 0)) {
        fprintf(stderr, "fakeapi: %s\n", err.message);
        kc_config_free(cluster_cfg);
        fakeapi_stop(srv);
        return 2;
    }
    for (int i = 0; i < a.nloads; i++) {
        if (fakeapi_apply_file(srv, a.loads[i], &err) < 0) {
            fprintf(stderr, "fakeapi: %s: %s\n", a.loads[i], err.message);
            kc_config_free(cluster_cfg);
            fakeapi_stop(srv);
            return 1;
        }
    }
    if (a.kubeconfig && write_kubeconfig(a.kubeconfig, srv) < 0) {
        fprintf(stderr, "fakeapi: cannot write %s: %s\n", a.kubeconfig, strerror(errno));
        kc_config_free(cluster_cfg);
        fakeapi_stop(srv);
        return 1;
    }
    kc_cluster *cluster = NULL;
    if (a.cluster && start_cluster(&a, cluster_cfg, srv, &cluster) < 0) {
        kc_config_free(cluster_cfg);
        fakeapi_stop(srv);
        return 1;
    }
    kc_config_free(cluster_cfg);
    cluster_cfg = NULL;
    printf("fakeapi: serving the Kubernetes API at %s\n", fakeapi_url(srv));
    if (cluster)
        printf("fakeapi: with a cluster: %s\n", a.cluster_file ? a.cluster_file : "the defaults");
    if (a.kubeconfig)
        printf("fakeapi: kubeconfig written to %s\n"
               "  export KUBECONFIG=%s\n  kubectl get namespaces\n",
               a.kubeconfig, a.kubeconfig);
    else
        printf("  kubectl --server %s get namespaces\n", fakeapi_url(srv));
    fflush(stdout);
    int sig = 0;
    sigwait(&set, &sig);
    printf("fakeapi: %s, shutting down\n", sig == SIGINT ? "interrupted" : "terminated");
    kc_cluster_stop(cluster);
    fakeapi_stop(srv);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "serve"))
        return serve(argc, argv);
    usage(argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) ? stdout : stderr);
    return argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) ? 0 : 2;
}
