/*
 * builder.c - the controller builder (ctrl/controller.h), as
 * controller-runtime's builder: For / Owns / Watches / WithEventFilter /
 * Named / WithOptions / Complete.
 *
 * A builder only records; complete() assembles a controller from the
 * manager's parts (cache informers, a client of its own naming the
 * controller in its User-Agent, metrics, clock, hooks, logger, seed) and
 * hands it to the manager as a runnable (start = ctrl__controller_run; the
 * manager owns and frees it from then on).
 *
 * The first error is kept and returned by complete(), so calls chain
 * without checks. Builders belong to one thread.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "controller_int.h"
#include "ctrl/manager.h"
#include "manager_int.h"

#define MAX_BUILDER_WATCHES 64

typedef struct bwatch {
    char *api_version, *kind;
    ctrl_handler *h; /* NULL for Owns: built at complete() */
    ctrl_predicate *p;
} bwatch;

struct ctrl_builder {
    ctrl_manager *mgr;
    int err;
    char *api_version, *kind;
    ctrl_predicate *for_pred;
    bwatch watches[MAX_BUILDER_WATCHES];
    size_t nwatches;
    ctrl_predicate *filter;
    char *name;
    ctrl_controller_options opts;
    void (*user_free)(void *user);
};

/* Returned when even a builder cannot be allocated: every call keeps it
 * and complete() reports CTRL_ERR_NOMEM. */
static ctrl_builder oom_builder = {.err = CTRL_ERR_NOMEM};

static void fail(ctrl_builder *b, int rc)
{
    if (!b->err)
        b->err = rc;
}

/* a and b, either of which may be absent (NULL). */
static ctrl_predicate *both(ctrl_predicate *a, ctrl_predicate *b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    return ctrl_pred_and(a, b);
}

ctrl_builder *ctrl_builder_for(ctrl_manager *mgr, const char *api_version, const char *kind)
{
    ctrl_builder *b = calloc(1, sizeof(*b));
    if (!b)
        return &oom_builder;
    b->mgr = mgr;
    if (!mgr || !api_version || !kind || !*kind) {
        fail(b, CTRL_ERR_ARG);
        return b;
    }
    b->api_version = strdup(api_version);
    b->kind = strdup(kind);
    if (!b->api_version || !b->kind)
        fail(b, CTRL_ERR_NOMEM);
    return b;
}

ctrl_builder *ctrl_builder_with_predicates(ctrl_builder *b, ctrl_predicate *p)
{
    if (b == &oom_builder) {
        ctrl_predicate_free(p);
        return b;
    }
    if (!p)
        fail(b, CTRL_ERR_ARG); /* a malformed (or unallocated) predicate */
    else
        b->for_pred = both(b->for_pred, p);
    return b;
}

static ctrl_builder *add_watch(ctrl_builder *b, const char *api_version, const char *kind,
                               ctrl_handler *h, ctrl_predicate *p)
{
    if (b == &oom_builder || !api_version || !kind || !*kind ||
        b->nwatches == MAX_BUILDER_WATCHES) {
        if (b != &oom_builder)
            fail(b, CTRL_ERR_ARG);
        ctrl_handler_free(h);
        ctrl_predicate_free(p);
        return b;
    }
    bwatch *w = &b->watches[b->nwatches++];
    *w = (bwatch){.api_version = strdup(api_version), .kind = strdup(kind), .h = h, .p = p};
    if (!w->api_version || !w->kind)
        fail(b, CTRL_ERR_NOMEM);
    return b;
}

ctrl_builder *ctrl_builder_owns(ctrl_builder *b, const char *api_version, const char *kind)
{
    return add_watch(b, api_version, kind, NULL, NULL);
}

ctrl_builder *ctrl_builder_owns_with(ctrl_builder *b, const char *api_version, const char *kind,
                                     ctrl_predicate *p)
{
    if (!p && b != &oom_builder)
        fail(b, CTRL_ERR_ARG);
    return add_watch(b, api_version, kind, NULL, p);
}

ctrl_builder *ctrl_builder_watches(ctrl_builder *b, const char *api_version, const char *kind,
                                   ctrl_handler *h, ctrl_predicate *p)
{
    if (!h && b != &oom_builder)
        fail(b, CTRL_ERR_ARG);
    if (!h) {
        ctrl_predicate_free(p);
        return b;
    }
    return add_watch(b, api_version, kind, h, p);
}

ctrl_builder *ctrl_builder_with_event_filter(ctrl_builder *b, ctrl_predicate *p)
{
    if (b == &oom_builder) {
        ctrl_predicate_free(p);
        return b;
    }
    if (!p)
        fail(b, CTRL_ERR_ARG);
    else
        b->filter = both(b->filter, p);
    return b;
}

ctrl_builder *ctrl_builder_named(ctrl_builder *b, const char *name)
{
    if (b == &oom_builder)
        return b;
    if (!name || !*name) {
        fail(b, CTRL_ERR_ARG);
        return b;
    }
    free(b->name);
    b->name = strdup(name);
    if (!b->name)
        fail(b, CTRL_ERR_NOMEM);
    return b;
}

ctrl_builder *ctrl_builder_with_options(ctrl_builder *b, const ctrl_controller_options *o)
{
    if (b != &oom_builder && o)
        b->opts = *o;
    return b;
}

ctrl_builder *ctrl_builder_with_user_free(ctrl_builder *b, void (*user_free)(void *user))
{
    if (b != &oom_builder)
        b->user_free = user_free;
    return b;
}

static void builder_free(ctrl_builder *b)
{
    if (b == &oom_builder)
        return;
    for (size_t i = 0; i < b->nwatches; i++) {
        free(b->watches[i].api_version);
        free(b->watches[i].kind);
        ctrl_handler_free(b->watches[i].h);
        ctrl_predicate_free(b->watches[i].p);
    }
    ctrl_predicate_free(b->for_pred);
    ctrl_predicate_free(b->filter);
    free(b->api_version);
    free(b->kind);
    free(b->name);
    free(b);
}

/* The builder's options over the manager's defaults, field by field. */
static ctrl_controller_options merge(const ctrl_controller_options *dflt,
                                     const ctrl_controller_options *o)
{
    ctrl_controller_options r = dflt ? *dflt : (ctrl_controller_options){0};
    if (o->max_concurrent_reconciles)
        r.max_concurrent_reconciles = o->max_concurrent_reconciles;
    if (o->base_delay_ns)
        r.base_delay_ns = o->base_delay_ns;
    if (o->max_delay_ns)
        r.max_delay_ns = o->max_delay_ns;
    if (o->slow_reconcile_ns)
        r.slow_reconcile_ns = o->slow_reconcile_ns;
    r.no_leader_election = r.no_leader_election || o->no_leader_election;
    r.no_priority_queue = r.no_priority_queue || o->no_priority_queue;
    if (o->reconcile_timeout_ns)
        r.reconcile_timeout_ns = o->reconcile_timeout_ns;
    r.skip_name_validation = r.skip_name_validation || o->skip_name_validation;
    return r;
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* One watch assembled: the informer, the handler, the predicate with the
 * event filter. Everything is taken over from the builder. */
typedef struct plan {
    ctrl_informer *inf;
    ctrl_handler *h;
    ctrl_predicate *p;
} plan;

/* The cache as a client reader: only kinds it already holds, once their
 * informer has synced (before that its store is partial: a get would say
 * NotFound for an object that exists, so the read goes to the server;
 * controller-runtime blocks the read until the sync instead, which a
 * turn-based scheduler could not let happen). Callers change what they get
 * before they write it back: the cache's reads are copies of the caller's
 * own already (ctrl/cache.h). */
static ctrl_informer *synced_informer(ctrl_cache *cache, const char *api_version, const char *kind)
{
    ctrl_informer *inf;
    if (!ctrl_cache_has(cache, api_version, kind) ||
        ctrl_cache_informer(cache, api_version, kind, NULL, &inf, NULL) < 0 ||
        !ctrl_informer_has_synced(inf))
        return NULL;
    return inf;
}

static int cache_get(void *ud, const char *api_version, const char *kind, const char *ns,
                     const char *name, json_t **out)
{
    ctrl_informer *inf = synced_informer(ud, api_version, kind);
    return inf ? ctrl_informer_get(inf, ns ? ns : "", name, out) : 1;
}

static int cache_get_shared(void *ud, const char *api_version, const char *kind, const char *ns,
                            const char *name, json_t **out)
{
    ctrl_informer *inf = synced_informer(ud, api_version, kind);
    return inf ? ctrl_informer_get_shared(inf, ns ? ns : "", name, out) : 1;
}

static int cache_list(void *ud, const char *api_version, const char *kind, const char *ns,
                      const char *label_selector, json_t **items)
{
    ctrl_informer *inf = synced_informer(ud, api_version, kind);
    return inf ? ctrl_informer_list(inf, ns && *ns ? ns : NULL, label_selector, items) : 1;
}

int ctrl_builder_complete(ctrl_builder *b, ctrl_reconcile_fn fn, void *user)
{
    if (b == &oom_builder)
        return CTRL_ERR_NOMEM; /* (no builder: no destructor was recorded) */
    plan plans[MAX_BUILDER_WATCHES + 1];
    size_t nplans = 0;
    void (*user_free)(void *) = b == &oom_builder ? NULL : b->user_free;
    ctrl__controller *c = NULL;
    ctrl_client *client = NULL;
    char *name = NULL, *ua = NULL;
    int rc = b->err;
    if (!rc && (!b->kind || !fn))
        rc = CTRL_ERR_ARG;
    if (rc < 0)
        goto out;

    ctrl_manager *mgr = b->mgr;
    const ctrl_manager_options *mo = ctrl_manager_options_get(mgr);
    ctrl_controller_options opts = merge(mo ? &mo->controller_defaults : NULL, &b->opts);
    name = b->name ? strdup(b->name) : strdup(b->kind);
    if (!name) {
        rc = CTRL_ERR_NOMEM;
        goto out;
    }
    if (!b->name)
        for (char *p = name; *p; p++)
            *p = (char)tolower((unsigned char)*p);

    /* The controller's own client: the manager's connections, its own
     * User-Agent ("<base>/<controller>"), for server-side rules and audit. */
    ctrl_client *parent = ctrl_manager_client(mgr);
    ctrl_cache *cache = ctrl_manager_cache(mgr);
    if (!parent || !cache) {
        rc = CTRL_ERR_ARG;
        goto out;
    }
    if (asprintf(&ua, "%s/%s", ctrl_client_user_agent(parent), name) < 0) {
        ua = NULL;
        rc = CTRL_ERR_NOMEM;
        goto out;
    }
    rc = ctrl_client_new_for(parent, ua, &client, NULL);
    if (rc < 0)
        goto out;
    /* Reads of the kinds the cache holds come from it (controller-runtime's
     * default client); the api_reader stays live. */
    ctrl_client_set_reader(client, &(ctrl_reader){.get = cache_get,
                                                  .list = cache_list,
                                                  .ud = cache,
                                                  .get_shared = cache_get_shared});

    /* Resolve every informer first: nothing is registered until all exist. */
    rc = ctrl_cache_informer(cache, b->api_version, b->kind, NULL, &plans[0].inf, NULL);
    if (rc < 0)
        goto out;
    plans[0].h = ctrl_handler_for_object();
    plans[0].p = both(b->filter ? ctrl_predicate_ref(b->filter) : NULL, b->for_pred);
    b->for_pred = NULL;
    nplans = 1;
    if (!plans[0].h) {
        rc = CTRL_ERR_NOMEM;
        goto out;
    }
    /* Owners' requests carry the owner's namespace: none when the For kind
     * is cluster-scoped (asked once; a failure keeps the default, the
     * owned object's namespace). */
    bool owner_cluster_scoped = false;
    for (size_t i = 0; i < b->nwatches; i++) {
        if (!b->watches[i].h) {
            ctrl_resource_info ri;
            if (ctrl_client_resource_for(parent, b->api_version, b->kind, &ri, NULL) == 0)
                owner_cluster_scoped = !ri.namespaced;
            break;
        }
    }
    for (size_t i = 0; i < b->nwatches; i++) {
        bwatch *w = &b->watches[i];
        plan *pl = &plans[nplans];
        rc = ctrl_cache_informer(cache, w->api_version, w->kind, NULL, &pl->inf, NULL);
        if (rc < 0)
            goto out;
        if (w->h) {
            pl->h = w->h;
            w->h = NULL;
        } else {
            pl->h = ctrl_handler_for_owner(b->api_version, b->kind, true);
            ctrl__handler_set_owner_cluster_scoped(pl->h, owner_cluster_scoped);
        }
        pl->p = both(b->filter ? ctrl_predicate_ref(b->filter) : NULL, w->p);
        w->p = NULL;
        nplans++;
        if (!pl->h) {
            rc = CTRL_ERR_NOMEM;
            goto out;
        }
    }

    const ctrl__controller_config cfg = {
        .name = name,
        .reconcile = fn,
        .user = user,
        .options = opts,
        .cache = cache,
        .client = client,
        /* The manager's own client, which reads from the server
         * (controller-runtime's mgr.GetAPIReader()). */
        .api_reader = parent,
        .metrics = ctrl_manager_metrics(mgr),
        .clock = ctrl__manager_clock(mgr),
        .hooks = ctrl__manager_hooks(mgr),
        .logger = ctrl__manager_logger(mgr),
        .seed = ctrl__manager_seed(mgr) ^ hash_str(name),
        .own_client = true,
        .manager = mgr,
    };
    rc = ctrl__controller_new(&cfg, &c);
    if (rc < 0)
        goto out;
    client = NULL; /* the controller owns it now */
    ctrl__controller_set_user_free(c, user_free);
    user_free = NULL; /* and the user data: freed with the controller */

    /* Duplicate names are refused by the manager (runnable names are unique). */
    ctrl_runnable r = {
        .name = ctrl__controller_name(c),
        .start = ctrl__controller_run,
        .stop = ctrl__controller_halt,
        .ud = c,
        .needs_leader = !opts.no_leader_election,
    };
    ctrl__controller_set_configuring(c, true); /* its run waits for the watches */
    rc = ctrl_manager_add(mgr, &r);
    if (rc < 0) {
        ctrl__controller_free(c);
        goto out;
    }
    /* From here the manager owns c; a failing watch leaves it running
     * without that watch and the error is returned. */
    for (size_t i = 0; i < nplans; i++) {
        int wrc = ctrl__controller_watch(c, plans[i].inf, plans[i].h, plans[i].p, NULL);
        plans[i].h = NULL;
        plans[i].p = NULL;
        if (wrc < 0 && rc == 0)
            rc = wrc;
    }
    ctrl__controller_set_configuring(c, false);
out:
    for (size_t i = 0; i < nplans; i++) {
        ctrl_handler_free(plans[i].h);
        ctrl_predicate_free(plans[i].p);
    }
    ctrl_client_free(client);
    free(ua);
    free(name);
    builder_free(b);
    if (user_free && user)
        user_free(user);
    return rc;
}
