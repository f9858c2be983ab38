/*
 * main.c - the `scenario` program: the example controllers registered,
 * then libscenario's command line (scn_main).
 */
#include <pthread.h>
#include <stdlib.h>

#include "scn/run.h"

/*
 * A run starts and ends a dozen threads or more (managers, informers,
 * workers): with stacks small enough that glibc's cache of freed stacks
 * (40 MiB) keeps them all, the next run's threads reuse them instead of
 * mapping and faulting in fresh ones (a seed of singleton-fixed costs
 * half the CPU). 1 MiB is far more than libctrl, fakeapi (called
 * in-process) and the example controllers use; SCENARIO_STACK_KB sets
 * another size (for controllers of a plugin that need more). Sanitizer
 * builds, whose frames are larger, keep the default.
 */
#define THREAD_STACK ((size_t)1 << 20)

static void thread_stacks(void)
{
#if defined(__SANITIZE_ADDRESS__)
    if (!getenv("SCENARIO_STACK_KB"))
        return;
#endif
    size_t want = THREAD_STACK;
    const char *env = getenv("SCENARIO_STACK_KB");
    if (env && atol(env) > 0)
        want = (size_t)atol(env) << 10;
    pthread_attr_t a;
    size_t size = 0;
    if (pthread_getattr_default_np(&a) != 0)
        return;
    if (pthread_attr_getstacksize(&a, &size) == 0 && size > want &&
        pthread_attr_setstacksize(&a, want) == 0)
        pthread_setattr_default_np(&a);
    pthread_attr_destroy(&a);
}

int main(int argc, char **argv)
{
    thread_stacks();
    scn_register_examples();
    return scn_main(argc, argv);
}
