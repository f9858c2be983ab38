/*
 * test_accept.c - content negotiation (accept.h): the Accept headers real
 * clients send, and the ones fakeapi must refuse with 406.
 */
#include <criterion/criterion.h>

#include "accept.h"

Test(accept, plain_json_and_absent)
{
    cr_assert_eq(fakeapi__accept_pick(NULL), FAKEAPI__AS_OBJECT);
    cr_assert_eq(fakeapi__accept_pick(""), FAKEAPI__AS_OBJECT);
    cr_assert_eq(fakeapi__accept_pick("application/json"), FAKEAPI__AS_OBJECT);
    cr_assert_eq(fakeapi__accept_pick("*/*"), FAKEAPI__AS_OBJECT);
    cr_assert_eq(fakeapi__accept_pick("application/json, */*"), FAKEAPI__AS_OBJECT);
    cr_assert_eq(fakeapi__accept_pick("application/json;stream=watch"), FAKEAPI__AS_OBJECT);
    cr_assert_eq(fakeapi__accept_pick("application/json; charset=utf-8"), FAKEAPI__AS_OBJECT);
}

Test(accept, what_client_go_sends)
{
    /* Typed clients ask for protobuf first and take JSON. */
    cr_assert_eq(fakeapi__accept_pick("application/vnd.kubernetes.protobuf, application/json"),
                 FAKEAPI__AS_OBJECT);
    /* Discovery: aggregated first, the legacy documents as the fallback. */
    cr_assert_eq(fakeapi__accept_pick("application/json;g=apidiscovery.k8s.io;v=v2;as="
                                      "APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;"
                                      "v=v2beta1;as=APIGroupDiscoveryList,application/json"),
                 FAKEAPI__AS_OBJECT);
    /* kubectl get. */
    cr_assert_eq(fakeapi__accept_pick("application/json;as=Table;v=v1;g=meta.k8s.io,application/"
                                      "json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"),
                 FAKEAPI__AS_TABLE);
    /* The metadata-only client (controller-runtime's OnlyMetadata, the garbage collector). */
    cr_assert_eq(fakeapi__accept_pick("application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;"
                                      "g=meta.k8s.io;v=v1,application/json;as="
                                      "PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"),
                 FAKEAPI__AS_PARTIAL);
}

Test(accept, q_values_order_the_ranges)
{
    cr_assert_eq(fakeapi__accept_pick("application/json;q=0.5, application/json;as=Table;g=meta.k8s.io;v=v1"),
                 FAKEAPI__AS_TABLE);
    cr_assert_eq(fakeapi__accept_pick("application/json;as=Table;g=meta.k8s.io;v=v1;q=0.1, application/json"),
                 FAKEAPI__AS_OBJECT);
    cr_assert_eq(fakeapi__accept_pick("application/json;q=0"), FAKEAPI__AS_NONE);
}

Test(accept, what_cannot_be_written_is_none)
{
    cr_assert_eq(fakeapi__accept_pick("application/vnd.kubernetes.protobuf"), FAKEAPI__AS_NONE);
    cr_assert_eq(fakeapi__accept_pick("application/yaml"), FAKEAPI__AS_NONE);
    cr_assert_eq(fakeapi__accept_pick("text/html"), FAKEAPI__AS_NONE);
    cr_assert_eq(fakeapi__accept_pick("application/json;as=Table;g=example.com;v=v1"),
                 FAKEAPI__AS_NONE);
    cr_assert_eq(fakeapi__accept_pick("application/json;as=Widget;g=meta.k8s.io;v=v1"),
                 FAKEAPI__AS_NONE);
    cr_assert_eq(fakeapi__accept_pick("application/json;stream=banana"), FAKEAPI__AS_NONE);
}

Test(accept, partial_of_keeps_only_metadata)
{
    json_t *o = json_pack("{s:s, s:{s:s}, s:{s:i}}", "kind", "ConfigMap", "metadata", "name", "a",
                          "data", "x", 1);
    json_t *p = fakeapi__partial_of(o);
    cr_assert_str_eq(json_string_value(json_object_get(p, "kind")), "PartialObjectMetadata");
    cr_assert_str_eq(json_string_value(json_object_get(p, "apiVersion")), "meta.k8s.io/v1");
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(p, "metadata"), "name")), "a");
    cr_assert_null(json_object_get(p, "data"));
    json_decref(p);
    json_decref(o);
}
