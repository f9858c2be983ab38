/*
 * fuzz_http.c - bad input over HTTP never touches data it did not name.
 *
 * A bounded, seeded program (no libFuzzer: the target is a whole server on
 * a socket). It starts fakeapi in-process, stores sentinel objects, then
 * sends mutated requests built from a committed corpus (corpus/http, *.req:
 * "METHOD PATH" on the first line, header lines, a blank line, the body)
 * over raw sockets: malformed paths and query values (NUL, invalid UTF-8,
 * bad escapes), garbage parameters, odd and duplicated headers, bodies with
 * flipped bytes or wrongly typed fields, requests cut short, half-closed
 * or abandoned. After each batch it checks that
 *   - the server still answers a new client;
 *   - every sentinel is unchanged unless a request of the batch named it
 *     in a well-formed path (then it is put back);
 *   - every stored ConfigMap, Secret and Namespace is well-typed and
 *     well-named (what a strict client such as the Python one can decode);
 * and at the end that the descriptors it used are given back.
 *
 *   fuzz_http CORPUS_DIR [--seed N] [--requests N] [--batch N] [-v]
 *
 * Prints one JSON line of figures; exit 1 on the first broken invariant,
 * with the batch's requests on stderr.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "fakeapi/fakeapi.h"

#define MAX_CORPUS 128
#define MAX_REQ 16384
#define MAX_BATCH 256
#define IO_TIMEOUT_MS 5000

typedef struct seed_req {
    char name[64];
    char *text;
    size_t len;
} seed_req;

static seed_req corpus[MAX_CORPUS];
static size_t ncorpus;
static uint64_t rng_state;
static fakeapi_server *srv;
static bool verbose;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static size_t pick(size_t n)
{
    return n ? (size_t)(rnd() % n) : 0;
}

/* ---- the corpus ------------------------------------------------------------ */

static int load_corpus(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *e;
    char *names[MAX_CORPUS];
    size_t n = 0;
    while ((e = readdir(d)) && n < MAX_CORPUS)
        if (e->d_name[0] != '.')
            names[n++] = strdup(e->d_name);
    closedir(d);
    /* Sorted: the same seed picks the same requests wherever it runs. */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    for (size_t i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "rb");
        if (f) {
            char *buf = malloc(MAX_REQ);
            size_t len = buf ? fread(buf, 1, MAX_REQ - 1, f) : 0;
            fclose(f);
            if (buf && len > 0) {
                buf[len] = '\0';
                seed_req *s = &corpus[ncorpus++];
                snprintf(s->name, sizeof s->name, "%s", names[i]);
                s->text = buf;
                s->len = len;
            } else {
                free(buf);
            }
        }
        free(names[i]);
    }
    return ncorpus ? 0 : -1;
}

/* ---- one request, mutated ---------------------------------------------------- */

typedef struct hdr {
    char name[64];
    char value[512];
} hdr;

typedef struct req {
    char method[16];
    char path[2048];
    hdr h[24];
    size_t nh;
    char body[8192];
    size_t body_len;
    bool auto_length; /* serialise with one, right, Content-Length */
    int cut;          /* 0 whole; 1 send part and close; 2 part, half-close; 3 whole, half-close */
    char origin[64];  /* the corpus entry it came from */
} req;

static void parse_seed(const seed_req *s, req *r)
{
    memset(r, 0, sizeof *r);
    r->auto_length = true;
    snprintf(r->origin, sizeof r->origin, "%.63s", s->name);
    const char *p = s->text, *end = s->text + s->len;
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl)
        nl = end;
    sscanf(p, "%15s %2047s", r->method, r->path);
    p = nl < end ? nl + 1 : end;
    while (p < end) {
        nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            nl = end;
        size_t l = (size_t)(nl - p);
        if (l == 0) {
            p = nl + 1;
            break;
        }
        const char *colon = memchr(p, ':', l);
        if (colon && r->nh < sizeof r->h / sizeof r->h[0]) {
            hdr *h = &r->h[r->nh++];
            snprintf(h->name, sizeof h->name, "%.*s", (int)(colon - p), p);
            const char *v = colon + 1;
            while (v < nl && *v == ' ')
                v++;
            snprintf(h->value, sizeof h->value, "%.*s", (int)(nl - v), v);
        }
        p = nl + 1;
    }
    if (p < end) {
        size_t l = (size_t)(end - p);
        while (l && (p[l - 1] == '\n' || p[l - 1] == '\r'))
            l--;
        r->body_len = l < sizeof r->body ? l : sizeof r->body - 1;
        memcpy(r->body, p, r->body_len);
    }
}

static const char *const nasty_fragments[] = {
    "%00", "%00zzz", "%FF", "%C0%AF", "%ED%A0%80", "%E2%82",       "%",      "%G1", "%2F", "%2e%2e",
    "..",  "%20",    "+",   "%0d%0a", "\x7f",      "%F4%90%80%80", "%C3%A9",
};

static const char *const sentinel_names[] = {"victim", "keep", "abc", "cm-b", "guard"};

static const char *const param_names[] = {
    "labelSelector",
    "fieldSelector",
    "resourceVersion",
    "resourceVersionMatch",
    "limit",
    "continue",
    "watch",
    "timeoutSeconds",
    "allowWatchBookmarks",
    "propagationPolicy",
    "dryRun",
    "gracePeriodSeconds",
    "fieldManager",
    "force",
    "sendInitialEvents",
    "orphanDependents",
};

static const char *const param_values[] = {
    "",
    "abc",
    "%FF",
    "app%3Dfoo%FF",
    "metadata.name%3Dcm-b%00x",
    "-1",
    "+1",
    "%201",
    "Bogus",
    "maybe",
    "true",
    "1",
    "0",
    "99999999999999999999",
    "app%3Dfoo",
    "metadata.name%3Dabc",
    "spec.bogus%21%3Dx",
    "Foreground",
    "All",
    "%00",
    "app+in+(a,b)",
    "!app",
    "a%3D%3Db",
    "NotOlderThan",
    "Exact",
};

static const char *const content_types[] = {
    "text/plain",
    "application/xml",
    "image/png",
    "application/x-www-form-urlencoded",
    "application/json; charset=utf-8",
    "application/merge-patch+json",
    "application/json-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "",
    "multipart/form-data; boundary=x",
};

static void set_header(req *r, const char *name, const char *value)
{
    for (size_t i = 0; i < r->nh; i++) {
        if (!strcasecmp(r->h[i].name, name)) {
            snprintf(r->h[i].value, sizeof r->h[i].value, "%s", value);
            return;
        }
    }
    if (r->nh < sizeof r->h / sizeof r->h[0]) {
        snprintf(r->h[r->nh].name, sizeof r->h[0].name, "%s", name);
        snprintf(r->h[r->nh++].value, sizeof r->h[0].value, "%s", value);
    }
}

/* Insert text into the path at a random place after its first segment. */
static void path_insert(req *r, const char *text)
{
    size_t len = strlen(r->path), at = len ? 1 + pick(len) : 0;
    if (len + strlen(text) + 1 >= sizeof r->path)
        return;
    memmove(r->path + at + strlen(text), r->path + at, len - at + 1);
    memcpy(r->path + at, text, strlen(text));
}

/* Replace one path segment (of the part before '?') by a sentinel's name
 * made malformed: it must never address that sentinel. */
static void path_sentinel(req *r)
{
    char *q = strchr(r->path, '?');
    size_t plen = q ? (size_t)(q - r->path) : strlen(r->path);
    size_t starts[32], n = 0;
    for (size_t i = 0; i < plen && n < 32; i++)
        if (r->path[i] == '/')
            starts[n++] = i + 1;
    if (n < 2)
        return;
    size_t s = starts[1 + pick(n - 1)], e = s;
    while (e < plen && r->path[e] != '/')
        e++;
    char seg[128];
    snprintf(seg, sizeof seg, "%s%s", sentinel_names[pick(5)],
             nasty_fragments[pick(7)]); /* the first seven are never a clean name */
    char rest[2048];
    snprintf(rest, sizeof rest, "%s", r->path + e);
    r->path[s] = '\0';
    if (s + strlen(seg) + strlen(rest) + 1 < sizeof r->path) {
        strcat(r->path, seg);
        strcat(r->path, rest);
    }
}

static void query_add(req *r)
{
    char kv[256];
    snprintf(kv, sizeof kv, "%s%s=%s", strchr(r->path, '?') ? "&" : "?",
             param_names[pick(sizeof param_names / sizeof param_names[0])],
             param_values[pick(sizeof param_values / sizeof param_values[0])]);
    if (strlen(r->path) + strlen(kv) + 1 < sizeof r->path)
        strcat(r->path, kv);
}

/* Give a JSON body a wrongly typed field where a string or object was. */
static void body_retype(req *r)
{
    static const char *const repl[] = {"7", "\"x\"", "{}", "[]", "true", "null", "\"%%%\""};
    size_t hits[64], n = 0;
    for (size_t i = 0; i + 1 < r->body_len && n < 64; i++)
        if (r->body[i] == ':' &&
            (r->body[i + 1] == '"' || r->body[i + 1] == '{' || r->body[i + 1] == ' '))
            hits[n++] = i + 1;
    if (!n)
        return;
    size_t at = hits[pick(n)], end = at;
    while (end < r->body_len && r->body[end] == ' ')
        end++;
    if (end < r->body_len && r->body[end] == '"') {
        end++;
        while (end < r->body_len && r->body[end] != '"')
            end += r->body[end] == '\\' ? 2 : 1;
        end++;
    } else if (end < r->body_len && r->body[end] == '{') {
        int depth = 0;
        for (; end < r->body_len; end++) {
            depth += r->body[end] == '{';
            if (r->body[end] == '}' && --depth == 0) {
                end++;
                break;
            }
        }
    } else {
        return;
    }
    if (end > r->body_len)
        end = r->body_len;
    const char *x = repl[pick(sizeof repl / sizeof repl[0])];
    size_t xl = strlen(x);
    if (r->body_len - (end - at) + xl >= sizeof r->body)
        return;
    memmove(r->body + at + xl, r->body + end, r->body_len - end);
    memcpy(r->body + at, x, xl);
    r->body_len = r->body_len - (end - at) + xl;
}

/* The body becomes o, compact, if it fits. */
static void set_body_json(req *r, const json_t *o)
{
    char *text = json_dumps(o, JSON_COMPACT);
    if (text && strlen(text) < sizeof r->body) {
        r->body_len = strlen(text);
        memcpy(r->body, text, r->body_len);
    }
    free(text);
}

/* Set one well-known field of a JSON body to a value of the wrong type. */
static void body_wrong_field(req *r)
{
    static const char *const top[] = {"data",     "binaryData", "immutable", "kind", "apiVersion",
                                      "metadata", "stringData", "type",      "spec"};
    static const char *const meta[] = {"name",           "labels",       "annotations",
                                       "finalizers",     "generateName", "ownerReferences",
                                       "resourceVersion"};
    static const char *const values[] = {
        "\"x\"",           "7",      "true", "{}", "[1]", "{\"k\":7}", "\"not base64!\"",
        "{\"k\":\"%%%\"}", "\"a/b\""};
    json_t *o = json_loadb(r->body, r->body_len, 0, NULL);
    json_t *v = json_loads(values[pick(sizeof values / sizeof values[0])], JSON_DECODE_ANY, NULL);
    if (json_is_object(o) && v) {
        json_t *m = json_object_get(o, "metadata");
        if (pick(2) && json_is_object(m))
            json_object_set(m, meta[pick(sizeof meta / sizeof meta[0])], v);
        else
            json_object_set(o, top[pick(sizeof top / sizeof top[0])], v);
        set_body_json(r, o);
    } else if (json_is_array(o) && v && json_array_size(o)) {
        /* a JSON patch: the value of one operation */
        json_object_set(json_array_get(o, pick(json_array_size(o))), "value", v);
        set_body_json(r, o);
    }
    json_decref(v);
    json_decref(o);
}

static void mutate(req *r)
{
    if (pick(4) == 0) {
        body_wrong_field(r); /* alone: a well-formed request with a badly typed body */
        return;
    }
    int rounds = 1 + (int)pick(3);
    for (int i = 0; i < rounds; i++) {
        switch (pick(12)) {
        case 0:
        case 1:
            path_sentinel(r);
            break;
        case 2:
            path_insert(r,
                        nasty_fragments[pick(sizeof nasty_fragments / sizeof nasty_fragments[0])]);
            break;
        case 3:
        case 4:
            query_add(r);
            break;
        case 5:
            set_header(r, "Content-Type",
                       content_types[pick(sizeof content_types / sizeof content_types[0])]);
            break;
        case 6:
            r->auto_length = false; /* two Content-Lengths, or a wrong one */
            break;
        case 7:
            set_header(r, "Host", pick(2) ? "evil.example" : "localhost:1");
            break;
        case 8:
            if (r->body_len)
                r->body[pick(r->body_len)] ^= (char)(1 << pick(8));
            break;
        case 9:
            body_retype(r);
            break;
        case 10:
            if (r->body_len)
                r->body_len = pick(r->body_len);
            break;
        case 11:
            r->cut = 1 + (int)pick(3);
            break;
        }
    }
}

/* The bytes on the wire. */
static size_t serialise(const req *r, char *out, size_t max, uint16_t port)
{
    size_t n = (size_t)snprintf(out, max, "%s %s HTTP/1.1\r\n", r->method, r->path);
    bool host = false;
    for (size_t i = 0; i < r->nh && n < max; i++) {
        host |= !strcasecmp(r->h[i].name, "Host");
        n += (size_t)snprintf(out + n, max - n, "%s: %s\r\n", r->h[i].name, r->h[i].value);
    }
    if (!host && n < max)
        n += (size_t)snprintf(out + n, max - n, "Host: 127.0.0.1:%u\r\n", port);
    if (n < max && r->body_len && r->auto_length)
        n += (size_t)snprintf(out + n, max - n, "Content-Length: %zu\r\n", r->body_len);
    else if (n < max && !r->auto_length)
        n += (size_t)snprintf(out + n, max - n, "Content-Length: %zu\r\nContent-Length: %zu\r\n",
                              r->body_len, r->body_len + 3);
    if (n < max)
        n += (size_t)snprintf(out + n, max - n,
                              "User-Agent: fuzz-http/1\r\nConnection: close\r\n\r\n");
    if (n + r->body_len < max) {
        memcpy(out + n, r->body, r->body_len);
        n += r->body_len;
    }
    return n < max ? n : max;
}

/* ---- talking to the server ------------------------------------------------------ */

static int dial(uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static char last_answer[4096]; /* the last answer read, for reports */

/* Read until the server closes or the timeout; the status, 0 if none. */
static int read_status(int fd, int timeout_ms)
{
    char *buf = last_answer;
    const size_t cap = sizeof last_answer;
    size_t len = 0;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        long spent = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
        if (spent >= timeout_ms)
            break;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, (int)(timeout_ms - spent)) <= 0)
            break;
        char chunk[4096];
        ssize_t r = recv(fd, chunk, sizeof chunk, 0);
        if (r <= 0)
            break;
        size_t take = (size_t)r < cap - 1 - len ? (size_t)r : cap - 1 - len;
        memcpy(buf + len, chunk, take);
        len += take;
    }
    buf[len] = '\0';
    int status = 0;
    return sscanf(buf, "HTTP/1.%*d %d", &status) == 1 ? status : 0;
}

/* Send one request as its cut says; the status seen (0: none, as for a cut
 * request or a watch that is left open). */
static int send_req(const req *r, uint16_t port)
{
    static char wire[MAX_REQ + 16384];
    size_t n = serialise(r, wire, sizeof wire, port);
    int fd = dial(port);
    if (fd < 0)
        return -1;
    size_t part = r->cut == 1 || r->cut == 2 ? n / 2 : n;
    ssize_t w = send(fd, wire, part, MSG_NOSIGNAL);
    (void)w;
    int status = 0;
    if (r->cut == 1) {
        /* abandoned mid-request */
    } else if (r->cut == 2 || r->cut == 3) {
        shutdown(fd, SHUT_WR);
        status = read_status(fd, r->cut == 2 ? 200 : 1000);
    } else {
        /* A watch stays open: read what comes within a short while. */
        status = read_status(fd, strstr(r->path, "watch") ? 150 : IO_TIMEOUT_MS);
    }
    close(fd);
    return status;
}

static bool server_answers(uint16_t port)
{
    int fd = dial(port);
    if (fd < 0)
        return false;
    char wire[256];
    int n = snprintf(wire, sizeof wire,
                     "GET /api/v1/namespaces HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
                     "Connection: close\r\n\r\n",
                     port);
    ssize_t w = send(fd, wire, (size_t)n, MSG_NOSIGNAL);
    int status = w == n ? read_status(fd, IO_TIMEOUT_MS) : 0;
    close(fd);
    return status == 200;
}

/* ---- the sentinels and the invariants ----------------------------------------- */

typedef struct sentinel {
    const char *av, *kind, *ns, *name;
    const char *manifest;
    char rv[32]; /* resourceVersion when last checked */
} sentinel;

#define SENTINEL(k, n, nm, m)                                                                      \
    {                                                                                              \
        .av = "v1", .kind = k, .ns = n, .name = nm, .manifest = m                                  \
    }

static sentinel sentinels[] = {
    SENTINEL("Namespace", "", "victim",
             "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
             "\"metadata\":{\"name\":\"victim\"}}"),
    SENTINEL("Namespace", "", "keep",
             "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
             "\"metadata\":{\"name\":\"keep\"}}"),
    SENTINEL("ConfigMap", "victim", "keep",
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"keep\","
             "\"namespace\":\"victim\",\"labels\":{\"app\":\"foo\"}},\"data\":{\"k\":\"v\"}}"),
    SENTINEL("ConfigMap", "victim", "abc",
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"abc\","
             "\"namespace\":\"victim\"},\"data\":{\"k\":\"v\"}}"),
    SENTINEL("ConfigMap", "victim", "cm-b",
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm-b\","
             "\"namespace\":\"victim\",\"labels\":{\"app\":\"bar\"}},\"data\":{\"k\":\"v\"}}"),
    SENTINEL("ConfigMap", "keep", "guard",
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"guard\","
             "\"namespace\":\"keep\"},\"data\":{\"k\":\"v\"}}"),
    SENTINEL("Secret", "keep", "guard",
             "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"guard\","
             "\"namespace\":\"keep\"},\"data\":{\"k\":\"c2VjcmV0\"}}"),
};
#define NSENT (sizeof sentinels / sizeof sentinels[0])

/* Objects the corpus's clean requests address, put back after each batch. */
static const char *const targets[] = {
    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"fz\"}}",
    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"t1\","
    "\"namespace\":\"fz\",\"labels\":{\"app\":\"foo\"}},\"data\":{\"a\":\"1\"}}",
    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"t2\","
    "\"namespace\":\"fz\"},\"data\":{\"a\":\"2\"}}",
    "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"s1\","
    "\"namespace\":\"fz\"},\"data\":{\"a\":\"MQ==\"}}",
};

static int apply(const char *text)
{
    fakeapi_error err = {0};
    return fakeapi_apply(srv, text, strlen(text), &err);
}

static const char *rv_of(const json_t *o)
{
    const char *rv =
        json_string_value(json_object_get(json_object_get(o, "metadata"), "resourceVersion"));
    return rv ? rv : "";
}

static int sentinels_snapshot(void)
{
    for (size_t i = 0; i < NSENT; i++) {
        json_t *o = NULL;
        sentinel *s = &sentinels[i];
        if (fakeapi_get(srv, s->av, s->kind, s->ns, s->name, &o, NULL) < 0)
            return -1;
        snprintf(s->rv, sizeof s->rv, "%s", rv_of(o));
        json_decref(o);
    }
    return 0;
}

/* Decode a path strictly (any NUL, bad escape or invalid UTF-8: false)
 * into its segments; the query is dropped. */
static bool strict_segments(const char *path, char segs[][256], size_t *nseg)
{
    *nseg = 0;
    size_t i = 0, o = 0;
    char cur[256];
    if (path[0] != '/')
        return false;
    i = 1;
    for (;; i++) {
        char c = path[i];
        if (c == '\0' || c == '?' || c == '/') {
            cur[o] = '\0';
            if (*nseg < 16)
                memcpy(segs[(*nseg)++], cur, o + 1);
            o = 0;
            if (c != '/')
                break;
            continue;
        }
        unsigned char b = (unsigned char)c;
        if (c == '%') {
            unsigned v;
            if (sscanf(path + i + 1, "%2x", &v) != 1 || !path[i + 1] || !path[i + 2])
                return false;
            b = (unsigned char)v;
            i += 2;
        }
        if (b == 0 || b >= 0x80 || o >= sizeof cur - 1)
            return false; /* the sentinels' names are ASCII: anything else is not them */
        cur[o++] = (char)b;
    }
    return true;
}

/* Which sentinels a well-formed request may change: one it names, the
 * collection it belongs to, its namespace. */
static void mark_named(const req *r, bool *may)
{
    if (!strcmp(r->method, "GET") || !strcmp(r->method, "HEAD"))
        return;
    char segs[16][256];
    size_t n;
    if (!strict_segments(r->path, segs, &n) || n < 3 || strcmp(segs[0], "api"))
        return;
    const char *ns = NULL, *res = NULL, *name = NULL;
    if (n >= 4 && !strcmp(segs[2], "namespaces")) {
        ns = segs[3];
        res = n >= 5 ? segs[4] : NULL;
        name = n >= 6 ? segs[5] : NULL;
    } else {
        res = segs[2];
        name = n >= 4 ? segs[3] : NULL;
    }
    for (size_t i = 0; i < NSENT; i++) {
        const sentinel *s = &sentinels[i];
        bool is_ns = !strcmp(s->kind, "Namespace");
        const char *plural = is_ns                        ? "namespaces"
                             : !strcmp(s->kind, "Secret") ? "secrets"
                                                          : "configmaps";
        if (is_ns) {
            /* /api/v1/namespaces/NAME, or what is in it */
            if (ns && !strcmp(ns, s->name) && (!res || n >= 5))
                may[i] = true;
            if (!ns && res && !strcmp(res, "namespaces") && (!name || !strcmp(name, s->name)))
                may[i] = true;
            continue;
        }
        if (ns && !strcmp(ns, s->ns) && (!res || !strcmp(res, plural)) &&
            (!name || !strcmp(name, s->name)))
            may[i] = true; /* the object, its collection, or its namespace */
        if (!ns && res && !strcmp(res, plural) && !name)
            may[i] = true;
    }
}

static bool dns_name(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n == 0 || n > max)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
              s[i] == '.'))
            return false;
    return true;
}

static bool base64ish(const char *s)
{
    size_t n = strlen(s);
    if (n % 4)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '+' || c == '/' || (c == '=' && i >= n - 2);
        if (!ok)
            return false;
    }
    return true;
}

static bool string_map(const json_t *m, bool b64)
{
    if (!m || json_is_null(m))
        return true; /* absent, as a strict client reads null */
    if (!json_is_object(m))
        return false;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)m, k, v)
    {
        if (json_is_null(v))
            continue; /* Go decodes it as "" */
        if (!json_is_string(v) || (b64 && !base64ish(json_string_value(v))))
            return false;
    }
    return true;
}

/* A stored object a strict client can decode; why not in why. */
static bool well_typed(const json_t *o, const char *kind, char *why, size_t len)
{
    const json_t *meta = json_object_get(o, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    if (!json_is_object(meta) || !name || !dns_name(name, 253)) {
        snprintf(why, len, "bad metadata.name");
        return false;
    }
    if (!json_is_string(json_object_get(o, "kind")) ||
        !json_is_string(json_object_get(o, "apiVersion"))) {
        snprintf(why, len, "kind or apiVersion not a string");
        return false;
    }
    if (!string_map(json_object_get(meta, "labels"), false) ||
        !string_map(json_object_get(meta, "annotations"), false)) {
        snprintf(why, len, "labels or annotations not a map of strings");
        return false;
    }
    /* The fields each kind has (unknown ones a strict client ignores). */
    const json_t *imm = json_object_get(o, "immutable");
    if (strcmp(kind, "Namespace") && imm && !json_is_boolean(imm) && !json_is_null(imm)) {
        snprintf(why, len, "immutable not a boolean");
        return false;
    }
    if (!strcmp(kind, "ConfigMap") && (!string_map(json_object_get(o, "data"), false) ||
                                       !string_map(json_object_get(o, "binaryData"), true))) {
        snprintf(why, len, "data or binaryData not a map of (base64) strings");
        return false;
    }
    if (!strcmp(kind, "Secret") &&
        (!string_map(json_object_get(o, "data"), true) ||
         !string_map(json_object_get(o, "stringData"), false) ||
         (json_object_get(o, "type") && !json_is_string(json_object_get(o, "type")) &&
          !json_is_null(json_object_get(o, "type"))))) {
        snprintf(why, len, "data, stringData or type of the wrong type");
        return false;
    }
    if (!strcmp(kind, "Namespace")) {
        const json_t *spec = json_object_get(o, "spec"), *st = json_object_get(o, "status");
        if ((spec && !json_is_object(spec) && !json_is_null(spec)) ||
            (st && !json_is_object(st) && !json_is_null(st))) {
            snprintf(why, len, "spec or status not an object");
            return false;
        }
    }
    return true;
}

static int check_store(char *msg, size_t len)
{
    static const char *const kinds[] = {"Namespace", "ConfigMap", "Secret"};
    for (size_t k = 0; k < 3; k++) {
        json_t *list = NULL;
        if (fakeapi_list(srv, "v1", kinds[k], NULL, NULL, &list, NULL) < 0) {
            snprintf(msg, len, "cannot list %s", kinds[k]);
            return -1;
        }
        size_t i;
        json_t *o;
        json_array_foreach(list, i, o)
        {
            char why[128];
            if (!well_typed(o, kinds[k], why, sizeof why)) {
                char *text = json_dumps(o, JSON_COMPACT);
                snprintf(msg, len, "a stored %s is not well-typed (%s): %.300s", kinds[k], why,
                         text ? text : "?");
                free(text);
                json_decref(list);
                return -1;
            }
        }
        json_decref(list);
    }
    return 0;
}

static int check_sentinels(const bool *may, char *msg, size_t len)
{
    for (size_t i = 0; i < NSENT; i++) {
        sentinel *s = &sentinels[i];
        json_t *o = NULL;
        int rc = fakeapi_get(srv, s->av, s->kind, s->ns, s->name, &o, NULL);
        bool same = rc == 0 && !strcmp(rv_of(o), s->rv) &&
                    !json_object_get(json_object_get(o, "metadata"), "deletionTimestamp");
        json_decref(o);
        if (!same && !may[i]) {
            snprintf(msg, len, "%s %s/%s changed or vanished, and no request named it", s->kind,
                     s->ns, s->name);
            return -1;
        }
    }
    return 0;
}

/* What requests created in fz goes, so that the next creates do not
 * collide with it. */
static void sweep(void)
{
    static const char *const kinds[] = {"ConfigMap", "Secret"};
    for (size_t k = 0; k < 2; k++) {
        json_t *list = NULL;
        if (fakeapi_list(srv, "v1", kinds[k], "fz", NULL, &list, NULL) < 0)
            continue;
        size_t i;
        json_t *o;
        json_array_foreach(list, i, o)
        {
            const char *name =
                json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
            if (name && strcmp(name, "t1") && strcmp(name, "t2") && strcmp(name, "s1"))
                fakeapi_delete(srv, "v1", kinds[k], "fz", name, NULL);
        }
        json_decref(list);
    }
    fakeapi_delete(srv, "v1", "Namespace", "", "fz2", NULL);
}

/* Put every sentinel and target back as it was. */
static int restore(void)
{
    fakeapi_fault_clear(srv); /* rules the control endpoint took */
    sweep();
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < NSENT; i++) {
            /* A namespace being deleted must go before it can come back. */
            json_t *o = NULL;
            sentinel *s = &sentinels[i];
            if (fakeapi_get(srv, s->av, s->kind, s->ns, s->name, &o, NULL) == 0 &&
                json_object_get(json_object_get(o, "metadata"), "deletionTimestamp"))
                fakeapi_delete(srv, s->av, s->kind, s->ns, s->name, NULL);
            json_decref(o);
            apply(s->manifest);
        }
        for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
            apply(targets[i]);
    }
    return sentinels_snapshot();
}

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    if (!d)
        return -1;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

/* ---- main ---------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    const char *dir = NULL;
    uint64_t seed = 1;
    long total = 2000, batch = 50;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--requests") && i + 1 < argc)
            total = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
            batch = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "-v"))
            verbose = true;
        else
            dir = argv[i];
    }
    if (!dir || load_corpus(dir) < 0 || batch < 1 || batch > MAX_BATCH) {
        fprintf(stderr, "usage: fuzz_http CORPUS_DIR [--seed N] [--requests N] [--batch N] [-v]\n");
        return 2;
    }
    rng_state = seed * 0x9e3779b97f4a7c15ULL + 1;
    if (fakeapi_start(&(fakeapi_options){.seed = seed, .sync_gc = true}, &srv) < 0) {
        fprintf(stderr, "fuzz_http: the server did not start\n");
        return 2;
    }
    uint16_t port = fakeapi_port(srv);
    int rc = 0;
    char msg[1024] = "";
    if (restore() < 0) {
        fprintf(stderr, "fuzz_http: cannot store the sentinels\n");
        fakeapi_stop(srv);
        return 2;
    }
    int fds_before = count_fds();
    static req sent[MAX_BATCH];
    long done = 0, batches = 0;
    unsigned long by_class[6] = {0}; /* none, 2xx, 3xx, 4xx, 5xx, other */
    while (done < total && rc == 0) {
        long n = total - done < batch ? total - done : batch;
        bool may[NSENT] = {false};
        for (long i = 0; i < n; i++) {
            req *r = &sent[i];
            parse_seed(&corpus[pick(ncorpus)], r);
            mutate(r);
            mark_named(r, may);
            int st = send_req(r, port);
            by_class[st <= 0 ? 0 : st < 300 ? 1 : st < 400 ? 2 : st < 500 ? 3 : st < 600 ? 4 : 5]++;
            if (verbose)
                fprintf(stderr, "%d %s %s (%s)\n", st, r->method, r->path, r->origin);
            if (st >= 500 && st != 503 && st != 504 && !strstr(last_answer, "injected fault")) {
                const char *b = strstr(last_answer, "\r\n\r\n");
                snprintf(msg, sizeof msg, "answered %d to %.15s %.400s: %.400s", st, r->method,
                         r->path, b ? b + 4 : last_answer);
                rc = 1;
                n = i + 1;
                break;
            }
        }
        done += n;
        batches++;
        fakeapi_fault_clear(srv); /* rules the batch added through the control endpoint */
        if (rc == 0 && !server_answers(port)) {
            snprintf(msg, sizeof msg, "the server no longer answers a new client");
            rc = 1;
        }
        if (rc == 0 && check_sentinels(may, msg, sizeof msg) < 0)
            rc = 1;
        if (rc == 0 && check_store(msg, sizeof msg) < 0)
            rc = 1;
        if (rc) {
            fprintf(stderr, "fuzz_http: batch %ld (seed %" PRIu64 "): %s\nits requests:\n", batches,
                    seed, msg);
            for (long i = 0; i < n; i++) {
                char wire[MAX_REQ + 16384];
                size_t len = serialise(&sent[i], wire, sizeof wire, port);
                fprintf(stderr, "--- %s (cut %d)\n%.*s\n", sent[i].origin, sent[i].cut,
                        (int)(len < 600 ? len : 600), wire);
            }
            break;
        }
        if (restore() < 0) {
            snprintf(msg, sizeof msg, "cannot put the sentinels back");
            rc = 1;
        }
    }
    /* Abandoned and half-closed connections are given back. */
    int fds_after = count_fds();
    for (int i = 0; i < 60 && fds_after > fds_before + 8; i++) {
        usleep(100000);
        fds_after = count_fds();
    }
    if (rc == 0 && fds_after > fds_before + 8) {
        fprintf(stderr, "fuzz_http: %d descriptors before, %d after\n", fds_before, fds_after);
        rc = 1;
    }
    printf("{\"seed\":%" PRIu64 ",\"requests\":%ld,\"batches\":%ld,\"no_answer\":%lu,"
           "\"2xx\":%lu,\"3xx\":%lu,\"4xx\":%lu,\"5xx\":%lu,\"fds_before\":%d,\"fds_after\":%d,"
           "\"ok\":%s}\n",
           seed, done, batches, by_class[0], by_class[1], by_class[2], by_class[3], by_class[4],
           fds_before, fds_after, rc ? "false" : "true");
    fakeapi_stop(srv);
    for (size_t i = 0; i < ncorpus; i++)
        free(corpus[i].text);
    return rc;
}
