/*
 * spawn.c - see spawn_int.h.
 */
#include "spawn_int.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct spawn_arg {
    const ctrl_hooks *hooks;
    /* Whole, as scenarios/scheduler.c keeps it: a scenario's scheduler
     * matches watches to informer threads by name ("informer <user agent>
     * <apiVersion>/<Kind>"). 64 bytes cut longer names short, and their
     * watches never got an event released. */
    char name[256];
    void *(*fn)(void *);
    void *arg;
} spawn_arg;

static void *spawn_main(void *p)
{
    spawn_arg a = *(spawn_arg *)p;
    free(p);
    if (a.hooks && a.hooks->thread_start)
        a.hooks->thread_start(a.hooks->ud, a.name);
    void *ret = a.fn(a.arg);
    if (a.hooks && a.hooks->thread_exit)
        a.hooks->thread_exit(a.hooks->ud);
    return ret;
}

int ctrl__spawn(pthread_t *t, const ctrl_hooks *hooks, const char *name, void *(*fn)(void *),
                void *arg)
{
    spawn_arg *a = malloc(sizeof *a);
    if (!a)
        return 12; /* ENOMEM */
    a->hooks = hooks;
    snprintf(a->name, sizeof a->name, "%s", name ? name : "thread");
    a->fn = fn;
    a->arg = arg;
    if (hooks && hooks->thread_spawn)
        hooks->thread_spawn(hooks->ud, +1);
    int rc = pthread_create(t, NULL, spawn_main, a);
    if (rc != 0) {
        free(a);
        if (hooks && hooks->thread_spawn)
            hooks->thread_spawn(hooks->ud, -1);
    }
    return rc;
}

int ctrl__join(const ctrl_hooks *hooks, pthread_t t)
{
    if (hooks && hooks->join)
        hooks->join(hooks->ud, &t, true);
    int rc = pthread_join(t, NULL);
    if (hooks && hooks->join)
        hooks->join(hooks->ud, &t, false);
    return rc;
}
