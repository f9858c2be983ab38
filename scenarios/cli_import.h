/*
 * cli_import.h - `scenario import audit`, `trace-to-audit` and
 * `audit-to-trace` (cli_import.c); scn_main hands them argv whole.
 * Return the exit code. Main thread.
 */
#ifndef SCN_CLI_IMPORT_H
#define SCN_CLI_IMPORT_H

int scn__cmd_import(int argc, char **argv);
int scn__cmd_convert(int argc, char **argv);

#endif
