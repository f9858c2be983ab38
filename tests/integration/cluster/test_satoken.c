/*
 * test_satoken.c - the service-account token controller against fakeapi:
 * token Secrets filled with a JWT the server's TokenReview accepts, ca.crt
 * and namespace; deleted when their ServiceAccount goes or is another one.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "cacert.h"
#include "svcfix.h"

#define WAIT_MS 30000
#define SECRETS "/api/v1/namespaces/default/secrets"
#define SAS "/api/v1/namespaces/default/serviceaccounts"

static void setup(void)
{
    fx_start("{\"controllers\":[\"serviceaccount-token\"],\"nodes\":0}");
}

static void teardown(void)
{
    fx_stop();
}

TestSuite(satoken, .init = setup, .fini = teardown, .timeout = 60);

static void token_secret(const char *name, const char *sa, const char *uid)
{
    json_t *s = json_pack("{s:{s:s, s:{s:s}}, s:s}", "metadata", "name", name, "annotations",
                          "kubernetes.io/service-account.name", sa, "type",
                          "kubernetes.io/service-account-token");
    if (uid)
        json_object_set_new(fx_at(s, "metadata.annotations"), "kubernetes.io/service-account.uid",
                            json_string(uid));
    char *body = json_dumps(s, JSON_COMPACT);
    json_decref(s);
    json_decref(fx_req(201, "POST", SECRETS, body));
    free(body);
}

/* TokenReview of token: the answer's status (new reference). */
static json_t *review(const char *token)
{
    json_t *body = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "authentication.k8s.io/v1",
                             "kind", "TokenReview", "spec", "token", token);
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    json_t *r = fx_req(201, "POST", "/apis/authentication.k8s.io/v1/tokenreviews", text);
    free(text);
    json_t *st = json_incref(json_object_get(r, "status"));
    json_decref(r);
    return st;
}

static bool gone(const char *path)
{
    for (int i = 0; i < WAIT_MS / 5; i++) {
        json_t *o = fx_get(path);
        if (!o)
            return true;
        json_decref(o);
        fx_sleep_ms(5);
    }
    return false;
}

Test(satoken, filled_reviewed_and_deleted_with_its_account)
{
    json_t *sa = fx_req(201, "POST", SAS, "{\"metadata\":{\"name\":\"builder\"}}");
    char sa_uid[64];
    snprintf(sa_uid, sizeof sa_uid, "%s", json_string_value(fx_at(sa, "metadata.uid")));
    json_decref(sa);
    token_secret("builder-token", "builder", NULL);
    json_t *s = NULL;
    for (int i = 0; i < WAIT_MS / 5; i++) {
        json_decref(s);
        s = fx_get(SECRETS "/builder-token");
        if (json_object_get(json_object_get(s, "data"), "token"))
            break;
        fx_sleep_ms(5);
    }
    json_t *data = json_object_get(s, "data");
    cr_assert_not_null(json_object_get(data, "token"), "no token");
    cr_assert_eq(json_object_size(data), 3);
    cr_assert_str_eq(fx_b64dec(json_string_value(json_object_get(data, "ca.crt"))),
                     kc__placeholder_ca_pem);
    cr_assert_str_eq(fx_b64dec(json_string_value(json_object_get(data, "namespace"))), "default");
    cr_assert_str_eq(json_string_value(json_object_get(fx_at(s, "metadata.annotations"),
                                                       "kubernetes.io/service-account.uid")),
                     sa_uid);
    char token[8192];
    snprintf(token, sizeof token, "%s",
             fx_b64dec(json_string_value(json_object_get(data, "token"))));
    json_decref(s);
    cr_assert_eq(strncmp(token, "eyJ", 3), 0, "a JWT: %s", token);

    json_t *st = review(token);
    cr_assert(json_is_true(json_object_get(st, "authenticated")), "TokenReview refused: %s",
              json_string_value(json_object_get(st, "error")));
    cr_assert_str_eq(json_string_value(fx_at(st, "user.username")),
                     "system:serviceaccount:default:builder");
    cr_assert_str_eq(json_string_value(fx_at(st, "user.uid")), sa_uid);
    json_decref(st);

    /* The ServiceAccount goes: its token Secret goes, and the token with it. */
    json_decref(fx_req(0, "DELETE", SAS "/builder", NULL));
    cr_assert(gone(SECRETS "/builder-token"), "the token Secret outlived its account");
    st = review(token);
    cr_assert_not(json_is_true(json_object_get(st, "authenticated")));
    json_decref(st);
}

Test(satoken, orphans_deleted_others_left_alone)
{
    json_decref(fx_req(201, "POST", SAS, "{\"metadata\":{\"name\":\"app\"}}"));
    /* No such account, and a uid that is another account's. */
    token_secret("ghost-token", "ghost", NULL);
    token_secret("stale-token", "app", "00000000-0000-0000-0000-000000000000");
    /* Not a token Secret: untouched. */
    json_decref(fx_req(201, "POST", SECRETS,
                       "{\"metadata\":{\"name\":\"plain\",\"annotations\":"
                       "{\"kubernetes.io/service-account.name\":\"ghost\"}},"
                       "\"stringData\":{\"k\":\"v\"}}"));
    cr_assert(gone(SECRETS "/ghost-token"));
    cr_assert(gone(SECRETS "/stale-token"));
    /* A good one, to know the controller has had its chance at "plain". */
    token_secret("app-token", "app", NULL);
    json_t *s = NULL;
    for (int i = 0; i < WAIT_MS / 5; i++) {
        json_decref(s);
        s = fx_get(SECRETS "/app-token");
        if (json_object_get(json_object_get(s, "data"), "token"))
            break;
        fx_sleep_ms(5);
    }
    cr_assert_not_null(json_object_get(json_object_get(s, "data"), "token"));
    json_decref(s);
    json_t *plain = fx_get(SECRETS "/plain");
    cr_assert_not_null(plain);
    cr_assert_eq(json_object_size(json_object_get(plain, "data")), 1);
    json_decref(plain);
}
