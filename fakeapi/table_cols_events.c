/*
 * table_cols_events.c - Table columns of Events, core/v1 and events.k8s.io/v1:
 * the real server prints both through the core Event's printer (LAST SEEN,
 * TYPE, REASON, OBJECT, MESSAGE; with -o wide SUBOBJECT, SOURCE, FIRST SEEN,
 * COUNT and NAME), so each column reads its field where that API keeps it.
 *
 * Thread-safety: reentrant; the printers are constant data.
 */
#include <string.h>

#include "table_cols.h"

#define DIG_STR fakeapi__dig_str
#define DIG_INT fakeapi__dig_int

/* ---- events ---- */

/* Where a field lives in core/v1 and in events.k8s.io/v1 Events. */
typedef struct ev_fields {
    const char *first, *last, *count, *object, *message, *source_component, *source_host;
} ev_fields;

static const ev_fields ev_core = {"firstTimestamp", "lastTimestamp", "count",
                                  "involvedObject", "message",       "source.component",
                                  "source.host"};
static const ev_fields ev_new = {
    "deprecatedFirstTimestamp",   "deprecatedLastTimestamp", "deprecatedCount", "regarding", "note",
    "deprecatedSource.component", "deprecatedSource.host"};

static json_t *ev_first_seen(const json_t *o, int64_t now_ns, const void *arg)
{
    const ev_fields *f = arg;
    const char *first = DIG_STR(o, f->first);
    if (first && *first)
        return fakeapi__since_cell(first, now_ns, "<unknown>");
    return fakeapi__since_cell(DIG_STR(o, "eventTime"), now_ns, "<unknown>");
}

static json_t *ev_last_seen(const json_t *o, int64_t now_ns, const void *arg)
{
    const ev_fields *f = arg;
    if (json_is_object(json_object_get(o, "series")))
        return fakeapi__since_cell(DIG_STR(o, "series.lastObservedTime"), now_ns, "<unknown>");
    const char *last = DIG_STR(o, f->last);
    if (last && *last)
        return fakeapi__since_cell(last, now_ns, "<unknown>");
    return ev_first_seen(o, now_ns, arg);
}

static json_t *ev_count(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    const ev_fields *f = arg;
    if (json_is_object(json_object_get(o, "series")))
        return json_integer(DIG_INT(o, "series.count", 0));
    json_int_t n = DIG_INT(o, f->count, 0);
    return json_integer(n ? n : 1); /* a singleton event of the new API has no count */
}

static json_t *ev_object(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    const ev_fields *f = arg;
    const json_t *ref = json_object_get(o, f->object);
    const char *kind = json_string_value(json_object_get(ref, "kind"));
    const char *name = json_string_value(json_object_get(ref, "name"));
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    for (const char *p = kind ? kind : ""; *p; p++) {
        char ch[2] = {(char)((*p >= 'A' && *p <= 'Z') ? *p - 'A' + 'a' : *p), '\0'};
        fakeapi__cb_add(&b, ch);
    }
    if (name && *name)
        fakeapi__cb_addf(&b, "/%s", name);
    return json_string(b.s);
}

static json_t *ev_subobject(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    const ev_fields *f = arg;
    const char *fp = json_string_value(json_object_get(json_object_get(o, f->object), "fieldPath"));
    return json_string(fp ? fp : "");
}

static json_t *ev_source(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    const ev_fields *f = arg;
    const char *comp = DIG_STR(o, f->source_component);
    const char *host = DIG_STR(o, f->source_host);
    if (!comp || !*comp)
        comp = DIG_STR(o, "reportingController");
    if (!host || !*host)
        host = DIG_STR(o, "reportingInstance");
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    fakeapi__cb_add(&b, comp ? comp : "");
    if (host && *host)
        fakeapi__cb_addf(&b, ", %s", host);
    return json_string(b.s);
}

static json_t *ev_message(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    const ev_fields *f = arg;
    const char *m = DIG_STR(o, f->message);
    if (!m)
        return json_string("");
    /* strings.TrimSpace */
    while (*m == ' ' || *m == '\t' || *m == '\n' || *m == '\r' || *m == '\v' || *m == '\f')
        m++;
    size_t n = strlen(m);
    while (n && strchr(" \t\n\r\v\f", m[n - 1]))
        n--;
    return json_stringn(m, n);
}

static const fakeapi__field f_ev_type = {"type", "", 0};
static const fakeapi__field f_ev_reason = {"reason", "", 0};

#define EVENT_COLS(F)                                                                              \
    {"Last Seen",                                                                                  \
     "string",                                                                                     \
     "",                                                                                           \
     0,                                                                                            \
     "The time at which the most recent occurrence of this event "                                 \
     "was recorded.",                                                                              \
     ev_last_seen,                                                                                 \
     F},                                                                                           \
        {"Type",                                                                                   \
         "string",                                                                                 \
         "",                                                                                       \
         0,                                                                                        \
         "Type of this event (Normal, Warning), new types could be "                               \
         "added in the future",                                                                    \
         fakeapi__cell_str,                                                                        \
         &f_ev_type},                                                                              \
        {"Reason",                                                                                 \
         "string",                                                                                 \
         "",                                                                                       \
         0,                                                                                        \
         "This should be a short, machine understandable string that "                             \
         "gives the reason for the transition into the object's "                                  \
         "current status.",                                                                        \
         fakeapi__cell_str,                                                                        \
         &f_ev_reason},                                                                            \
        {"Object", "string", "", 0, "The object that this event is about.", ev_object, F},         \
        {"Subobject",  "string", "", 1, "The field of the object this event is about.",            \
         ev_subobject, F},                                                                         \
        {"Source", "string", "", 1, "The component reporting this event.", ev_source, F},          \
        {"Message",                                                                                \
         "string",                                                                                 \
         "",                                                                                       \
         0,                                                                                        \
         "A human-readable description of the status of this "                                     \
         "operation.",                                                                             \
         ev_message,                                                                               \
         F},                                                                                       \
        {"First Seen",  "string", "", 1, "The time at which the event was first recorded.",        \
         ev_first_seen, F},                                                                        \
        {"Count", "string", "", 1, "The number of times this event has occurred.", ev_count, F},   \
    {                                                                                              \
        "Name", "string", "name", 1, fakeapi__desc_name, fakeapi__cell_name, NULL                  \
    }

static const fakeapi__colspec event_cols[] = {EVENT_COLS(&ev_core)};
static const fakeapi__colspec event_new_cols[] = {EVENT_COLS(&ev_new)};

const fakeapi__printer fakeapi__printers_events[] = {
    {"", "Event", FAKEAPI__COLS(event_cols), NULL, NULL},
    {"events.k8s.io", "Event", FAKEAPI__COLS(event_new_cols), NULL, NULL},
};
const size_t fakeapi__printers_events_n =
    sizeof fakeapi__printers_events / sizeof fakeapi__printers_events[0];
