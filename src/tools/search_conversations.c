/*
 * search_conversations (LIST, unit matches): full-text search over every
 * message. The query holds words, "quoted phrases" and filters
 * (project:, source:, role:, tool:, after:, before:, has:error), parsed
 * out here; the same filters may come as arguments. Each match names the
 * line where read_session shows its message.
 */
#include <stdio.h>
#include <string.h>

#include "tools/tools.h"
#include "tools/transcript.h"

static const char *const fields[] = {
    "message_id",      "session_id", "project", "role", "timestamp",
    "snippet",         "line",       "ordinal", "hits", "first_message_id",
    "last_message_id", NULL};
/* Lean by default (issue 23): message_id alone identifies a match and is
   all read_message and read_session(message_id=...) need; session_id,
   line and ordinal are one `fields` away. */
static const char *const default_fields[] = {"message_id", "project", "role",
                                             "timestamp",  "snippet", NULL};
static const char *const id_fields[] = {"message_id", NULL};
/* Grouped by session, a record is a session: these join the default fields. */
static const char *const grouped_fields[] = {"session_id", "hits", "first_message_id",
                                             "last_message_id", NULL};

static const mcpage_list_spec spec = {
    .tool = "search_conversations",
    .unit = "matches",
    .default_limit = 10,
    .max_limit = 50,
    .fields = fields,
    .default_fields = default_fields,
    .id_fields = id_fields,
    .narrow_hint = "Narrow with more words, project:NAME, role:user or after:YYYY-MM-DD.",
    .relevance_order = true,
    .stable_order_hint = "Pass sort=\"newest\" for an order that does not shift.",
    .read_with = tools_read_with_message,
    .layout = MCPAGE_LIST_COLUMNS,
};

#define STR_(x) #x
#define STR(x)  STR_(x)

/* The query's limits in the words of its schema. */
#define QUERY_BYTES    STR(STORE_QUERY_MAX)
#define QUERY_TERMS    STR(STORE_QUERY_TERMS_MAX)
#define QUERY_PREFIXES STR(STORE_QUERY_PREFIXES_MAX)
#define QUERY_LIMITS                                                                               \
    "At most " QUERY_BYTES " bytes, " QUERY_TERMS " different words and phrases, " QUERY_PREFIXES  \
    " of them prefixes."

static const char schema[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"query\"],"
    "\"properties\":{"
    "\"query\":{\"type\":\"string\",\"minLength\":1,\"description\":\"Words and \\\"quoted "
    "phrases\\\", all required; a trailing * makes a prefix (max_tok*). An unquoted word also "
    "finds its other forms and identifiers containing it (session live finds SessionLive and "
    "session_live; rendering finds rendered); quote a word for that exact word. Filters may be "
    "written in "
    "the query: project:NAME source:" TOOLS_SOURCE_LIST
    " role:user|assistant|system|tool tool:NAME "
    "after:YYYY-MM-DD before:YYYY-MM-DD has:error. Example: \\\"retry budget\\\" role:user "
    "after:2025-09-01. " QUERY_LIMITS "\"},"
    "\"project\":{\"type\":\"string\",\"description\":\"Only messages of this project (name or "
    "path); same as project: in the query.\"},"
    "\"source\":{\"type\":\"string\"," TOOLS_SOURCE_ENUM ",\"description\":\"Only this agent's "
    "sessions.\"},"
    "\"role\":{\"type\":\"string\",\"enum\":[\"user\",\"assistant\",\"system\",\"tool\"],"
    "\"description\":\"Only messages of this role (tool = tool results).\"},"
    "\"tool\":{\"type\":\"string\",\"description\":\"Only tool calls and results of this tool, "
    "e.g. Bash.\"},"
    "\"after\":{\"type\":\"string\",\"description\":\"Only messages at or after this UTC date or "
    "time (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ).\"},"
    "\"before\":{\"type\":\"string\",\"description\":\"Only messages before this UTC date or "
    "time.\"},"
    "\"has_error\":{\"type\":\"boolean\",\"description\":\"true: only tool results flagged as "
    "errors (same as has:error).\"},"
    "\"group_by\":{\"type\":\"string\",\"enum\":[\"message\",\"session\"],\"default\":"
    "\"message\",\"description\":\"message: one record per matching message (default). session: "
    "one record per session holding a match: its best match by the sort (best ranked, newest or "
    "oldest) with session_id, hits (the session's matching messages) and first_message_id and "
    "last_message_id (its first and last match in the transcript); total_matches then counts "
    "sessions and total_hits the matching messages.\"},"
    "\"sort\":{\"type\":\"string\",\"enum\":[\"relevance\",\"newest\",\"oldest\"],\"default\":"
    "\"relevance\",\"description\":\"relevance: best match first, equal matches newest stored "
    "first (default; the order may shift when new messages arrive mid-walk, and the page then "
    "says order_may_have_shifted); newest or oldest: by time, stable.\"}}}";

/* Longest value of one filter written in the query. */
#define FILTER_MAX 256

/* The query split into its text and its filters. */
typedef struct parsed_query {
    char text[STORE_QUERY_MAX + 1]; /* words and phrases for the engine */
    char project[FILTER_MAX];       /* project: value, or "" */
    char source[FILTER_MAX];        /* source: value, or "" */
    char role[FILTER_MAX];          /* role: value, or "" */
    char tool[FILTER_MAX];          /* tool: value, or "" */
    char after[FILTER_MAX];         /* after: value, or "" */
    char before[FILTER_MAX];        /* before: value, or "" */
    bool has_error;                 /* has:error was given */
    char bad[FILTER_MAX + 16];      /* the offending filter when parsing failed */
    const char *why;                /* what was expected, when parsing failed */
} parsed_query;

static const char *const filter_names[] = {"project", "source", "role", "tool",
                                           "after",   "before", "has",  NULL};

/* Reads one token at *pp (a word, a "phrase" or key:value) into tok. */
static size_t read_token(const char **pp, char *tok, size_t cap, bool *quoted_value)
{
    const char *p = *pp;
    size_t n = 0;
    bool inq = false;
    *quoted_value = false;
    while (*p && (inq || (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r'))) {
        if (*p == '"') {
            inq = !inq;
            *quoted_value = true;
        }
        if (n + 1 < cap)
            tok[n++] = *p;
        p++;
    }
    tok[n] = '\0';
    *pp = p;
    return n;
}

/* Copies value (without surrounding quotes) into dst. */
static void unquote(char *dst, size_t cap, const char *v)
{
    size_t n = strlen(v);
    if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
        v++;
        n -= 2;
    }
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, v, n);
    dst[n] = '\0';
}

static bool parse_query(const char *q, parsed_query *out)
{
    memset(out, 0, sizeof *out);
    size_t o = 0;
    char tok[STORE_QUERY_MAX + 1];
    const char *p = q;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        if (!*p)
            break;
        bool quoted;
        size_t n = read_token(&p, tok, sizeof tok, &quoted);
        const char *colon = tok[0] != '"' ? strchr(tok, ':') : NULL;
        bool is_filter = false;
        if (colon) {
            size_t klen = (size_t)(colon - tok);
            for (const char *const *f = filter_names; *f; f++)
                if (strlen(*f) == klen && strncmp(tok, *f, klen) == 0)
                    is_filter = true;
        }
        if (!is_filter) {
            if (o + n + 2 > sizeof out->text)
                return false;
            if (o)
                out->text[o++] = ' ';
            memcpy(out->text + o, tok, n);
            o += n;
            out->text[o] = '\0';
            continue;
        }
        const char *v = colon + 1;
        char val[FILTER_MAX];
        unquote(val, sizeof val, v);
        snprintf(out->bad, sizeof out->bad, "%.*s", (int)sizeof out->bad - 1, tok);
        if (!val[0]) {
            out->why = "a value after the colon, e.g. project:api or role:user";
            return false;
        }
        if (strncmp(tok, "project:", 8) == 0) {
            memcpy(out->project, val, sizeof val);
        } else if (strncmp(tok, "source:", 7) == 0) {
            if (!tools_source_known(val)) {
                out->why = "source:claude, source:codex, source:gemini, source:copilot, "
                           "source:opencode or "
                           "source:cursor";
                return false;
            }
            memcpy(out->source, val, sizeof val);
        } else if (strncmp(tok, "role:", 5) == 0) {
            if (strcmp(val, "user") && strcmp(val, "assistant") && strcmp(val, "system") &&
                strcmp(val, "tool")) {
                out->why = "role:user, role:assistant, role:system or role:tool";
                return false;
            }
            memcpy(out->role, val, sizeof val);
        } else if (strncmp(tok, "tool:", 5) == 0) {
            memcpy(out->tool, val, sizeof val);
        } else if (strncmp(tok, "after:", 6) == 0 || strncmp(tok, "before:", 7) == 0) {
            if (!tools_date_ok(val)) {
                out->why = "a UTC date such as after:2025-01-31 or before:2025-02-01T12:00:00Z";
                return false;
            }
            memcpy(tok[0] == 'a' ? out->after : out->before, val, sizeof val);
        } else {
            if (strcmp(val, "error") != 0) {
                out->why = "has:error (the only has: filter)";
                return false;
            }
            out->has_error = true;
        }
    }
    out->bad[0] = '\0';
    return true;
}

/* An argument and the same filter in the query must agree. */
static const char *pick(const char *arg, const char *inq, bool *conflict)
{
    if (arg && inq[0] && strcmp(arg, inq) != 0)
        *conflict = true;
    return arg ? arg : inq[0] ? inq : NULL;
}

static int reject_query(mcpage_result *res, const json_t *args, const char *expected)
{
    return mcpage_reject_argument(res, spec.tool, "query", json_object_get(args, "query"), expected,
                                  "query=\"retry budget\" (two words, both required) or "
                                  "query=\"\\\"connection reset\\\" role:tool\"");
}

/* What the walk callbacks of one search call share. */
typedef struct search_walk {
    const store_search_filter *f; /* the parsed query and filters */
    const json_t *args;           /* the call's arguments, for rejections */
    int64_t budget_ms;            /* the work the call may do */
} search_walk;

static int count(store *s, void *ud, int64_t *total)
{
    const search_walk *sw = ud;
    return store_search_count(s, sw->f, total);
}

/*
 * Grouped by session: the records carry the session's fields by default
 * and the page says the exact number of matching messages (total_hits)
 * beside total_matches, which counts the walk's records, the sessions.
 */
static int grouped_page(store *s, const search_walk *sw, mcpage_list *pg)
{
    store_search_filter plain = *sw->f;
    plain.by_session = 0;
    int64_t hits = 0;
    int rc = store_search_count(s, &plain, &hits);
    if (rc < 0)
        return rc;
    if ((rc = mcpage__list_select_more(pg, grouped_fields)) < 0)
        return rc;
    return mcpage__list_extra_int(pg, "total_hits", hits);
}

static int fetch(store *s, void *ud, const store_page *page, mcpage_list *pg)
{
    const search_walk *sw = ud;
    store_hits rows = {0};
    /* Plain matches with the same snippet on one page are one row (issue 34):
       a commit message quoted in ten messages costs its tokens once. */
    int rc = sw->f->by_session ? grouped_page(s, sw, pg) : mcpage__list_fold(pg, "snippet");
    if (rc < 0)
        return rc;
    rc = store_search(s, sw->f, page, &rows);
    for (size_t i = 0; rc >= 0 && i < rows.count; i++) {
        const store_hit *h = &rows.rows[i];
        int64_t line = transcript_line_after(h->before_count, h->before_lines);
        json_t *rec = json_object();
        json_object_set_new(rec, "message_id", json_integer(h->message_id));
        json_object_set_new(rec, "session_id", tools_jstr(h->session_id));
        json_object_set_new(rec, "project", tools_jstr(h->project));
        json_object_set_new(rec, "role", tools_jstr(h->role));
        json_object_set_new(rec, "timestamp", tools_jtime(h->timestamp));
        json_object_set_new(rec, "snippet", tools_jstr(h->snippet));
        json_object_set_new(rec, "line", json_integer(line));
        json_object_set_new(rec, "ordinal", json_integer(h->ordinal));
        /* A match alone is a group of one. */
        bool grouped = sw->f->by_session;
        json_object_set_new(rec, "hits", json_integer(grouped ? h->hits : 1));
        json_object_set_new(rec, "first_message_id",
                            json_integer(grouped ? h->first_id : h->message_id));
        json_object_set_new(rec, "last_message_id",
                            json_integer(grouped ? h->last_id : h->message_id));
        rc = tools_list_add(pg, rec, &h->key);
        if (rc == MCPAGE_PAGE_FULL)
            break;
    }
    store_hits_free(&rows);
    return rc < 0 ? rc : 0;
}

/* How to ask for less, for an over-budget query. */
#define NARROW_QUERY                                                                               \
    "longer prefixes (conf* rather than c*), fewer prefix terms, a rarer word or a \"quoted "      \
    "phrase\", project:NAME, after:YYYY-MM-DD, or sort=\"newest\" (relevance scores every "        \
    "match)"

/*
 * A query that needed more work than one call may do: an error result
 * saying so and how to narrow it, in the contract's error shape (code
 * "over_budget", the query echoed, what would pass, an example).
 */
static void over_budget(mcpage_result *res, const search_walk *sw)
{
    const char *q = json_string_value(json_object_get(sw->args, "query"));
    /* the query echoed, cut at a character boundary */
    size_t len = q ? strlen(q) : 0, cut = len > 100 ? 100 : len;
    while (cut > 0 && cut < len && ((unsigned char)q[cut] & 0xC0) == 0x80)
        cut--;
    char got[128];
    snprintf(got, sizeof got, "%.*s%s", (int)cut, q ? q : "", cut < len ? "…" : "");
    char expected[600];
    snprintf(expected, sizeof expected,
             "a query that takes less than %lld ms of work; narrow it with " NARROW_QUERY,
             (long long)sw->budget_ms);
    mcpage_result_errorf(res,
                         "The search was stopped after %lld ms, the work one call may do; "
                         "nothing was returned. Call %s again with %s. Example: %s with "
                         "query=\"config* loader\" sort=\"newest\".",
                         (long long)sw->budget_ms, spec.tool, expected, spec.tool);
    json_t *err =
        json_pack("{s:s, s:s, s:s, s:s, s:I, s:s}", "code", "over_budget", "param", "query", "got",
                  got, "expected", expected, "budget_ms", (json_int_t)sw->budget_ms, "example",
                  "search_conversations with query=\"config* loader\" "
                  "sort=\"newest\"");
    json_t *o = err ? json_pack("{s:o}", "error", err) : NULL;
    if (o)
        mcpage_result_set_structured(res, o);
    json_decref(o);
}

/* A query the engine rejects is an invalid argument that says how to write one;
 * one over the term caps says what to drop; one over budget how to narrow it. */
static bool on_error(store *s, void *ud, int rc, mcpage_result *res)
{
    const search_walk *sw = ud;
    if (s == NULL)
        return false;
    if (rc == MCPAGE_ERANGE) {
        over_budget(res, sw);
        return true;
    }
    if (rc == MCPAGE_EINVAL) {
        char why[700];
        snprintf(why, sizeof why,
                 "at most %d different words and phrases, at most %d of them prefixes (word*); "
                 "this one has %s",
                 STORE_QUERY_TERMS_MAX, STORE_QUERY_PREFIXES_MAX, store_errmsg(s));
        reject_query(res, sw->args, why);
        return true;
    }
    if (rc != MCPAGE_EPARSE)
        return false;
    char why[700];
    snprintf(why, sizeof why,
             "a query the search engine accepts (%s): words and \"quoted phrases\", all "
             "required, a trailing * for a prefix; punctuation inside a word is fine",
             store_errmsg(s));
    reject_query(res, sw->args, why);
    return true;
}

/*
 * A relevance cursor of an mcpage before 0.2.0 (equal ranks went oldest
 * stored first; its position holds the message id, today's -message_id,
 * store_key_relevance_old): resumed in today's order it would skip rows,
 * so it is refused with the way on. True when refused.
 */
static bool old_relevance_cursor(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    mcpage_list *pg = mcpage_call_list(call);
    const mcpage_list_window *w = pg ? mcpage_list_window_get(pg) : NULL;
    if (w == NULL || !w->resume || w->nparts != 2 || w->after[1].is_str || w->after[1].i <= 0)
        return false;
    char expected[400], example[160];
    snprintf(expected, sizeof expected,
             "a cursor of this mcpage's relevance order: this one was issued by an mcpage before "
             "0.2.0, whose equal ranks went oldest stored first (now newest first), and would "
             "skip matches here. Omit cursor to start over, or pass offset=%lld to go on at the "
             "same depth",
             (long long)w->offset);
    snprintf(example, sizeof example, "the same query and offset=%lld (no cursor)",
             (long long)w->offset);
    mcpage_reject_argument(res, spec.tool, "cursor", json_object_get(args, "cursor"), expected,
                           example);
    return true;
}

static int run(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    tools_ctx *ctx = mcpage_call_data(call);
    const char *q = json_string_value(json_object_get(args, "query"));
    parsed_query pq;
    if (q == NULL || strlen(q) > STORE_QUERY_MAX)
        return reject_query(res, args, "a query of at most " QUERY_BYTES " bytes");
    if (!parse_query(q, &pq)) {
        char why[600];
        if (pq.why)
            snprintf(why, sizeof why, "the filter %s to be %s", pq.bad, pq.why);
        else
            snprintf(why, sizeof why, "a query of at most " QUERY_BYTES " bytes");
        return reject_query(res, args, why);
    }
    if (!pq.text[0])
        return reject_query(res, args,
                            "at least one word or \"phrase\" besides the filters (filters alone "
                            "match nothing; use list_sessions to filter without words)");
    if (!tools_check_date(spec.tool, args, "after", res) ||
        !tools_check_date(spec.tool, args, "before", res))
        return 0;
    bool conflict = false;
    store_search_filter f = {.query = pq.text};
    f.project = pick(tools_arg_str(args, "project"), pq.project, &conflict);
    f.source = pick(tools_arg_str(args, "source"), pq.source, &conflict);
    f.role = pick(tools_arg_str(args, "role"), pq.role, &conflict);
    f.tool = pick(tools_arg_str(args, "tool"), pq.tool, &conflict);
    f.after = pick(tools_arg_str(args, "after"), pq.after, &conflict);
    f.before = pick(tools_arg_str(args, "before"), pq.before, &conflict);
    f.has_error = json_is_true(json_object_get(args, "has_error")) || pq.has_error ? 1 : 0;
    if (conflict)
        return reject_query(res, args,
                            "each filter once: a filter in the query and the argument of the same "
                            "name disagree; keep one of them");
    const char *sort = tools_arg_str(args, "sort");
    store_key_type types[2] = {STORE_KEY_REAL, STORE_KEY_INT};
    if (sort && strcmp(sort, "newest") == 0)
        f.sort = STORE_SEARCH_NEWEST;
    else if (sort && strcmp(sort, "oldest") == 0)
        f.sort = STORE_SEARCH_OLDEST;
    if (f.sort != STORE_SEARCH_RELEVANCE)
        types[0] = STORE_KEY_TEXT;
    const char *group_by = tools_arg_str(args, "group_by");
    f.by_session = group_by && strcmp(group_by, "session") == 0;
    if (f.sort == STORE_SEARCH_RELEVANCE && old_relevance_cursor(call, args, res))
        return 0;

    search_walk sw = {&f, args, ctx->query_budget_ms};
    tools_list_walk walk = {&spec,    types,
                            2,        "search matches",
                            count,    fetch,
                            on_error, &sw,
                            call,     f.project ? "project" : NULL};
    return tools_list_run(ctx, &walk, res);
}

int tools_search_conversations_register(mcpage_server *srv, tools_ctx *ctx)
{
    char d[PAGE_FMT_INT_CAP], m[PAGE_FMT_INT_CAP], budget[128], desc[2200];
    (void)snprintf(
        desc, sizeof desc,
        "Full-text search over every message of every archived coding-agent session. The "
        "query takes words and \"quoted phrases\" (all required; word* for a prefix; an unquoted "
        "word also finds its forms and identifier parts: session live finds SessionLive) and "
        "filters written in it: project:NAME source:" TOOLS_SOURCE_LIST
        " role:user|assistant|system|tool tool:NAME after:YYYY-MM-DD before:YYYY-MM-DD has:error "
        "(or pass them as arguments). Matches come as arrays in the order of `columns` (text "
        "copy: a tab-separated header, one line per match): message_id, project, role, timestamp "
        "(UTC, to the minute), a snippet with each hit between \xE3\x80\x90 and \xE3\x80\x91 "
        "(black lenticular brackets; plain [brackets] are the transcript's own). Add session_id, "
        "line "
        "or "
        "ordinal with fields=[...]. Filtered by project, the page says project once. "
        "read_session(message_id=...) opens the session at the match (at its line); "
        "read_message(message_id=...) reads the whole message. Best match first, equal ones "
        "newest first (sort=newest or oldest for a time order). group_by=\"session\": one record "
        "per session, its best match with session_id and hits (total_hits: matching messages). "
        "Matches of a page with the "
        "same snippet as an earlier row are folded into it: folded says how many, folds lists "
        "each row's count and others (their message_ids). Pages of %s matches by default "
        "(limit up to %s) within "
        "%s; total_matches is exact. Page on with next_cursor (same cost at any depth) or "
        "next_offset (cost grows with the offset).",
        page_fmt_int(spec.default_limit, d), page_fmt_int(spec.max_limit, m),
        tools_budget_words(mcpage_server_pager(srv), budget, sizeof budget));
    mcpage_tool t = {
        .name = "search_conversations",
        .title = "Search conversations",
        .description = desc,
        .input_schema = schema,
        .output_schema = TOOLS_LIST_COLUMNS_OUTPUT(
            "matches", "\"project\":{\"type\":\"string\",\"description\":\"The project of "
                       "every match on the page (filtered by project).\"},\"total_hits\":{"
                       "\"type\":\"integer\",\"minimum\":0,\"description\":\"group_by="
                       "session: the matching messages of the whole walk (total_matches "
                       "counts its sessions).\"},\"folded\":{\"type\":\"integer\",\"minimum\":1,"
                       "\"description\":\"Matches of this page whose snippet is the same as an "
                       "earlier row's: not rows (rows = returned - folded), listed in folds.\"},"
                       "\"folds\":{\"type\":\"array\",\"items\":{\"type\":\"object\"},"
                       "\"description\":\"Per row that others were folded into: message_id (the "
                       "row), count (the matches it stands for, itself included) and others "
                       "(their message_ids).\"},"),
        .read_only = MCPAGE_HINT_TRUE,
        .idempotent = MCPAGE_HINT_TRUE,
        .open_world = MCPAGE_HINT_FALSE,
        .handler = run,
        .user_data = ctx,
        .max_result_chars = mcpage_pager_settings(ctx->pager)->max_chars,
        .meta = TOOLS_APP_TOOL_META,
    };
    return mcpage_server_add_list_tool(srv, &t, &spec);
}
