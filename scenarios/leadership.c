/*
 * leadership.c - the singleLeader invariant over a run's trace (see
 * leadership.h).
 */
#include "leadership.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#define ID_LEN 256

struct scn__leadership {
    const scn_cond *c;
    int64_t epoch_ns;
    FILE *f;
    char *line;
    size_t cap;
    char lease_path[1024]; /* the Lease's own path */
    char coll_path[512];   /* its namespace's leases: where it is created */
    bool deleted;          /* the last write of the Lease deleted it */
    char holder[ID_LEN];   /* the identity of the last replica that wrote it; "" none */
    int holder_replica;
    int64_t since;   /* when holder first wrote it (of this hold) */
    int64_t renewed; /* holder's last write of it */
    unsigned long changes;
};

int scn__leadership_new(const scn_cond *c, const char *trace_path, int64_t epoch_ns,
                        scn__leadership **out)
{
    scn__leadership *lt = calloc(1, sizeof *lt);
    if (!lt)
        return SCN_ERR_NOMEM;
    if (!(lt->f = fopen(trace_path, "r"))) {
        free(lt);
        return SCN_ERR_IO;
    }
    lt->c = c;
    lt->epoch_ns = epoch_ns;
    lt->holder_replica = -1;
    snprintf(lt->coll_path, sizeof lt->coll_path,
             "/apis/coordination.k8s.io/v1/namespaces/%s/leases", c->ns);
    snprintf(lt->lease_path, sizeof lt->lease_path, "%s/%s", lt->coll_path, c->name);
    *out = lt;
    return 0;
}

void scn__leadership_free(scn__leadership *lt)
{
    if (!lt)
        return;
    fclose(lt->f);
    free(lt->line);
    free(lt);
}

unsigned long scn__leadership_changes(const scn__leadership *lt)
{
    return lt ? lt->changes : 0;
}

bool scn__client_is(const char *base, const char *client, char *identity, size_t len)
{
    size_t n = strlen(base);
    if (strncmp(client, base, n) != 0)
        return false;
    const char *end = client + n;
    if (end[0] == '.' && end[1] == 'r' && end[2] >= '0' && end[2] <= '9') {
        end += 2;
        while (*end >= '0' && *end <= '9')
            end++;
    }
    if (*end != '\0' && *end != '/')
        return false;
    snprintf(identity, len, "%.*s", (int)(end - client), client);
    return true;
}

static bool is_write(const char *verb)
{
    static const char *const writes[] = {"create", "update",           "patch",
                                         "delete", "deletecollection", NULL};
    for (size_t i = 0; writes[i]; i++)
        if (strcmp(verb, writes[i]) == 0)
            return true;
    return false;
}

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static double secs(const scn__leadership *lt, int64_t t)
{
    return (double)(t - lt->epoch_ns) / 1e9;
}

/* A write of the Lease by the replica with this identity. */
static void lease_write(scn__leadership *lt, const char *verb, const char *id, int replica,
                        int64_t t)
{
    if (strcmp(verb, "delete") == 0 || strcmp(verb, "deletecollection") == 0) {
        lt->holder[0] = '\0';
        lt->holder_replica = -1;
        lt->deleted = true;
        return;
    }
    if (strcmp(lt->holder, id) != 0) {
        if (lt->holder[0] || lt->changes || lt->deleted)
            lt->changes++;
        snprintf(lt->holder, sizeof lt->holder, "%s", id);
        lt->holder_replica = replica;
        lt->since = t;
    }
    lt->deleted = false;
    lt->renewed = t;
}

/* Why the write at t by id was not the leader's. */
static void why_not(const scn__leadership *lt, const char *id, char *buf, size_t len)
{
    const scn_cond *c = lt->c;
    if (lt->deleted)
        snprintf(buf, len, "the Lease had been deleted");
    else if (!lt->holder[0])
        snprintf(buf, len, "no replica had written the Lease yet");
    else if (strcmp(lt->holder, id) == 0)
        snprintf(buf, len, "its hold ran out at %.3fs (last renewed at %.3fs, leaseDuration %.3fs)",
                 secs(lt, lt->renewed + c->lease_ns), secs(lt, lt->renewed),
                 (double)c->lease_ns / 1e9);
    else
        snprintf(buf, len,
                 "the Lease was held by replica %d (%s) since %.3fs, last renewed at %.3fs",
                 lt->holder_replica, lt->holder, secs(lt, lt->since), secs(lt, lt->renewed));
}

/* One request line: false (and msg) if it breaks the invariant. */
static bool request(scn__leadership *lt, const json_t *j, scn__replica_of_fn who, void *ud,
                    char *msg, size_t len)
{
    const char *client = str(j, "client"), *verb = str(j, "verb"), *path = str(j, "path");
    json_int_t code = json_integer_value(json_object_get(j, "code"));
    int64_t t = (int64_t)json_integer_value(json_object_get(j, "t"));
    char id[ID_LEN], why[512];

    if (code < 200 || code > 299 || !is_write(verb))
        return true;
    int replica = who(ud, client, id, sizeof id);
    if (replica < 0)
        return true;
    if (strcmp(path, lt->lease_path) == 0 ||
        (strcmp(path, lt->coll_path) == 0 &&
         (strcmp(verb, "create") == 0 || strcmp(verb, "deletecollection") == 0))) {
        lease_write(lt, verb, id, replica, t);
        return true;
    }
    if (!lt->deleted && strcmp(lt->holder, id) == 0 && t < lt->renewed + lt->c->lease_ns)
        return true;
    why_not(lt, id, why, sizeof why);
    snprintf(msg, len,
             "replica %d (%s) wrote without holding Lease %s/%s: %s %s %s -> %d at %.3fs "
             "(client %s); %s",
             replica, id, lt->c->ns, lt->c->name, verb, str(j, "method"), path, (int)code,
             secs(lt, t), client, why);
    return false;
}

bool scn__leadership_check(scn__leadership *lt, scn__replica_of_fn who, void *ud, char *msg,
                           size_t len)
{
    if (msg && len)
        msg[0] = '\0';
    for (;;) {
        long pos = ftell(lt->f);
        ssize_t n = getline(&lt->line, &lt->cap, lt->f);
        if (n <= 0 || lt->line[n - 1] != '\n') {
            /* the end for now: the server may write more, or finish a line */
            if (n > 0 && pos >= 0)
                fseek(lt->f, pos, SEEK_SET);
            clearerr(lt->f);
            return true;
        }
        if (!strstr(lt->line, "\"kind\":\"request\""))
            continue;
        json_t *j = json_loadb(lt->line, (size_t)n, 0, NULL);
        if (!j)
            continue;
        bool ok = request(lt, j, who, ud, msg, len);
        json_decref(j);
        if (!ok)
            return false;
    }
}
