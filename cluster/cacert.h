/*
 * cacert.h - the CA certificate the service-account controllers publish:
 * the root-ca-cert-publisher's kube-root-ca.crt ConfigMaps and the
 * ca.crt of service-account token Secrets (upstream both take the
 * controller manager's --root-ca-file).
 *
 * It is the cluster document's caCert: PEM text, or the name of a PEM
 * file (relative to the document's directory). Without one it is a fixed
 * placeholder: a self-signed certificate whose private key was discarded
 * when it was made, so that it verifies nothing. A test or program that
 * serves HTTPS (fakeapi's tls option) passes its CA as caCert so that pods
 * and clients can verify the server with what they are given.
 *
 * Threads: reentrant.
 */
#ifndef KC_CACERT_H
#define KC_CACERT_H

#include <stddef.h>

#include "cluster_int.h"

/* The placeholder (static). */
extern const char kc__placeholder_ca_pem[];

/* The CA to publish for cfg: a new string (free), or NULL with the reason
 * in errbuf (KC_ERR_INPUT: caCert is not a string, not PEM, or its file
 * cannot be read; KC_ERR_NOMEM). */
char *kc__ca_pem(const kc_config *cfg, int *rc, char *errbuf, size_t errlen);

#endif
