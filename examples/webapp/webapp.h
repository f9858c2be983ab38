/*
 * webapp.h - the WebApp operator (webapps.example.com,
 * fixtures/webapp/crd.yaml): an operator whose correctness depends on the
 * cluster moving, for scenarios with libcluster (docs/cluster.md).
 *
 * A WebApp asks for spec.replicas pods of spec.image behind a Service. The
 * operator owns a Deployment and a Service of the WebApp's name (controller
 * owner references), kept equal to the spec by create-or-update, and writes
 * status: availableReplicas (the Deployment's), observedGeneration, and a
 * Ready condition that must mean what users read it as: the Deployment has
 * rolled out the current spec and has every replica available (Ready=False
 * with reason Progressing or Unavailable otherwise). A node that goes
 * NotReady takes pods with it: Ready must go False until they are back.
 *
 * - The FIXED variant ("webapp") checks the Deployment's status as kubectl
 *   rollout status does (observedGeneration, updatedReplicas,
 *   availableReplicas).
 * - The BUGGY variant ("webapp-buggy") says Ready as soon as its Deployment
 *   exists and never takes it back: the mistake of an operator written
 *   against envtest, where Deployments never move anyway.
 *
 * Uses only libctrl's public headers. Threads: as any libctrl controller.
 */
#ifndef EXAMPLE_WEBAPP_H
#define EXAMPLE_WEBAPP_H

#include <jansson.h>

#include "ctrl/manager.h"

#define EXAMPLE_WEBAPP_API_VERSION "example.com/v1"
#define EXAMPLE_WEBAPP_KIND "WebApp"

/* Add the operator to mgr (before it starts). config may be NULL. */
int example_webapp_setup(ctrl_manager *mgr, const json_t *config);
int example_webapp_buggy_setup(ctrl_manager *mgr, const json_t *config);

#endif
