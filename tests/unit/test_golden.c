/*
 * Golden JSON-RPC transcripts: replays every tests/data/golden/NAME.jsonl
 * through a session on the fixture registry and compares each reply with
 * the expected one as JSON values (key order ignored).
 *
 * Transcript lines:
 *   # comment                 ignored, as are blank lines
 *   ! page_size N             starts a fresh session with that list page size
 *   > {json}                  sent to the server; ${NAME} is replaced by a saved value
 *   < {json}                  the next message the server must have sent
 * In an expected message the string "$any" matches any value and
 * "$save:NAME" matches any string and saves it as NAME.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "support/mcp_capture.h"

#define MAX_SAVED 32

typedef struct saved {
    char name[64];   /* variable name */
    char value[512]; /* its value */
} saved;

typedef struct golden {
    saved vars[MAX_SAVED]; /* values saved by $save: */
    int nvars;             /* in use */
    const char *file;      /* for messages */
    int line;              /* current line number */
} golden;

static bool match(golden *g, const json_t *want, const json_t *got)
{
    const char *ws = json_string_value(want);
    if (ws && strcmp(ws, "$any") == 0)
        return got != NULL;
    if (ws && strncmp(ws, "$save:", 6) == 0) {
        if (!json_is_string(got) || g->nvars == MAX_SAVED)
            return false;
        saved *v = &g->vars[g->nvars++];
        snprintf(v->name, sizeof v->name, "%s", ws + 6);
        snprintf(v->value, sizeof v->value, "%s", json_string_value(got));
        return true;
    }
    if (json_is_object(want)) {
        if (!json_is_object(got) || json_object_size(want) != json_object_size(got))
            return false;
        const char *k;
        json_t *wv;
        json_object_foreach((json_t *)want, k, wv)
        {
            if (!match(g, wv, json_object_get(got, k)))
                return false;
        }
        return true;
    }
    if (json_is_array(want)) {
        if (!json_is_array(got) || json_array_size(want) != json_array_size(got))
            return false;
        for (size_t i = 0; i < json_array_size(want); i++)
            if (!match(g, json_array_get(want, i), json_array_get(got, i)))
                return false;
        return true;
    }
    return json_equal(want, got);
}

/* Replaces ${NAME} in `in` by saved values. */
static void substitute(golden *g, const char *in, char *out, size_t cap)
{
    size_t o = 0;
    while (*in && o + 1 < cap) {
        if (in[0] == '$' && in[1] == '{') {
            const char *end = strchr(in, '}');
            assert_non_null(end);
            size_t n = (size_t)(end - in - 2);
            const char *val = NULL;
            for (int i = 0; i < g->nvars; i++)
                if (strlen(g->vars[i].name) == n && strncmp(g->vars[i].name, in + 2, n) == 0)
                    val = g->vars[i].value;
            if (val == NULL)
                fail_msg("%s:%d: no saved value %.*s", g->file, g->line, (int)n, in + 2);
            size_t vl = strlen(val);
            if (o + vl >= cap)
                break;
            memcpy(out + o, val, vl);
            o += vl;
            in = end + 1;
        } else {
            out[o++] = *in++;
        }
    }
    out[o] = '\0';
}

static void replay(const char *path, const char *name)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    golden g = {.file = name};
    capture *c = capture_new(100);
    char line[65536], sub[65536];
    int expectations = 0;
    while (fgets(line, sizeof line, f)) {
        g.line++;
        size_t n = strlen(line);
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        if (n == 0 || line[0] == '#')
            continue;
        if (n < 2 || line[1] != ' ')
            fail_msg("%s:%d: a line starts with '# ', '! ', '> ' or '< '", name, g.line);
        const char *body = line + 2;
        if (line[0] == '!') {
            unsigned long ps;
            if (sscanf(body, "page_size %lu", &ps) != 1)
                fail_msg("%s:%d: unknown directive", name, g.line);
            assert_null(capture_take(c));
            capture_free(c);
            c = capture_new((size_t)ps);
        } else if (line[0] == '>') {
            substitute(&g, body, sub, sizeof sub);
            capture_send(c, sub);
        } else if (line[0] == '<') {
            json_error_t err;
            json_t *want = json_loads(body, 0, &err);
            if (want == NULL)
                fail_msg("%s:%d: bad expected JSON: %s", name, g.line, err.text);
            json_t *got = capture_take(c);
            if (!match(&g, want, got)) {
                char *gs = got ? json_dumps(got, JSON_COMPACT) : NULL;
                fail_msg("%s:%d: expected\n  %s\ngot\n  %s", name, g.line, body,
                         gs ? gs : "(nothing)");
            }
            expectations++;
            json_decref(want);
            json_decref(got);
        } else {
            fail_msg("%s:%d: unknown line kind '%c'", name, g.line, line[0]);
        }
    }
    json_t *extra = capture_take(c);
    if (extra) {
        char *s = json_dumps(extra, JSON_COMPACT);
        fail_msg("%s: unexpected message at the end: %s", name, s);
    }
    assert_true(expectations > 0);
    capture_free(c);
    fclose(f);
}

static void every_golden_transcript_replays(void **state)
{
    const char *dir = MCPAGE_TEST_DATA "/golden";
    DIR *d = opendir(dir);
    assert_non_null(d);
    int files = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 7 || strcmp(e->d_name + n - 6, ".jsonl") != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        print_message("golden: %s\n", e->d_name);
        replay(path, e->d_name);
        files++;
    }
    closedir(d);
    assert_true(files >= 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_golden_transcript_replays),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
