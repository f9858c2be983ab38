/*
 * schema.h - OpenAPI v3 structural schemas as CustomResourceDefinitions
 * declare them (spec.versions[].schema.openAPIV3Schema): validate, default,
 * prune.
 *
 * Supported keywords: type (object, array, string, integer, number, boolean),
 * properties, additionalProperties (bool or schema), items, required, enum,
 * minimum/maximum (+ exclusiveMinimum/exclusiveMaximum as booleans),
 * minLength/maxLength, minItems/maxItems, minProperties/maxProperties,
 * pattern (POSIX ERE via regcomp, as close to RE2 as C offers), format
 * (int32, int64, date-time: checked loosely), nullable, default,
 * x-kubernetes-preserve-unknown-fields, x-kubernetes-int-or-string,
 * x-kubernetes-embedded-resource, allOf/anyOf/oneOf/not (validation only).
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
 *             "FieldValueTypeInvalid"|"FieldValueTooLong"|...,
 *    "message":"Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\"",
 *    "field":"spec.replicas"}
 * following the API server's wording (reason codes from
 * k8s.io/apimachinery/pkg/util/validation/field: FieldValueRequired
 * "Required value", FieldValueNotSupported 'Unsupported value: "x": supported
 * values: "a", "b"', FieldValueInvalid "Invalid value: ...").
 * Fields are dotted paths with [i] for array positions ("spec.items[2].name").
 * The root's apiVersion, kind and metadata are not validated here.
 * Returns the number of causes appended (0 = valid).
 */
int fakeapi__schema_validate(const json_t *schema, const json_t *obj, json_t *causes);

/*
 * Apply "default" values in place: for each property with a default that is
 * absent in obj (and, for nullable: false, null), set a deep copy of the
 * default, recursing into objects and arrays that exist (and into defaulted
 * values). Like the API server, defaults apply to absent fields only.
 */
void fakeapi__schema_default(const json_t *schema, json_t *obj);

/*
 * Remove, in place, fields that the schema does not declare, unless
 * x-kubernetes-preserve-unknown-fields: true is set at that level (or
 * additionalProperties allows them). At the root, apiVersion, kind and
 * metadata are always kept.
 */
void fakeapi__schema_prune(const json_t *schema, json_t *obj);

#endif
