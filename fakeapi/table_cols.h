/*
 * table_cols.h - the Table printers of the built-in kinds, keyed by API
 * group and kind, with the real server's columns (see table_cells.h for the
 * column spec). The printers live in table_cols_core.c (core/v1),
 * table_cols_events.c (Events of both APIs),
 * table_cols_apps.c (workloads, autoscaling, policy) and table_cols_misc.c
 * (RBAC, networking, storage, ...); table_cols.c finds them.
 *
 * Thread-safety: reentrant; printers are constant data, never freed.
 */
#ifndef FAKEAPI_TABLE_COLS_H
#define FAKEAPI_TABLE_COLS_H

#include "table_cells.h"

/*
 * The printer of group ("" for core) and kind, or the default printer (Name
 * and Created At, as the real server's default table convertor) when the
 * real server has none for it. Never NULL; the result is static.
 */
const fakeapi__printer *fakeapi__printer_find(const char *group, const char *kind);

/* The default printer: Name, Created At. */
const fakeapi__printer *fakeapi__printer_default(void);

/* The per-file tables, for table_cols.c and for tests that walk every printer. */
extern const fakeapi__printer fakeapi__printers_core[];
extern const size_t fakeapi__printers_core_n;
extern const fakeapi__printer fakeapi__printers_events[];
extern const size_t fakeapi__printers_events_n;
extern const fakeapi__printer fakeapi__printers_apps[];
extern const size_t fakeapi__printers_apps_n;
extern const fakeapi__printer fakeapi__printers_misc[];
extern const size_t fakeapi__printers_misc_n;

#endif
