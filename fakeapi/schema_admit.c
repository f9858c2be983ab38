/*
 * schema_admit.c - the public face of schema.c: what a create or update of
 * a custom resource does with its body (prune, prune disallowed nulls,
 * default, validate), for programs that predict the server's answer
 * without a server (fakeapi.h, "Custom resource schemas").
 *
 * Ownership: schemas are borrowed and only read; a causes array returned
 * is the caller's. Threads: reentrant, no state.
 */
#include <stddef.h>

#include "fakeapi/fakeapi.h"
#include "schema.h"

int fakeapi_schema_store(const json_t *schema, json_t *obj)
{
    if (!json_is_object(schema) || !obj)
        return FAKEAPI_ERR_INVALID;
    fakeapi__schema_prune(schema, obj);
    fakeapi__schema_prune_nulls(schema, obj);
    fakeapi__schema_default(schema, obj);
    return 0;
}

int fakeapi_schema_validate(const json_t *schema, const json_t *obj, json_t **causes_out)
{
    json_t *causes = NULL;
    if (causes_out)
        *causes_out = NULL;
    if (!json_is_object(schema) || !obj)
        return FAKEAPI_ERR_INVALID;
    if (causes_out && !(causes = json_array()))
        return FAKEAPI_ERR_NOMEM;
    int n = fakeapi__schema_validate(schema, obj, causes);
    if (n == 0) {
        json_decref(causes);
        return 0;
    }
    if (causes_out)
        *causes_out = causes;
    return FAKEAPI_ERR_INVALID;
}

int fakeapi_schema_admit(const json_t *schema, json_t *obj, json_t **causes_out)
{
    if (causes_out)
        *causes_out = NULL;
    int rc = fakeapi_schema_store(schema, obj);
    return rc < 0 ? rc : fakeapi_schema_validate(schema, obj, causes_out);
}

int fakeapi_schema_pattern_match(const char *pattern, const char *s)
{
    if (!pattern || !s)
        return FAKEAPI_ERR_INVALID;
    int rc = fakeapi__schema_pattern_match(pattern, s);
    return rc < 0 ? FAKEAPI_ERR_INVALID : rc;
}
