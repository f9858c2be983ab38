/*
 * ctrl/webhook.h - admission webhooks served by the manager (Go
 * controller-runtime's webhook.Server, admission.Validator/Defaulter, and
 * envtest's WebhookInstallOptions).
 *
 * A webhook server listens with TLS (a certificate and key read from files,
 * as controller-runtime's CertDir/CertName/KeyName) and answers AdmissionReview
 * v1 POSTs at the paths handlers are registered on. Three kinds of handler:
 *
 *  - a validator says yes or no to a CREATE, UPDATE or DELETE (with a
 *    message and warnings);
 *  - a defaulter changes a copy of the object; the server answers with the
 *    JSON patch (RFC 6902) from the object as sent to the changed copy;
 *  - a converter (CRD conversion webhooks) turns objects into another
 *    version of their kind (ConversionReview).
 *
 * ctrl_webhook_server_register_validator/_defaulter put them at
 * controller-runtime's paths: /validate-<group with '.' as '-'>-<version>-
 * <kind in lower case> and /mutate-... (the core group is empty:
 * /validate--v1-pod).
 *
 * Ownership: the server is the caller's (ctrl_webhook_server_free). The
 * manager runs one added with ctrl_manager_add_webhook_server, but does not
 * own it: free it after ctrl_manager_free. Requests and responses passed to
 * handlers are borrowed for the call.
 *
 * Threads: register handlers before start, from one thread. Handlers run on
 * the server's threads, several at once (one per connection): a handler
 * touching shared state locks it. _start, _stop and _free from one thread;
 * _port and ctrl_webhook_server_check from any.
 */
#ifndef CTRL_WEBHOOK_H
#define CTRL_WEBHOOK_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "ctrl/client.h"
#include "ctrl/error.h"
#include "ctrl/manager.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ctrl_webhook_server ctrl_webhook_server;

typedef struct ctrl_webhook_server_options {
    const char *addr;      /* "host:port"; NULL = ":9443"; port 0 picks a free one */
    const char *cert_dir;  /* NULL = $TMPDIR (or /tmp) + "/k8s-webhook-server/serving-certs" */
    const char *cert_name; /* NULL = "tls.crt": PEM certificate (chain) */
    const char *key_name;  /* NULL = "tls.key": PEM private key */
} ctrl_webhook_server_options;

/* One admission request, as a handler sees it (borrowed for the call).
 * Strings are never NULL ("" when the review had none). */
typedef struct ctrl_admission_request {
    const char *uid;
    const char *operation;              /* "CREATE", "UPDATE", "DELETE" or "CONNECT" */
    const char *group, *version, *kind; /* request.kind */
    const char *resource, *sub_resource;
    const char *name, *ns;
    bool dry_run;
    const json_t *object;     /* NULL for DELETE */
    const json_t *old_object; /* NULL for CREATE */
    const json_t *user_info;  /* {"username", "groups", ...}; NULL if absent */
    const json_t *review;     /* the whole AdmissionReview as received */
} ctrl_admission_request;

/* What a handler answers, filled in through the functions below. */
typedef struct ctrl_admission_response ctrl_admission_response;

/* Refuse the request with 403 Forbidden and a message (controller-runtime's
 * admission.Denied). The API server shows it as
 * `admission webhook "<name>" denied the request: <message>`. */
void ctrl_admission_deny(ctrl_admission_response *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Refuse with a Status code and reason of one's choosing (422 "Invalid", ...). */
void ctrl_admission_deny_status(ctrl_admission_response *r, int code, const char *reason,
                                const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Add a warning, sent back to the client as a Warning header. */
void ctrl_admission_warn(ctrl_admission_response *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * A validator: return 0 (allowed, unless it called ctrl_admission_deny), or
 * a negative ctrl_errcode for a failure of its own (answered as denied, 500,
 * with ctrl_strerror's text, as controller-runtime's admission.Errored).
 */
typedef int (*ctrl_validate_fn)(const ctrl_admission_request *req, ctrl_admission_response *resp,
                                void *user);
/*
 * A defaulter: change obj (a copy of req->object, owned by the server) in
 * place. Return 0, or a negative ctrl_errcode as a validator does; it may
 * also deny. Called for CREATE and UPDATE only (a DELETE is allowed as is).
 */
typedef int (*ctrl_default_fn)(const ctrl_admission_request *req, json_t *obj,
                               ctrl_admission_response *resp, void *user);

/* A new server (not listening yet). Errors: CTRL_ERR_ARG, CTRL_ERR_NOMEM. */
int ctrl_webhook_server_new(const ctrl_webhook_server_options *opts, ctrl_webhook_server **out,
                            ctrl_error *err);
/* Stop (if started) and free. NULL does nothing. */
void ctrl_webhook_server_free(ctrl_webhook_server *s);

/*
 * Serve a validator or defaulter at path (copied). Exactly one of validate
 * and mutate is set. Errors: CTRL_ERR_ARG (bad path, both or neither
 * function, path taken, already started), CTRL_ERR_NOMEM.
 */
int ctrl_webhook_server_register(ctrl_webhook_server *s, const char *path,
                                 ctrl_validate_fn validate, ctrl_default_fn mutate, void *user);
/* The same at controller-runtime's path for (api_version, kind), which is
 * also remembered for ctrl_webhook_install_server. */
int ctrl_webhook_server_register_validator(ctrl_webhook_server *s, const char *api_version,
                                           const char *kind, ctrl_validate_fn fn, void *user);
int ctrl_webhook_server_register_defaulter(ctrl_webhook_server *s, const char *api_version,
                                           const char *kind, ctrl_default_fn fn, void *user);

/*
 * A converter for CRD conversion webhooks (a ConversionReview of
 * apiextensions.k8s.io/v1, as kube-apiserver sends for a CRD with
 * spec.conversion.strategy Webhook): turn obj into desired_api_version,
 * *out a new object whose apiVersion is desired_api_version. Return 0, or a
 * negative ctrl_errcode with a reason in message (len bytes). Objects
 * already in the desired version are passed through without a call.
 */
typedef int (*ctrl_convert_fn)(const json_t *obj, const char *desired_api_version, json_t **out,
                               char *message, size_t len, void *user);
/* Serve a converter at path (NULL = "/convert", controller-runtime's).
 * The answer fails as a whole (result.status Failure, with the message)
 * when one object does not convert. Errors as ctrl_webhook_server_register. */
int ctrl_webhook_server_register_converter(ctrl_webhook_server *s, const char *path,
                                           ctrl_convert_fn fn, void *user);

/* controller-runtime's paths: "/validate-apps-v1-deployment", "/mutate--v1-pod".
 * Returns 0, or CTRL_ERR_ARG if it does not fit in len. */
int ctrl_webhook_validate_path(const char *api_version, const char *kind, char *buf, size_t len);
int ctrl_webhook_mutate_path(const char *api_version, const char *kind, char *buf, size_t len);

/*
 * Read the certificate and key and listen. Errors: CTRL_ERR_IO (a file
 * cannot be read; the message names it), CTRL_ERR_ARG (address malformed,
 * already started), CTRL_ERR_TRANSPORT (cannot listen: the message has
 * the address and the system's reason).
 */
int ctrl_webhook_server_start(ctrl_webhook_server *s, ctrl_error *err);
/* Stop accepting, let the requests being served finish, close. Safe to
 * call when not started. */
void ctrl_webhook_server_stop(ctrl_webhook_server *s);
/* The port listened on, 0 when not started. */
int ctrl_webhook_server_port(const ctrl_webhook_server *s);
/*
 * A readiness check (ctrl_check_fn; user is the server): 0 when the
 * server accepts TCP connections on its port, else 1 with the reason in
 * buf (controller-runtime's StartedChecker).
 */
int ctrl_webhook_server_check(void *server, char *buf, size_t len);

/*
 * Have the manager run the server: it starts with the manager's other
 * runnables (no leadership needed; one already started, say to install
 * its configurations first, is kept running), stops within the graceful
 * shutdown, and "webhook" is added to /readyz. The server stays the
 * caller's.
 */
int ctrl_manager_add_webhook_server(ctrl_manager *mgr, ctrl_webhook_server *s);

/*
 * The JSON patch (RFC 6902) that turns from into to: "add", "remove" and
 * "replace" operations, objects compared key by key, arrays element by
 * element (a longer or shorter array gains or loses elements at its end).
 * Applying it to from gives a document equal to to. *out is a new array;
 * [] when they are equal. Errors: CTRL_ERR_NOMEM, CTRL_ERR_ARG (NULL input).
 */
int ctrl_json_patch_diff(const json_t *from, const json_t *to, json_t **out);

/* ---- installing webhook configurations (envtest's WebhookInstallOptions) ---- */

/*
 * Write MutatingWebhookConfiguration and ValidatingWebhookConfiguration
 * objects (configs: one object or an array of them, borrowed; e.g. read
 * from a kubebuilder config/webhook/manifests.yaml) into the API server,
 * pointing every webhook at a local server: clientConfig becomes
 * {url: base_url + the path the webhook had (its service.path, or its url's
 * path), caBundle: ca_pem}. Existing configurations of the same name are
 * replaced. Errors: CTRL_ERR_ARG (not a configuration, a webhook without a
 * path), API and transport errors of the writes.
 */
int ctrl_webhook_install(ctrl_client *c, const json_t *configs, const char *base_url,
                         const char *ca_pem, ctrl_error *err);

/*
 * ctrl_webhook_install with the configurations in manifest files (YAML or
 * JSON, several documents each; paths: NULL-terminated), as envtest's
 * WebhookInstallOptions.Paths: documents of other kinds are skipped.
 * Errors: CTRL_ERR_IO (a file cannot be read or parsed: the message names
 * it and the line), and those of ctrl_webhook_install.
 */
int ctrl_webhook_install_files(ctrl_client *c, const char *const *paths, const char *base_url,
                               const char *ca_pem, ctrl_error *err);

/*
 * Write one MutatingWebhookConfiguration and one ValidatingWebhookConfiguration
 * named name for the validators and defaulters registered on s by kind
 * (rules: that group, version and resource, found by discovery; CREATE and
 * UPDATE, and DELETE for validators; failurePolicy Fail; sideEffects None),
 * calling https://<host>:<port of s>. A kind of handler with none registered
 * writes no configuration. s must be started. Errors as ctrl_webhook_install,
 * and CTRL_ERR_NO_MATCH for a kind the server does not serve.
 */
int ctrl_webhook_install_server(ctrl_client *c, const ctrl_webhook_server *s, const char *name,
                                const char *host, const char *ca_pem, ctrl_error *err);

#ifdef __cplusplus
}
#endif

#endif
