/*
 * test_yaml.c - kh_yaml_load / kh_yaml_load_file / kh_yaml_dump.
 */
#include <criterion/criterion.h>
#include "kh/yaml.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- helpers ---- */

static json_t *load_ok(const char *text)
{
    kh_yaml_error err = {0};
    json_t *docs = NULL;
    int rc = kh_yaml_load(text, strlen(text), &docs, &err);

    cr_assert_eq(rc, 0, "load failed at %d:%d: %s", err.line, err.column, err.message);
    cr_assert(json_is_array(docs));
    return docs;
}

/* The only document of text. */
static json_t *load_one(const char *text)
{
    json_t *docs = load_ok(text);
    json_t *doc;

    cr_assert_eq(json_array_size(docs), 1, "expected 1 document, got %zu", json_array_size(docs));
    doc = json_incref(json_array_get(docs, 0));
    json_decref(docs);
    return doc;
}

static kh_yaml_error load_err(const char *text)
{
    kh_yaml_error err = {0};
    json_t *sentinel = json_string("untouched");
    json_t *docs = sentinel;

    cr_assert_eq(kh_yaml_load(text, strlen(text), &docs, &err), -1, "expected an error");
    cr_assert_eq(docs, sentinel, "docs changed on error");
    cr_assert_neq(err.message[0], '\0');
    json_decref(sentinel);
    return err;
}

/* Asserts that text loads to exactly the JSON in expected. */
static void assert_loads_as(const char *text, const char *expected)
{
    json_t *want = json_loads(expected, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    json_t *got = load_one(text);
    char *dump = json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT);

    cr_assert_not_null(want, "bad expected JSON %s", expected);
    cr_assert(json_equal(got, want), "%s\n  loaded as %s\n  expected  %s", text, dump, expected);
    free(dump);
    json_decref(want);
    json_decref(got);
}

/* Dumps v, loads the text back and asserts it is equal; returns the text. */
static char *assert_round_trip(const json_t *v)
{
    char *text = kh_yaml_dump(v);
    json_t *back;

    cr_assert_not_null(text);
    back = load_one(text);
    cr_assert(json_equal(back, v), "round trip changed the value:\n%s", text);
    json_decref(back);
    return text;
}

static void round_trip_yaml(const char *yaml)
{
    json_t *v = load_one(yaml);

    free(assert_round_trip(v));
    json_decref(v);
}

static const char deployment[] = "# A typical manifest\n"
                                 "apiVersion: apps/v1\n"
                                 "kind: Deployment\n"
                                 "metadata:\n"
                                 "  name: web\n"
                                 "  namespace: default\n"
                                 "  labels:\n"
                                 "    app: web\n"
                                 "    tier: \"1\"\n"
                                 "  annotations:\n"
                                 "    kubernetes.io/change-cause: 'rollout: v2'\n"
                                 "spec:\n"
                                 "  replicas: 3\n"
                                 "  selector:\n"
                                 "    matchLabels: {app: web}\n"
                                 "  template:\n"
                                 "    metadata:\n"
                                 "      labels:\n"
                                 "        app: web\n"
                                 "    spec:\n"
                                 "      containers:\n"
                                 "      - name: nginx\n"
                                 "        image: nginx:1.25\n"
                                 "        args: [\"--debug\", \"true\"]\n"
                                 "        ports:\n"
                                 "          - containerPort: 80\n"
                                 "            protocol: TCP\n"
                                 "        env:\n"
                                 "        - name: PORT\n"
                                 "          value: \"8080\"\n"
                                 "        - name: EMPTY\n"
                                 "        resources:\n"
                                 "          limits: {cpu: 500m, memory: 128Mi}\n"
                                 "        readinessProbe:\n"
                                 "          httpGet: {path: /healthz, port: 80}\n"
                                 "          initialDelaySeconds: 5\n";

static const char crd[] =
    "apiVersion: apiextensions.k8s.io/v1\n"
    "kind: CustomResourceDefinition\n"
    "metadata:\n"
    "  name: widgets.example.com\n"
    "spec:\n"
    "  group: example.com\n"
    "  scope: Namespaced\n"
    "  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}\n"
    "  versions:\n"
    "  - name: v1\n"
    "    served: true\n"
    "    storage: true\n"
    "    subresources:\n"
    "      status: {}\n"
    "    additionalPrinterColumns:\n"
    "    - {name: Size, type: integer, jsonPath: .spec.size}\n"
    "    schema:\n"
    "      openAPIV3Schema:\n"
    "        type: object\n"
    "        description: |\n"
    "          A widget.\n"
    "          Second line: with a colon.\n"
    "        properties:\n"
    "          spec:\n"
    "            type: object\n"
    "            required: [size]\n"
    "            x-kubernetes-preserve-unknown-fields: true\n"
    "            properties:\n"
    "              size: {type: integer, minimum: 0, maximum: 100, default: 1}\n"
    "              ratio: {type: number, default: 0.5}\n"
    "              mode: {type: string, enum: [\"on\", \"off\", \"yes\", \"\"]}\n"
    "              pattern: {type: string, pattern: '^[a-z]+(-[a-z]+)*$'}\n"
    "              tags:\n"
    "                type: array\n"
    "                items: {type: string}\n"
    "          status:\n"
    "            type: object\n"
    "            nullable: true\n";

/* ---- documents and streams ---- */

Test(yaml_load, deployment_manifest)
{
    json_t *d = load_one(deployment);
    json_t *c = json_array_get(
        json_object_get(
            json_object_get(json_object_get(json_object_get(d, "spec"), "template"), "spec"),
            "containers"),
        0);

    cr_assert_str_eq(json_string_value(json_object_get(d, "kind")), "Deployment");
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(d, "spec"), "replicas")), 3);
    cr_assert(json_is_integer(json_object_get(json_object_get(d, "spec"), "replicas")));
    cr_assert_str_eq(json_string_value(json_object_get(c, "image")), "nginx:1.25");
    cr_assert_str_eq(json_string_value(json_array_get(json_object_get(c, "args"), 1)), "true");
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(json_object_get(c, "ports"), 0),
                                                    "containerPort")),
                 80);
    cr_assert_str_eq(
        json_string_value(json_object_get(json_array_get(json_object_get(c, "env"), 0), "value")),
        "8080");
    cr_assert_eq(json_object_size(json_array_get(json_object_get(c, "env"), 1)), 1);
    cr_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(json_object_get(d, "metadata"), "labels"), "tier")),
                     "1");
    cr_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(json_object_get(d, "metadata"), "annotations"),
                         "kubernetes.io/change-cause")),
                     "rollout: v2");
    json_decref(d);
}

Test(yaml_load, multi_document_skips_empty_ones)
{
    json_t *docs = load_ok("# leading comment\n"
                           "---\n"
                           "---\n"
                           "# only a comment\n"
                           "---\n"
                           "a: 1\n"
                           "...\n"
                           "---\n"
                           "- x\n"
                           "---\n");

    cr_assert_eq(json_array_size(docs), 2);
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(docs, 0), "a")), 1);
    cr_assert_str_eq(json_string_value(json_array_get(json_array_get(docs, 1), 0)), "x");
    json_decref(docs);
}

Test(yaml_load, explicit_null_document_is_kept)
{
    json_t *docs = load_ok("--- ~\n--- null\n---\n--- \"\"\n");

    cr_assert_eq(json_array_size(docs), 3);
    cr_assert(json_is_null(json_array_get(docs, 0)));
    cr_assert(json_is_null(json_array_get(docs, 1)));
    cr_assert_str_eq(json_string_value(json_array_get(docs, 2)), "");
    json_decref(docs);
}

Test(yaml_load, empty_input_is_empty_array)
{
    const char *inputs[] = {"", "\n\n", "# just a comment\n# another\n", "   \n"};
    json_t *docs = NULL;

    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        docs = load_ok(inputs[i]);
        cr_assert_eq(json_array_size(docs), 0, "input %zu", i);
        json_decref(docs);
    }
    cr_assert_eq(kh_yaml_load(NULL, 0, &docs, NULL), 0);
    cr_assert_eq(json_array_size(docs), 0);
    json_decref(docs);
}

Test(yaml_load, invalid_arguments)
{
    kh_yaml_error err = {0};
    json_t *docs = NULL;

    cr_assert_eq(kh_yaml_load("a: 1", 4, NULL, &err), -1);
    cr_assert_str_eq(err.message, "invalid argument");
    cr_assert_eq(kh_yaml_load(NULL, 3, &docs, NULL), -1);
    cr_assert_null(docs);
    cr_assert_eq(kh_yaml_load_file(NULL, &docs, NULL), -1);
    cr_assert_null(docs);
}

Test(yaml_load, text_need_not_be_nul_terminated)
{
    const char buf[] = {'a', ':', ' ', '1', '2', 'x', 'y', 'z'};
    json_t *docs = NULL;

    cr_assert_eq(kh_yaml_load(buf, 5, &docs, NULL), 0);
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(docs, 0), "a")), 12);
    json_decref(docs);
}

Test(yaml_load, crlf_and_bom)
{
    assert_loads_as("\xEF\xBB\xBF"
                    "a: 1\r\nb:\r\n  - x\r\n",
                    "{\"a\":1,\"b\":[\"x\"]}");
    assert_loads_as("\xEF\xBB\xBF{\"a\": [1]}", "{\"a\":[1]}");
}

/* ---- JSON ---- */

Test(yaml_load, json_document)
{
    assert_loads_as("{\"kind\": \"Pod\", \"n\": 1.5, \"ok\": true, \"none\": null,"
                    " \"list\": [1, \"2\", {\"x\": []}], \"u\": \"caf\\u00e9\"}",
                    "{\"kind\":\"Pod\",\"n\":1.5,\"ok\":true,\"none\":null,"
                    "\"list\":[1,\"2\",{\"x\":[]}],\"u\":\"caf\xC3\xA9\"}");
}

Test(yaml_load, concatenated_json_values)
{
    json_t *docs = load_ok("{\"a\": 1}{\"b\": 2}\n\n  {\"c\": {\"d\": [3]}}\n[4, 5]\n");

    cr_assert_eq(json_array_size(docs), 4);
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(docs, 1), "b")), 2);
    cr_assert_eq(json_integer_value(json_array_get(json_array_get(docs, 3), 1)), 5);
    json_decref(docs);
    /* JSON documents separated YAML's way go through the YAML loader. */
    docs = load_ok("{\"a\": 1}\n---\n{\"b\": \"x\\u0000y\"}\n");
    cr_assert_eq(json_array_size(docs), 2);
    cr_assert_eq(json_string_length(json_object_get(json_array_get(docs, 1), "b")), 3);
    json_decref(docs);
}

/* Concatenated, so only the JSON path can read it. */
Test(yaml_load, json_with_nul_escape)
{
    json_t *docs = load_ok("{\"s\": \"a\\u0000b\"}{\"t\": 1}");

    cr_assert_eq(json_array_size(docs), 2);
    cr_assert_eq(json_string_length(json_object_get(json_array_get(docs, 0), "s")), 3);
    json_decref(docs);
}

Test(yaml_load, json_with_trailing_garbage_is_an_error)
{
    kh_yaml_error err = load_err("{\"a\": 1}\n{\"b\": 2}\nnot json\n");

    cr_assert_eq(err.line, 2, "line %d: %s", err.line, err.message);
}

Test(yaml_load, flow_yaml_that_is_not_json)
{
    assert_loads_as("{a: 1, b: [x, 'y z'], c: {d: ~}}",
                    "{\"a\":1,\"b\":[\"x\",\"y z\"],\"c\":{\"d\":null}}");
    assert_loads_as("[a, {b: c}, [], {}]", "[\"a\",{\"b\":\"c\"},[],{}]");
}

Test(yaml_load, json_big_integer_becomes_real)
{
    assert_loads_as("{\"n\": 123456789012345678901234}", "{\"n\":1.2345678901234568e23}");
}

/* ---- scalars ---- */

Test(yaml_scalars, quoted_versus_plain)
{
    assert_loads_as("a: 1\nb: \"1\"\nc: '1'\nd: true\ne: \"true\"\nf: 'null'\ng: \"~\"",
                    "{\"a\":1,\"b\":\"1\",\"c\":\"1\",\"d\":true,\"e\":\"true\","
                    "\"f\":\"null\",\"g\":\"~\"}");
}

Test(yaml_scalars, nulls)
{
    assert_loads_as("[~, null, Null, NULL, nUll, '', \"\"]",
                    "[null,null,null,null,\"nUll\",\"\",\"\"]");
    assert_loads_as("a:\nb: ~\nc: !!null ''\n", "{\"a\":null,\"b\":null,\"c\":null}");
}

Test(yaml_scalars, yaml11_booleans)
{
    assert_loads_as("[true, True, TRUE, yes, Yes, YES, on, On, ON]",
                    "[true,true,true,true,true,true,true,true,true]");
    assert_loads_as("[false, False, FALSE, no, No, NO, off, Off, OFF]",
                    "[false,false,false,false,false,false,false,false,false]");
    assert_loads_as("[tRUE, yES, y, n, Y, N, 'yes', \"off\"]",
                    "[\"tRUE\",\"yES\",\"y\",\"n\",\"Y\",\"N\",\"yes\",\"off\"]");
}

Test(yaml_scalars, integers)
{
    assert_loads_as("[0, -7, +7, 010, 0x1F, 0xff, 0o17, 9223372036854775807,"
                    " -9223372036854775808]",
                    "[0,-7,7,10,31,255,15,9223372036854775807,-9223372036854775808]");
    assert_loads_as("[0x, 0o8, 1_000, 0b101, -0x1, 12abc]",
                    "[\"0x\",\"0o8\",\"1_000\",\"0b101\",\"-0x1\",\"12abc\"]");
}

Test(yaml_scalars, integers_beyond_int64_become_reals)
{
    json_t *v = load_one("[9223372036854775808, -9223372036854775809, 0x10000000000000000,"
                         " 0o2000000000000000000000]");

    cr_assert(json_is_real(json_array_get(v, 0)));
    cr_assert_float_eq(json_real_value(json_array_get(v, 0)), 9223372036854775808.0, 1);
    cr_assert_float_eq(json_real_value(json_array_get(v, 1)), -9223372036854775809.0, 1);
    cr_assert_float_eq(json_real_value(json_array_get(v, 2)), 18446744073709551616.0, 1);
    cr_assert_float_eq(json_real_value(json_array_get(v, 3)), 18446744073709551616.0, 1);
    json_decref(v);
}

Test(yaml_scalars, reals)
{
    assert_loads_as("[1.5, -0.25, .5, 1., 1e3, -2.5E-3, +3.0]",
                    "[1.5,-0.25,0.5,1.0,1000.0,-0.0025,3.0]");
    assert_loads_as("[1.2.3, 1e, e5, ., 1.5x, '1.5']",
                    "[\"1.2.3\",\"1e\",\"e5\",\".\",\"1.5x\",\"1.5\"]");
}

Test(yaml_scalars, infinity_and_nan_are_errors)
{
    const char *bad[] = {"a: .inf", "a: -.Inf", "a: .NaN", "a: 1e999", "a: !!float .nan"};

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kh_yaml_error err = load_err(bad[i]);
        cr_assert_eq(err.line, 1, "%s", bad[i]);
        cr_assert_eq(err.column, 4, "%s: column %d", bad[i], err.column);
        cr_assert(strstr(err.message, "JSON"), "%s", err.message);
    }
    assert_loads_as("a: '.inf'", "{\"a\":\".inf\"}");
}

Test(yaml_scalars, explicit_tags)
{
    assert_loads_as("a: !!str 12\nb: !!int \"12\"\nc: !!float 3\nd: !!bool yes\n"
                    "e: !!null ~\nf: ! 12\ng: !custom 12\nh: !custom '12'\n"
                    "i: !!str true\nj: !!int 0x10\nk: !<tag:yaml.org,2002:str> 5\n",
                    "{\"a\":\"12\",\"b\":12,\"c\":3.0,\"d\":true,\"e\":null,\"f\":\"12\","
                    "\"g\":12,\"h\":\"12\",\"i\":\"true\",\"j\":16,\"k\":\"5\"}");
}

Test(yaml_scalars, float_tag_makes_a_real)
{
    json_t *v = load_one("!!float 3");

    cr_assert(json_is_real(v));
    cr_assert_float_eq(json_real_value(v), 3.0, 0);
    json_decref(v);
}

Test(yaml_scalars, bad_tagged_values_are_errors)
{
    const char *bad[] = {"a: !!int abc", "a: !!int 1.5", "a: !!bool maybe", "a: !!null x",
                         "a: !!float abc"};

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kh_yaml_error err = load_err(bad[i]);
        cr_assert_eq(err.line, 1, "%s", bad[i]);
        cr_assert(strstr(err.message, "is not a valid !!"), "%s: %s", bad[i], err.message);
    }
}

Test(yaml_scalars, block_scalars)
{
    assert_loads_as("lit: |\n  line 1\n    indented\n  line 3\n"
                    "fold: >\n  folded\n  text\n\n  para\n"
                    "strip: |-\n  no newline\n"
                    "keep: |+\n  kept\n\n"
                    "num: |\n  42\n",
                    "{\"lit\":\"line 1\\n  indented\\nline 3\\n\","
                    "\"fold\":\"folded text\\npara\\n\",\"strip\":\"no newline\","
                    "\"keep\":\"kept\\n\\n\",\"num\":\"42\\n\"}");
}

Test(yaml_scalars, escapes_and_unicode)
{
    json_t *v = load_one("a: \"tab\\there\\u00e9\\0end\"\nb: 'it''s'\nc: caf\xC3\xA9\n");
    json_t *a = json_object_get(v, "a");

    cr_assert_eq(json_string_length(a), 14);
    cr_assert_eq(memcmp(json_string_value(a), "tab\there\xC3\xA9\0end", 14), 0);
    cr_assert_str_eq(json_string_value(json_object_get(v, "b")), "it's");
    cr_assert_str_eq(json_string_value(json_object_get(v, "c")), "caf\xC3\xA9");
    json_decref(v);
}

Test(yaml_scalars, multi_line_plain_and_timestamps_stay_strings)
{
    assert_loads_as("a: one\n  two\nb: 2024-01-02T03:04:05Z\nc: 1:30\nd: 500m\n",
                    "{\"a\":\"one two\",\"b\":\"2024-01-02T03:04:05Z\",\"c\":\"1:30\","
                    "\"d\":\"500m\"}");
}

/* ---- keys ---- */

/* "yes" is the boolean true, so its pair replaces "true: b". */
Test(yaml_keys, non_string_keys_become_strings)
{
    assert_loads_as("1: a\ntrue: b\n~: c\n1.5: d\n0x10: e\n\"2\": f\nyes: g\n",
                    "{\"1\":\"a\",\"true\":\"g\",\"null\":\"c\",\"1.5\":\"d\",\"16\":\"e\","
                    "\"2\":\"f\"}");
}

Test(yaml_keys, duplicate_keys_last_wins)
{
    json_t *v = load_one("a: 1\nb: 2\na: {x: 3}\n");

    cr_assert_eq(json_object_size(v), 2);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(v, "a"), "x")), 3);
    json_decref(v);
}

Test(yaml_keys, collection_keys_are_errors)
{
    kh_yaml_error err = load_err("ok: 1\n? [a, b]\n: c\n");

    cr_assert_eq(err.line, 2);
    cr_assert_eq(err.column, 3);
    cr_assert(strstr(err.message, "scalar"), "%s", err.message);
    err = load_err("{{a: 1}: b}");
    cr_assert(strstr(err.message, "scalar"), "%s", err.message);
}

Test(yaml_keys, explicit_complex_scalar_key)
{
    assert_loads_as("? |\n  long key\n: v\n", "{\"long key\\n\":\"v\"}");
}

/* ---- anchors, aliases, merges ---- */

Test(yaml_anchors, alias_is_a_deep_copy)
{
    json_t *v = load_one("a: &x {k: [1, 2], s: &s str}\nb: *x\nc: *s\n");
    json_t *a = json_object_get(v, "a"), *b = json_object_get(v, "b");

    cr_assert(json_equal(a, b));
    cr_assert_neq(a, b);
    cr_assert_neq(json_object_get(a, "k"), json_object_get(b, "k"));
    json_array_append_new(json_object_get(b, "k"), json_integer(3));
    cr_assert_eq(json_array_size(json_object_get(a, "k")), 2);
    cr_assert_str_eq(json_string_value(json_object_get(v, "c")), "str");
    json_decref(v);
}

Test(yaml_anchors, redefined_anchor_uses_latest)
{
    assert_loads_as("- &a 1\n- *a\n- &a 2\n- *a\n", "[1,1,2,2]");
}

Test(yaml_anchors, alias_as_key)
{
    assert_loads_as("- &k name\n- {*k : v}\n", "[\"name\",{\"name\":\"v\"}]");
}

Test(yaml_anchors, unknown_alias_is_an_error)
{
    kh_yaml_error err = load_err("a: 1\nb: *nope\n");

    cr_assert_eq(err.line, 2);
    cr_assert_eq(err.column, 4);
    cr_assert(strstr(err.message, "nope"), "%s", err.message);
}

Test(yaml_anchors, recursive_alias_is_an_error)
{
    kh_yaml_error err = load_err("a: &x\n  b: *x\n");

    cr_assert_eq(err.line, 2);
    cr_assert(strstr(err.message, "unknown anchor"), "%s", err.message);
}

Test(yaml_anchors, anchors_do_not_cross_documents)
{
    kh_yaml_error err = load_err("a: &x 1\n---\nb: *x\n");

    cr_assert_eq(err.line, 3);
}

Test(yaml_anchors, merge_key_mapping)
{
    /* Own keys win over merged ones even when written before '<<'. */
    assert_loads_as("base: &b {x: 1, y: 2, z: 3}\n"
                    "d:\n  y: own\n  <<: *b\n  z: own\n",
                    "{\"base\":{\"x\":1,\"y\":2,\"z\":3},"
                    "\"d\":{\"x\":1,\"y\":\"own\",\"z\":\"own\"}}");
}

Test(yaml_anchors, merge_key_sequence_earlier_wins)
{
    assert_loads_as("- &a {x: a, y: a}\n- &b {x: b, z: b}\n- <<: [*a, *b]\n  w: own\n",
                    "[{\"x\":\"a\",\"y\":\"a\"},{\"x\":\"b\",\"z\":\"b\"},"
                    "{\"x\":\"a\",\"y\":\"a\",\"z\":\"b\",\"w\":\"own\"}]");
}

Test(yaml_anchors, merge_inline_mapping_and_quoted_key)
{
    assert_loads_as("a:\n  <<: {x: 1}\n  \"<<\": literal\n",
                    "{\"a\":{\"x\":1,\"<<\":\"literal\"}}");
}

Test(yaml_anchors, merge_of_non_mapping_is_an_error)
{
    kh_yaml_error err = load_err("a:\n  <<: 5\n");

    cr_assert_eq(err.line, 2);
    cr_assert_eq(err.column, 7);
    cr_assert(strstr(err.message, "<<"), "%s", err.message);
    load_err("a: &s [1]\nb:\n  <<: [*s]\n");
}

/* Without the budget this would build 387 million values: the timeout fails it. */
Test(yaml_anchors, alias_bomb_is_rejected, .timeout = 10)
{
    kh_yaml_error err = load_err("a: &a [x, x, x, x, x, x, x, x, x]\n"
                                 "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                                 "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                                 "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                                 "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
                                 "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
                                 "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
                                 "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
                                 "i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]\n");

    cr_assert(strstr(err.message, "alias"), "%s", err.message);
    cr_assert_geq(err.line, 7);
}

Test(yaml_anchors, moderate_alias_use_is_fine)
{
    json_t *v = load_one("a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n"
                         "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                         "c: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n");

    cr_assert_eq(json_array_size(json_array_get(json_array_get(json_object_get(v, "c"), 9), 9)),
                 10);
    json_decref(v);
}

/* ---- errors ---- */

Test(yaml_errors, bad_indentation_has_line)
{
    kh_yaml_error err = load_err("a:\n  b: 1\n c: 2\n");

    cr_assert_eq(err.line, 3, "line %d: %s", err.line, err.message);
    cr_assert_eq(err.column, 2);
    cr_assert(strstr(err.message, "did not find expected key"), "%s", err.message);
}

Test(yaml_errors, tab_indentation)
{
    kh_yaml_error err = load_err("a:\n  b: 1\n\tc: 2\n");

    cr_assert_eq(err.line, 3, "line %d: %s", err.line, err.message);
    cr_assert_eq(err.column, 1);
}

Test(yaml_errors, unclosed_quote)
{
    kh_yaml_error err = load_err("a: 1\nb: \"never closed\nc: 3\n");

    cr_assert_eq(err.line, 4, "line %d: %s", err.line, err.message);
    cr_assert(strstr(err.message, "quoted scalar"), "%s", err.message);
}

Test(yaml_errors, unclosed_flow_sequence)
{
    kh_yaml_error err = load_err("a: [1, 2\nb: 3\n");

    cr_assert_geq(err.line, 1);
    cr_assert_neq(err.column, 0);
}

Test(yaml_errors, invalid_utf8_has_position)
{
    kh_yaml_error err = load_err("a: ok\nb: x\xC3\x28y\n");

    cr_assert_eq(err.line, 2, "line %d: %s", err.line, err.message);
    cr_assert(strstr(err.message, "UTF-8"), "%s", err.message);
}

Test(yaml_errors, nesting_limit)
{
    size_t n = KH_YAML_MAX_DEPTH + 10;
    char *deep = malloc(2 * n + 1);
    kh_yaml_error err;

    memset(deep, '[', n);
    memset(deep + n, ']', n);
    deep[2 * n] = '\0';
    err = load_err(deep);
    cr_assert(strstr(err.message, "nesting"), "%s", err.message);
    /* Also through the JSON fast path, which jansson alone would accept. */
    deep[n - 1] = '{';
    memcpy(deep + n, "\"a\":1}", 6);
    deep[n + 6] = '\0';
    load_err(deep);
    free(deep);
}

Test(yaml_errors, error_struct_is_optional)
{
    json_t *docs = NULL;

    cr_assert_eq(kh_yaml_load("a: [", 4, &docs, NULL), -1);
    cr_assert_null(docs);
}

/* ---- files ---- */

static char *temp_file(const char *content, size_t len)
{
    char *path = strdup("/tmp/test_yaml_XXXXXX");
    int fd = mkstemp(path);

    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, content, len), (ssize_t)len);
    close(fd);
    return path;
}

Test(yaml_files, load_file)
{
    char *path = temp_file(deployment, strlen(deployment));
    json_t *docs = NULL, *want = load_ok(deployment);

    cr_assert_eq(kh_yaml_load_file(path, &docs, NULL), 0);
    cr_assert(json_equal(docs, want));
    unlink(path);
    free(path);
    json_decref(docs);
    json_decref(want);
}

Test(yaml_files, empty_file)
{
    char *path = temp_file("", 0);
    json_t *docs = NULL;

    cr_assert_eq(kh_yaml_load_file(path, &docs, NULL), 0);
    cr_assert_eq(json_array_size(docs), 0);
    unlink(path);
    free(path);
    json_decref(docs);
}

Test(yaml_files, missing_file)
{
    kh_yaml_error err = {0};
    json_t *docs = NULL;

    cr_assert_eq(kh_yaml_load_file("/nonexistent/dir/x.yaml", &docs, &err), -1);
    cr_assert_null(docs);
    cr_assert_eq(err.line, 0);
    cr_assert(strstr(err.message, "/nonexistent/dir/x.yaml"), "%s", err.message);
    cr_assert(strstr(err.message, strerror(ENOENT)), "%s", err.message);
}

Test(yaml_files, directory_is_an_error)
{
    kh_yaml_error err = {0};
    json_t *docs = NULL;

    cr_assert_eq(kh_yaml_load_file("/tmp", &docs, &err), -1);
    cr_assert_null(docs);
    cr_assert(strstr(err.message, strerror(EISDIR)), "%s", err.message);
}

Test(yaml_files, too_large_file)
{
    char *path = temp_file("a: 1\n", 5);
    kh_yaml_error err = {0};
    json_t *docs = NULL;

    cr_assert_eq(truncate(path, (off_t)KH_YAML_MAX_FILE_SIZE + 1), 0);
    cr_assert_eq(kh_yaml_load_file(path, &docs, &err), -1);
    cr_assert_null(docs);
    cr_assert(strstr(err.message, "larger than"), "%s", err.message);
    unlink(path);
    free(path);
}

Test(yaml_files, parse_error_in_file_has_line)
{
    static const char text[] = "a: 1\nb: [\n";
    char *path = temp_file(text, strlen(text));
    kh_yaml_error err = {0};
    json_t *docs = NULL;

    cr_assert_eq(kh_yaml_load_file(path, &docs, &err), -1);
    cr_assert_geq(err.line, 2, "%d: %s", err.line, err.message);
    unlink(path);
    free(path);
}

/* ---- dumping ---- */

Test(yaml_dump, block_layout)
{
    json_t *v = json_pack("{s:s, s:{s:i, s:[s, {s:b}]}, s:{}, s:[]}", "name", "web", "spec",
                          "replicas", 3, "items", "a", "ok", 1, "empty_map", "empty_list");
    char *text = kh_yaml_dump(v);

    cr_assert_str_eq(text, "name: web\n"
                           "spec:\n"
                           "  replicas: 3\n"
                           "  items:\n"
                           "  - a\n"
                           "  - ok: true\n"
                           "empty_map: {}\n"
                           "empty_list: []\n");
    free(text);
    json_decref(v);
}

Test(yaml_dump, ambiguous_strings_are_quoted)
{
    json_t *v = json_pack("[s,s,s,s,s,s,s,s,s,s,s]", "1", "true", "yes", "null", "", "~", "1.5",
                          "0x1F", "y", "1_000", "2024-01-01");
    char *text = kh_yaml_dump(v);

    cr_assert_str_eq(text, "- \"1\"\n- \"true\"\n- \"yes\"\n- \"null\"\n- \"\"\n- \"~\"\n"
                           "- \"1.5\"\n- \"0x1F\"\n- \"y\"\n- \"1_000\"\n- \"2024-01-01\"\n");
    free(assert_round_trip(v));
    free(text);
    json_decref(v);
}

Test(yaml_dump, scalars_and_numbers)
{
    json_t *v = json_pack("[i,I,f,f,f,f,b,n,s]", -5, (json_int_t)INT64_MIN, 1.0, 0.1, 1e300,
                          -2.5e-8, 0, "plain");
    char *text = assert_round_trip(v);

    cr_assert(strstr(text, "- 1.0\n"), "%s", text);
    cr_assert(strstr(text, "- 0.1\n"), "%s", text);
    cr_assert(strstr(text, "- false\n- null\n- plain\n"), "%s", text);
    free(text);
    json_decref(v);
}

Test(yaml_dump, root_scalars_round_trip)
{
    json_t *values[] = {json_string("hello"), json_integer(7),    json_real(2.5), json_true(),
                        json_null(),          json_string("yes"), json_object(),  json_array()};

    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        free(assert_round_trip(values[i]));
        json_decref(values[i]);
    }
}

Test(yaml_dump, tricky_strings_round_trip)
{
    const char *strings[] = {"multi\nline\n",
                             "no trailing newline\nhere",
                             "trailing\n\n\n",
                             " leading space",
                             "trailing space ",
                             "a: b",
                             "- item",
                             "# not a comment",
                             "x #y",
                             "{flow}",
                             "[x]",
                             "'single'",
                             "\"double\"",
                             "@at",
                             "`tick",
                             "%pct",
                             "tab\there",
                             "caf\xC3\xA9",
                             "\n",
                             "  \n  indented",
                             "<<",
                             "&anchor",
                             "*alias",
                             "!tag",
                             "|",
                             ">",
                             "?",
                             ":",
                             "-",
                             "---",
                             "...",
                             "key:",
                             "-1",
                             "+1",
                             ".5",
                             "0o7",
                             "ON",
                             "Off"};
    json_t *arr = json_array(), *obj = json_object();

    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) {
        json_array_append_new(arr, json_string(strings[i]));
        json_object_set_new(obj, strings[i], json_string(strings[i]));
    }
    json_array_append_new(arr, json_stringn("nul\0byte", 8));
    free(assert_round_trip(arr));
    free(assert_round_trip(obj));
    json_decref(arr);
    json_decref(obj);
}

Test(yaml_dump, manifests_round_trip)
{
    round_trip_yaml(deployment);
    round_trip_yaml(crd);
    json_t *docs = NULL;
    cr_assert_eq(kh_yaml_load(deployment, strlen(deployment), &docs, NULL), 0);
    char *text = kh_yaml_dump(json_array_get(docs, 0));
    cr_assert_not_null(text);
    cr_assert(strstr(text, "kind: Deployment"), "%s", text);
    free(text);
    json_decref(docs);
}

Test(yaml_dump, deep_nesting_round_trips)
{
    json_t *v = json_integer(1);

    for (int i = 0; i < 100; i++)
        v = i % 2 ? json_pack("[o]", v) : json_pack("{s:o}", "k", v);
    free(assert_round_trip(v));
    json_decref(v);
}

Test(yaml_dump, too_deep_or_null_gives_null)
{
    json_t *v = json_array();

    cr_assert_null(kh_yaml_dump(NULL));
    for (int i = 0; i < KH_YAML_MAX_DEPTH + 5; i++)
        v = json_pack("[o]", v);
    cr_assert_null(kh_yaml_dump(v));
    json_decref(v);
}

Test(yaml_dump, key_order_is_kept)
{
    json_t *v = load_one("zeta: 1\nalpha: 2\nmid: 3\n");
    char *text = kh_yaml_dump(v);

    cr_assert_str_eq(text, "zeta: 1\nalpha: 2\nmid: 3\n");
    free(text);
    json_decref(v);
}

/* ---- kh_yaml_load_marked ---- */

static json_t *load_marked(const char *text, kh_yaml_marks **marks)
{
    kh_yaml_error err = {0};
    json_t *docs = NULL;

    cr_assert_eq(kh_yaml_load_marked(text, strlen(text), &docs, marks, &err), 0,
                 "load failed at %d:%d: %s", err.line, err.column, err.message);
    cr_assert_not_null(*marks);
    return docs;
}

Test(yaml_marks, lines_of_values_items_and_documents)
{
    const char *text = "# comment\n"
                       "name: web\n"                /* 2 */
                       "steps:\n"                   /* 3 */
                       "  - advance: 10m\n"         /* 4 */
                       "  - wait:\n"                /* 5 */
                       "      for: {exists: {}}\n"  /* 6 */
                       "      timeout: 5 minutes\n" /* 7 */
                       "count: 3\n"                 /* 8 */
                       "---\n"                      /* 9 */
                       "second: [a,\n"              /* 10 */
                       "   b]\n";                   /* 11 */
    kh_yaml_marks *m = NULL;
    json_t *docs = load_marked(text, &m);
    json_t *d0 = json_array_get(docs, 0), *d1 = json_array_get(docs, 1);
    json_t *steps = json_object_get(d0, "steps");
    json_t *wait = json_object_get(json_array_get(steps, 1), "wait");

    cr_assert_eq(kh_yaml_mark_line(m, d0), 2);
    cr_assert_eq(kh_yaml_mark_line(m, json_object_get(d0, "name")), 2);
    cr_assert_eq(kh_yaml_mark_line(m, steps), 4); /* a block sequence starts at its first '-' */
    cr_assert_eq(kh_yaml_mark_line(m, json_array_get(steps, 0)), 4);
    cr_assert_eq(kh_yaml_mark_line(m, json_array_get(steps, 1)), 5);
    cr_assert_eq(kh_yaml_mark_line(m, wait), 6);
    cr_assert_eq(kh_yaml_mark_line(m, json_object_get(wait, "for")), 6);
    cr_assert_eq(kh_yaml_mark_line(m, json_object_get(wait, "timeout")), 7);
    cr_assert_eq(kh_yaml_mark_line(m, json_object_get(d0, "count")), 8);
    cr_assert_eq(kh_yaml_mark_line(m, d1), 10);
    cr_assert_eq(kh_yaml_mark_line(m, json_array_get(json_object_get(d1, "second"), 1)), 11);
    json_decref(docs);
    kh_yaml_marks_free(m);
}

Test(yaml_marks, unknown_nodes_give_zero)
{
    const char *text = "a: &x {k: [1, 2]}\nb: *x\nc: null\nd: true\n";
    kh_yaml_marks *m = NULL;
    json_t *docs = load_marked(text, &m);
    json_t *d = json_array_get(docs, 0), *other = json_integer(1);

    cr_assert_eq(kh_yaml_mark_line(m, json_object_get(d, "a")), 1);
    cr_assert_eq(kh_yaml_mark_line(m, json_object_get(json_object_get(d, "a"), "k")), 1);
    /* The alias has its own line; what its copy holds has none. */
    cr_assert_eq(kh_yaml_mark_line(m, json_object_get(d, "b")), 2);
    cr_assert_eq(kh_yaml_mark_line(m, json_object_get(json_object_get(d, "b"), "k")), 0);
    cr_assert_eq(kh_yaml_mark_line(m, json_object_get(d, "c")), 0); /* singletons */
    cr_assert_eq(kh_yaml_mark_line(m, json_object_get(d, "d")), 0);
    cr_assert_eq(kh_yaml_mark_line(m, other), 0);
    cr_assert_eq(kh_yaml_mark_line(m, NULL), 0);
    cr_assert_eq(kh_yaml_mark_line(NULL, d), 0);
    json_decref(other);
    json_decref(docs);
    kh_yaml_marks_free(m);
    kh_yaml_marks_free(NULL);
}

Test(yaml_marks, json_input_has_lines)
{
    const char *text = "{\n  \"name\": \"x\",\n  \"steps\": [\n    {\"advance\": \"1s\"}\n  ]\n}\n";
    kh_yaml_marks *m = NULL;
    json_t *docs = load_marked(text, &m), *plain = load_ok(text);
    json_t *d = json_array_get(docs, 0);

    cr_assert(json_equal(docs, plain));
    cr_assert_eq(kh_yaml_mark_line(m, json_object_get(d, "name")), 2);
    cr_assert_eq(kh_yaml_mark_line(m, json_array_get(json_object_get(d, "steps"), 0)), 4);
    json_decref(plain);
    json_decref(docs);
    kh_yaml_marks_free(m);
}

Test(yaml_marks, json_stream_loads_without_lines)
{
    const char *text = "{\"a\": \"x\"}{\"b\": \"y\"}";
    kh_yaml_marks *m = NULL;
    json_t *docs = load_marked(text, &m);

    cr_assert_eq(json_array_size(docs), 2);
    cr_assert_eq(kh_yaml_mark_line(m, json_object_get(json_array_get(docs, 0), "a")), 0);
    json_decref(docs);
    kh_yaml_marks_free(m);
}

Test(yaml_marks, repeated_key_keeps_the_last_line)
{
    kh_yaml_marks *m = NULL;
    json_t *docs = load_marked("k: {a: 1}\nk: two\n", &m);

    cr_assert_eq(kh_yaml_mark_line(m, json_object_get(json_array_get(docs, 0), "k")), 2);
    json_decref(docs);
    kh_yaml_marks_free(m);
}

Test(yaml_marks, error_leaves_outputs_untouched)
{
    kh_yaml_error err = {0};
    json_t *docs = NULL;
    kh_yaml_marks *m = (kh_yaml_marks *)&err; /* a sentinel, never dereferenced */

    cr_assert_eq(kh_yaml_load_marked("a: [1,\nb: 2\n", 12, &docs, &m, &err), -1);
    cr_assert_null(docs);
    cr_assert_eq(m, (kh_yaml_marks *)&err);
    cr_assert_gt(err.line, 0);
}

Test(yaml_marks, many_values)
{
    char *text = malloc(20 * 5000 + 1);
    size_t len = 0;
    kh_yaml_marks *m = NULL;
    json_t *docs, *arr;

    for (int i = 0; i < 5000; i++)
        len += (size_t)sprintf(text + len, "- v%d\n", i);
    docs = load_marked(text, &m);
    arr = json_array_get(docs, 0);
    for (int i = 0; i < 5000; i += 499)
        cr_assert_eq(kh_yaml_mark_line(m, json_array_get(arr, (size_t)i)), i + 1);
    json_decref(docs);
    kh_yaml_marks_free(m);
    free(text);
}
