/*
 * Parameters named in prose: a tool description, a parameter's
 * description or a page's hint that tells the model to pass a parameter
 * the tool does not take sends it into an error it cannot recover from.
 * Prose is full of words followed by '=' or ':' that are not parameters
 * (`x=72` in a coordinate example, `role:user` in a query syntax,
 * `[tool=NAME]` in a format), so only forms that unmistakably name a
 * parameter count:
 *
 * - a call: `TOOL(name=..., other)` where TOOL is in tools/list: each
 *   argument against TOOL's inputSchema; `TOOL with name=...` (or
 *   `name: ...`), and any later `name=` in the same sentence, against
 *   TOOL's; a call of something that is not a tool is not looked into,
 *   and a tool merely mentioned earlier in the sentence governs nothing;
 * - `name=value` with no tool before it in the sentence, when name is a
 *   window parameter (cursor, offset, limit, page, ...) or the form opens
 *   a `code span`: against the tool itself;
 * - a quoted or backticked name followed by "parameter" or "argument".
 *
 * The name must start after a space, '(', ',' or '`' (not inside a URL,
 * a path, a JSON key or a [format]), and the value must follow at once.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "check/check_internal.h"

/* Window parameter names that count in a bare `name=value` (see above). */
static const char *const prose_window_params[] = {
    "cursor",      "offset",     "limit",     "page",      "per_page",   "page_size",
    "pageSize",    "start_line", "max_lines", "max_bytes", "max_tokens", "start_column",
    "max_results", "maxResults", "region",    "head",      "tail",
};

/* Longest parameter or tool name looked at. */
#define NAME_MAX_LEN 64
/* Bytes of a text looked at, and of a sentence looked back over (descriptions past
 * Claude Code's 2,048-character cut are a finding of their own). */
#define TEXT_MAX     16384
#define SENTENCE_MAX 512

static bool is_name_char(char ch)
{
    return isalnum((unsigned char)ch) || ch == '_';
}

/* Tool names may also hold '-' (get-resource-links). */
static bool is_tool_char(char ch)
{
    return is_name_char(ch) || ch == '-';
}

static bool is_prose_window_param(const char *name)
{
    for (size_t i = 0; i < sizeof prose_window_params / sizeof prose_window_params[0]; i++)
        if (strcmp(name, prose_window_params[i]) == 0)
            return true;
    return false;
}

/* True when [b, e) names a tool of tools/list; its inputSchema properties (or NULL) in *props. */
static bool find_tool(const check_ctx *c, const char *b, const char *e, const json_t **props)
{
    size_t n = (size_t)(e - b), i;
    const json_t *tool;
    json_array_foreach(c->tools, i, tool)
    {
        const char *name = json_string_value(json_object_get(tool, "name"));
        if (name && strlen(name) == n && memcmp(name, b, n) == 0) {
            if (props)
                *props = json_object_get(json_object_get(tool, "inputSchema"), "properties");
            return true;
        }
    }
    return false;
}

/* Where the sentence holding p starts: after ". ", "! ", "? ", ";" or a newline. */
static const char *sentence_start(const char *text, const char *p)
{
    for (const char *stop = p - text > SENTENCE_MAX ? p - SENTENCE_MAX : text; p > stop;) {
        char prev = p[-1];
        if (prev == '\n' || prev == ';')
            return p;
        if ((prev == '.' || prev == '!' || prev == '?') && isspace((unsigned char)*p))
            return p;
        p--;
    }
    return p;
}

/* What a parameter named at p belongs to. */
typedef struct target {
    const char *tool;    /* the tool it is checked against (points into the text or is self) */
    size_t tool_len;     /* its length */
    const json_t *props; /* that tool's properties */
    bool inside_call;    /* TOOL(...) holds it */
    bool after_with;     /* it follows "TOOL with " directly */
    bool explicit_tool;  /* TOOL( or "TOOL with" before it in the sentence */
    bool unknown_call;   /* inside f(...) where f is not a tool: not a parameter */
} target;

/* The tool that governs a name starting at b (see the file comment). */
static void find_target(const check_ctx *c, const char *text, const char *b, const char *self,
                        const json_t *self_props, target *tg)
{
    memset(tg, 0, sizeof *tg);
    tg->tool = self;
    tg->tool_len = strlen(self);
    tg->props = self_props;
    const char *s = sentence_start(text, b);
    /* An open parenthesis before b in the sentence, not closed before b. */
    int depth = 0;
    for (const char *p = b; p > s; p--) {
        if (p[-1] == ')')
            depth++;
        else if (p[-1] == '(' && depth > 0)
            depth--;
        else if (p[-1] == '(') {
            const char *e = p - 1, *w = e;
            while (w > s && is_tool_char(w[-1]))
                w--;
            if (w == e)
                break; /* a parenthesis in prose: "(or offset=20)" */
            const json_t *props = NULL;
            if (!find_tool(c, w, e, &props)) {
                tg->unknown_call = true;
                return;
            }
            tg->tool = w;
            tg->tool_len = (size_t)(e - w);
            tg->props = props;
            tg->inside_call = tg->explicit_tool = true;
            return;
        }
    }
    /* The nearest tool name before b in the sentence, when it opens "TOOL with ...". */
    for (const char *p = b; p > s;) {
        while (p > s && !is_tool_char(p[-1]))
            p--;
        const char *e = p;
        while (p > s && is_tool_char(p[-1]))
            p--;
        if (e == p || (size_t)(e - p) > NAME_MAX_LEN)
            continue;
        const json_t *props = NULL;
        if (!find_tool(c, p, e, &props))
            continue;
        if (strncmp(e, " with ", 6) != 0)
            return; /* "(where read_session shows it) and ordinal via fields=[...]": prose */
        tg->tool = p;
        tg->tool_len = (size_t)(e - p);
        tg->props = props;
        tg->explicit_tool = true;
        tg->after_with = strncmp(e, " with ", 6) == 0 && e + 6 == b;
        return;
    }
}

static void report(check_ctx *c, const json_t *request, const char *where, const char *text,
                   const char *b, const char *name, const target *tg, const char *self)
{
    /* A piece of the text around the name, on one line; a page's text is in its request. */
    char piece[96] = "";
    const char *from = b - text > 30 ? b - 30 : text;
    size_t n = request ? 0 : strnlen(from, 70), k;
    for (k = 0; k < n && k + 4 < sizeof piece; k++)
        piece[k] = from[k] == '\n' ? ' ' : from[k];
    if (n > 0)
        snprintf(piece + k, sizeof piece - k, "...");
    char fix[256];
    bool same = tg->tool_len == strlen(self) && memcmp(tg->tool, self, tg->tool_len) == 0;
    snprintf(fix, sizeof fix,
             "name only parameters %.*s takes (rename '%s' in the text, or add it to the "
             "inputSchema)",
             (int)tg->tool_len, tg->tool, name);
    if (same)
        check__find(c, CHECK_ERROR, request, fix,
                    "%s names parameter '%s', which the inputSchema lacks%s%s%s", where, name,
                    n ? " (\"..." : "", piece, n ? "\")" : "");
    else
        check__find(c, CHECK_ERROR, request, fix,
                    "%s names parameter '%s' of %.*s, whose inputSchema lacks it%s%s%s", where,
                    name, (int)tg->tool_len, tg->tool, n ? " (\"..." : "", piece, n ? "\")" : "");
}

/* `name` or 'name' or "name" directly before " parameter" / " argument": the name's start, or NULL.
 */
static const char *quoted_before_word(const char *text, const char *p, char *name, size_t cap)
{
    if (p - text < 3)
        return NULL;
    char q = p[-1];
    if (q != '`' && q != '\'' && q != '"')
        return NULL;
    const char *e = p - 1, *b = e;
    while (b > text && is_name_char(b[-1]))
        b--;
    if (b == e || b == text || b[-1] != q || (size_t)(e - b) >= cap || isdigit((unsigned char)*b))
        return NULL;
    snprintf(name, cap, "%.*s", (int)(e - b), b);
    return b;
}

void check__names(check_ctx *c, const json_t *request, const char *where, const char *text,
                  const char *self, const json_t *self_props)
{
    if (text == NULL || self == NULL)
        return;
    char name[NAME_MAX_LEN + 1];
    for (const char *p = text; *p && p - text < TEXT_MAX; p++) {
        /* A quoted name followed by "parameter" or "argument". */
        if ((strncmp(p, " parameter", 10) == 0 || strncmp(p, " argument", 9) == 0)) {
            const char *b = quoted_before_word(text, p, name, sizeof name);
            target tg;
            if (b) {
                find_target(c, text, b, self, self_props, &tg);
                if (!tg.unknown_call && json_object_get(tg.props, name) == NULL &&
                    !find_tool(c, name, name + strlen(name), NULL))
                    report(c, request, where, text, b, name, &tg, self);
            }
            continue;
        }
        if (*p != '=' && *p != ':')
            continue;
        char form = *p;
        /* A value follows: not "a = b", "a==b", "https://", "a::b"; after '=' at once. */
        if (p[1] == '\0' || p[1] == '=' || p[1] == ':' || p[1] == '/' ||
            (form == '=' && isspace((unsigned char)p[1])) || (p > text && p[-1] == '='))
            continue;
        const char *b = p;
        while (b > text && is_name_char(b[-1]))
            b--;
        if (b == p || (size_t)(p - b) > NAME_MAX_LEN || isdigit((unsigned char)*b))
            continue;
        char before = b > text ? b[-1] : ' ';
        if (!(before == ' ' || before == '\n' || before == '\t' || before == '(' || before == ',' ||
              before == '`'))
            continue; /* inside a URL, a path, a JSON key, a [format] or a word */
        snprintf(name, sizeof name, "%.*s", (int)(p - b), b);
        if (find_tool(c, b, p, NULL))
            continue; /* "list_sessions: ..." names a tool, not a parameter */
        target tg;
        find_target(c, text, b, self, self_props, &tg);
        if (tg.unknown_call)
            continue;
        bool code_span = before == '`';
        bool counts;
        if (form == ':')
            counts = tg.inside_call || tg.after_with || code_span;
        else
            counts = tg.explicit_tool || code_span || is_prose_window_param(name);
        if (counts && json_object_get(tg.props, name) == NULL)
            report(c, request, where, text, b, name, &tg, self);
    }
}
