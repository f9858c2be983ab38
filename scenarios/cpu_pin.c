/*
 * cpu_pin.c - keep a run on the CPU it started on (see cpu_pin.h).
 */
#include "cpu_pin.h"

#include <stdlib.h>
#include <string.h>

void scn__cpu_pin_here(scn__cpu_pin *p)
{
    p->pinned = false;
    p->batch = false;
    const char *env = getenv("SCENARIO_PIN");
    if (env && !strcmp(env, "0"))
        return;
    struct sched_param none = {0};
    if (sched_getscheduler(0) == SCHED_OTHER)
        p->batch = sched_setscheduler(0, SCHED_BATCH, &none) == 0;
    if (sched_getaffinity(0, sizeof p->saved, &p->saved) < 0 || CPU_COUNT(&p->saved) < 2)
        return;
    int cpu = sched_getcpu();
    if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &p->saved))
        return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    p->pinned = sched_setaffinity(0, sizeof one, &one) == 0;
}

void scn__cpu_unpin(scn__cpu_pin *p)
{
    if (p->pinned)
        sched_setaffinity(0, sizeof p->saved, &p->saved);
    if (p->batch) {
        struct sched_param none = {0};
        sched_setscheduler(0, SCHED_OTHER, &none);
    }
    p->pinned = false;
    p->batch = false;
}
