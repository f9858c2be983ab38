/*
 * selector.h - Kubernetes label and field selectors: parse and match.
 *
 * Label selectors (K8S-API.md item 31): terms joined by ',' (AND):
 *   key=value, key==value, key!=value, key in (a,b), key notin (a,b),
 *   key (exists), !key (does not exist), key>N, key<N (integers).
 * '!=' and 'notin' also match objects that lack the key. Keys may carry a
 * DNS-subdomain prefix ("app.kubernetes.io/name"). Whitespace around tokens
 * is allowed. The empty string selects everything. As in apimachinery,
 * "key=" (and "key==") selects an empty value; unlike it, "key in ()" is an
 * error. Keys and values are validated as the API server does.
 *
 * Field selectors (item 32): terms joined by ',': field=value, field==value,
 * field!=value. A field is a dotted path into the object ("metadata.name",
 * "spec.nodeName", "involvedObject.kind"). Values may escape ',', '=' and
 * '\' with a backslash. The caller decides which fields a resource supports
 * (fakeapi__fieldsel_check). Field selectors are not trimmed; empty terms
 * ("a=b,") are skipped, as apimachinery does.
 *
 * Either kind of selector string may be at most 64 KiB.
 *
 * Ownership: parse returns a new selector the caller frees with _free.
 * Parsed selectors are immutable: any thread may match with one concurrently.
 */
#ifndef FAKEAPI_SELECTOR_H
#define FAKEAPI_SELECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

typedef struct fakeapi__labelsel fakeapi__labelsel;
typedef struct fakeapi__fieldsel fakeapi__fieldsel;

/*
 * Parse a label selector. s may be NULL or "" (matches everything).
 * Returns 0 and a new selector in *out; or -1 with a message in err
 * (e.g. "unable to parse requirement: found '(', expected: identifier")
 * and *out untouched. err may be NULL; the message is cut to errlen.
 */
int fakeapi__labelsel_parse(const char *s, fakeapi__labelsel **out, char *err, size_t errlen);

/* labels: the object's metadata.labels (a JSON object), or NULL for none. */
bool fakeapi__labelsel_match(const fakeapi__labelsel *sel, const json_t *labels);

/* True when the selector has no terms (matches everything). */
bool fakeapi__labelsel_empty(const fakeapi__labelsel *sel);

void fakeapi__labelsel_free(fakeapi__labelsel *sel);

/* Parse a field selector; same contract as fakeapi__labelsel_parse. */
int fakeapi__fieldsel_parse(const char *s, fakeapi__fieldsel **out, char *err, size_t errlen);

/*
 * Check that every field the selector names is in allowed (a NULL-terminated
 * list of dotted paths). Returns 0, or -1 with
 * 'field label not supported: <field>' in err.
 */
int fakeapi__fieldsel_check(const fakeapi__fieldsel *sel, const char *const *allowed, char *err,
                            size_t errlen);

/*
 * Match against a whole object. A missing field reads as "" (so
 * spec.nodeName= matches unscheduled pods). Strings compare as is; booleans as
 * "true"/"false"; integers in decimal.
 */
bool fakeapi__fieldsel_match(const fakeapi__fieldsel *sel, const json_t *obj);

bool fakeapi__fieldsel_empty(const fakeapi__fieldsel *sel);

/*
 * If the selector is exactly one 'metadata.name=X' (or '==') term, return X
 * (borrowed from sel), else NULL. Lets lists and watches by name use the
 * primary key instead of scanning.
 */
const char *fakeapi__fieldsel_name(const fakeapi__fieldsel *sel);

/*
 * The value an '=' or '==' term on field requires (the first such term;
 * borrowed from sel), or NULL if no term does: apimachinery's
 * RequiresExactMatch. A watch by name checks a client's selector with it.
 */
const char *fakeapi__fieldsel_requires(const fakeapi__fieldsel *sel, const char *field);

void fakeapi__fieldsel_free(fakeapi__fieldsel *sel);

struct fakeapi__resource;
/* Does a field selector name only fields the kind can select on
 * (metadata.name, metadata.namespace, its own)? 0, or -1 with err set. */
int fakeapi__fieldsel_check_res(const struct fakeapi__resource *res, const fakeapi__fieldsel *sel,
                                char *err, size_t errlen);

#endif
