/*
 * builtin_check.h - a built-in object against its message in the type
 * tables (types.h), as the API server's JSON decoder sees it: the JSON type
 * of every value at every depth (through inline fields, lists, maps and the
 * hand-decoded types: Time, Duration, Quantity, IntOrString, raw JSON,
 * bytes), and the keys the type does not have (unknown fields), which that
 * decoder drops and fieldValidation=Strict refuses.
 *
 * Errors are reported in decode.h's shape, so decode.c words them in each
 * of the server's dialects.
 *
 * Reentrant; the tables are constant: any thread.
 */
#ifndef FAKEAPI_BUILTIN_CHECK_H
#define FAKEAPI_BUILTIN_CHECK_H

#include <stdbool.h>
#include <jansson.h>

#include "decode.h"
#include "registry.h"
#include "types.h"

/* The root message of the kind res serves, or NULL (custom kinds). */
const fakeapi__tmsg *fakeapi__builtin_msg(const fakeapi__resource *res);

/*
 * Would Go's decoder accept obj as a kind (root message m)? 0, or -1 with
 * err filled in (the first error in document order; err may be NULL).
 * obj is not modified.
 */
int fakeapi__builtin_typecheck(const fakeapi__tmsg *m, const char *kind, const json_t *obj,
                               fakeapi__decode_error *err);

/*
 * The keys of obj (a type-checked object of root message m) its type does
 * not have, in document order, as strict decoding names them
 * ("spec.template.spec.containers[0].imagePullPolicyy"): appended to unknown
 * (an array; may be NULL), and deleted from obj when drop is set. Returns
 * how many there were.
 */
int fakeapi__builtin_unknown(const fakeapi__tmsg *m, json_t *obj, json_t *unknown, bool drop);

#endif
