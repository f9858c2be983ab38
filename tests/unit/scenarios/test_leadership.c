/*
 * test_leadership.c - the singleLeader checker over hand-written traces:
 * writes by the holder within its hold pass; a write by a replica that does
 * not hold the Lease (another holds it, its hold ran out, nobody holds it
 * yet, it was deleted) fails with the replica, the write and the time;
 * reads, failed and dropped writes, and clients that are no replica do not
 * count; lines are read as they come, a half-written one when it is whole.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "leadership.h"

#define EPOCH 1767225600000000000LL
#define SEC 1000000000LL
#define LEASE "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
#define PODS "/api/v1/namespaces/default/pods"

static char path[64];
static FILE *trace;
static scn__leadership *lt;
static const scn_cond cond = {
    .kind = SCN_COND_SINGLE_LEADER, .ns = "kube-system", .name = "rs", .lease_ns = 15 * SEC};

/* "scenario/rs-K" and "scenario/rs-K/<component>" are replica K; so is
 * "scenario/rs-K.r2" (its second incarnation, another identity). */
static int who(void *ud, const char *client, char *identity, size_t len)
{
    (void)ud;
    int k;
    char rest[64] = "";
    if (sscanf(client, "scenario/rs-%d%63s", &k, rest) < 1)
        return -1;
    char *slash = strchr(rest, '/');
    if (slash)
        *slash = '\0';
    snprintf(identity, len, "scenario/rs-%d%s", k, rest);
    return k;
}

static void setup(void)
{
    snprintf(path, sizeof path, "/tmp/scn-lead-XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    trace = fdopen(fd, "w");
    cr_assert_not_null(trace);
    cr_assert_eq(scn__leadership_new(&cond, path, EPOCH, &lt), 0);
}

static void teardown(void)
{
    scn__leadership_free(lt);
    fclose(trace);
    unlink(path);
}

TestSuite(leadership, .init = setup, .fini = teardown);

/* One request line, as fakeapi's trace writes it (keys sorted). */
static void req(double t, const char *client, const char *verb, const char *method, const char *p,
                int code)
{
    fprintf(trace,
            "{\"client\":\"%s\",\"code\":%d,\"kind\":\"request\",\"method\":\"%s\",\"path\":\"%s\","
            "\"rv\":\"1\",\"t\":%lld,\"verb\":\"%s\"}\n",
            client, code, method, p, EPOCH + (long long)(t * (double)SEC), verb);
    fflush(trace);
}

static bool check(char *msg, size_t len)
{
    return scn__leadership_check(lt, who, NULL, msg, len);
}

static void assert_holds(void)
{
    char msg[1024];
    cr_assert(check(msg, sizeof msg), "broken: %s", msg);
}

static void assert_broken(const char *expected)
{
    char msg[1024];
    cr_assert_not(check(msg, sizeof msg), "held, expected: %s", expected);
    cr_assert_str_eq(msg, expected);
}

Test(leadership, the_holder_writes_within_its_hold)
{
    req(0, "scenario/rs-0/leader-election", "get", "GET", LEASE "/rs", 404);
    req(0, "scenario/rs-0/leader-election", "create", "POST", LEASE, 201);
    req(0, "scenario/rs-0/podset", "create", "POST", PODS, 201);
    req(2, "scenario/rs-0/leader-election", "update", "PUT", LEASE "/rs", 200);
    req(16.9, "scenario/rs-0/podset", "delete", "DELETE", PODS "/web-1", 200);
    assert_holds();
    /* the others only read, and fail to take the Lease */
    req(17, "scenario/rs-1/leader-election", "get", "GET", LEASE "/rs", 200);
    req(17, "scenario/rs-1/leader-election", "update", "PUT", LEASE "/rs", 409);
    req(17, "scenario/rs-2/podset", "list", "GET", PODS, 200);
    /* dropped (0) and refused writes changed nothing */
    req(17, "scenario/rs-2/podset", "create", "POST", PODS, 0);
    req(17, "scenario/rs-2/podset", "update", "PUT", PODS "/web-1", 409);
    /* the driver and other clients are no replica */
    req(17, "kubectl", "create", "POST", PODS, 201);
    assert_holds();
    cr_assert_eq(scn__leadership_changes(lt), 0);
}

Test(leadership, a_write_by_another_than_the_holder_breaks_it)
{
    req(0, "scenario/rs-0/leader-election", "create", "POST", LEASE, 201);
    req(1.5, "scenario/rs-1/podset", "update", "PUT", PODS "/web-1", 200);
    assert_broken("replica 1 (scenario/rs-1) wrote without holding Lease kube-system/rs: "
                  "update PUT " PODS "/web-1 -> 200 at 1.500s (client scenario/rs-1/podset); "
                  "the Lease was held by replica 0 (scenario/rs-0) since 0.000s, last renewed "
                  "at 0.000s");
}

Test(leadership, a_write_after_the_hold_ran_out_breaks_it)
{
    req(0, "scenario/rs-0/leader-election", "create", "POST", LEASE, 201);
    req(4, "scenario/rs-0/leader-election", "update", "PUT", LEASE "/rs", 200);
    req(18.999, "scenario/rs-0/podset", "create", "POST", PODS, 201);
    assert_holds();
    req(19, "scenario/rs-0/podset", "create", "POST", PODS, 201);
    assert_broken("replica 0 (scenario/rs-0) wrote without holding Lease kube-system/rs: "
                  "create POST " PODS " -> 201 at 19.000s (client scenario/rs-0/podset); its "
                  "hold ran out at 19.000s (last renewed at 4.000s, leaseDuration 15.000s)");
}

Test(leadership, a_write_before_anyone_holds_it_breaks_it)
{
    req(0, "scenario/rs-3/podset", "patch", "PATCH", PODS "/web-1", 200);
    assert_broken("replica 3 (scenario/rs-3) wrote without holding Lease kube-system/rs: "
                  "patch PATCH " PODS "/web-1 -> 200 at 0.000s (client scenario/rs-3/podset); "
                  "no replica had written the Lease yet");
}

Test(leadership, a_takeover_ends_the_old_hold)
{
    req(0, "scenario/rs-0/leader-election", "create", "POST", LEASE, 201);
    req(20, "scenario/rs-1/leader-election", "update", "PUT", LEASE "/rs", 200);
    req(20, "scenario/rs-1/podset", "create", "POST", PODS, 201);
    assert_holds();
    cr_assert_eq(scn__leadership_changes(lt), 1);
    /* the old leader writes again: it is no longer the holder */
    req(21, "scenario/rs-0/podset", "create", "POST", PODS, 201);
    assert_broken("replica 0 (scenario/rs-0) wrote without holding Lease kube-system/rs: "
                  "create POST " PODS " -> 201 at 21.000s (client scenario/rs-0/podset); "
                  "the Lease was held by replica 1 (scenario/rs-1) since 20.000s, last renewed "
                  "at 20.000s");
}

Test(leadership, a_restarted_replica_is_another_identity)
{
    req(0, "scenario/rs-0/leader-election", "create", "POST", LEASE, 201);
    req(5, "scenario/rs-0.r2/podset", "create", "POST", PODS, 201);
    assert_broken("replica 0 (scenario/rs-0.r2) wrote without holding Lease kube-system/rs: "
                  "create POST " PODS " -> 201 at 5.000s (client scenario/rs-0.r2/podset); "
                  "the Lease was held by replica 0 (scenario/rs-0) since 0.000s, last renewed "
                  "at 0.000s");
}

Test(leadership, a_deleted_lease_is_held_by_nobody)
{
    req(0, "scenario/rs-0/leader-election", "create", "POST", LEASE, 201);
    req(1, "scenario/rs-0/leader-election", "delete", "DELETE", LEASE "/rs", 200);
    req(2, "scenario/rs-0/podset", "create", "POST", PODS, 201);
    assert_broken("replica 0 (scenario/rs-0) wrote without holding Lease kube-system/rs: "
                  "create POST " PODS " -> 201 at 2.000s (client scenario/rs-0/podset); "
                  "the Lease had been deleted");
}

Test(leadership, other_leases_are_writes_like_any_other)
{
    req(0, "scenario/rs-0/leader-election", "create", "POST", LEASE, 201);
    req(1, "scenario/rs-1/x", "update", "PUT", LEASE "/other", 200);
    char msg[1024];
    cr_assert_not(check(msg, sizeof msg));
    cr_assert(strstr(msg, "replica 1 (scenario/rs-1) wrote without holding") != NULL, "%s", msg);
}

Test(leadership, lines_are_read_as_they_come)
{
    req(0, "scenario/rs-0/leader-election", "create", "POST", LEASE, 201);
    assert_holds();
    assert_holds(); /* nothing new */
    /* half a line: not read until it is whole */
    fputs("{\"client\":\"scenario/rs-1/podset\",\"code\":201,\"kind\":\"request\",", trace);
    fflush(trace);
    assert_holds();
    fprintf(trace,
            "\"method\":\"POST\",\"path\":\"" PODS "\",\"rv\":\"2\",\"t\":%lld,"
            "\"verb\":\"create\"}\n",
            EPOCH + 3 * SEC);
    /* other kinds of lines are skipped */
    fputs("{\"kind\":\"fault\",\"action\":\"drop\"}\n", trace);
    fflush(trace);
    char msg[1024];
    cr_assert_not(check(msg, sizeof msg));
    cr_assert(strstr(msg, "create POST " PODS " -> 201 at 3.000s") != NULL, "%s", msg);
}

Test(leadership, clients_are_replicas_exactly)
{
    char id[64];
    cr_assert(scn__client_is("scenario/rs-1", "scenario/rs-1", id, sizeof id));
    cr_assert_str_eq(id, "scenario/rs-1");
    cr_assert(scn__client_is("scenario/rs-1", "scenario/rs-1/podset", id, sizeof id));
    cr_assert_str_eq(id, "scenario/rs-1");
    cr_assert(scn__client_is("scenario/rs-1", "scenario/rs-1.r12/leader-election", id, sizeof id));
    cr_assert_str_eq(id, "scenario/rs-1.r12");
    /* replica 1 is not replica 10 or 11, and not another name that starts the same */
    cr_assert_not(scn__client_is("scenario/rs-1", "scenario/rs-10", id, sizeof id));
    cr_assert_not(scn__client_is("scenario/rs-1", "scenario/rs-11/podset", id, sizeof id));
    cr_assert_not(scn__client_is("scenario/rs-1", "scenario/rs-1x/podset", id, sizeof id));
    cr_assert_not(scn__client_is("scenario/rs-1", "scenario/rs-1.rx", id, sizeof id));
    cr_assert_not(scn__client_is("scenario/rs-1", "scenario/rs-1.r2x", id, sizeof id));
    cr_assert_not(scn__client_is("scenario/rs-1", "scenario/rs-", id, sizeof id));
    cr_assert_not(scn__client_is("scenario/rs-1", "kubectl/v1.31", id, sizeof id));
}
