/*
 * cronjob.h - a CronJob-style controller for the CronTask kind
 * (crontasks.example.com, fixtures/cronjob/crd.yaml).
 *
 * A CronTask says when (spec.schedule, five-field cron syntax in UTC: see
 * cron.h) to stamp out which batch/v1 Job (spec.jobTemplate: Kubernetes'
 * JobTemplateSpec {metadata, spec}, or the Job spec alone). At each
 * reconcile the controller takes the most recent scheduled time at or
 * before now and after the last one handled (status.lastScheduleTime, else
 * the CronTask's creation); if there is one it creates the Job
 * "<crontask>-<scheduled time in Unix minutes>" (controlled by the CronTask,
 * labelled "crontask: <name>", the scheduled time in the annotation
 * EXAMPLE_CRONTASK_SCHEDULED_ANNOTATION) and writes status.lastScheduleTime
 * through the status subresource. Runs missed while the controller was down
 * (or the CronTask suspended, spec.suspend) are not caught up: only the most
 * recent one runs, as Kubernetes' CronJob does without
 * startingDeadlineSeconds. It then deletes the oldest of the CronTask's Jobs
 * beyond spec.successfulJobsHistoryLimit (default 3; no Job controller runs
 * against the fake API server, so every Job it owns counts as history) and
 * asks to be reconciled again at the next scheduled time (requeue-after).
 *
 * Time is the manager's clock (ctrl_clock_wall_ns), so under a scenario's
 * virtual clock a day of schedules costs milliseconds.
 *
 * Uses only libctrl's public headers.
 */
#ifndef EXAMPLE_CRONJOB_H
#define EXAMPLE_CRONJOB_H

#include <jansson.h>

#include "ctrl/manager.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EXAMPLE_CRONTASK_API_VERSION "example.com/v1"
#define EXAMPLE_CRONTASK_KIND "CronTask"
/* The label every Job of a CronTask carries, with the CronTask's name. */
#define EXAMPLE_CRONTASK_LABEL "crontask"
/* The annotation with a Job's scheduled time (RFC 3339), as Kubernetes'. */
#define EXAMPLE_CRONTASK_SCHEDULED_ANNOTATION "batch.kubernetes.io/cronjob-scheduled-timestamp"
#define EXAMPLE_CRONTASK_DEFAULT_HISTORY 3

/*
 * Register the CronTask controller with mgr (before it starts, or while it
 * runs), and nothing else. config (borrowed, may be NULL) is a JSON object
 * with optional fields:
 *   "name"                     the controller's name (default "crontask")
 *   "maxConcurrentReconciles"  workers (default 1)
 *   "noLeaderElection"         run without waiting for leadership
 * Returns 0, CTRL_ERR_ARG (a malformed config, a duplicate name) or what
 * ctrl_builder_complete returns. The controller keeps no state of its own.
 * Thread: the thread that owns mgr.
 */
int example_cronjob_setup(ctrl_manager *mgr, const json_t *config);

#ifdef __cplusplus
}
#endif

#endif
