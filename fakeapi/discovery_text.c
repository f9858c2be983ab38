/*
 * discovery_text.c - the resource list of a group-version as the text
 * fakeapi sends (see discovery.h), built and written once per process for
 * group-versions of built-in kinds only.
 *
 * DESIGN: the built-in resources are made once per process and shared by
 * every registry (registry.c), so the list of a group-version that holds
 * them alone is the same document on every server: it is kept (memo) with
 * the resources it was made of, and served again while a registry's
 * group-version holds exactly those. A group-version with a CRD's kind is
 * built afresh on every request, as before. One mutex guards the memo,
 * held only to look up or add an entry; entries live until the process
 * ends (at most one per built-in group-version).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "discovery.h"
#include "registry.h"

typedef struct memo_text {
    struct memo_text *next;
    fakeapi__resource **res; /* the built-in resources it lists, in order */
    size_t n;
    char *text;
    size_t len;
} memo_text;

static pthread_mutex_t memo_mu = PTHREAD_MUTEX_INITIALIZER;
static memo_text *memo_head;

/* The resources of group/version in all (n): their count, or 0 if one of
 * them is not built in (or there are more than cap). */
static size_t builtin_members(fakeapi__resource **all, size_t n, const char *group,
                              const char *version, fakeapi__resource **out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        fakeapi__resource *r = all[i];
        if (strcmp(r->group, group) != 0 || strcmp(r->version, version) != 0)
            continue;
        if (r->crd_name || k == cap)
            return 0;
        out[k++] = r;
    }
    return k;
}

static char *copy_text(const char *text, size_t len)
{
    char *c = malloc(len + 1);
    if (c)
        memcpy(c, text, len + 1);
    return c;
}

static char *memo_get(fakeapi__resource **res, size_t n, size_t *len)
{
    char *hit = NULL;
    pthread_mutex_lock(&memo_mu);
    for (memo_text *m = memo_head; m; m = m->next) {
        if (m->n == n && !memcmp(m->res, res, n * sizeof *res)) {
            hit = copy_text(m->text, m->len);
            *len = m->len;
            break;
        }
    }
    pthread_mutex_unlock(&memo_mu);
    return hit;
}

/* Best effort: nothing is kept when memory is short. */
static void memo_put(fakeapi__resource **res, size_t n, const char *text, size_t len)
{
    memo_text *m = calloc(1, sizeof *m);
    if (!m || !(m->res = malloc(n * sizeof *res)) || !(m->text = copy_text(text, len))) {
        if (m)
            free(m->res);
        free(m);
        return;
    }
    memcpy(m->res, res, n * sizeof *res);
    m->n = n;
    m->len = len;
    pthread_mutex_lock(&memo_mu);
    m->next = memo_head;
    memo_head = m;
    pthread_mutex_unlock(&memo_mu);
}

char *fakeapi__disc_resources_text(fakeapi__registry *reg, const char *group, const char *version,
                                   size_t *len)
{
    if (!group || !version)
        return NULL;
    size_t n = 0, k = 0;
    fakeapi__resource **all = fakeapi__registry_all(reg, &n);
    fakeapi__resource **mine = all ? malloc((n ? n : 1) * sizeof *mine) : NULL;
    char *text = NULL;
    if (mine && (k = builtin_members(all, n, group, version, mine, n)) > 0)
        text = memo_get(mine, k, len);
    if (!text) {
        json_t *doc = fakeapi__disc_resources(reg, group, version);
        text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
        json_decref(doc);
        if (text) {
            *len = strlen(text);
            if (k > 0)
                memo_put(mine, k, text, *len);
        }
    }
    free(mine);
    if (all)
        fakeapi__registry_release(all, n);
    return text;
}
