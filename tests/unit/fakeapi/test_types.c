/*
 * test_types.c - the generated type tables (fakeapi/types.h): spot checks of
 * facts the rest of the server relies on, and the lookups.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "types.h"

static const fakeapi__tfield *field(const char *msg, const char *json)
{
    const fakeapi__tmsg *m = fakeapi__type_find(msg);
    cr_assert_not_null(m, "%s", msg);
    const fakeapi__tfield *f = fakeapi__type_field_json(m, json, strlen(json), NULL);
    cr_assert_not_null(f, "%s.%s", msg, json);
    return f;
}

Test(types, sorted_and_found)
{
    for (size_t i = 1; i < fakeapi__ntmsgs; i++)
        cr_assert_lt(strcmp(fakeapi__tmsgs[i - 1].name, fakeapi__tmsgs[i].name), 0);
    for (size_t i = 0; i < fakeapi__ntmsgs; i++) {
        cr_assert_eq(fakeapi__type_find(fakeapi__tmsgs[i].name), &fakeapi__tmsgs[i]);
        for (uint16_t j = 1; j < fakeapi__tmsgs[i].nfields; j++)
            cr_assert_lt(fakeapi__tmsgs[i].fields[j - 1].number, fakeapi__tmsgs[i].fields[j].number);
    }
    cr_assert_null(fakeapi__type_find("k8s.io.api.apps.v1.NoSuchThing"));
    cr_assert_null(fakeapi__type_find(NULL));
    cr_assert_gt(strlen(fakeapi__types_source), 40);
}

Test(types, pod_containers_are_a_map_keyed_by_name)
{
    const fakeapi__tfield *f = field("k8s.io.api.core.v1.PodSpec", "containers");
    cr_assert_eq(f->number, 2);
    cr_assert_eq(f->type, FAKEAPI__T_MSG);
    cr_assert(f->flags & FAKEAPI__F_REPEATED);
    cr_assert_eq(f->list, FAKEAPI__L_MAP);
    cr_assert_str_eq(f->list_keys, "name");
    cr_assert_str_eq(f->merge_key, "name");
    cr_assert(f->patch & FAKEAPI__P_MERGE);
    cr_assert_str_eq(fakeapi__type_at(f->msg)->name, "k8s.io.api.core.v1.Container");

    f = field("k8s.io.api.core.v1.Container", "ports");
    cr_assert_str_eq(f->list_keys, "containerPort,protocol");
    cr_assert_str_eq(f->merge_key, "containerPort");
}

Test(types, maps_scalars_and_specials)
{
    const fakeapi__tfield *f = field("k8s.io.api.core.v1.ConfigMap", "data");
    cr_assert(f->flags & FAKEAPI__F_MAP);
    cr_assert_eq(f->map_key, FAKEAPI__T_STRING);
    cr_assert_eq(f->type, FAKEAPI__T_STRING);
    f = field("k8s.io.api.core.v1.Secret", "data");
    cr_assert_eq(f->type, FAKEAPI__T_BYTES);
    f = field("k8s.io.api.core.v1.ResourceRequirements", "limits");
    cr_assert_eq(fakeapi__type_at(f->msg)->special, FAKEAPI__S_QUANTITY);
    f = field("k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta", "creationTimestamp");
    cr_assert_eq(fakeapi__type_at(f->msg)->special, FAKEAPI__S_TIME);
    f = field("k8s.io.api.apps.v1.DeploymentStrategy", "rollingUpdate");
    const fakeapi__tfield *g = field("k8s.io.api.apps.v1.RollingUpdateDeployment", "maxSurge");
    cr_assert_eq(fakeapi__type_at(g->msg)->special, FAKEAPI__S_INTORSTRING);
    cr_assert(field("k8s.io.api.apps.v1.DeploymentSpec", "strategy")->patch & FAKEAPI__P_RETAINKEYS);
    cr_assert_eq(fakeapi__type_find("k8s.io.api.authentication.v1.ExtraValue")->special,
                 FAKEAPI__S_SLICE);
    cr_assert(field("k8s.io.api.apps.v1.DeploymentSpec", "selector")->flags & FAKEAPI__F_REQUIRED);
}

Test(types, go_pointers)
{
    cr_assert(field("k8s.io.api.apps.v1.DeploymentSpec", "replicas")->flags & FAKEAPI__F_POINTER);
    cr_assert_not(field("k8s.io.api.apps.v1.DeploymentSpec", "paused")->flags & FAKEAPI__F_POINTER);
    cr_assert(field("k8s.io.api.core.v1.PodSpec", "terminationGracePeriodSeconds")->flags &
              FAKEAPI__F_POINTER);
    cr_assert_not(field("k8s.io.api.core.v1.PodSpec", "hostNetwork")->flags & FAKEAPI__F_POINTER);
    cr_assert(field("k8s.io.api.core.v1.ConfigMap", "immutable")->flags & FAKEAPI__F_POINTER);
    cr_assert(field("k8s.io.apimachinery.pkg.apis.meta.v1.OwnerReference", "controller")->flags &
              FAKEAPI__F_POINTER);
}

Test(types, inline_fields_are_looked_through)
{
    const fakeapi__tmsg *vol = fakeapi__type_find("k8s.io.api.core.v1.Volume");
    const fakeapi__tmsg *owner = NULL;
    const fakeapi__tfield *f = fakeapi__type_field_json(vol, "configMap", 9, &owner);
    cr_assert_not_null(f);
    cr_assert_str_eq(owner->name, "k8s.io.api.core.v1.VolumeSource");
    f = fakeapi__type_field_json(vol, "name", 4, &owner);
    cr_assert_str_eq(owner->name, "k8s.io.api.core.v1.Volume");
    cr_assert_null(fakeapi__type_field_json(vol, "nosuch", 6, NULL));
    /* Never-in-JSON fields are not found by a JSON key. */
    const fakeapi__tmsg *raw = fakeapi__type_find("k8s.io.apimachinery.pkg.runtime.RawExtension");
    cr_assert_null(fakeapi__type_field_json(raw, "raw", 3, NULL));
    cr_assert_not_null(fakeapi__type_field_num(raw, 1));
}

Test(types, resources)
{
    const fakeapi__tres *r = fakeapi__type_resource("apps", "v1", "deployments");
    cr_assert_not_null(r);
    cr_assert(r->namespaced);
    cr_assert_str_eq(r->short_names, "deploy");
    cr_assert_str_eq(r->categories, "all");
    cr_assert_str_eq(fakeapi__type_at(r->msg)->name, "k8s.io.api.apps.v1.Deployment");
    cr_assert_str_eq(fakeapi__type_at(r->list_msg)->name, "k8s.io.api.apps.v1.DeploymentList");
    r = fakeapi__type_resource("apps", "v1", "deployments/scale");
    cr_assert_str_eq(r->kind_group_version, "autoscaling/v1");
    cr_assert_str_eq(fakeapi__type_at(r->msg)->name, "k8s.io.api.autoscaling.v1.Scale");
    r = fakeapi__type_resource("", "v1", "namespaces");
    cr_assert_not(r->namespaced);
    cr_assert_null(strstr(r->verbs, "deletecollection"));
    r = fakeapi__type_resource("authorization.k8s.io", "v1", "selfsubjectaccessreviews");
    cr_assert_str_eq(r->verbs, "create");
    cr_assert_eq(r->list_msg, -1);
    cr_assert(fakeapi__type_resource("autoscaling", "v2", "horizontalpodautoscalers")->storage);
    cr_assert_not(fakeapi__type_resource("autoscaling", "v1", "horizontalpodautoscalers")->storage);
    cr_assert_null(fakeapi__type_resource("apps", "v1", "nosuch"));
    cr_assert_str_eq(fakeapi__type_of_kind("v1", "Pod")->name, "k8s.io.api.core.v1.Pod");
    cr_assert_str_eq(fakeapi__type_of_kind("policy/v1", "PodDisruptionBudget")->name,
                     "k8s.io.api.policy.v1.PodDisruptionBudget");
    cr_assert_null(fakeapi__type_of_kind("apps/v1", "Pod"));
}
