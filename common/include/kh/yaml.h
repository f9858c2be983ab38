/*
 * kh/yaml.h - YAML (and JSON) documents to jansson values.
 *
 * Shared by fakeapi (manifests, fault files) and scenarios (scenario files)
 * and manager (kubeconfig). Kubernetes users write YAML; everything inside the
 * project is json_t, so this is the one place YAML is read.
 *
 * Scalars follow the YAML 1.2 core schema as Kubernetes' sigs.k8s.io/yaml
 * does: plain null/~/empty -> null, true/false (any case) -> boolean, decimal,
 * 0x/0o integers -> integer, decimals with '.'/exponent, .inf/.nan -> real;
 * everything quoted, and every other plain scalar, is a string.
 * Anchors and aliases are resolved; merge keys ('<<') are honoured.
 *
 * Thread-safety: every function is reentrant; no global state.
 */
#ifndef KH_YAML_H
#define KH_YAML_H

#include <stddef.h>
#include <jansson.h>

/* Where a parse failed, and why. line and column are 1-based; 0 if unknown. */
typedef struct kh_yaml_error {
    int line;
    int column;
    char message[256];
} kh_yaml_error;

/*
 * Parse every document of a YAML stream (separated by '---'). Empty
 * documents (nothing but comments) are skipped. JSON input works too, since
 * it is YAML; a stream of several JSON objects one after another also works.
 *
 * On success returns 0 and stores in *docs a new array (caller owns it,
 * json_decref) holding one value per document, in order.
 * On failure returns -1, leaves *docs untouched and fills *err if non-NULL.
 */
int kh_yaml_load(const char *text, size_t len, json_t **docs, kh_yaml_error *err);

/* Read a file and kh_yaml_load it. A file that cannot be read is -1 with the
 * errno text in err->message. */
int kh_yaml_load_file(const char *path, json_t **docs, kh_yaml_error *err);

/*
 * Write one JSON value as a YAML block document (no leading '---') into a
 * new malloc'ed NUL-terminated string (caller frees). Strings that would read
 * back as another type are quoted. Returns NULL on allocation failure.
 */
char *kh_yaml_dump(const json_t *value);

#endif
