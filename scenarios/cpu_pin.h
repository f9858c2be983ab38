/*
 * cpu_pin.h - keep a run on the CPU it started on.
 *
 * A run under the scheduler moves one thread at a time, so it never needs a
 * second CPU, but every turn it gives is a wake-up of another thread. When
 * the two threads sit on different CPUs that wake-up is an interprocessor
 * interrupt, which on a virtual machine costs about twice a wake-up on the
 * same CPU: a condition-variable round trip between two threads took 23 us
 * of CPU across two CPUs and 11.5 us on one, and pinning took 20-25% off
 * the CPU time of a seed (docs/benchmarks.md).
 *
 * scn_run pins its driver thread to the CPU it is running on when the run
 * starts; every thread the run creates (managers, fakeapi's) inherits the
 * pin, and the driver's own mask is put back when the run ends. Between
 * runs the thread is free again, so the kernel can move the next run
 * elsewhere: two explore workers that happened to start on one CPU are
 * spread by the next seed, as an idle CPU pulls a waiting thread. The pin
 * never changes what a seed does: the scheduler's choices come from the
 * seed alone. SCENARIO_PIN=0 in the environment turns it off.
 *
 * Threads: per calling thread (its affinity only); reentrant.
 */
#ifndef SCN_CPU_PIN_H
#define SCN_CPU_PIN_H

#include <sched.h>
#include <stdbool.h>

typedef struct scn__cpu_pin {
    bool pinned;
    cpu_set_t saved; /* the thread's mask before the pin */
} scn__cpu_pin;

/* Pin the calling thread to the CPU it runs on, unless turned off or only
 * one CPU is allowed anyway. p->pinned says whether it did. */
void scn__cpu_pin_here(scn__cpu_pin *p);
/* Give the calling thread its mask back (nothing when it was not pinned). */
void scn__cpu_unpin(scn__cpu_pin *p);

#endif
