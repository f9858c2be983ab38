/*
 * test_kubectl_batch.c - what kubectl waits for, against the built-in Job,
 * StatefulSet and DaemonSet controllers on an in-process fakeapi:
 * `kubectl wait --for=condition=complete job/x` returns once the Job's pod
 * succeeds (and not before), and `kubectl rollout status` completes for a
 * StatefulSet and a DaemonSet once their pods are ready. Pods are moved by
 * hand (no kubelet here). Skipped when kubectl is not installed.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "batchtest.h"
#include "ctrl/object.h"

extern char **environ;

#define DOC "{\"controllers\":[\"job\",\"statefulset\",\"daemonset\"],\"nodes\":0}"

static char dir[64];
static char kubeconfig[128];

static bool have_kubectl(void)
{
    return system("kubectl version --client >/dev/null 2>&1") == 0;
}

static void setup(void)
{
    bt_start(DOC, 0);
    snprintf(dir, sizeof dir, "/tmp/kc-kubectl.XXXXXX");
    cr_assert(mkdtemp(dir));
    snprintf(kubeconfig, sizeof kubeconfig, "%s/config", dir);
    FILE *f = fopen(kubeconfig, "w");
    cr_assert(f);
    fprintf(f,
            "apiVersion: v1\nkind: Config\n"
            "clusters: [{name: c, cluster: {server: '%s'}}]\n"
            "contexts: [{name: c, context: {cluster: c, user: u, namespace: default}}]\n"
            "current-context: c\n"
            "users: [{name: u, user: {}}]\n",
            fakeapi_url(bt_api));
    fclose(f);
}

static void teardown(void)
{
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (dir[0] && system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    bt_stop();
}

TestSuite(kubectl_batch, .init = setup, .fini = teardown, .timeout = 120);

/* Start kubectl with args (NULL-terminated), output to dir/out. */
static pid_t kubectl(const char *const *args)
{
    char out[128], cache[128];
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    const char *argv[32] = {"kubectl", "--kubeconfig", kubeconfig, "--cache-dir", cache};
    size_t n = 5;
    for (size_t i = 0; args[i] && n < 31; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid = 0;
    int rc = posix_spawnp(&pid, "kubectl", &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    cr_assert_eq(rc, 0, "spawn kubectl");
    return pid;
}

/* kubectl's exit status, waiting at most ms (-1: still running). */
static int finished(pid_t pid, int ms)
{
    int64_t deadline = bt_mono_ms() + ms;
    for (;;) {
        int st = 0;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
        if (bt_mono_ms() >= deadline)
            return -1;
        bt_nap();
    }
}

static void output(char *buf, size_t len)
{
    char out[128];
    snprintf(out, sizeof out, "%s/out", dir);
    FILE *f = fopen(out, "r");
    size_t n = f ? fread(buf, 1, len - 1, f) : 0;
    buf[n] = 0;
    if (f)
        fclose(f);
}

static void stop(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* Mark every live pod matching selector Running and Ready. */
static void ready_all(const char *selector)
{
    json_t *pods = bt_list("v1", "Pod", "default", selector);
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p)
    {
        json_t *c = bt_cond(p, "Ready");
        if (!json_object_get(json_object_get(p, "metadata"), "deletionTimestamp") &&
            !(c && !strcmp(bt_str(c, "status"), "True")))
            bt_pod_phase("default", bt_str(p, "metadata.name"), "Running", true);
    }
    json_decref(pods);
}

Test(kubectl_batch, wait_for_job_complete)
{
    if (!have_kubectl())
        cr_skip_test("kubectl is not installed");
    bt_apply("apiVersion: batch/v1\n"
             "kind: Job\n"
             "metadata: {name: pi, namespace: default}\n"
             "spec:\n"
             "  template:\n"
             "    spec:\n"
             "      restartPolicy: Never\n"
             "      containers: [{name: pi, image: perl}]\n");
    json_t *pods = NULL;
    BT_WAIT((json_decref(pods), pods = bt_list("v1", "Pod", "default", "job-name=pi"),
             json_array_size(pods) == 1),
            10000, "the job's pod");
    char name[128];
    snprintf(name, sizeof name, "%s", bt_str(json_array_get(pods, 0), "metadata.name"));
    json_decref(pods);
    const char *args[] = {"wait", "--for=condition=complete", "job/pi", "--timeout=60s", NULL};
    pid_t pid = kubectl(args);
    int early = finished(pid, 1500);
    if (early >= 0) {
        char out[2048];
        output(out, sizeof out);
        cr_assert_fail("kubectl wait returned %d before the pod succeeded: %s", early, out);
    }
    bt_pod_phase("default", name, "Succeeded", false);
    int rc = finished(pid, 60000);
    char out[2048];
    output(out, sizeof out);
    if (rc < 0)
        stop(pid);
    cr_assert_eq(rc, 0, "kubectl wait: %d: %s", rc, out);
    cr_assert(strstr(out, "job.batch/pi condition met"), "output: %s", out);
}

Test(kubectl_batch, rollout_status_statefulset)
{
    if (!have_kubectl())
        cr_skip_test("kubectl is not installed");
    bt_apply("apiVersion: apps/v1\n"
             "kind: StatefulSet\n"
             "metadata: {name: web, namespace: default}\n"
             "spec:\n"
             "  replicas: 3\n"
             "  serviceName: web\n"
             "  selector: {matchLabels: {app: web}}\n"
             "  template:\n"
             "    metadata: {labels: {app: web}}\n"
             "    spec:\n"
             "      containers: [{name: c, image: nginx}]\n");
    const char *args[] = {"rollout", "status", "statefulset/web", "--timeout=60s", NULL};
    pid_t pid = kubectl(args);
    int rc = -1;
    int64_t deadline = bt_mono_ms() + 60000;
    while ((rc = finished(pid, 50)) < 0 && bt_mono_ms() < deadline)
        ready_all("app=web");
    char out[4096];
    output(out, sizeof out);
    if (rc < 0)
        stop(pid);
    cr_assert_eq(rc, 0, "kubectl rollout status: %d: %s", rc, out);
    cr_assert(strstr(out, "roll out complete") || strstr(out, "rolling update complete"),
              "output: %s", out);
    json_t *pods = bt_list("v1", "Pod", "default", "app=web");
    cr_assert_eq(json_array_size(pods), 3);
    json_decref(pods);
}

Test(kubectl_batch, rollout_status_daemonset)
{
    if (!have_kubectl())
        cr_skip_test("kubectl is not installed");
    bt_apply("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n");
    bt_apply("apiVersion: v1\nkind: Node\nmetadata: {name: n2}\n");
    bt_apply("apiVersion: apps/v1\n"
             "kind: DaemonSet\n"
             "metadata: {name: agent, namespace: default}\n"
             "spec:\n"
             "  selector: {matchLabels: {app: agent}}\n"
             "  template:\n"
             "    metadata: {labels: {app: agent}}\n"
             "    spec:\n"
             "      containers: [{name: c, image: agent}]\n");
    const char *args[] = {"rollout", "status", "daemonset/agent", "--timeout=60s", NULL};
    pid_t pid = kubectl(args);
    int rc = -1;
    int64_t deadline = bt_mono_ms() + 60000;
    while ((rc = finished(pid, 50)) < 0 && bt_mono_ms() < deadline)
        ready_all("app=agent");
    char out[4096];
    output(out, sizeof out);
    if (rc < 0)
        stop(pid);
    cr_assert_eq(rc, 0, "kubectl rollout status: %d: %s", rc, out);
    cr_assert(strstr(out, "successfully rolled out"), "output: %s", out);
}
