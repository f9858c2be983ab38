/*
 * stress.h - what the stress programs (tests/stress/) share: jansson's
 * ThreadSanitizer suppressions, the failure report, a monotonic clock.
 * Include it once per program, after defining STRESS_NAME (the program's
 * name, a string literal); the program defines
 * `static atomic_ulong failures;` before using FAIL.
 */
#ifndef TESTS_STRESS_H
#define TESTS_STRESS_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/*
 * ThreadSanitizer: jansson 2.14's reference counts are atomic, but its
 * inline json_incref/json_decref (jansson.h) first read the count
 * non-atomically (the "(size_t)-1 means never freed" check), and the
 * decrement that frees is release-only, without the acquire that would
 * order other threads' earlier reads of the object before its free. Both
 * are benign where atomic read-modify-writes are barriers (x86-64; ARMv8's
 * dependent stores), but TSan reports every shared object that its last
 * holder frees: a watch event's object shared by the writer and the
 * watches it goes to, a cache's objects that a reader frees after the
 * informer replaced them. Only jansson's frames are suppressed; nothing of
 * the project's own is. Used only when built with -fsanitize=thread.
 */
const char *__tsan_default_suppressions(void);
const char *__tsan_default_suppressions(void)
{
    return "race:json_incref\n"
           "race:json_decref\n"
           "race:json_delete\n"
           "race:libjansson.so\n";
}

/* Count a failure; report the first 20 on stderr, one line each. */
#define FAIL(...)                                                                                  \
    do {                                                                                           \
        if (atomic_fetch_add(&failures, 1) < 20) {                                                 \
            fprintf(stderr, STRESS_NAME ": ");                                                     \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

/* Milliseconds on the monotonic clock. */
static inline int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif
