/*
 * fuzz_selector.c - libFuzzer target: label and field selectors.
 *
 * The input, cut at its first NUL, is parsed both as a label selector and as
 * a field selector; whatever parses is matched against fixed objects.
 * Invariants: a parse either succeeds with a selector or fails with a
 * message and *out untouched; an empty selector matches everything; a field
 * selector that is exactly metadata.name=X matches an object named X.
 */
#include "selector.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static json_t *fixed_object(void)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s, s:s}}, s:{s:s, s:i, s:b}}", "apiVersion",
                     "v1", "kind", "Pod", "metadata", "name", "web-1", "namespace", "default",
                     "labels", "app", "web", "tier", "frontend", "app.kubernetes.io/name", "web",
                     "spec", "nodeName", "node-1", "priority", 10, "hostNetwork", 0);
}

static void check_label(const char *s, const json_t *obj)
{
    fakeapi__labelsel *sel = (fakeapi__labelsel *)&sel; /* must stay untouched on error */
    fakeapi__labelsel *const sentinel = sel;
    char err[256];
    err[0] = '\0';
    if (fakeapi__labelsel_parse(s, &sel, err, sizeof err) != 0) {
        if (sel != sentinel || err[0] == '\0' || !memchr(err, '\0', sizeof err))
            abort();
        return;
    }
    if (!sel)
        abort();
    const json_t *labels = json_object_get(json_object_get(obj, "metadata"), "labels");
    bool m1 = fakeapi__labelsel_match(sel, labels);
    bool m2 = fakeapi__labelsel_match(sel, NULL);
    json_t *none = json_object();
    bool m3 = fakeapi__labelsel_match(sel, none);
    json_decref(none);
    if (fakeapi__labelsel_empty(sel) && !(m1 && m2 && m3))
        abort();
    /* No labels and an empty labels object are the same thing. */
    if (m2 != m3)
        abort();
    /* Matching is a pure function of the selector and labels. */
    if (fakeapi__labelsel_match(sel, labels) != m1)
        abort();
    fakeapi__labelsel_free(sel);
}

static void check_field(const char *s, const json_t *obj)
{
    fakeapi__fieldsel *sel = (fakeapi__fieldsel *)&sel;
    fakeapi__fieldsel *const sentinel = sel;
    char err[256];
    err[0] = '\0';
    if (fakeapi__fieldsel_parse(s, &sel, err, sizeof err) != 0) {
        if (sel != sentinel || err[0] == '\0' || !memchr(err, '\0', sizeof err))
            abort();
        return;
    }
    if (!sel)
        abort();
    bool m = fakeapi__fieldsel_match(sel, obj);
    if (fakeapi__fieldsel_empty(sel) && !m)
        abort();
    static const char *const allowed[] = {"metadata.name", "metadata.namespace", "spec.nodeName",
                                          NULL};
    char cerr[256];
    (void)fakeapi__fieldsel_check(sel, allowed, cerr, sizeof cerr);
    const char *name = fakeapi__fieldsel_name(sel);
    if (name) {
        /* The name need not be UTF-8: build the string unchecked. */
        json_t *named = json_pack("{s:{s:o}}", "metadata", "name", json_string_nocheck(name));
        if (!named || !fakeapi__fieldsel_match(sel, named))
            abort();
        json_decref(named);
    }
    fakeapi__fieldsel_free(sel);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    if (size)
        memcpy(s, data, size);
    s[size] = '\0';
    json_t *obj = fixed_object();
    if (!obj)
        abort();
    check_label(s, obj);
    check_field(s, obj);
    json_decref(obj);
    free(s);
    return 0;
}
