/*
 * table_cols.c - finds the printer of a built-in kind by group and kind
 * (table_cols.h); kinds without one get the default printer.
 *
 * Thread-safety: reentrant.
 */
#include "table_cols.h"

#include <string.h>

static const fakeapi__colspec default_cols[] = {
    FAKEAPI__COL_NAME,
    {"Created At", "date", "", 0, fakeapi__desc_age, fakeapi__cell_created_at, NULL},
};

static const fakeapi__printer default_printer = {"", "", FAKEAPI__COLS(default_cols), NULL, NULL};

const fakeapi__printer *fakeapi__printer_default(void)
{
    return &default_printer;
}

const fakeapi__printer *fakeapi__printer_find(const char *group, const char *kind)
{
    const struct {
        const fakeapi__printer *p;
        size_t n;
    } tables[] = {{fakeapi__printers_core, fakeapi__printers_core_n},
                  {fakeapi__printers_events, fakeapi__printers_events_n},
                  {fakeapi__printers_apps, fakeapi__printers_apps_n},
                  {fakeapi__printers_misc, fakeapi__printers_misc_n}};
    if (!group || !kind)
        return &default_printer;
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        for (size_t i = 0; i < tables[t].n; i++)
            if (!strcmp(tables[t].p[i].group, group) && !strcmp(tables[t].p[i].kind, kind))
                return &tables[t].p[i];
    return &default_printer;
}
