/*
 * rng.h - the server's seeded random generator (uids, generated names).
 *
 * xoshiro256** seeded through splitmix64: the same seed gives the same
 * sequence, so a scenario's uids and names repeat run after run.
 * Not thread-safe: the server draws only while holding the store lock.
 */
#ifndef FAKEAPI_RNG_H
#define FAKEAPI_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct fakeapi__rng {
    uint64_t s[4];
} fakeapi__rng;

void fakeapi__rng_seed(fakeapi__rng *r, uint64_t seed);
uint64_t fakeapi__rng_next(fakeapi__rng *r);
/* A version-4 UUID string; buf >= 37 bytes. */
void fakeapi__rng_uuid(fakeapi__rng *r, char *buf);
/* n characters from the API server's generateName alphabet, NUL-terminated. */
void fakeapi__rng_name_suffix(fakeapi__rng *r, char *buf, size_t n);

#endif
