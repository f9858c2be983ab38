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
 * Decode obj as a kind of root message m would be: 0 or more when Go's
 * decoder accepts it, -1 with err filled in (the first type error in
 * document order; err may be NULL) when it does not, -2 on ENOMEM. On
 * success the keys the type does not have (unknown fields) are counted (the
 * return value), their paths appended in document order to unknown (an
 * array, may be NULL) as strict decoding names them
 * ("spec.template.spec.containers[0].imagePullPolicyy"), and, if drop is
 * set, deleted from obj. On a type error obj is not modified.
 */
int fakeapi__builtin_decode(const fakeapi__tmsg *m, json_t *obj, fakeapi__decode_error *err,
                            json_t *unknown, bool drop);

#endif
