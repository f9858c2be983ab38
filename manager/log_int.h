/*
 * log_int.h - libctrl's structured logger (private to libctrl).
 *
 * One line per call: a timestamp (the clock's wall time), the level, the
 * logger's name, a message and key/value string pairs, as logfmt text
 *
 *   ts=2026-01-02T03:04:05.678Z level=info logger=controller msg="Reconciler error" controller=rs
 * namespace=default name=web reconcileID=1b4e... error="conflict"
 *
 * or as one JSON object (the same keys, in the same order). Lines go to a
 * sink callback (NULL = stderr; the only place libctrl writes to stderr,
 * and only when the embedder did not give a sink). Lines longer than
 * CTRL__LOG_LINE_MAX are cut (values are truncated, the line stays valid).
 *
 * Callers test ctrl__log_enabled (the CTRL__LOG macro does) before they
 * build any argument, so a filtered-out debug line costs one comparison.
 *
 * Threads: a logger is immutable after ctrl__logger_new; any thread may log
 * at once (the sink must be thread-safe; the default writes each line with
 * one fwrite, under stdio's own lock).
 */
#ifndef CTRL_LOG_INT_H
#define CTRL_LOG_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "ctrl/clock.h"
#include "ctrl/controller.h"
#include "ctrl/manager.h"

#define CTRL__LOG_LINE_MAX 16384

typedef struct ctrl__logger ctrl__logger;

typedef struct ctrl__log_options {
    ctrl_log_level level;   /* lines below it are dropped; default (0) = DEBUG */
    ctrl_log_format format; /* CTRL_LOG_TEXT or CTRL_LOG_JSON */
    void (*sink)(const char *line, void *user); /* line without '\n'; NULL = stderr */
    void *user;
    const ctrl_clock *clock; /* timestamps; NULL = real time; copied */
} ctrl__log_options;

/* A new logger (opts may be NULL: DEBUG, text, stderr, real time). */
int ctrl__logger_new(const ctrl__log_options *opts, ctrl__logger **out);
/* NULL does nothing. */
void ctrl__logger_free(ctrl__logger *l);

/* True when a line at level would be written. A NULL logger writes nothing. */
bool ctrl__log_enabled(const ctrl__logger *l, ctrl_log_level level);

/*
 * Write one line: msg, then nfixed key/value pairs from fixed (fixed[2i] the
 * key, fixed[2i+1] the value; a NULL value is written as ""), then the
 * key/value pairs of ap up to a NULL key (a missing last value is written
 * as ""). name is the logger name ("controller", "manager"...; NULL =
 * none). Tests the level again (cheap), so calling it unguarded is safe.
 */
void ctrl__log_v(const ctrl__logger *l, ctrl_log_level level, const char *name, const char *msg,
                 const char *const *fixed, size_t nfixed, va_list ap);
void ctrl__log(const ctrl__logger *l, ctrl_log_level level, const char *name, const char *msg, ...);

/* Log with NULL-terminated key/value pairs, evaluating them only when the
 * level is enabled:  CTRL__LOG(l, CTRL_LOG_INFO, "manager", "starting", "k", v); */
#define CTRL__LOG(l, level, name, ...)                                                             \
    do {                                                                                           \
        if (ctrl__log_enabled((l), (level)))                                                       \
            ctrl__log((l), (level), (name), __VA_ARGS__, (const char *)0);                         \
    } while (0)

#endif
