/*
 * kh/jsonfast.h - json_loadb and json_dumps for the texts parsed and written
 * most: fakeapi's request bodies and stored texts, libctrl's request
 * bodies, answers and watch lines.
 *
 * kh_json_loadb's answer is the one json_loadb(buf, len, flags, err) gives: the parse
 * builds the same document (the same members in the same order, the same
 * strings and integers) when the text is plain (no \u escape, no number
 * that is not a short integer, no duplicate key when they are refused, not
 * deeper than 512), and hands everything else, errors included, to jansson.
 * jansson's own parser reads a character at a time through a stream and a
 * growing token buffer: about 200 instructions a byte, a tenth of an
 * update's cost. Reentrant; any thread.
 */
#ifndef KH_JSONFAST_H
#define KH_JSONFAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <jansson.h>

/* json_loadb with flags 0 or JSON_REJECT_DUPLICATES (any other flag: jansson
 * parses). A new reference, or NULL with *err set (err may be NULL). */
json_t *kh_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *err);

/* v as compact JSON text (any type), malloc'ed and NUL-terminated, its
 * length in *len: the bytes json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY)
 * writes, several times faster. Unlike json_dumps it does not check the
 * UTF-8 of strings (json_stringn_nocheck's): check the text
 * (kh_json_utf8_ok) where that matters. NULL if out of memory or nested
 * deeper than 2048. */
char *kh_json_dump_compact(const json_t *v, size_t *len);

/* True if s is UTF-8 that jansson takes for a string (json_string): no
 * overlong forms, no surrogates, nothing past U+10FFFF. */
bool kh_json_utf8_ok(const char *s, size_t len);

/* The length of the UTF-8 sequence at at (before e) that jansson accepts,
 * or 0. */
int kh_json_utf8_len(const char *at, const char *e);

/* Does the 8-byte word at p hold a byte a JSON string cannot carry as it
 * is (below 0x20, '"' or '\\')? Exact as a yes/no (haszero and hasless of
 * "Bit Twiddling Hacks"); the scanners' and the dump's fast path. */
static inline bool kh_json_word_special(const void *p)
{
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    uint64_t x, q, bs;
    memcpy(&x, p, 8);
    q = x ^ (ones * '"');
    bs = x ^ (ones * '\\');
    return ((((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((bs - ones) & ~bs)) & highs) != 0;
}

/* Does the 8-byte word at p hold a byte of 0x80 or above (not ASCII)? */
static inline bool kh_json_word_high(const void *p)
{
    uint64_t x;
    memcpy(&x, p, 8);
    return (x & 0x8080808080808080ULL) != 0;
}

#endif
