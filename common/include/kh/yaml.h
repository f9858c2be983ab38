/*
 * kh/yaml.h - YAML (and JSON) documents to jansson values.
 *
 * Shared by fakeapi (manifests, fault files) and scenarios (scenario files)
 * and manager (kubeconfig). Kubernetes users write YAML; everything inside the
 * project is json_t, so this is the one place YAML is read.
 *
 * Scalars are typed as Kubernetes' sigs.k8s.io/yaml (go-yaml v2) types them,
 * which is YAML 1.2's core schema plus YAML 1.1's booleans:
 *   - plain "", ~, null, Null, NULL -> null;
 *   - plain true/false, yes/no, on/off, each written lower, Title or UPPER
 *     case (so "TRUE" but not "tRUE"), -> boolean; the single letters y/n stay
 *     strings. Quote "yes" or "on" to keep a string, as Kubernetes users do;
 *   - plain [-+]?[0-9]+, 0x[0-9a-fA-F]+, 0o[0-7]+ -> integer (leading zeros are
 *     decimal: 010 is 10; no '_' separators); one beyond int64 -> real;
 *   - plain [-+]?(.[0-9]+|[0-9]+(.[0-9]*)?)([eE][-+]?[0-9]+)? -> real;
 *     .inf and .nan (and reals that overflow) are an error, since JSON cannot
 *     hold them;
 *   - every other plain scalar, and every quoted or block (| >) scalar, is a
 *     string.
 * The tags !!str, !!int, !!float, !!bool, !!null force a type (a value that
 * does not fit, such as "!!int abc", is an error); the non-specific tag "!"
 * makes a string; other tags are ignored.
 * Mapping keys must be scalars; non-string keys become their text as JSON
 * would print them (1 -> "1", true -> "true", null -> "null"). A repeated key
 * keeps the last value. Anchors and aliases are resolved (each alias is a
 * deep copy); merge keys ('<<': a mapping or a sequence of mappings) are
 * honoured, the mapping's own keys winning over merged ones.
 *
 * Limits, each an error: KH_YAML_MAX_NODES values in a stream, counting the
 * copies aliases make (stops "billion laughs"); KH_YAML_MAX_DEPTH levels of
 * nesting; KH_YAML_MAX_FILE_SIZE bytes for kh_yaml_load_file.
 *
 * Thread-safety: every function is reentrant; no global state.
 */
#ifndef KH_YAML_H
#define KH_YAML_H

#include <stddef.h>
#include <jansson.h>

#define KH_YAML_MAX_NODES 1000000
#define KH_YAML_MAX_DEPTH 512
#define KH_YAML_MAX_FILE_SIZE (64 * 1024 * 1024)

/* Where a parse failed, and why. line and column are 1-based; 0 if unknown. */
typedef struct kh_yaml_error {
    int line;
    int column;
    char message[256];
} kh_yaml_error;

/*
 * Parse every document of a YAML stream (separated by '---'). Empty
 * documents (nothing but comments) are skipped; an explicit null (~) is kept.
 * Empty input gives an empty array. JSON input works too, since it is YAML;
 * a stream of several JSON objects or arrays one after another also works.
 * text need not be NUL-terminated; NULL is allowed when len is 0.
 *
 * On success returns 0 and stores in *docs a new array (caller owns it,
 * json_decref) holding one value per document, in order.
 * On failure returns -1, leaves *docs untouched and fills *err if non-NULL.
 */
int kh_yaml_load(const char *text, size_t len, json_t **docs, kh_yaml_error *err);

/*
 * Where each value of a loaded stream starts, for messages such as
 * "file.yaml:14: steps[3].wait.timeout: ...". A side table keyed by the
 * json_t pointer, so it is valid only while the loaded values are alive
 * (and not replaced); it holds no references.
 */
typedef struct kh_yaml_marks kh_yaml_marks;

/*
 * kh_yaml_load, and when marks is non-NULL also a new position table in
 * *marks (caller frees with kh_yaml_marks_free) covering every document,
 * every sequence item and every mapping value. Not covered, so
 * kh_yaml_mark_line gives 0: mapping keys (they are not values); true, false
 * and null (jansson shares one instance of each); the values inside the copy
 * an alias makes (the alias itself has its line); and every value of input
 * that only parses as a stream of JSON texts ("{...}{...}"). JSON that is
 * also YAML is read by the YAML loader for positions; when its values would
 * differ from kh_yaml_load's, kh_yaml_load's values win and have no lines.
 * marks == NULL is exactly kh_yaml_load. On failure returns -1, leaves *docs
 * and *marks untouched and fills *err.
 */
int kh_yaml_load_marked(const char *text, size_t len, json_t **docs, kh_yaml_marks **marks,
                        kh_yaml_error *err);

/* The 1-based line where node starts, or 0 if unknown (or m is NULL). */
int kh_yaml_mark_line(const kh_yaml_marks *m, const json_t *node);

/* Frees the table; NULL does nothing. */
void kh_yaml_marks_free(kh_yaml_marks *m);

/* Read a whole file and kh_yaml_load it. A file that cannot be read is -1
 * with the errno text in err->message (line 0); so is one larger than
 * KH_YAML_MAX_FILE_SIZE. */
int kh_yaml_load_file(const char *path, json_t **docs, kh_yaml_error *err);

/*
 * Write one JSON value as a YAML block document (no leading '---') into a
 * new malloc'ed NUL-terminated string (caller frees); value is borrowed.
 * Mappings are indented by 2 spaces; sequences inside mappings are written
 * "- " at the key's indentation, as kubectl does; empty collections are {}
 * and []. Strings that would read back as another type (here, or in a
 * YAML 1.1 reader: y, n, 1_000, dates, anything starting with a digit) are
 * double-quoted; multi-line strings use '|' where the emitter allows it.
 * kh_yaml_load of the result gives a value equal to the input (json_equal).
 * Returns NULL on allocation failure, for a NULL value, or for a value nested
 * deeper than KH_YAML_MAX_DEPTH.
 */
char *kh_yaml_dump(const json_t *value);

#endif
