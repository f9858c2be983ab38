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
 * The run's threads also take the SCHED_BATCH policy (the same share of
 * the CPU as before, no privilege needed): a thread woken for the turn
 * then waits until its waker has gone to sleep instead of preempting it.
 * Preempted, the waker still held the scheduler's mutex, so the woken
 * thread slept again on that mutex and the waker had to wake it a second
 * time: three switches a hand-off instead of one. SCHED_BATCH halved the
 * context switches of a seed and took 25-30% off its CPU time. The
 * calling thread's policy is given back with its mask.
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
    bool batch;      /* SCHED_OTHER was changed to SCHED_BATCH */
} scn__cpu_pin;

/* Pin the calling thread to the CPU it runs on, unless turned off or only
 * one CPU is allowed anyway (p->pinned says whether it did), and give it
 * SCHED_BATCH if its policy is SCHED_OTHER (p->batch), unless turned off. */
void scn__cpu_pin_here(scn__cpu_pin *p);
/* Give the calling thread its mask and policy back. */
void scn__cpu_unpin(scn__cpu_pin *p);

/* For one of `slots` worker processes started together (explore --jobs,
 * hunt --jobs): keep the calling process on the slot-th CPU it may use, so
 * that the workers' runs, each pinned where it starts, are spread one to a
 * CPU and cannot settle on one CPU together. Only when there are at least
 * as many CPUs as slots, slots > 1, and SCENARIO_PIN is not 0. Call in the
 * worker before it starts a thread. Returns the CPU, or -1 (left alone). */
int scn__cpu_pin_slot(int slot, int slots);

#endif
