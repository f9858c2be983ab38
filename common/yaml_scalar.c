/*
 * yaml_scalar.c - what a plain YAML scalar means, and numbers as text: the
 * rules the loader (yaml.c) reads by and the dumper (yaml_dump.c) quotes by,
 * so that a dumped document loads back as the same values.
 *
 * YAML 1.2's core schema, plus the YAML 1.1 booleans that go-yaml v2 (and so
 * sigs.k8s.io/yaml) accepts, as Kubernetes manifests are read.
 */
#include "yaml_scalar.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const null_words[] = {"~", "null", "Null", "NULL", NULL};
/* YAML 1.1 booleans as go-yaml v2 (and so sigs.k8s.io/yaml) reads them,
 * minus the single letters y/n. */
const char *const kh__yaml_true_words[] = {"true", "True", "TRUE", "yes", "Yes",
                                           "YES",  "on",   "On",   "ON",  NULL};
static const char *const false_words[] = {"false", "False", "FALSE", "no",  "No",
                                          "NO",    "off",   "Off",   "OFF", NULL};
static const char *const odd_reals[] = {".inf",  ".Inf",  ".INF",  "+.inf", "+.Inf",
                                        "+.INF", "-.inf", "-.Inf", "-.INF", ".nan",
                                        ".NaN",  ".NAN",  NULL};

int kh__yaml_is_one_of(const char *s, size_t n, const char *const *words)
{
    for (; *words; words++) {
        if (strlen(*words) == n && memcmp(*words, s, n) == 0)
            return 1;
    }
    return 0;
}

static int digit_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return INT_MAX;
}

static size_t span_digits(const char *s, size_t n, int base)
{
    size_t i = 0;

    while (i < n && digit_value(s[i]) < base)
        i++;
    return i;
}

static int all_digits(const char *s, size_t n, int base)
{
    return n > 0 && span_digits(s, n, base) == n;
}

/* YAML 1.2 core: [-+]?[0-9]+ | 0x[0-9a-fA-F]+ | 0o[0-7]+ */
int kh__yaml_is_int(const char *s, size_t n)
{
    if (n > 2 && s[0] == '0' && s[1] == 'x')
        return all_digits(s + 2, n - 2, 16);
    if (n > 2 && s[0] == '0' && s[1] == 'o')
        return all_digits(s + 2, n - 2, 8);
    if (n > 0 && (s[0] == '-' || s[0] == '+'))
        return all_digits(s + 1, n - 1, 10);
    return all_digits(s, n, 10);
}

/* YAML 1.2 core: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static int is_float(const char *s, size_t n)
{
    size_t i = 0, whole, exp;

    if (i < n && (s[i] == '-' || s[i] == '+'))
        i++;
    whole = span_digits(s + i, n - i, 10);
    i += whole;
    if (i < n && s[i] == '.') {
        size_t frac = span_digits(s + i + 1, n - i - 1, 10);
        if (whole == 0 && frac == 0)
            return 0;
        i += 1 + frac;
    } else if (whole == 0) {
        return 0;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '-' || s[i] == '+'))
            i++;
        exp = span_digits(s + i, n - i, 10);
        if (exp == 0)
            return 0;
        i += exp;
    }
    return i == n;
}

/* What a plain (unquoted, untagged) scalar means. */
kh__yaml_kind kh__yaml_classify(const char *s, size_t n)
{
    if (n == 0 || kh__yaml_is_one_of(s, n, null_words))
        return KH__YAML_NULL;
    if (kh__yaml_is_one_of(s, n, kh__yaml_true_words) || kh__yaml_is_one_of(s, n, false_words))
        return KH__YAML_BOOL;
    if (kh__yaml_is_int(s, n))
        return KH__YAML_INT;
    if (is_float(s, n) || kh__yaml_is_one_of(s, n, odd_reals))
        return KH__YAML_REAL;
    return KH__YAML_STRING;
}

void kh__yaml_format_real(double d, char *buf, size_t size)
{
    /* The shortest text that reads back as the same double. */
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    if (!strpbrk(buf, ".eEn")) /* keep it a real when read back */
        strncat(buf, ".0", size - strlen(buf) - 1);
}

/* Integer text to a double, for values that do not fit json_int_t. */
static double int_as_double(const char *s)
{
    double d = 0;

    if (s[0] != '0' || s[1] != 'o')
        return strtod(s, NULL); /* decimal, and hex as a C99 hex float */
    for (s += 2; *s; s++)
        d = d * 8 + (*s - '0');
    return d;
}

/* s is NUL-terminated and classified KH__YAML_INT. */
json_t *kh__yaml_make_int(const char *s, int as_real)
{
    long long v;
    char *end;

    errno = 0;
    if (s[0] == '0' && s[1] == 'o')
        v = strtoll(s + 2, &end, 8);
    else
        v = strtoll(s, &end, s[0] == '0' && s[1] == 'x' ? 16 : 10);
    if (errno == ERANGE)
        return json_real(int_as_double(s));
    return as_real ? json_real((double)v) : json_integer((json_int_t)v);
}

json_t *kh__yaml_make_real(const char *s, size_t n)
{
    if (kh__yaml_is_one_of(s, n, odd_reals))
        return NULL;
    return json_real(strtod(s, NULL));
}
