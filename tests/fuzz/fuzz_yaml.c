/*
 * fuzz_yaml.c - libFuzzer target: kh_yaml_load and kh_yaml_dump.
 *
 * Invariants: a load either succeeds with an array of documents or fails
 * with a message and *docs untouched; every loaded document dumps, and
 * loading the dump gives exactly that document back (kh/yaml.h promises
 * json_equal); the marked loader agrees with the plain one.
 */
#include <kh/yaml.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *docs = (json_t *)&docs; /* must stay untouched on error */
    json_t *const sentinel = docs;
    kh_yaml_error err;
    memset(&err, 0, sizeof err);
    if (kh_yaml_load((const char *)data, size, &docs, &err) != 0) {
        if (docs != sentinel || err.message[0] == '\0' ||
            !memchr(err.message, '\0', sizeof err.message))
            abort();
        return 0;
    }
    if (!json_is_array(docs))
        abort();

    json_t *marked = NULL;
    kh_yaml_marks *marks = NULL;
    if (kh_yaml_load_marked((const char *)data, size, &marked, &marks, &err) != 0 ||
        !json_equal(docs, marked))
        abort();
    kh_yaml_marks_free(marks);
    json_decref(marked);

    size_t i;
    json_t *doc;
    json_array_foreach(docs, i, doc)
    {
        char *text = kh_yaml_dump(doc);
        if (!text)
            abort();
        json_t *again = NULL;
        if (kh_yaml_load(text, strlen(text), &again, &err) != 0 || json_array_size(again) != 1 ||
            !json_equal(json_array_get(again, 0), doc))
            abort();
        json_decref(again);
        free(text);
    }
    json_decref(docs);
    return 0;
}
