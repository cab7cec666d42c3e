/*
 * conformance_server: the fixture the official MCP conformance suite
 * (npm @modelcontextprotocol/conformance, `conformance server --url
 * http://127.0.0.1:PORT/mcp --suite all`) expects, served over Streamable
 * HTTP with the mcpage runtime. The tools, resources and prompts match
 * examples/servers/typescript/everything-server.ts of
 * modelcontextprotocol/conformance (0.1.16) name for name and output for
 * output.
 *
 *   conformance_server [--port N] [--host ADDR]
 *
 * Port 0 (the default) picks a free port; the URL is printed on stderr.
 */
#define _GNU_SOURCE /* asprintf */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include <mcpage/http.h>
#include <mcpage/server.h>

/* A 1x1 red PNG and a minimal WAV, as the reference fixture sends them. */
static const char PNG_B64[] = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAF"
                              "BQIAX8jx0gAAAABJRU5ErkJggg==";
static const char WAV_B64[] = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/* Longest decoded fixture blob. */
#define BLOB_MAX 128

/* Decodes one of the constants above into out (BLOB_MAX bytes); returns its length. */
static size_t unb64(const char *b64, unsigned char *out)
{
    size_t n = strlen(b64);
    int len = EVP_DecodeBlock(out, (const unsigned char *)b64, (int)n);
    if (len < 0)
        return 0;
    while (n > 0 && b64[n - 1] == '=') {
        n--;
        len--; /* EVP_DecodeBlock counts padding as zero bytes */
    }
    return (size_t)len;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------ tools */

static int t_simple_text(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)call;
    (void)args;
    const char *t = "This is a simple text response for testing.";
    return mcpage_result_add_text(res, t, strlen(t));
}

static int t_image(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)call;
    (void)args;
    unsigned char b[BLOB_MAX];
    return mcpage_result_add_image(res, "image/png", b, unb64(PNG_B64, b));
}

static int t_audio(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)call;
    (void)args;
    unsigned char b[BLOB_MAX];
    return mcpage_result_add_audio(res, "audio/wav", b, unb64(WAV_B64, b));
}

static int t_embedded(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)call;
    (void)args;
    const char *t = "This is an embedded resource content.";
    return mcpage_result_add_embedded_text(res, "test://embedded-resource", "text/plain", t,
                                           strlen(t));
}

static int t_multiple(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)call;
    (void)args;
    unsigned char b[BLOB_MAX];
    const char *t = "Multiple content types test:";
    const char *j = "{\"test\":\"data\",\"value\":123}";
    int rc = mcpage_result_add_text(res, t, strlen(t));
    if (rc == 0)
        rc = mcpage_result_add_image(res, "image/png", b, unb64(PNG_B64, b));
    if (rc == 0)
        rc = mcpage_result_add_embedded_text(res, "test://mixed-content-resource",
                                             "application/json", j, strlen(j));
    return rc;
}

static int t_logging(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    mcpage_call_log(call, MCPAGE_LOG_INFO, NULL, "Tool execution started");
    sleep_ms(50);
    mcpage_call_log(call, MCPAGE_LOG_INFO, NULL, "Tool processing data");
    sleep_ms(50);
    mcpage_call_log(call, MCPAGE_LOG_INFO, NULL, "Tool execution completed");
    const char *t = "Tool with logging executed successfully";
    return mcpage_result_add_text(res, t, strlen(t));
}

static int t_progress(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    char msg[64];
    for (int step = 0; step <= 100; step += 50) {
        (void)snprintf(msg, sizeof msg, "Completed step %d of 100", step);
        mcpage_call_progress(call, step, 100, msg);
        if (step < 100)
            sleep_ms(50);
    }
    return mcpage_result_add_text(res, "progress done", 13);
}

static int t_error(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)call;
    (void)args;
    return mcpage_result_errorf(res, "This tool intentionally returns an error for testing");
}

static int t_reconnection(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    /* SEP-1699: close the SSE connection mid-call; the client resumes with Last-Event-ID. */
    mcpage_call_close_stream(call);
    sleep_ms(100);
    const char *t = "Reconnection test completed successfully. If you received this, the client "
                    "properly reconnected after stream closure.";
    return mcpage_result_add_text(res, t, strlen(t));
}

/*
 * Asks the client (sampling, elicitation, roots) the way both protocol eras
 * allow: a request to the client under 2025-11-25, an InputRequiredResult
 * round trip under 2026-07-28 (the runtime answers it when this returns
 * NULL with MCPAGE_EINPUT pending). On failure writes `what` and the reason
 * into res.
 */
static json_t *ask_client(mcpage_call *call, const char *key, const char *method, json_t *params,
                          const char *what, mcpage_result *res)
{
    json_t *out = NULL;
    int rc = mcpage_call_input(call, key, method, params, 60000, &out);
    json_decref(params);
    if (rc == 0)
        return out;
    if (rc == MCPAGE_EINPUT)
        return NULL; /* asked: the client retries with the answer */
    char *err = out ? json_dumps(out, JSON_COMPACT) : NULL;
    mcpage_result_errorf(res, "%s not supported or error: %s%s%s", what, mcpage_strerror(rc),
                         err ? " " : "", err ? err : "");
    free(err);
    json_decref(out);
    return NULL;
}

static int t_sampling(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    const char *prompt = json_string_value(json_object_get(args, "prompt"));
    json_t *params = json_pack("{s:[{s:s,s:{s:s,s:s}}],s:i}", "messages", "role", "user", "content",
                               "type", "text", "text", prompt ? prompt : "", "maxTokens", 100);
    json_t *r = ask_client(call, "sampling", "sampling/createMessage", params, "Sampling", res);
    if (r == NULL)
        return 0;
    const char *text = json_string_value(json_object_get(json_object_get(r, "content"), "text"));
    char *t = NULL;
    int n = asprintf(&t, "LLM response: %s", text ? text : "No response");
    int rc = n < 0 ? MCPAGE_ENOMEM : mcpage_result_add_text(res, t, (size_t)n);
    free(t);
    json_decref(r);
    return rc;
}

/* Runs elicitation/create and reports "<label>: action=..., content=...". */
static int elicit(mcpage_call *call, const char *message, const char *schema, const char *label,
                  mcpage_result *res)
{
    json_t *s = json_loads(schema, 0, NULL);
    if (s == NULL)
        return MCPAGE_EPARSE;
    json_t *params = json_pack("{s:s,s:o}", "message", message, "requestedSchema", s);
    json_t *r = ask_client(call, "elicitation", "elicitation/create", params, "Elicitation", res);
    if (r == NULL)
        return 0;
    const char *action = json_string_value(json_object_get(r, "action"));
    json_t *content = json_object_get(r, "content");
    char *c = json_dumps(content ? content : json_object(), JSON_COMPACT);
    char *t = NULL;
    int n = asprintf(&t, "%s: action=%s, content=%s", label, action ? action : "", c ? c : "{}");
    int rc = n < 0 ? MCPAGE_ENOMEM : mcpage_result_add_text(res, t, (size_t)n);
    free(t);
    free(c);
    json_decref(r);
    return rc;
}

static int t_elicitation(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    const char *message = json_string_value(json_object_get(args, "message"));
    return elicit(call, message ? message : "",
                  "{\"type\":\"object\",\"properties\":{\"response\":{\"type\":\"string\","
                  "\"description\":\"User's response\"}},\"required\":[\"response\"]}",
                  "User response", res);
}

static int t_elicitation_defaults(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    return elicit(
        call, "Please review and update the form fields with defaults",
        "{\"type\":\"object\",\"properties\":{"
        "\"name\":{\"type\":\"string\",\"description\":\"User name\",\"default\":\"John Doe\"},"
        "\"age\":{\"type\":\"integer\",\"description\":\"User age\",\"default\":30},"
        "\"score\":{\"type\":\"number\",\"description\":\"User score\",\"default\":95.5},"
        "\"status\":{\"type\":\"string\",\"description\":\"User status\",\"enum\":[\"active\","
        "\"inactive\",\"pending\"],\"default\":\"active\"},"
        "\"verified\":{\"type\":\"boolean\",\"description\":\"Verification status\","
        "\"default\":true}},\"required\":[]}",
        "Elicitation completed", res);
}

static int t_elicitation_enums(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    return elicit(
        call, "Please select options from the enum fields",
        "{\"type\":\"object\",\"properties\":{"
        "\"untitledSingle\":{\"type\":\"string\",\"description\":\"Select one option\","
        "\"enum\":[\"option1\",\"option2\",\"option3\"]},"
        "\"titledSingle\":{\"type\":\"string\",\"description\":\"Select one option with titles\","
        "\"oneOf\":[{\"const\":\"value1\",\"title\":\"First Option\"},{\"const\":\"value2\","
        "\"title\":\"Second Option\"},{\"const\":\"value3\",\"title\":\"Third Option\"}]},"
        "\"legacyEnum\":{\"type\":\"string\",\"description\":\"Select one option (legacy)\","
        "\"enum\":[\"opt1\",\"opt2\",\"opt3\"],\"enumNames\":[\"Option One\",\"Option Two\","
        "\"Option Three\"]},"
        "\"untitledMulti\":{\"type\":\"array\",\"description\":\"Select multiple options\","
        "\"minItems\":1,\"maxItems\":3,\"items\":{\"type\":\"string\",\"enum\":[\"option1\","
        "\"option2\",\"option3\"]}},"
        "\"titledMulti\":{\"type\":\"array\",\"description\":\"Select multiple options with "
        "titles\",\"minItems\":1,\"maxItems\":3,\"items\":{\"anyOf\":[{\"const\":\"value1\","
        "\"title\":\"First Choice\"},{\"const\":\"value2\",\"title\":\"Second Choice\"},"
        "{\"const\":\"value3\",\"title\":\"Third Choice\"}]}}},\"required\":[]}",
        "Elicitation completed", res);
}

static int t_json_schema(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)call;
    char *a = json_dumps(args, JSON_COMPACT);
    char *t = NULL;
    int n = asprintf(&t, "JSON Schema 2020-12 tool called with: %s", a ? a : "{}");
    int rc = n < 0 ? MCPAGE_ENOMEM : mcpage_result_add_text(res, t, (size_t)n);
    free(t);
    free(a);
    return rc;
}

/* ------------------------------------------------------------ 2026-07-28 (MRTR and more) */

/* An elicitation request for one string or boolean field. */
static json_t *form(const char *message, const char *field, const char *type)
{
    return json_pack("{s:s, s:{s:s, s:{s:{s:s}}, s:[s]}}", "message", message, "requestedSchema",
                     "type", "object", "properties", field, "type", type, "required", field);
}

/* The text an answered elicitation gave for `field` ("" when it did not). */
static const char *answer_text(const json_t *answer, const char *field)
{
    const char *t = json_string_value(json_object_get(json_object_get(answer, "content"), field));
    return t ? t : "";
}

static int add_textf(mcpage_result *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int add_textf(mcpage_result *res, const char *fmt, ...)
{
    char *t = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&t, fmt, ap);
    va_end(ap);
    int rc = n < 0 ? MCPAGE_ENOMEM : mcpage_result_add_text(res, t, (size_t)n);
    free(t);
    return rc;
}

static int t_irr_elicitation(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    json_t *a = ask_client(call, "user_name", "elicitation/create",
                           form("What is your name?", "name", "string"), "Elicitation", res);
    if (a == NULL)
        return 0;
    int rc = add_textf(res, "Hello, %s!%s", answer_text(a, "name"), "");
    json_decref(a);
    return rc;
}

static json_t *question(const char *text, int max_tokens)
{
    return json_pack("{s:[{s:s, s:{s:s, s:s}}], s:i}", "messages", "role", "user", "content",
                     "type", "text", "text", text, "maxTokens", max_tokens);
}

static int t_irr_sampling(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    json_t *a = ask_client(call, "capital_question", "sampling/createMessage",
                           question("What is the capital of France?", 100), "Sampling", res);
    if (a == NULL)
        return 0;
    const char *t = json_string_value(json_object_get(json_object_get(a, "content"), "text"));
    int rc = add_textf(res, "LLM response: %s%s", t ? t : "", "");
    json_decref(a);
    return rc;
}

/* "Roots: uri, uri" from a ListRootsResult. */
static int roots_text(const json_t *a, mcpage_result *res)
{
    char buf[1024] = "";
    size_t i;
    const json_t *root;
    json_array_foreach(json_object_get(a, "roots"), i, root)
    {
        const char *uri = json_string_value(json_object_get(root, "uri"));
        size_t n = strlen(buf);
        (void)snprintf(buf + n, sizeof buf - n, "%s%s", i ? ", " : "", uri ? uri : "?");
    }
    return add_textf(res, "Roots: %s%s", buf[0] ? buf : "(none)", "");
}

static int t_irr_list_roots(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    json_t *a = ask_client(call, "client_roots", "roots/list", json_object(), "Roots", res);
    if (a == NULL)
        return 0;
    int rc = roots_text(a, res);
    json_decref(a);
    return rc;
}

static int t_irr_request_state(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    json_t *a = ask_client(call, "confirm", "elicitation/create",
                           form("Please confirm", "ok", "boolean"), "Elicitation", res);
    if (a == NULL)
        return 0;
    /* Round 2 or later exists only when the signed requestState verified. */
    int rc = add_textf(res, "%s: confirmed (round %s)",
                       mcpage_call_round(call) > 1 ? "state-ok" : "no-state",
                       mcpage_call_round(call) > 1 ? "2+" : "1");
    json_decref(a);
    return rc;
}

static int t_irr_multiple(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    /* All three asked before returning, so they go out in one round. */
    json_t *name = ask_client(call, "user_name", "elicitation/create",
                              form("What is your name?", "name", "string"), "Elicitation", res);
    json_t *greeting = ask_client(call, "greeting", "sampling/createMessage",
                                  question("Generate a greeting", 50), "Sampling", res);
    json_t *roots = ask_client(call, "client_roots", "roots/list", json_object(), "Roots", res);
    int rc = 0;
    if (name && greeting && roots) {
        const char *g =
            json_string_value(json_object_get(json_object_get(greeting, "content"), "text"));
        rc = add_textf(res, "%s, %s", g ? g : "Hello", answer_text(name, "name"));
    }
    json_decref(name);
    json_decref(greeting);
    json_decref(roots);
    return rc;
}

static int t_irr_multi_round(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    json_t *a1 =
        ask_client(call, "step1", "elicitation/create",
                   form("Step 1: What is your name?", "name", "string"), "Elicitation", res);
    if (a1 == NULL)
        return 0;
    json_t *a2 = ask_client(call, "step2", "elicitation/create",
                            form("Step 2: What is your favorite color?", "color", "string"),
                            "Elicitation", res);
    int rc = 0;
    if (a2)
        rc = add_textf(res, "%s likes %s", answer_text(a1, "name"), answer_text(a2, "color"));
    json_decref(a1);
    json_decref(a2);
    return rc;
}

static int t_irr_capabilities(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    /* Asks only what the client declared: mcpage_call_input refuses the rest (ENOTSUP). */
    json_t *out = NULL;
    int pending = 0;
    json_t *q = question("Say hello", 20);
    if (mcpage_call_input(call, "sampling_request", "sampling/createMessage", q, 60000, &out) ==
        MCPAGE_EINPUT)
        pending++;
    json_decref(q);
    json_decref(out);
    out = NULL;
    q = form("Your name?", "name", "string");
    if (mcpage_call_input(call, "elicitation_request", "elicitation/create", q, 60000, &out) ==
        MCPAGE_EINPUT)
        pending++;
    json_decref(q);
    json_decref(out);
    if (pending)
        return MCPAGE_EINPUT;
    return mcpage_result_add_text(res, "capabilities respected", 22);
}

static int t_missing_capability(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    int rc = mcpage_call_require(call, "sampling");
    if (rc != 0)
        return rc; /* the client gets -32021 naming sampling */
    return mcpage_result_add_text(res, "sampling declared", 17);
}

static int t_streaming_elicitation(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    mcpage_call_progress(call, 1, 2, "asking");
    json_t *a = ask_client(call, "stream_name", "elicitation/create",
                           form("What is your name?", "name", "string"), "Elicitation", res);
    if (a == NULL)
        return 0;
    int rc = add_textf(res, "Streamed: %s%s", answer_text(a, "name"), "");
    json_decref(a);
    return rc;
}

static int t_header_param(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)call;
    const char *region = json_string_value(json_object_get(args, "region"));
    return add_textf(res, "region=%s%s", region ? region : "", "");
}

static int p_irr(mcpage_call *call, const json_t *args, mcpage_prompt_messages *out)
{
    (void)args;
    json_t *a = NULL;
    json_t *q = form("What context should the prompt use?", "context", "string");
    int rc = mcpage_call_input(call, "user_context", "elicitation/create", q, 60000, &a);
    json_decref(q);
    if (rc != 0)
        return rc;
    char *t = NULL;
    int n = asprintf(&t, "Use this context: %s", answer_text(a, "context"));
    rc = n < 0 ? MCPAGE_ENOMEM : mcpage_prompt_add_text(out, "user", t);
    free(t);
    json_decref(a);
    return rc;
}

/* ------------------------------------------------------------ the tasks extension (SEP-2663) */

static int t_greet(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)call;
    const char *name = json_string_value(json_object_get(args, "name"));
    return add_textf(res, "Hello, %s!", name ? name : "World");
}

/* Sleeps up to `ms`, in steps, until the call is cancelled; false when it was. */
static bool sleep_unless_cancelled(mcpage_call *call, long ms)
{
    for (long done = 0; done < ms; done += 20) {
        if (mcpage_call_cancelled(call))
            return false;
        sleep_ms(20);
    }
    return !mcpage_call_cancelled(call);
}

static int t_slow_compute(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    json_int_t seconds = json_integer_value(json_object_get(args, "seconds"));
    const char *label = json_string_value(json_object_get(args, "label"));
    /* Instant work answers in the request; anything longer becomes a task when it can. */
    if (seconds > 0)
        (void)mcpage_call_task(call);
    if (!sleep_unless_cancelled(call, (long)seconds * 1000))
        return MCPAGE_ECANCELED;
    return add_textf(res, "Computed %s in %lld s", label ? label : "", (long long)seconds);
}

static int t_failing_job(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    (void)mcpage_call_task(call);
    if (!sleep_unless_cancelled(call, 1000))
        return MCPAGE_ECANCELED;
    return mcpage_result_errorf(res, "The job failed: the tool reported an error");
}

static int t_protocol_error_job(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    (void)res;
    (void)mcpage_call_task(call);
    sleep_ms(100);
    return mcpage_call_fail(call, -32603, "Internal error: the job crashed");
}

static int t_confirm_delete(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    const char *file = json_string_value(json_object_get(args, "filename"));
    (void)mcpage_call_task(call);
    json_t *a = ask_client(call, "confirm_delete", "elicitation/create",
                           form("Delete this file?", "confirm", "boolean"), "Elicitation", res);
    if (a == NULL)
        return 0;
    const char *action = json_string_value(json_object_get(a, "action"));
    bool yes = json_is_true(json_object_get(json_object_get(a, "content"), "confirm")) ||
               (action && strcmp(action, "accept") == 0);
    json_decref(a);
    return add_textf(res, "%s %s", yes ? "Deleted" : "Kept", file ? file : "the file");
}

static int t_multi_input(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    (void)mcpage_call_task(call);
    /* Both asked before returning: two questions pending at once. */
    json_t *first = ask_client(call, "first_name", "elicitation/create",
                               form("First name?", "name", "string"), "Elicitation", res);
    json_t *last = ask_client(call, "last_name", "elicitation/create",
                              form("Last name?", "name", "string"), "Elicitation", res);
    int rc = 0;
    if (first && last)
        rc = add_textf(res, "Hello, %s %s", answer_text(first, "name"), answer_text(last, "name"));
    json_decref(first);
    json_decref(last);
    return rc;
}

static int t_tool_with_task(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args;
    /* Input first, in the request (InputRequiredResult); then the work goes on as a task. */
    json_t *a = ask_client(call, "user_name", "elicitation/create",
                           form("What is your name?", "name", "string"), "Elicitation", res);
    if (a == NULL)
        return 0;
    (void)mcpage_call_task(call);
    sleep_ms(200);
    int rc = add_textf(res, "Task finished for %s", answer_text(a, "name"));
    json_decref(a);
    return rc;
}

/* ------------------------------------------------------------ resources */

static int r_static_text(mcpage_call *call, const char *uri, mcpage_contents *out)
{
    (void)call;
    const char *t = "This is the content of the static text resource.";
    return mcpage_contents_add_text(out, uri, "text/plain", t, strlen(t));
}

static int r_static_binary(mcpage_call *call, const char *uri, mcpage_contents *out)
{
    (void)call;
    unsigned char b[BLOB_MAX];
    return mcpage_contents_add_blob(out, uri, "image/png", b, unb64(PNG_B64, b));
}

static int r_watched(mcpage_call *call, const char *uri, mcpage_contents *out)
{
    (void)call;
    const char *t = "Watched resource content";
    return mcpage_contents_add_text(out, uri, "text/plain", t, strlen(t));
}

static int r_template(mcpage_call *call, const char *uri, mcpage_contents *out)
{
    const char *id = json_string_value(json_object_get(mcpage_call_args(call), "id"));
    json_t *o = json_pack("{s:s,s:b,s:s+}", "id", id ? id : "", "templateTest", 1, "data",
                          "Data for ID: ", id ? id : "");
    char *t = o ? json_dumps(o, JSON_COMPACT) : NULL;
    int rc =
        t ? mcpage_contents_add_text(out, uri, "application/json", t, strlen(t)) : MCPAGE_ENOMEM;
    free(t);
    json_decref(o);
    return rc;
}

/* ------------------------------------------------------------ prompts */

static int p_simple(mcpage_call *call, const json_t *args, mcpage_prompt_messages *out)
{
    (void)call;
    (void)args;
    return mcpage_prompt_add_text(out, "user", "This is a simple prompt for testing.");
}

static int p_args(mcpage_call *call, const json_t *args, mcpage_prompt_messages *out)
{
    (void)call;
    char t[1024];
    (void)snprintf(t, sizeof t, "Prompt with arguments: arg1='%s', arg2='%s'",
                   json_string_value(json_object_get(args, "arg1")),
                   json_string_value(json_object_get(args, "arg2")));
    return mcpage_prompt_add_text(out, "user", t);
}

static int p_embedded(mcpage_call *call, const json_t *args, mcpage_prompt_messages *out)
{
    (void)call;
    const char *uri = json_string_value(json_object_get(args, "resourceUri"));
    json_t *c =
        json_pack("{s:s,s:{s:s,s:s,s:s}}", "type", "resource", "resource", "uri", uri ? uri : "",
                  "mimeType", "text/plain", "text", "Embedded resource content for testing.");
    int rc = c ? mcpage_prompt_add_content(out, "user", c) : MCPAGE_ENOMEM;
    json_decref(c);
    if (rc == 0)
        rc = mcpage_prompt_add_text(out, "user", "Please process the embedded resource above.");
    return rc;
}

static int p_image(mcpage_call *call, const json_t *args, mcpage_prompt_messages *out)
{
    (void)call;
    (void)args;
    json_t *c =
        json_pack("{s:s,s:s,s:s}", "type", "image", "data", PNG_B64, "mimeType", "image/png");
    int rc = c ? mcpage_prompt_add_content(out, "user", c) : MCPAGE_ENOMEM;
    json_decref(c);
    if (rc == 0)
        rc = mcpage_prompt_add_text(out, "user", "Please analyze the image above.");
    return rc;
}

static int complete(void *ud, const mcpage_completion_request *req, mcpage_completion *out)
{
    (void)ud;
    (void)req;
    (void)out;
    return 0; /* no suggestions, as the reference fixture */
}

/* ------------------------------------------------------------ registry */

#define NO_ARGS "{\"type\":\"object\",\"properties\":{}}"

static int register_all(mcpage_server *srv)
{
    const mcpage_tool tools[] = {
        {.name = "test_simple_text",
         .description = "Tests simple text content response",
         .handler = t_simple_text},
        {.name = "test_image_content",
         .description = "Tests image content response",
         .handler = t_image},
        {.name = "test_audio_content",
         .description = "Tests audio content response",
         .handler = t_audio},
        {.name = "test_embedded_resource",
         .description = "Tests embedded resource content response",
         .handler = t_embedded},
        {.name = "test_multiple_content_types",
         .description = "Tests response with multiple content types (text, image, resource)",
         .handler = t_multiple},
        {.name = "test_tool_with_logging",
         .description = "Tests tool that emits log messages during execution",
         .input_schema = NO_ARGS,
         .handler = t_logging},
        {.name = "test_tool_with_progress",
         .description = "Tests tool that reports progress notifications",
         .input_schema = NO_ARGS,
         .handler = t_progress},
        {.name = "test_error_handling",
         .description = "Tests error response handling",
         .handler = t_error},
        {.name = "test_reconnection",
         .description = "Tests SSE stream disconnection and client reconnection (SEP-1699). "
                        "Server will close the stream mid-call and send the result after "
                        "client reconnects.",
         .input_schema = NO_ARGS,
         .handler = t_reconnection},
        {.name = "test_sampling",
         .description = "Tests server-initiated sampling (LLM completion request)",
         .input_schema = "{\"type\":\"object\",\"properties\":{\"prompt\":{\"type\":\"string\","
                         "\"description\":\"The prompt to send to the LLM\"}},"
                         "\"required\":[\"prompt\"]}",
         .handler = t_sampling},
        {.name = "test_elicitation",
         .description = "Tests server-initiated elicitation (user input request)",
         .input_schema = "{\"type\":\"object\",\"properties\":{\"message\":{\"type\":\"string\","
                         "\"description\":\"The message to show the user\"}},"
                         "\"required\":[\"message\"]}",
         .handler = t_elicitation},
        {.name = "test_elicitation_sep1034_defaults",
         .description = "Tests elicitation with default values per SEP-1034",
         .input_schema = NO_ARGS,
         .handler = t_elicitation_defaults},
        {.name = "test_elicitation_sep1330_enums",
         .description = "Tests elicitation with enum schema improvements per SEP-1330",
         .input_schema = NO_ARGS,
         .handler = t_elicitation_enums},
        {.name = "test_input_required_result_elicitation",
         .description = "Asks the user's name (elicitation) and greets them",
         .input_schema = NO_ARGS,
         .handler = t_irr_elicitation},
        {.name = "test_input_required_result_sampling",
         .description = "Asks the client's model a question (sampling)",
         .input_schema = NO_ARGS,
         .handler = t_irr_sampling},
        {.name = "test_input_required_result_list_roots",
         .description = "Asks the client's roots",
         .input_schema = NO_ARGS,
         .handler = t_irr_list_roots},
        {.name = "test_input_required_result_request_state",
         .description = "Asks for a confirmation; says state-ok once the request state verified",
         .input_schema = NO_ARGS,
         .handler = t_irr_request_state},
        {.name = "test_input_required_result_multiple_inputs",
         .description = "Asks for a name, a greeting and the roots in one round",
         .input_schema = NO_ARGS,
         .handler = t_irr_multiple},
        {.name = "test_input_required_result_multi_round",
         .description = "Asks two questions in two rounds",
         .input_schema = NO_ARGS,
         .handler = t_irr_multi_round},
        {.name = "test_input_required_result_tampered_state",
         .description = "Asks a question; a tampered request state is refused",
         .input_schema = NO_ARGS,
         .handler = t_irr_request_state},
        {.name = "test_input_required_result_capabilities",
         .description = "Asks only what the client declared it can answer",
         .input_schema = NO_ARGS,
         .handler = t_irr_capabilities},
        {.name = "test_missing_capability",
         .description = "Needs the sampling capability: without it the client gets -32021",
         .input_schema = NO_ARGS,
         .handler = t_missing_capability},
        {.name = "test_streaming_elicitation",
         .description = "Reports progress, then asks for a name",
         .input_schema = NO_ARGS,
         .handler = t_streaming_elicitation},
        {.name = "test_logging_tool",
         .description = "Logs three messages (only when the request asks for a log level)",
         .input_schema = NO_ARGS,
         .handler = t_logging},
        {.name = "test_header_param",
         .description = "Echoes its region, which HTTP clients mirror in Mcp-Param-Region",
         .input_schema = "{\"type\":\"object\",\"properties\":{\"region\":{\"type\":"
                         "\"string\",\"x-mcp-header\":\"Region\"}},\"required\":[\"region\"]}",
         .handler = t_header_param},
        {.name = "greet",
         .description = "Greets by name (never a task)",
         .input_schema = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":"
                         "\"string\"}}}",
         .handler = t_greet},
        {.name = "slow_compute",
         .description = "Sleeps the given seconds; runs as a task when that is more than 0",
         .input_schema = "{\"type\":\"object\",\"properties\":{\"seconds\":{\"type\":"
                         "\"integer\",\"minimum\":0,\"maximum\":600},\"label\":{\"type\":"
                         "\"string\"}}}",
         .handler = t_slow_compute,
         .tasks = MCPAGE_TASKS_OPTIONAL},
        {.name = "failing_job",
         .description = "A task whose tool reports an error after a second",
         .input_schema = NO_ARGS,
         .handler = t_failing_job,
         .tasks = MCPAGE_TASKS_REQUIRED},
        {.name = "protocol_error_job",
         .description = "A task that fails with a protocol error",
         .input_schema = NO_ARGS,
         .handler = t_protocol_error_job,
         .tasks = MCPAGE_TASKS_OPTIONAL},
        {.name = "confirm_delete",
         .description = "A task that asks for a confirmation before it deletes",
         .input_schema = "{\"type\":\"object\",\"properties\":{\"filename\":{\"type\":"
                         "\"string\"}}}",
         .handler = t_confirm_delete,
         .tasks = MCPAGE_TASKS_OPTIONAL},
        {.name = "multi_input",
         .description = "A task that asks two questions at once",
         .input_schema = NO_ARGS,
         .handler = t_multi_input,
         .tasks = MCPAGE_TASKS_OPTIONAL},
        {.name = "test_tool_with_task",
         .description = "Asks a name in the request, then finishes as a task",
         .input_schema = NO_ARGS,
         .handler = t_tool_with_task,
         .tasks = MCPAGE_TASKS_REQUIRED},
        {.name = "json_schema_2020_12_tool",
         .description = "Tool with JSON Schema 2020-12 features for conformance testing "
                        "(SEP-1613)",
         .input_schema =
             "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"type\":\"object\","
             "\"$defs\":{\"address\":{\"$anchor\":\"addressDef\",\"type\":\"object\","
             "\"properties\":{\"street\":{\"type\":\"string\"},\"city\":{\"type\":\"string\"}}}},"
             "\"properties\":{\"name\":{\"type\":\"string\"},\"address\":{\"$ref\":"
             "\"#/$defs/address\"},\"contactMethod\":{\"type\":\"string\",\"enum\":[\"phone\","
             "\"email\"]},\"phone\":{\"type\":\"string\"},\"email\":{\"type\":\"string\"}},"
             "\"allOf\":[{\"anyOf\":[{\"required\":[\"phone\"]},{\"required\":[\"email\"]}]}],"
             "\"if\":{\"properties\":{\"contactMethod\":{\"const\":\"phone\"}},"
             "\"required\":[\"contactMethod\"]},\"then\":{\"required\":[\"phone\"]},"
             "\"else\":{\"required\":[\"email\"]},\"additionalProperties\":false}",
         .handler = t_json_schema},
    };
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
        int rc = mcpage_server_add_tool(srv, &tools[i]);
        if (rc != 0) {
            (void)fprintf(stderr, "conformance_server: tool %s: %s\n", tools[i].name,
                          mcpage_strerror(rc));
            return rc;
        }
    }
    const mcpage_resource resources[] = {
        {.uri = "test://static-text",
         .name = "static-text",
         .title = "Static Text Resource",
         .description = "A static text resource for testing",
         .mime_type = "text/plain",
         .size = -1,
         .read = r_static_text},
        {.uri = "test://static-binary",
         .name = "static-binary",
         .title = "Static Binary Resource",
         .description = "A static binary resource (image) for testing",
         .mime_type = "image/png",
         .size = -1,
         .read = r_static_binary},
        {.uri = "test://watched-resource",
         .name = "watched-resource",
         .title = "Watched Resource",
         .description = "A resource that auto-updates every 3 seconds",
         .mime_type = "text/plain",
         .size = -1,
         .read = r_watched},
    };
    for (size_t i = 0; i < sizeof resources / sizeof resources[0]; i++) {
        int rc = mcpage_server_add_resource(srv, &resources[i]);
        if (rc != 0)
            return rc;
    }
    mcpage_resource_template tmpl = {
        .uri_template = "test://template/{id}/data",
        .name = "template",
        .title = "Resource Template",
        .description = "A resource template with parameter substitution",
        .mime_type = "application/json",
        .read = r_template,
    };
    int rc = mcpage_server_add_resource_template(srv, &tmpl);
    if (rc != 0)
        return rc;
    mcpage_prompt simple = {.name = "test_simple_prompt",
                            .title = "Simple Test Prompt",
                            .description = "A simple prompt without arguments",
                            .handler = p_simple};
    mcpage_prompt with_args = {
        .name = "test_prompt_with_arguments",
        .title = "Prompt With Arguments",
        .description = "A prompt with required arguments",
        .args = {{.name = "arg1", .description = "First test argument", .required = true},
                 {.name = "arg2", .description = "Second test argument", .required = true}},
        .nargs = 2,
        .handler = p_args};
    mcpage_prompt embedded = {.name = "test_prompt_with_embedded_resource",
                              .title = "Prompt With Embedded Resource",
                              .description = "A prompt that includes an embedded resource",
                              .args = {{.name = "resourceUri",
                                        .description = "URI of the resource to embed",
                                        .required = true}},
                              .nargs = 1,
                              .handler = p_embedded};
    mcpage_prompt image = {.name = "test_prompt_with_image",
                           .title = "Prompt With Image",
                           .description = "A prompt that includes image content",
                           .handler = p_image};
    mcpage_prompt irr = {.name = "test_input_required_result_prompt",
                         .description = "Asks the user for context (elicitation), then builds "
                                        "the prompt",
                         .handler = p_irr};
    if ((rc = mcpage_server_add_prompt(srv, &irr)) != 0 ||
        (rc = mcpage_server_add_prompt(srv, &simple)) != 0 ||
        (rc = mcpage_server_add_prompt(srv, &with_args)) != 0 ||
        (rc = mcpage_server_add_prompt(srv, &embedded)) != 0 ||
        (rc = mcpage_server_add_prompt(srv, &image)) != 0)
        return rc;
    return mcpage_server_set_completion(srv, complete, NULL);
}

int main(int argc, char **argv)
{
    mcpage_http_config hc;
    mcpage_http_config_init(&hc);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--port") == 0) {
            long p = strtol(argv[i + 1], NULL, 10);
            if (p < 0 || p > 65535) {
                (void)fprintf(stderr, "conformance_server: --port takes 0 to 65535\n");
                return 2;
            }
            hc.port = (uint16_t)p;
        } else if (strcmp(argv[i], "--host") == 0) {
            hc.host = argv[i + 1];
        } else {
            (void)fprintf(stderr, "usage: conformance_server [--port N] [--host ADDR]\n");
            return 2;
        }
    }
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "mcp-conformance-test-server", "1.0.0");
    cfg.log_level = MCPAGE_LOG_DEBUG;
    mcpage_server *srv = NULL;
    int rc = mcpage_server_new(&cfg, &srv);
    if (rc == 0)
        rc = register_all(srv);
    if (rc == 0)
        rc = mcpage_serve_http(srv, &hc);
    if (rc != 0)
        (void)fprintf(stderr, "conformance_server: %s\n", mcpage_strerror(rc));
    mcpage_server_free(srv);
    return rc == 0 ? 0 : 1;
}
