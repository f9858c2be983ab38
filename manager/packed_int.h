/*
 * packed_int.h - a compact binary form of jansson values (private to
 * libctrl), for the informer's store: about as small as compact JSON text,
 * but written and read back several times faster (store.c has the figures).
 *
 * What is packed is read back the same: types, key order, strings byte for
 * byte (embedded NULs included), integers and reals exactly. The form is
 * internal - made and read by one process - and not a format for outside
 * input, though ctrl__unpack refuses anything malformed rather than read
 * past its buffer.
 */
#ifndef CTRL_PACKED_INT_H
#define CTRL_PACKED_INT_H

#include <stddef.h>
#include <jansson.h>

#include "ctrl/error.h"

/* Values nest at most this deep (as jansson's parser). */
#define CTRL__PACK_MAX_DEPTH 2048

/* Pack v (borrowed) into buf, writing at most cap bytes: the size of the
 * whole packed form (more than cap: nothing usable was written; call again
 * with that much room), or 0 when v nests too deep. Any thread. */
size_t ctrl__pack(const json_t *v, char *buf, size_t cap);

/* A new value read from the len bytes at buf (borrowed), which must be
 * exactly one packed value: NULL when malformed or out of memory. Any
 * thread. */
json_t *ctrl__unpack(const char *buf, size_t len);

/* *out a new jansson string holding the head_len bytes at head (may be
 * NULL when head_len is 0) and then v packed: a byte buffer with jansson's
 * atomic reference count, never text to hand out. CTRL_ERR_ARG when v
 * nests too deep, CTRL_ERR_NOMEM. Any thread. */
int ctrl__pack_string(const json_t *v, const char *head, size_t head_len, json_t **out);

#endif
