/*
 * widget-webhook - a manager that serves the Widget admission webhooks
 * (widget_webhook.h) over TLS, and with --install writes the webhook
 * configurations pointing at itself into the API server, as envtest does
 * for Go tests:
 *
 *     widget-webhook --cert-dir DIR [--addr 127.0.0.1:9443]
 *                    [--install CA_FILE] [--kubeconfig FILE]
 *
 * DIR holds tls.crt and tls.key; CA_FILE is the CA that signed tls.crt
 * (it goes in the configurations' caBundle). Stops on SIGTERM/SIGINT.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/manager.h"
#include "ctrl/webhook.h"
#include "widget_webhook.h"

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 20);
    size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (buf)
        buf[n] = '\0';
    return buf;
}

static int usage(void)
{
    fprintf(stderr, "usage: widget-webhook --cert-dir DIR [--addr HOST:PORT] [--install CA_FILE] "
                    "[--kubeconfig FILE]\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *kubeconfig = NULL, *cert_dir = NULL, *addr = "127.0.0.1:9443", *ca_file = NULL;
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            return usage();
        if (!strcmp(argv[i], "--kubeconfig"))
            kubeconfig = argv[++i];
        else if (!strcmp(argv[i], "--cert-dir"))
            cert_dir = argv[++i];
        else if (!strcmp(argv[i], "--addr"))
            addr = argv[++i];
        else if (!strcmp(argv[i], "--install"))
            ca_file = argv[++i];
        else
            return usage();
    }
    if (!cert_dir)
        return usage();
    ctrl_stop *stop = ctrl_signal_context(); /* before any thread */
    ctrl_error err = {0};
    ctrl_manager *mgr = NULL;
    ctrl_webhook_server *ws = NULL;
    char *ca = NULL;
    int rc = ctrl_manager_new(kubeconfig, &(ctrl_manager_options){.metrics_addr = "0"}, &mgr, &err);
    if (rc == 0)
        rc = ctrl_webhook_server_new(
            &(ctrl_webhook_server_options){.addr = addr, .cert_dir = cert_dir}, &ws, &err);
    if (rc == 0 && (rc = example_widget_webhook_setup(ws)) < 0)
        snprintf(err.message, sizeof err.message, "cannot register the webhooks");
    /* Listen first, so the configurations never point at nothing. */
    if (rc == 0)
        rc = ctrl_webhook_server_start(ws, &err);
    if (rc == 0 && ca_file && !(ca = read_all(ca_file))) {
        snprintf(err.message, sizeof err.message, "cannot read %s", ca_file);
        rc = CTRL_ERR_IO;
    }
    if (rc == 0 && ca)
        rc = ctrl_webhook_install_server(ctrl_manager_client(mgr), ws, "widget-webhook",
                                         "127.0.0.1", ca, &err);
    if (rc == 0)
        rc = ctrl_manager_add_webhook_server(mgr, ws);
    if (rc == 0) {
        fprintf(stderr, "widget-webhook: serving on port %d\n", ctrl_webhook_server_port(ws));
        rc = ctrl_manager_start(mgr, stop);
    }
    if (rc < 0)
        fprintf(stderr, "widget-webhook: %s: %s\n", ctrl_strerror(rc), err.message);
    ctrl_manager_free(mgr);
    ctrl_webhook_server_free(ws);
    ctrl_error_deinit(&err);
    free(ca);
    return rc < 0;
}
