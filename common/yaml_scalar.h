/*
 * yaml_scalar.h - plain-scalar typing and number text shared by the YAML
 * loader and dumper (private to common/). Pure functions: any thread.
 */
#ifndef KH_YAML_SCALAR_H
#define KH_YAML_SCALAR_H

#include <stddef.h>
#include <jansson.h>

typedef enum kh__yaml_kind {
    KH__YAML_STRING,
    KH__YAML_NULL,
    KH__YAML_BOOL,
    KH__YAML_INT,
    KH__YAML_REAL
} kh__yaml_kind;

/* The YAML 1.1 words that read as true (NULL-terminated). */
extern const char *const kh__yaml_true_words[];

/* Whether s (n bytes) is one of words (NULL-terminated). */
int kh__yaml_is_one_of(const char *s, size_t n, const char *const *words);
/* YAML 1.2 core integer: [-+]?[0-9]+ | 0x[0-9a-fA-F]+ | 0o[0-7]+ */
int kh__yaml_is_int(const char *s, size_t n);
/* What a plain (unquoted, untagged) scalar means. */
kh__yaml_kind kh__yaml_classify(const char *s, size_t n);
/* The shortest text that reads back as d, always with a '.', 'e' or "nan". */
void kh__yaml_format_real(double d, char *buf, size_t size);
/* s is NUL-terminated and classified as an integer: a new integer (or a real
 * when as_real, or when it does not fit json_int_t). NULL on ENOMEM. */
json_t *kh__yaml_make_int(const char *s, int as_real);
/* A new real, or NULL for infinities and NaN (which JSON cannot hold). */
json_t *kh__yaml_make_real(const char *s, size_t n);

#endif
