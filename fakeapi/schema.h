/*
 * schema.h - OpenAPI v3 structural schemas as CustomResourceDefinitions
 * declare them (spec.versions[].schema.openAPIV3Schema): validate, default,
 * prune.
 *
 * Supported keywords: type (object, array, string, integer, number, boolean),
 * properties, additionalProperties (bool or schema), items, required, enum,
 * minimum/maximum (+ exclusiveMinimum/exclusiveMaximum as booleans),
 * minLength/maxLength, minItems/maxItems, minProperties/maxProperties,
 * multipleOf, pattern (POSIX ERE via regcomp, as close to RE2 as C offers:
 * \d \s \w and (?:...) are rewritten), format (int32 range, date,
 * date-time: checked loosely; other formats are ignored), nullable, default,
 * x-kubernetes-preserve-unknown-fields, x-kubernetes-int-or-string,
 * x-kubernetes-embedded-resource, x-kubernetes-list-type set and map (with
 * x-kubernetes-list-map-keys: unique items or keys), allOf/anyOf/oneOf/not
 * (validation only).
 * An integer is a valid "number"; 1.0 is not an "integer".
 *
 * Reentrant; schemas are only read.
 */
#ifndef FAKEAPI_SCHEMA_H
#define FAKEAPI_SCHEMA_H

#include <jansson.h>

/*
 * Validate obj against schema. For each violation, append to causes (a JSON
 * array the caller owns) an object
 *   {"reason":"FieldValueInvalid"|"FieldValueRequired"|"FieldValueNotSupported"|
 *             "FieldValueTypeInvalid"|"FieldValueTooLong"|"FieldValueTooMany"|...,
 *    "message":
 *      "Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\"",
 *    "field":"spec.replicas"}
 * following the API server's wording (reason codes from
 * k8s.io/apimachinery/pkg/util/validation/field: FieldValueRequired
 * "Required value", FieldValueNotSupported 'Unsupported value: "x": supported
 * values: "a", "b"', FieldValueInvalid "Invalid value: ...").
 * Fields are dotted paths with [i] for array positions ("spec.items[2].name").
 * The root's apiVersion, kind and metadata are not validated here. A value
 * of the wrong type gets the type error only. null passes where the schema
 * is nullable, has no type, or has a default (defaulting replaces it). A
 * pattern regcomp rejects gives an "InternalError" cause.
 * causes may be NULL (then causes are only counted); a NULL or non-object
 * schema constrains nothing. Neither argument is modified.
 * Returns the number of causes (0 = valid).
 */
int fakeapi__schema_validate(const json_t *schema, const json_t *obj, json_t *causes);

/*
 * Apply "default" values in place: for each property with a default that is
 * absent in obj, or null where the schema is not nullable, set a deep copy
 * of the default; the same for null array items and additionalProperties
 * values. Recurses into objects and arrays that exist, including defaulted
 * ones. Like the API server, a value that is present (of whatever type) is
 * never replaced: validate after defaulting. A NULL schema does nothing.
 */
void fakeapi__schema_default(const json_t *schema, json_t *obj);

/*
 * Remove, in place, fields that the schema does not declare, unless
 * x-kubernetes-preserve-unknown-fields: true is set at that level (or
 * additionalProperties allows them). Known fields are still pruned below a
 * preserve-unknown-fields level. At the root, and in objects marked
 * x-kubernetes-embedded-resource, apiVersion, kind and metadata are always
 * kept, untouched. As in the API server, an object with no schema at all
 * (inside an array without items) loses all its fields. A NULL schema
 * prunes nothing.
 */
void fakeapi__schema_prune(const json_t *schema, json_t *obj);

/*
 * Remove, in place, every object field whose value is null where the
 * field's schema is neither nullable nor defaulted, as the API server does
 * when it decodes a custom resource (apiextensions-apiserver's
 * PruneNonNullableNullsWithoutDefaults): {"plain": null} stores as {}, and
 * a required field set to null is then missing. Array items are left (a
 * null item is defaulted or rejected). Nulls with a default are left to
 * fakeapi__schema_default. A NULL schema does nothing.
 */
void fakeapi__schema_prune_nulls(const json_t *schema, json_t *obj);

/*
 * Does s match pattern, a CRD "pattern" (RE2 spelling, searched, not
 * anchored), as validation matches it? 1 yes, 0 no, -1 the pattern does
 * not compile.
 */
int fakeapi__schema_pattern_match(const char *pattern, const char *s);

#endif
