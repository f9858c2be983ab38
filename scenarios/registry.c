/*
 * registry.c - the controllers scenarios can name.
 *
 * A small table filled before any run (scn_register_controller is not
 * thread-safe: call it from main before running).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "scn/run.h"
#include "scn_int.h"

#define MAX_CONTROLLERS 64

typedef struct entry {
    char *name;
    scn_setup_fn fn;
    void *user;
} entry;

static entry table[MAX_CONTROLLERS];
static size_t n_entries;

/* Replacements (scn/diff.h): what the second run of a diff uses instead of
 * the controllers of the same name. Filled like the table, before runs. */
static entry repl[MAX_CONTROLLERS];
static size_t n_repl;
static bool capturing, replacing;

int scn__registry_replace(const char *name, scn_setup_fn fn, void *user)
{
    if (!name || !fn)
        return SCN_ERR_INPUT;
    for (size_t i = 0; i < n_repl; i++) {
        if (!strcmp(repl[i].name, name)) {
            repl[i].fn = fn;
            repl[i].user = user;
            return 0;
        }
    }
    if (n_repl == MAX_CONTROLLERS)
        return SCN_ERR_INPUT;
    char *copy = strdup(name);
    if (!copy)
        return SCN_ERR_NOMEM;
    repl[n_repl++] = (entry){copy, fn, user};
    return 0;
}

void scn__registry_capture(bool on)
{
    capturing = on;
}

void scn__registry_use_replacements(bool on)
{
    replacing = on;
}

bool scn__registry_replaced(const char *name)
{
    for (size_t i = 0; i < n_repl; i++)
        if (!strcmp(repl[i].name, name))
            return true;
    return false;
}

int scn_register_controller(const char *name, scn_setup_fn fn, void *user)
{
    if (!name || !fn || !*name || strlen(name) > SCN_CONTROLLER_NAME_MAX)
        return SCN_ERR_INPUT;
    if (capturing)
        return scn__registry_replace(name, fn, user);
    if (scn__find_controller(name, NULL, NULL) == 0 || n_entries == MAX_CONTROLLERS)
        return SCN_ERR_INPUT;
    char *copy = strdup(name);
    if (!copy)
        return SCN_ERR_NOMEM;
    table[n_entries++] = (entry){copy, fn, user};
    return 0;
}

int scn__find_controller(const char *name, scn_setup_fn *fn, void **user)
{
    for (size_t i = 0; replacing && i < n_repl; i++) {
        if (!strcmp(repl[i].name, name)) {
            if (fn)
                *fn = repl[i].fn;
            if (user)
                *user = repl[i].user;
            return 0;
        }
    }
    for (size_t i = 0; i < n_entries; i++) {
        if (!strcmp(table[i].name, name)) {
            if (fn)
                *fn = table[i].fn;
            if (user)
                *user = table[i].user;
            return 0;
        }
    }
    return SCN_ERR_INPUT;
}

void scn__list_controllers(char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n_entries && off < len; i++) {
        size_t n = strlen(table[i].name);
        if (off + n + 2 >= len)
            break;
        if (off)
            buf[off++] = ',', buf[off++] = ' ';
        memcpy(buf + off, table[i].name, n);
        off += n;
        buf[off] = '\0';
    }
}
