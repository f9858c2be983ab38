/*
 * test_config.c - the cluster document (kc/cluster.h): defaults, node
 * specs, pod CIDRs, controller lists, stages files, and every malformed
 * case with the key it names.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cluster_int.h"

static kc_config *parse(const char *text, char *err, size_t len)
{
    json_error_t jerr;
    json_t *doc = text ? json_loads(text, 0, &jerr) : NULL;
    cr_assert(!text || doc, "test input is JSON: %s", jerr.text);
    kc_config *cfg = NULL;
    err[0] = 0;
    int rc = kc_config_new(doc, NULL, &cfg, err, len);
    json_decref(doc);
    cr_assert((rc == 0) == (cfg != NULL));
    return cfg;
}

static void expect_error(const char *text, const char *needle)
{
    char err[512];
    kc_config *cfg = parse(text, err, sizeof err);
    cr_assert_null(cfg, "%s parsed", text);
    cr_assert(strstr(err, needle), "%s: error \"%s\" lacks \"%s\"", text, err, needle);
}

Test(cluster_config, defaults)
{
    char err[512];
    kc_config *cfg = parse(NULL, err, sizeof err);
    cr_assert_not_null(cfg, "%s", err);
    cr_assert_eq(cfg->n_nodes, 3);
    cr_assert_str_eq(cfg->nodes[0].name, "node-0");
    cr_assert_str_eq(cfg->nodes[2].name, "node-2");
    cr_assert_str_eq(json_string_value(json_object_get(cfg->nodes[1].capacity, "cpu")), "4");
    cr_assert_str_eq(json_string_value(json_object_get(cfg->nodes[1].capacity, "pods")), "110");
    cr_assert_str_eq(
        json_string_value(json_object_get(cfg->nodes[1].labels, "kubernetes.io/hostname")),
        "node-1");
    /* 10.244.0.0/16: node i gets 10.244.i.0/24 */
    cr_assert_eq(cfg->pod_cidr, (10u << 24) | (244u << 16));
    cr_assert_eq(cfg->nodes[2].pod_net, (10u << 24) | (244u << 16) | (2u << 8));
    for (const char *const *n = kc_controller_names(); *n; n++)
        cr_assert(kc_config_enabled(cfg, *n), "%s off by default", *n);
    cr_assert(!kc_config_enabled(cfg, "no-such-controller"));
    kc_config_free(cfg);
}

Test(cluster_config, nodes_from_a_template_and_a_list)
{
    char err[512];
    kc_config *cfg =
        parse("{\"nodes\": 2, \"node\": {\"cpu\": 8, \"memory\": \"32Gi\", \"labels\": {\"zone\": "
              "\"a\"}, \"taints\": [{\"key\": \"gpu\", \"effect\": \"NoSchedule\"}]}}",
              err, sizeof err);
    cr_assert_not_null(cfg, "%s", err);
    cr_assert_eq(cfg->n_nodes, 2);
    cr_assert_str_eq(json_string_value(json_object_get(cfg->nodes[1].capacity, "cpu")), "8");
    cr_assert_str_eq(json_string_value(json_object_get(cfg->nodes[1].capacity, "memory")), "32Gi");
    cr_assert_str_eq(json_string_value(json_object_get(cfg->nodes[0].labels, "zone")), "a");
    cr_assert_eq(json_array_size(cfg->nodes[0].taints), 1);
    kc_config_free(cfg);

    cfg = parse("{\"nodes\": [{\"name\": \"big\", \"cpu\": \"64\"}, {}], \"podCIDR\": "
                "\"10.1.0.0/23\"}",
                err, sizeof err);
    cr_assert_not_null(cfg, "%s", err);
    cr_assert_str_eq(cfg->nodes[0].name, "big");
    cr_assert_str_eq(json_string_value(json_object_get(cfg->nodes[0].capacity, "cpu")), "64");
    cr_assert_str_eq(cfg->nodes[1].name, "node-1");
    cr_assert_eq(cfg->nodes[1].pod_net, (10u << 24) | (1u << 16) | (1u << 8));
    kc_config_free(cfg);

    cfg = parse("{\"nodes\": 0}", err, sizeof err);
    cr_assert_not_null(cfg, "%s", err);
    cr_assert_eq(cfg->n_nodes, 0);
    kc_config_free(cfg);
}

Test(cluster_config, malformed_documents_name_the_key)
{
    expect_error("[]", "a mapping");
    expect_error("{\"nodez\": 3}", "unknown key \"nodez\"");
    expect_error("{\"nodes\": -1}", "nodes: 0 to");
    expect_error("{\"nodes\": \"three\"}", "nodes: a count or a list");
    expect_error("{\"node\": {\"cpus\": 4}}", "node: unknown key \"cpus\"");
    expect_error("{\"node\": {\"cpu\": true}}", "node.cpu: a quantity");
    expect_error("{\"nodes\": [{\"labels\": {\"a\": 1}}]}", "nodes[0].labels.a: a string");
    expect_error("{\"nodes\": [{\"taints\": [{\"key\": \"k\", \"effect\": \"Sometimes\"}]}]}",
                 "nodes[0].taints[0]");
    expect_error("{\"nodes\": [{\"name\": \"a\"}, {\"name\": \"a\"}]}", "\"a\" twice");
    expect_error("{\"podCIDR\": \"10.0.0.0\"}", "podCIDR: an IPv4 CIDR");
    expect_error("{\"podCIDR\": \"10.0.0.0/28\"}", "from /8 to /24");
    expect_error("{\"podCIDR\": \"10.0.0.0/24\", \"nodes\": 2}", "room for 1 nodes");
    expect_error("{\"controllers\": \"all\"}", "controllers: a list");
    expect_error("{\"disable\": [\"no-such\"]}", "disable[0]: no built-in controller");
    expect_error("{\"stages\": 3}", "stages: a file name or a list");
    expect_error("{\"stages\": \"/nonexistent/stages.yaml\"}", "stages: /nonexistent/stages.yaml");
}

Test(cluster_config, controllers_and_disable_select)
{
    const char *const *names = kc_controller_names();
    if (!names[0] || !names[1])
        cr_skip_test("fewer than two built-in controllers");
    char doc[256], err[512];
    snprintf(doc, sizeof doc, "{\"controllers\": [\"%s\", \"%s\"], \"disable\": [\"%s\"]}",
             names[0], names[1], names[1]);
    kc_config *cfg = parse(doc, err, sizeof err);
    cr_assert_not_null(cfg, "%s", err);
    cr_assert(kc_config_enabled(cfg, names[0]));
    cr_assert(!kc_config_enabled(cfg, names[1]));
    for (const char *const *n = names + 2; *n; n++)
        cr_assert(!kc_config_enabled(cfg, *n), "%s on", *n);
    kc_config_free(cfg);
}

Test(cluster_config, stages_from_a_file_relative_to_the_document)
{
    char dir[] = "/tmp/kc-config-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[300], stages[300], err[512];
    snprintf(stages, sizeof stages, "%s/stages.yaml", dir);
    snprintf(path, sizeof path, "%s/cluster.yaml", dir);
    FILE *f = fopen(stages, "w");
    fputs("- {name: a}\n- {name: b}\n", f);
    fclose(f);
    f = fopen(path, "w");
    fputs("nodes: 1\nstages: stages.yaml\n", f);
    fclose(f);
    kc_config *cfg = NULL;
    cr_assert_eq(kc_config_load(path, &cfg, err, sizeof err), 0, "%s", err);
    cr_assert_eq(json_array_size(cfg->stages), 2);
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(cfg->stages, 1), "name")),
                     "b");
    /* a second reference keeps it alive */
    kc_config *again = kc_config_ref(cfg);
    kc_config_free(cfg);
    cr_assert_eq(again->n_nodes, 1);
    kc_config_free(again);
    unlink(stages);
    unlink(path);
    rmdir(dir);
}
