/*
 * httpc.h - a tiny libcurl client for the integration tests.
 * Not thread-safe per handle; each test thread makes its own.
 */
#ifndef TESTS_HTTPC_H
#define TESTS_HTTPC_H

#include <stddef.h>
#include <jansson.h>

typedef struct httpc_resp {
    long status;
    char *body; /* NUL-terminated, malloc'ed */
    size_t len;
    char ctype[128];
    char retry_after[32];
} httpc_resp;

/*
 * Send method to base+path with an optional body and content type (with a
 * body, NULL means application/json).
 * Returns 0 (any HTTP status) or -1 on a transport error.
 */
int httpc_do(const char *method, const char *url, const char *ctype, const char *body,
             httpc_resp *out);
void httpc_resp_free(httpc_resp *r);

/* Convenience: do it and parse the body as JSON (NULL if not JSON). */
json_t *httpc_json(const char *method, const char *url, const char *ctype, const char *body,
                   long *status);

#endif
