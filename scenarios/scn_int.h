/*
 * scn_int.h - internal declarations shared by the scenario runner's modules.
 */
#ifndef SCN_INT_H
#define SCN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scn/run.h"

/* The registered controller called name: 0 and its setup, or SCN_ERR_INPUT. */
int scn__find_controller(const char *name, scn_setup_fn *fn, void **user);
/* Replacements for the second run of a diff (scn/diff.h): add one (name
 * copied; replaces an earlier replacement of that name); while capturing,
 * scn_register_controller adds replacements instead (a plugin's init);
 * while in use, scn__find_controller prefers them. Before any run, one
 * thread. */
int scn__registry_replace(const char *name, scn_setup_fn fn, void *user);
void scn__registry_capture(bool on);
void scn__registry_use_replacements(bool on);
bool scn__registry_replaced(const char *name);

/* `scenario diff` and `scenario shrink` (cli_shrink.c): exit codes. */
int scn__cmd_diff(int argc, char **argv);
int scn__cmd_shrink(int argc, char **argv);
/* `scenario merge` (cli_merge.c): exit code. */
int scn__cmd_merge(int argc, char **argv);
/* `scenario hunt` (cli_hunt.c): exit code. */
int scn__cmd_hunt(int argc, char **argv);

/* Every registered name, comma-separated, for error messages. */
void scn__list_controllers(char *buf, size_t len);

/* The name libctrl gives an informer's watching thread ("informer <user
 * agent> <apiVersion>/<Kind>", ctrl/cache.h): the driver releases a watch's
 * events only while that thread waits for them. */
void scn__informer_thread_name(char *buf, size_t len, const char *user_agent,
                               const char *api_version, const char *kind);

/* The seed of a manager (jitter, identities): from the run's seed, its
 * place among the run's managers (controller by controller, then replica)
 * and its incarnation (1, then 2 after the first restart, ...). The same
 * arguments give the same seed; each incarnation draws a fresh one. */
uint64_t scn__manager_seed(uint64_t run_seed, int index, int incarnation);

/* The command that replays a run (replay_hint.c), as this program was
 * started: scn_main gives its argv[0] (hint_program, which also forgets
 * the plugins), and each --plugin loaded is added (hint_plugin).
 * "PROGRAM replay FILE --seed N --trace trace.jsonl [--plugin LIB]...". */
void scn__hint_program(const char *argv0);
void scn__hint_plugin(const char *path);
void scn__replay_command(char *buf, size_t len, const char *file, uint64_t seed);
/* The same as "PROGRAM run FILE --seed N [--plugin LIB]..." (scenario hunt). */
void scn__run_command(char *buf, size_t len, const char *file, uint64_t seed);

#endif
