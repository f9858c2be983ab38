/*
 * cpu_pin.c - keep a run on the CPU it started on (see cpu_pin.h).
 */
#include "cpu_pin.h"

#include <stdlib.h>
#include <string.h>

static bool turned_off(void)
{
    const char *env = getenv("SCENARIO_PIN");
    return env && !strcmp(env, "0");
}

static bool pin_to(int cpu)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return sched_setaffinity(0, sizeof one, &one) == 0;
}

void scn__cpu_pin_here(scn__cpu_pin *p)
{
    p->pinned = false;
    p->batch = false;
    if (turned_off())
        return;
    struct sched_param none = {0};
    if (sched_getscheduler(0) == SCHED_OTHER)
        p->batch = sched_setscheduler(0, SCHED_BATCH, &none) == 0;
    if (sched_getaffinity(0, sizeof p->saved, &p->saved) < 0 || CPU_COUNT(&p->saved) < 2)
        return;
    int cpu = sched_getcpu();
    if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &p->saved))
        return;
    p->pinned = pin_to(cpu);
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

int scn__cpu_pin_slot(int slot, int slots)
{
    cpu_set_t allowed;
    if (turned_off() || slots < 2 || slot < 0 ||
        sched_getaffinity(0, sizeof allowed, &allowed) < 0 || CPU_COUNT(&allowed) < slots)
        return -1;
    int want = slot % CPU_COUNT(&allowed);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &allowed) && want-- == 0)
            return pin_to(cpu) ? cpu : -1;
    return -1;
}
