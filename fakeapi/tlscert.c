/*
 * tlscert.c - a CA, a server and a client certificate, made with GnuTLS.
 */
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fakeapi/fakeapi.h"
#include "tlscert.h"

#define VALID_SECONDS ((time_t)365 * 24 * 3600)
#define BACKDATE_SECONDS ((time_t)3600)

/* One key and its certificate while they are being made. */
typedef struct keycert {
    gnutls_x509_privkey_t key;
    gnutls_x509_crt_t crt;
} keycert;

/* What one certificate is for. */
typedef struct certspec {
    const char *cn;
    const char *org; /* NULL: none */
    bool ca;
    const char *purpose; /* extended key usage OID; NULL for the CA */
    bool server_names;   /* SAN IP 127.0.0.1, DNS localhost */
} certspec;

static void keycert_deinit(keycert *kc)
{
    if (kc->crt)
        gnutls_x509_crt_deinit(kc->crt);
    if (kc->key)
        gnutls_x509_privkey_deinit(kc->key);
    kc->crt = NULL;
    kc->key = NULL;
}

static int set_dn(gnutls_x509_crt_t crt, const char *oid, const char *value)
{
    return gnutls_x509_crt_set_dn_by_oid(crt, oid, 0, value, (unsigned)strlen(value));
}

/* A random positive 128-bit serial number, as RFC 5280 asks. */
static int set_serial(gnutls_x509_crt_t crt)
{
    unsigned char serial[16];
    int rc = gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof serial);
    if (rc < 0)
        return rc;
    serial[0] = (unsigned char)((serial[0] & 0x7f) | 0x40);
    return gnutls_x509_crt_set_serial(crt, serial, sizeof serial);
}

/*
 * Make a key and a certificate for spec, signed by issuer (NULL: by itself).
 * Returns 0 or a GnuTLS error code; kc holds whatever was made, for
 * keycert_deinit.
 */
static int make_cert(const certspec *spec, time_t now, const keycert *issuer, keycert *kc)
{
    unsigned char id[64];
    size_t id_len = sizeof id;
    int rc;
    if ((rc = gnutls_x509_privkey_init(&kc->key)) < 0 ||
        (rc = gnutls_x509_privkey_generate(
             kc->key, GNUTLS_PK_ECDSA, GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0)) < 0 ||
        (rc = gnutls_x509_crt_init(&kc->crt)) < 0)
        return rc;
    gnutls_x509_crt_t crt = kc->crt;
    if ((rc = gnutls_x509_crt_set_version(crt, 3)) < 0 || (rc = set_serial(crt)) < 0 ||
        (rc = gnutls_x509_crt_set_activation_time(crt, now - BACKDATE_SECONDS)) < 0 ||
        (rc = gnutls_x509_crt_set_expiration_time(crt, now + VALID_SECONDS)) < 0 ||
        (spec->org && (rc = set_dn(crt, GNUTLS_OID_X520_ORGANIZATION_NAME, spec->org)) < 0) ||
        (rc = set_dn(crt, GNUTLS_OID_X520_COMMON_NAME, spec->cn)) < 0 ||
        (rc = gnutls_x509_crt_set_key(crt, kc->key)) < 0 ||
        (rc = gnutls_x509_crt_set_basic_constraints(crt, spec->ca ? 1 : 0, -1)) < 0)
        return rc;
    unsigned usage =
        spec->ca ? GNUTLS_KEY_KEY_CERT_SIGN | GNUTLS_KEY_CRL_SIGN | GNUTLS_KEY_DIGITAL_SIGNATURE
                 : GNUTLS_KEY_DIGITAL_SIGNATURE;
    if ((rc = gnutls_x509_crt_set_key_usage(crt, usage)) < 0 ||
        (spec->purpose && (rc = gnutls_x509_crt_set_key_purpose_oid(crt, spec->purpose, 0)) < 0))
        return rc;
    if (spec->server_names) {
        static const unsigned char loopback[4] = {127, 0, 0, 1};
        if ((rc = gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, loopback,
                                                       sizeof loopback, GNUTLS_FSAN_APPEND)) < 0 ||
            (rc = gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, "localhost", 9,
                                                       GNUTLS_FSAN_APPEND)) < 0)
            return rc;
    }
    if ((rc = gnutls_x509_crt_get_key_id(crt, GNUTLS_KEYID_USE_SHA1, id, &id_len)) < 0 ||
        (rc = gnutls_x509_crt_set_subject_key_id(crt, id, id_len)) < 0)
        return rc;
    if (issuer) {
        id_len = sizeof id;
        if ((rc = gnutls_x509_crt_get_subject_key_id(issuer->crt, id, &id_len, NULL)) < 0 ||
            (rc = gnutls_x509_crt_set_authority_key_id(crt, id, id_len)) < 0)
            return rc;
    }
    const keycert *signer = issuer ? issuer : kc;
    return gnutls_x509_crt_sign2(crt, signer->crt, signer->key, GNUTLS_DIG_SHA256, 0);
}

/* A gnutls_datum_t's bytes as a NUL-terminated malloc'd string. */
static char *datum_str(const gnutls_datum_t *d)
{
    char *s = malloc((size_t)d->size + 1);
    if (s) {
        memcpy(s, d->data, d->size);
        s[d->size] = '\0';
    }
    return s;
}

/* PEM of a certificate (key NULL) or of a key as PKCS#8; 0, a GnuTLS error or
 * GNUTLS_E_MEMORY_ERROR. */
static int export_pem(gnutls_x509_crt_t crt, gnutls_x509_privkey_t key, char **out)
{
    gnutls_datum_t d = {0};
    int rc = key ? gnutls_x509_privkey_export2_pkcs8(key, GNUTLS_X509_FMT_PEM, NULL,
                                                     GNUTLS_PKCS_PLAIN, &d)
                 : gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &d);
    if (rc < 0)
        return rc;
    *out = datum_str(&d);
    gnutls_free(d.data);
    return *out ? 0 : GNUTLS_E_MEMORY_ERROR;
}

int fakeapi__tls_generate(int64_t now_ns, fakeapi__tls_material *out, char *err, size_t len)
{
    static const certspec ca_spec = {.cn = "fakeapi-ca", .ca = true};
    static const certspec server_spec = {
        .cn = "fakeapi", .purpose = GNUTLS_KP_TLS_WWW_SERVER, .server_names = true};
    static const certspec client_spec = {
        .cn = "fakeapi-admin", .org = "system:masters", .purpose = GNUTLS_KP_TLS_WWW_CLIENT};
    keycert ca = {0}, server = {0}, client = {0};
    fakeapi__tls_material m = {0};
    time_t now = (time_t)(now_ns / 1000000000);
    const char *what = "CA certificate";
    int rc = make_cert(&ca_spec, now, NULL, &ca);
    if (rc >= 0) {
        what = "server certificate";
        rc = make_cert(&server_spec, now, &ca, &server);
    }
    if (rc >= 0) {
        what = "client certificate";
        rc = make_cert(&client_spec, now, &ca, &client);
    }
    if (rc >= 0) {
        what = "PEM export";
        if ((rc = export_pem(ca.crt, NULL, &m.ca_pem)) >= 0 &&
            (rc = export_pem(server.crt, NULL, &m.server_cert_pem)) >= 0 &&
            (rc = export_pem(NULL, server.key, &m.server_key_pem)) >= 0 &&
            (rc = export_pem(client.crt, NULL, &m.client_cert_pem)) >= 0)
            rc = export_pem(NULL, client.key, &m.client_key_pem);
    }
    keycert_deinit(&ca);
    keycert_deinit(&server);
    keycert_deinit(&client);
    if (rc < 0) {
        if (err && len)
            snprintf(err, len, "%s: %s", what, gnutls_strerror(rc));
        fakeapi__tls_free(&m);
        return rc == GNUTLS_E_MEMORY_ERROR ? FAKEAPI_ERR_NOMEM : FAKEAPI_ERR_INTERNAL;
    }
    *out = m;
    return 0;
}

void fakeapi__tls_free(fakeapi__tls_material *m)
{
    if (!m)
        return;
    free(m->ca_pem);
    free(m->server_cert_pem);
    free(m->server_key_pem);
    free(m->client_cert_pem);
    free(m->client_key_pem);
    memset(m, 0, sizeof *m);
}

bool fakeapi__tls_peer_verified(void *gnutls_session)
{
    gnutls_session_t s = gnutls_session;
    unsigned status = 0, n = 0;
    if (!s || !gnutls_certificate_get_peers(s, &n) || n == 0)
        return false;
    return gnutls_certificate_verify_peers2(s, &status) == 0 && status == 0;
}
