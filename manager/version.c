/*
 * version.c - ctrl_version(): the version libctrl was built as
 * (ctrl/version.h). Any thread.
 */
#include "ctrl/version.h"

const char *ctrl_version(void)
{
    return CTRL_VERSION_STRING;
}
