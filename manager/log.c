/*
 * log.c - the structured logger (log_int.h): logfmt text or JSON lines.
 *
 * Each line is built in a stack buffer of CTRL__LOG_LINE_MAX bytes (no
 * allocation per line); a value that does not fit is cut, keeping room for
 * the closing quote and brace so that a cut line still parses.
 */
#include "log_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "ctrl/error.h"

struct ctrl__logger {
    ctrl_log_level level;
    ctrl_log_format format;
    void (*sink)(const char *line, void *user);
    void *user;
    ctrl_clock clock;
    bool has_clock;
};

int ctrl__logger_new(const ctrl__log_options *opts, ctrl__logger **out)
{
    if (!out)
        return CTRL_ERR_ARG;
    ctrl__logger *l = calloc(1, sizeof(*l));
    if (!l)
        return CTRL_ERR_NOMEM;
    if (opts) {
        l->level = opts->level;
        l->format = opts->format;
        l->sink = opts->sink;
        l->user = opts->user;
        if (opts->clock) {
            l->clock = *opts->clock;
            l->has_clock = true;
        }
    }
    *out = l;
    return 0;
}

void ctrl__logger_free(ctrl__logger *l)
{
    free(l);
}

bool ctrl__log_enabled(const ctrl__logger *l, ctrl_log_level level)
{
    return l && level >= l->level;
}

/* ---- a bounded line ---- */

#define RESERVE 4 /* closing "}, NUL */

#define LIMIT (CTRL__LOG_LINE_MAX - RESERVE)

/* Once full, nothing more is written but the closing quote of the value
 * being cut, the closing brace and the newline: RESERVE bytes at most. */
typedef struct line {
    char buf[CTRL__LOG_LINE_MAX];
    size_t len;
    bool full;
} line;

static void put_raw(line *ln, const char *s, size_t n)
{
    size_t room = ln->len < LIMIT ? LIMIT - ln->len : 0;
    if (n > room) {
        n = room;
        ln->full = true;
    }
    memcpy(ln->buf + ln->len, s, n);
    ln->len += n;
}

/* All of s or nothing (escape sequences are never cut in half). */
static void put_whole(line *ln, const char *s, size_t n)
{
    if (ln->len + n > LIMIT)
        ln->full = true;
    else
        put_raw(ln, s, n);
}

static void put(line *ln, const char *s)
{
    put_raw(ln, s, strlen(s));
}

static bool needs_quotes(const char *s)
{
    if (!*s)
        return true;
    for (; *s; s++)
        if ((unsigned char)*s <= ' ' || *s == '=' || *s == '"' || *s == '\\' || *s == 0x7f)
            return true;
    return false;
}

/* A quoted string with JSON's escapes (logfmt quotes the same way). */
static void put_quoted(line *ln, const char *s)
{
    put_raw(ln, "\"", 1);
    for (; *s && !ln->full; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            put_whole(ln, esc, 2);
        } else if (c == '\n') {
            put_whole(ln, "\\n", 2);
        } else if (c == '\t') {
            put_whole(ln, "\\t", 2);
        } else if (c == '\r') {
            put_whole(ln, "\\r", 2);
        } else if (c < 0x20 || c == 0x7f) {
            snprintf(esc, sizeof(esc), "\\u%04x", c);
            put_whole(ln, esc, 6);
        } else {
            put_raw(ln, (const char *)&c, 1);
        }
    }
    /* the closing quote is always written, even when the value was cut */
    ln->buf[ln->len++] = '"';
}

static void put_kv(line *ln, ctrl_log_format f, bool first, const char *k, const char *v)
{
    if (!k || ln->full)
        return;
    if (!v)
        v = "";
    if (ln->len + strlen(k) + 16 > LIMIT) { /* keys are never cut: drop the pair */
        ln->full = true;
        return;
    }
    if (f == CTRL_LOG_JSON) {
        if (!first)
            put_raw(ln, ",", 1);
        put_quoted(ln, k);
        put_raw(ln, ":", 1);
        put_quoted(ln, v);
        return;
    }
    if (!first)
        put_raw(ln, " ", 1);
    put(ln, k);
    put_raw(ln, "=", 1);
    if (needs_quotes(v))
        put_quoted(ln, v);
    else
        put(ln, v);
}

/* ---- typed values (ctrl_kv_int and friends, ctrl/controller.h) ---- */

/* The tags' addresses mark a typed pair in a key/value list. */
const char ctrl__kv_tag[4] = {'i', 'b', 'f', 'j'};

/*
 * A value that is JSON text (a number, true, null, an object...): in JSON
 * lines written as is when it fits whole, else as a string that is cut
 * (the line stays valid); in text lines quoted when logfmt needs it.
 */
static void put_json_kv(line *ln, ctrl_log_format f, const char *k, const char *raw)
{
    if (!k || ln->full)
        return;
    if (f != CTRL_LOG_JSON || ln->len + strlen(k) + strlen(raw) + 16 > LIMIT) {
        put_kv(ln, f, false, k, raw);
        return;
    }
    put_raw(ln, ",", 1);
    put_quoted(ln, k);
    put_raw(ln, ":", 1);
    put(ln, raw);
}

/* Format a double as JSON does; NaN and infinities (not JSON) as text. */
static void put_float_kv(line *ln, ctrl_log_format f, const char *k, double v)
{
    char buf[40];
    if (v != v) {
        put_kv(ln, f, false, k, "NaN");
        return;
    }
    if (v > 1.7976931348623157e308 || v < -1.7976931348623157e308) {
        put_kv(ln, f, false, k, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    snprintf(buf, sizeof buf, "%.17g", v);
    /* The shortest of %.15g..%.17g that reads back the same. */
    for (int prec = 15; prec < 17; prec++) {
        char b2[40];
        snprintf(b2, sizeof b2, "%.*g", prec, v);
        if (strtod(b2, NULL) == v) {
            memcpy(buf, b2, sizeof buf);
            break;
        }
    }
    put_json_kv(ln, f, k, buf);
}

static bool is_tag(const char *k)
{
    for (size_t i = 0; i < sizeof ctrl__kv_tag; i++)
        if (k == &ctrl__kv_tag[i])
            return true;
    return false;
}

static void put_typed_kv(line *ln, ctrl_log_format f, char tag, const char *k, va_list *ap)
{
    char buf[32];
    switch (tag) {
    case 'i':
        snprintf(buf, sizeof buf, "%lld", va_arg(*ap, long long));
        put_json_kv(ln, f, k, buf);
        return;
    case 'b':
        put_json_kv(ln, f, k, va_arg(*ap, int) ? "true" : "false");
        return;
    case 'f':
        put_float_kv(ln, f, k, va_arg(*ap, double));
        return;
    default: {
        const json_t *j = va_arg(*ap, const json_t *);
        if (json_is_string(j)) { /* its text, as a string value */
            put_kv(ln, f, false, k, json_string_value(j));
            return;
        }
        char *raw = j ? json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        put_json_kv(ln, f, k, raw ? raw : "null");
        free(raw);
        return;
    }
    }
}

static const char *level_name(ctrl_log_level level)
{
    switch (level) {
    case CTRL_LOG_DEBUG:
        return "debug";
    case CTRL_LOG_INFO:
        return "info";
    case CTRL_LOG_WARN:
        return "warn";
    case CTRL_LOG_ERROR:
        return "error";
    }
    return "info";
}

static void timestamp(const ctrl__logger *l, char *buf, size_t len)
{
    int64_t ns = ctrl_clock_wall_ns(l->has_clock ? &l->clock : NULL);
    time_t secs = (time_t)(ns / CTRL_SECOND);
    struct tm tm;
    gmtime_r(&secs, &tm);
    size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, len - n, ".%03dZ", (int)(ns % CTRL_SECOND / CTRL_MILLISECOND));
}

void ctrl__log_v(const ctrl__logger *l, ctrl_log_level level, const char *name, const char *msg,
                 const char *const *fixed, size_t nfixed, va_list ap)
{
    if (!ctrl__log_enabled(l, level))
        return;
    line *ln = malloc(sizeof(*ln)); /* 16 KiB: kept off small thread stacks */
    if (!ln)
        return;
    ln->len = 0;
    ln->full = false;
    char ts[40];
    timestamp(l, ts, sizeof(ts));
    ctrl_log_format f = l->format;
    if (f == CTRL_LOG_JSON)
        put_raw(ln, "{", 1);
    put_kv(ln, f, true, "ts", ts);
    put_kv(ln, f, false, "level", level_name(level));
    if (name)
        put_kv(ln, f, false, "logger", name);
    put_kv(ln, f, false, "msg", msg ? msg : "");
    for (size_t i = 0; i < nfixed; i++)
        put_kv(ln, f, false, fixed[2 * i], fixed[2 * i + 1]);
    va_list aq;
    va_copy(aq, ap); /* read through a pointer: va_list may be an array type */
    for (;;) {
        const char *k = va_arg(aq, const char *);
        if (!k)
            break;
        if (is_tag(k)) {
            const char *key = va_arg(aq, const char *);
            put_typed_kv(ln, f, *k, key, &aq);
            continue;
        }
        const char *v = va_arg(aq, const char *);
        put_kv(ln, f, false, k, v);
        if (!v)
            break; /* an odd list: the missing value ended it */
    }
    va_end(aq);
    if (f == CTRL_LOG_JSON)
        ln->buf[ln->len++] = '}';
    ln->buf[ln->len] = '\0';
    if (l->sink) {
        l->sink(ln->buf, l->user);
    } else {
        ln->buf[ln->len++] = '\n';
        fwrite(ln->buf, 1, ln->len, stderr);
    }
    free(ln);
}

void ctrl__log(const ctrl__logger *l, ctrl_log_level level, const char *name, const char *msg, ...)
{
    if (!ctrl__log_enabled(l, level))
        return;
    va_list ap;
    va_start(ap, msg);
    ctrl__log_v(l, level, name, msg, NULL, 0, ap);
    va_end(ap);
}
