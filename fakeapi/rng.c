#include "rng.h"

#include <stdio.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void fakeapi__rng_seed(fakeapi__rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

uint64_t fakeapi__rng_next(fakeapi__rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

void fakeapi__rng_uuid(fakeapi__rng *r, char *buf)
{
    uint64_t hi = fakeapi__rng_next(r), lo = fakeapi__rng_next(r);
    hi = (hi & ~0xf000ULL) | 0x4000ULL;                 /* version 4 */
    lo = (lo & ~(0xc000ULL << 48)) | (0x8000ULL << 48); /* RFC 4122 variant */
    snprintf(buf, 37, "%08x-%04x-%04x-%04x-%012llx", (unsigned)(hi >> 32),
             (unsigned)((hi >> 16) & 0xffff), (unsigned)(hi & 0xffff), (unsigned)(lo >> 48),
             (unsigned long long)(lo & 0xffffffffffffULL));
}

void fakeapi__rng_name_suffix(fakeapi__rng *r, char *buf, size_t n)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    for (size_t i = 0; i < n; i++)
        buf[i] = alphabet[fakeapi__rng_next(r) % (sizeof alphabet - 1)];
    buf[n] = '\0';
}
