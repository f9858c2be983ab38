/*
 * signal.c - ctrl_signal_context: SIGINT and SIGTERM as a stop context
 * (controller-runtime's SetupSignalHandler).
 *
 * DESIGN
 * - The first call blocks SIGINT and SIGTERM in the calling thread (and so
 *   in every thread it creates afterwards) and starts one detached thread
 *   that takes them with sigwait: no code runs in a signal handler. Call
 *   it from main before any thread is created, as in Go; a thread created
 *   earlier that does not block them may still receive them and die.
 * - The first signal trips the context (every manager started with it
 *   stops gracefully); the second exits the process with status 1 at once.
 *   That exit is the one place libctrl ends the process, because it is
 *   what the user asked for by pressing Ctrl-C twice.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "manager_int.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static ctrl_stop *sig_stop;
static sigset_t sig_set;

static void *wait_signals(void *arg)
{
    (void)arg;
    int count = 0;
    for (;;) {
        int sig = 0;
        if (sigwait(&sig_set, &sig) != 0)
            continue;
        if (++count == 1)
            ctrl__stop_trip(sig_stop);
        else
            _exit(1);
    }
    return NULL;
}

static void setup(void)
{
    sig_stop = ctrl__stop_new();
    if (!sig_stop)
        return;
    sigemptyset(&sig_set);
    sigaddset(&sig_set, SIGINT);
    sigaddset(&sig_set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sig_set, NULL);
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, wait_signals, NULL) != 0) {
        pthread_sigmask(SIG_UNBLOCK, &sig_set, NULL);
        free(sig_stop);
        sig_stop = NULL;
    }
    pthread_attr_destroy(&attr);
}

ctrl_stop *ctrl_signal_context(void)
{
    pthread_once(&once, setup);
    return sig_stop;
}
