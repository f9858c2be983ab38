/*
 * expectations.c - pending creations and deletions per owner
 * (expectations.h).
 *
 * DESIGN: one mutex over one JSON object, key -> [adds, dels, since_ns].
 * Leaf lock; nothing is called while it is held.
 */
#include "expectations.h"

#include <pthread.h>
#include <stdlib.h>

#include <jansson.h>

#define DEFAULT_TTL (5LL * 60 * 1000000000LL)

struct kc_expect {
    pthread_mutex_t mu;
    json_t *table;
    int64_t ttl;
};

kc_expect *kc__expect_new(int64_t ttl_ns)
{
    kc_expect *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->table = json_object();
    if (!e->table) {
        free(e);
        return NULL;
    }
    pthread_mutex_init(&e->mu, NULL);
    e->ttl = ttl_ns > 0 ? ttl_ns : DEFAULT_TTL;
    return e;
}

void kc__expect_free(kc_expect *e)
{
    if (!e)
        return;
    json_decref(e->table);
    pthread_mutex_destroy(&e->mu);
    free(e);
}

void kc__expect_set(kc_expect *e, const char *key, int adds, int dels, int64_t now_ns)
{
    pthread_mutex_lock(&e->mu);
    json_object_set_new(e->table, key, json_pack("[i,i,I]", adds, dels, (json_int_t)now_ns));
    pthread_mutex_unlock(&e->mu);
}

static void lower(kc_expect *e, const char *key, size_t which)
{
    pthread_mutex_lock(&e->mu);
    json_t *v = json_object_get(e->table, key);
    if (v) {
        json_int_t n = json_integer_value(json_array_get(v, which));
        json_array_set_new(v, which, json_integer(n - 1));
    }
    pthread_mutex_unlock(&e->mu);
}

void kc__expect_observed_add(kc_expect *e, const char *key)
{
    lower(e, key, 0);
}

void kc__expect_observed_del(kc_expect *e, const char *key)
{
    lower(e, key, 1);
}

bool kc__expect_satisfied(kc_expect *e, const char *key, int64_t now_ns)
{
    pthread_mutex_lock(&e->mu);
    json_t *v = json_object_get(e->table, key);
    bool ok = !v ||
              (json_integer_value(json_array_get(v, 0)) <= 0 &&
               json_integer_value(json_array_get(v, 1)) <= 0) ||
              now_ns - json_integer_value(json_array_get(v, 2)) > e->ttl;
    pthread_mutex_unlock(&e->mu);
    return ok;
}

void kc__expect_delete(kc_expect *e, const char *key)
{
    pthread_mutex_lock(&e->mu);
    json_object_del(e->table, key);
    pthread_mutex_unlock(&e->mu);
}
