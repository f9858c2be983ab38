/*
 * error.c - fakeapi_strerror: the library's error codes in words. A leaf:
 * every layer may use it.
 */
#include "fakeapi/fakeapi.h"

const char *fakeapi_strerror(int code)
{
    switch (code) {
    case FAKEAPI_OK:
        return "success";
    case FAKEAPI_ERR_NOMEM:
        return "out of memory";
    case FAKEAPI_ERR_INVALID:
        return "invalid argument or object";
    case FAKEAPI_ERR_NOT_FOUND:
        return "not found";
    case FAKEAPI_ERR_CONFLICT:
        return "conflict";
    case FAKEAPI_ERR_ALREADY_EXISTS:
        return "already exists";
    case FAKEAPI_ERR_GONE:
        return "resource version expired";
    case FAKEAPI_ERR_FORBIDDEN:
        return "forbidden";
    case FAKEAPI_ERR_UNSUPPORTED:
        return "not supported";
    case FAKEAPI_ERR_STORAGE:
        return "storage error";
    case FAKEAPI_ERR_IO:
        return "I/O error";
    case FAKEAPI_ERR_LISTEN:
        return "cannot listen";
    case FAKEAPI_ERR_INTERNAL:
        return "internal error";
    default:
        return "unknown error";
    }
}
