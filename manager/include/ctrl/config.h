/*
 * ctrl/config.h - where the API server is and who we are to it.
 *
 * A ctrl_config is client-go's rest.Config without the behaviour knobs
 * (those are in ctrl_client_options): the server URL, the credentials
 * (bearer token or token file, client certificate and key, basic auth) and
 * the TLS settings (CA bundle, insecure-skip-tls-verify, tls-server-name),
 * plus the namespace the chosen context names.
 *
 * Sources, as client-go and controller-runtime read them:
 *   - a kubeconfig: an explicit file, else every file of $KUBECONFIG
 *     (':'-separated, merged: the first file to define a name or the
 *     current-context wins, missing files are skipped), else
 *     ~/.kube/config; the current context or a named one. Relative file
 *     paths inside a kubeconfig are relative to the file that names them.
 *   - in-cluster: KUBERNETES_SERVICE_HOST/PORT and the service account's
 *     token, ca.crt and namespace files.
 *   - a bare URL (http or https), e.g. fakeapi_url().
 * ctrl_config_load() picks as controller-runtime's GetConfig does.
 *
 * Files named by the config (CA, client certificate and key) are read
 * when the config is loaded; a token file is read then and again by the
 * client at most once a minute, so rotated service-account tokens are seen.
 * Exec and auth-provider credential plugins are not supported: a user that
 * has nothing else is CTRL_ERR_UNSUPPORTED.
 *
 * A config may also carry a round-tripper that replaces libcurl for every
 * request of the clients made from it (ctrl/roundtrip.h).
 *
 * Ownership: a ctrl_config belongs to its creator (ctrl_config_free); a
 * ctrl_client copies what it needs, so the config may be freed once the
 * client exists. Getters borrow: valid until the config is freed or changed.
 * Threads: a config may be read from many threads at once; setters need
 * exclusive access.
 */
#ifndef CTRL_CONFIG_H
#define CTRL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "ctrl/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ctrl_config ctrl_config;

/*
 * Load a kubeconfig. path NULL means $KUBECONFIG if set (its files merged),
 * else ~/.kube/config. context NULL means the current-context. On success
 * *out is a new config. Errors: CTRL_ERR_CONFIG (no such context, cluster
 * or user, no server, malformed YAML, base64 or URL), CTRL_ERR_IO (a file
 * it names cannot be read), CTRL_ERR_UNSUPPORTED (exec/auth-provider only),
 * CTRL_ERR_NOMEM.
 */
int ctrl_config_from_kubeconfig(const char *path, const char *context, ctrl_config **out,
                                ctrl_error *err);

/*
 * The same from a kubeconfig held in memory (YAML or JSON, len bytes).
 * Relative paths in it are relative to base_dir (NULL = the current
 * directory).
 */
int ctrl_config_from_kubeconfig_data(const char *text, size_t len, const char *base_dir,
                                     const char *context, ctrl_config **out, ctrl_error *err);

/*
 * In-cluster config: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT
 * with the token, ca.crt and namespace from sa_dir (NULL =
 * /var/run/secrets/kubernetes.io/serviceaccount). Errors: CTRL_ERR_CONFIG
 * when the variables are unset (not running in a pod), CTRL_ERR_IO when
 * the token cannot be read.
 */
int ctrl_config_in_cluster(const char *sa_dir, ctrl_config **out, ctrl_error *err);

/* A config with only a server URL ("http://127.0.0.1:8080"), no credentials. */
int ctrl_config_from_url(const char *url, ctrl_config **out, ctrl_error *err);

/*
 * controller-runtime's order: $KUBECONFIG if set; else in-cluster if
 * KUBERNETES_SERVICE_HOST is set; else ~/.kube/config. context as above
 * (ignored in-cluster).
 */
int ctrl_config_load(const char *context, ctrl_config **out, ctrl_error *err);

/* Free a config. NULL does nothing. */
void ctrl_config_free(ctrl_config *cfg);

/* A deep copy, or NULL when out of memory. */
ctrl_config *ctrl_config_copy(const ctrl_config *cfg);

/* Getters (borrowed; NULL when unset). */
const char *ctrl_config_server(const ctrl_config *cfg);     /* no trailing '/' */
const char *ctrl_config_context(const ctrl_config *cfg);    /* context used; NULL if none */
const char *ctrl_config_namespace(const ctrl_config *cfg);  /* context's; "default" if unset */
const char *ctrl_config_token(const ctrl_config *cfg);      /* token as loaded */
const char *ctrl_config_token_file(const ctrl_config *cfg); /* absolute or as written */
const char *ctrl_config_username(const ctrl_config *cfg);
const char *ctrl_config_password(const ctrl_config *cfg);
const char *ctrl_config_tls_server_name(const ctrl_config *cfg);
bool ctrl_config_insecure(const ctrl_config *cfg);
/* PEM bytes (not NUL-terminated); *len set, NULL when absent. */
const unsigned char *ctrl_config_ca_data(const ctrl_config *cfg, size_t *len);
const unsigned char *ctrl_config_cert_data(const ctrl_config *cfg, size_t *len);
const unsigned char *ctrl_config_key_data(const ctrl_config *cfg, size_t *len);

/* Setters (copy their argument; NULL clears). 0 or CTRL_ERR_NOMEM. */
int ctrl_config_set_token(ctrl_config *cfg, const char *token);
int ctrl_config_set_namespace(ctrl_config *cfg, const char *ns);
void ctrl_config_set_insecure(ctrl_config *cfg, bool insecure);

#ifdef __cplusplus
}
#endif

#endif
