/*
 * version.c - fakeapi_version(): the version libfakeapi was built as
 * (fakeapi/version.h). Any thread.
 */
#include "fakeapi/version.h"

const char *fakeapi_version(void)
{
    return FAKEAPI_VERSION_STRING;
}
