/*
 * replay_hint.c - the command that replays a failing run, as the program
 * that ran it was started: its argv[0] (the `scenario` program, or a
 * test program of the user's own that calls scn_main) and every plugin it
 * loaded with --plugin, each word quoted for a POSIX shell when needed.
 *
 * Threads: the command line's own (scn_main and what it calls); not
 * reentrant.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "scn_int.h"

static char program[1024] = "scenario";
static char plugins[4096]; /* " --plugin LIB" for each one loaded */

/* s, quoted for sh when it holds anything but plain characters. */
static void quote(char *buf, size_t len, const char *s)
{
    size_t n = 0;
    bool plain = *s != '\0';
    for (const char *c = s; *c && plain; c++)
        plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%",
                       *c) != NULL;
    if (plain) {
        snprintf(buf, len, "%s", s);
        return;
    }
    if (len < 3) {
        if (len)
            buf[0] = '\0';
        return;
    }
    buf[n++] = '\'';
    for (const char *c = s; *c && n + 6 < len; c++) {
        if (*c == '\'') {
            memcpy(buf + n, "'\\''", 4); /* end the quote, a quoted ', quote again */
            n += 4;
        } else {
            buf[n++] = *c;
        }
    }
    buf[n++] = '\'';
    buf[n] = '\0';
}

void scn__hint_program(const char *argv0)
{
    quote(program, sizeof program, argv0 && *argv0 ? argv0 : "scenario");
    plugins[0] = '\0';
}

void scn__hint_plugin(const char *path)
{
    char q[1024];
    size_t n = strlen(plugins);
    quote(q, sizeof q, path);
    snprintf(plugins + n, sizeof plugins - n, " --plugin %s", q);
}

void scn__replay_command(char *buf, size_t len, const char *file, uint64_t seed)
{
    char q[1024];
    quote(q, sizeof q, file);
    snprintf(buf, len, "%s replay %s --seed %" PRIu64 " --trace trace.jsonl%s", program, q, seed,
             plugins);
}

void scn__run_command(char *buf, size_t len, const char *file, uint64_t seed)
{
    char q[1024];
    quote(q, sizeof q, file);
    snprintf(buf, len, "%s run %s --seed %" PRIu64 "%s", program, q, seed, plugins);
}
