/*
 * tlscert.h - the certificates of `fakeapi serve --tls`, made in memory.
 *
 * One call makes a throw-away certificate authority and two certificates it
 * signs: the server's (SAN IP 127.0.0.1 and DNS localhost, TLS server use)
 * and an administrator's client certificate (CN "fakeapi-admin", O
 * "system:masters", TLS client use), as a kubeadm cluster's admin.conf has.
 * Keys are ECDSA P-256: quick to make, and every Kubernetes client takes
 * them. Nothing is written to disk.
 *
 * Not thread-safe per material; fakeapi__tls_generate may run on several
 * threads at once for different materials.
 */
#ifndef FAKEAPI_TLSCERT_H
#define FAKEAPI_TLSCERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* PEM text, NUL-terminated, owned by the material (fakeapi__tls_free). */
typedef struct fakeapi__tls_material {
    char *ca_pem;          /* the CA certificate: what clients trust */
    char *server_cert_pem; /* signed by the CA */
    char *server_key_pem;  /* PKCS#8 */
    char *client_cert_pem; /* signed by the CA */
    char *client_key_pem;  /* PKCS#8 */
} fakeapi__tls_material;

/*
 * Make a CA, a server and a client certificate, valid for one year from
 * now_ns (nanoseconds since the epoch, the server's clock; they start an
 * hour earlier, for clocks a little behind). Fills *out (caller-allocated;
 * untouched on error). Returns 0, FAKEAPI_ERR_NOMEM, or FAKEAPI_ERR_INTERNAL
 * with GnuTLS's message in err (len bytes, may be NULL).
 */
int fakeapi__tls_generate(int64_t now_ns, fakeapi__tls_material *out, char *err, size_t len);

/* Free the PEM strings and zero *m. NULL does nothing. */
void fakeapi__tls_free(fakeapi__tls_material *m);

/*
 * Whether the peer of a TLS session (a gnutls_session_t, as libmicrohttpd's
 * MHD_CONNECTION_INFO_GNUTLS_SESSION gives it) presented a certificate that
 * the session's trusted CAs verify. Called from connection threads.
 */
bool fakeapi__tls_peer_verified(void *gnutls_session);

#endif
