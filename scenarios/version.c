/*
 * version.c - scn_version(): the version libscenario was built as
 * (scn/version.h). Any thread.
 */
#include "scn/version.h"

const char *scn_version(void)
{
    return SCN_VERSION_STRING;
}
