/*
 * jsonpath.h - a JSONPath subset, as CRD additionalPrinterColumns use it.
 *
 * Supported: ".a.b", ".a[0].b", ".a[-1]", ".a[*].b", ".a.*", "['x.y']",
 * backslash-escaped dots in names ("app\\.kubernetes\\.io"), an optional
 * leading '$' and surrounding '{}'. Anything else selects nothing (no
 * filters, no recursive descent, no ranges). Reentrant.
 */
#ifndef FAKEAPI_JSONPATH_H
#define FAKEAPI_JSONPATH_H

#include <jansson.h>

/* Every value path selects in obj, as a new array the caller owns (possibly
 * empty; borrowed obj is not modified). NULL only on ENOMEM. */
json_t *fakeapi__jsonpath(const json_t *obj, const char *path);

#endif
