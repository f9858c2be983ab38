/*
 * widget_webhook.h - the admission webhooks of the webhook example, for
 * example.com/v1 Widget (fixtures/webhook/crd.yaml): a defaulter and a
 * validator registered on a ctrl_webhook_server.
 */
#ifndef EXAMPLE_WIDGET_WEBHOOK_H
#define EXAMPLE_WIDGET_WEBHOOK_H

#include "ctrl/webhook.h"

/* The largest spec.size a widget may have. */
#define EXAMPLE_WIDGET_MAX_SIZE 10

/*
 * Register on s, before it starts:
 *  - /mutate-example-com-v1-widget: spec.color defaults to "blue",
 *    spec.size to 1, and the label widgets.example.com/defaulted=true is set;
 *  - /validate-example-com-v1-widget: spec.color must be blue or green,
 *    spec.size between 1 and EXAMPLE_WIDGET_MAX_SIZE, the color cannot
 *    change on update, and a widget labelled widgets.example.com/protected
 *    cannot be deleted. A size above 5 is allowed with a warning.
 * Returns 0 or a ctrl_errcode of ctrl_webhook_server_register_*.
 */
int example_widget_webhook_setup(ctrl_webhook_server *s);

#endif
