/*
 * The token estimator against the o200k_base reference counts in
 * tests/data/tokens/reference.json (made by tests/node/tokens-reference.mjs):
 * for every corpus file and every sampled chunk of it, the estimate never
 * falls more than 5% below the reference, and for prose-like classes it is
 * at most 25% above. Prints the calibration table that docs/tokens.md quotes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "page/tokens.h"

#define MAX_CORPUS_FILE (1u << 20) /* corpus files are tens of KB; refuse anything huge */

/* Classes whose text is ordinary writing: the overcount bound applies. */
static const char *const prose_like[] = {"prose.txt", "notes.md", "latin_accents.txt"};

static bool is_prose_like(const char *name)
{
    for (size_t i = 0; i < sizeof prose_like / sizeof prose_like[0]; i++)
        if (strcmp(name, prose_like[i]) == 0)
            return true;
    return false;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char *buf = malloc(MAX_CORPUS_FILE);
    size_t n = buf ? fread(buf, 1, MAX_CORPUS_FILE, f) : 0;
    fclose(f);
    if (buf == NULL || n == MAX_CORPUS_FILE) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

/* The corpus file `name` of tests/data/tokens (fails the test when unreadable). */
static char *read_corpus_file(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tokens/%s", MCPAGE_TEST_DATA, name);
    char *text = read_file(path, len);
    assert_non_null(text);
    return text;
}

static void estimate_counts_pieces_plus_edge_allowance(void **state)
{
    (void)state;
    assert_int_equal(mcpage__tokens_estimate("", 0), 0);
    /* One piece plus the fixed allowance of 2.5 tokens for cut edges. */
    assert_int_equal(mcpage__tokens_estimate("a", 1), 4);
    assert_int_equal(mcpage__tokens_estimate(" hello", 6), 4);
    /* Digits go in groups of three: 1234567890 is 123|456|789|0. */
    assert_int_equal(mcpage__tokens_estimate("1234567890", 10), 7);
    /* A 40-hex SHA is 40 tokens in o200k (no merges across letter/digit
     * boundaries, single hex letters); the estimate is not below that. */
    const char *sha = "a3f5c9e1b2d4f6a8c0e2b4d6f8a0c2e4b6d8f0a2";
    assert_true(mcpage__tokens_estimate(sha, strlen(sha)) >= 40);
    /* The same letters as a word are far cheaper than as an identifier. */
    assert_true(mcpage__tokens_estimate("abcdefabcdef", 12) <
                mcpage__tokens_estimate("a1b2c3d4e5f6", 12));
}

static void estimate_survives_invalid_utf8_and_truncation(void **state)
{
    (void)state;
    const char bad[] = "\xff\xfe\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80\xe2\x82";
    size_t est = mcpage__tokens_estimate(bad, sizeof bad - 1);
    /* Every byte that is not a character costs a token of its own. */
    assert_true(est >= 8);
    /* A cut multi-byte character at the end is read no further than n. */
    assert_true(mcpage__tokens_estimate("\xe4\xbd", 2) >= 1);
}

/* Per class: whole file, and the worst chunk both ways. */
typedef struct row {
    const char *name;   /* corpus file */
    size_t bytes;       /* file size */
    size_t ref;         /* o200k tokens of the whole file */
    size_t est;         /* estimate of the whole file */
    double worst_under; /* lowest estimate / reference over file and chunks */
    double worst_over;  /* highest estimate / reference over file and chunks */
} row;

static void estimate_keeps_bounds_on_every_class_and_chunk(void **state)
{
    (void)state;
    json_error_t jerr;
    json_t *ref = json_load_file(MCPAGE_TEST_DATA "/tokens/reference.json", 0, &jerr);
    if (ref == NULL)
        fail_msg("reference.json: %s (line %d)", jerr.text, jerr.line);
    const char *name;
    json_t *entry;
    int failures = 0;
    printf("%-18s %8s %8s %8s %6s %12s %12s\n", "class", "bytes", "o200k", "estimate", "ratio",
           "worst-under", "worst-over*");
    json_object_foreach(ref, name, entry)
    {
        size_t len = 0;
        char *text = read_corpus_file(name, &len);
        assert_int_equal(len, (size_t)json_integer_value(json_object_get(entry, "bytes")));
        row r = {name, len, (size_t)json_integer_value(json_object_get(entry, "tokens")),
                 0,    1e9, 0};
        r.est = mcpage__tokens_estimate(text, len);
        r.worst_under = r.worst_over = (double)r.est / (double)r.ref;
        /* Chunks under 40 tokens are only held to the undercount bound:
         * the fixed edge allowance (2.5 tokens) and rounding are 5-10% of them. */
        size_t i;
        json_t *chunk;
        json_array_foreach(json_object_get(entry, "chunks"), i, chunk)
        {
            size_t off = (size_t)json_integer_value(json_array_get(chunk, 0));
            size_t n = (size_t)json_integer_value(json_array_get(chunk, 1));
            size_t want = (size_t)json_integer_value(json_array_get(chunk, 2));
            assert_true(off + n <= len && want > 0);
            size_t got = mcpage__tokens_estimate(text + off, n);
            double ratio = (double)got / (double)want;
            if (ratio < r.worst_under)
                r.worst_under = ratio;
            if (want >= 40 && ratio > r.worst_over)
                r.worst_over = ratio;
            if ((double)got < 0.95 * (double)want ||
                (is_prose_like(name) && want >= 40 && (double)got > 1.25 * (double)want)) {
                printf("  %s chunk %zu (offset %zu, %zu bytes): estimate %zu, o200k %zu\n", name, i,
                       off, n, got, want);
                failures++;
            }
        }
        printf("%-18s %8zu %8zu %8zu %6.3f %12.3f %12.3f%s\n", r.name, r.bytes, r.ref, r.est,
               (double)r.est / (double)r.ref, r.worst_under, r.worst_over,
               is_prose_like(name) ? "  (prose-like)" : "");
        if ((double)r.est < 0.95 * (double)r.ref ||
            (is_prose_like(name) && (double)r.est > 1.25 * (double)r.ref))
            failures++;
        free(text);
    }
    json_decref(ref);
    assert_int_equal(failures, 0);
}

static bool sums_equal(const tokens_sum *a, const tokens_sum *b)
{
    return a->cost == b->cost && a->ascii_cost == b->ascii_cost && a->accented == b->accented &&
           a->words == b->words;
}

/* Every cut of s[0..n) that mcpage__tokens_cut_ok allows splits the sums exactly. */
static int check_cuts(const char *s, size_t n, size_t *allowed)
{
    tokens_sum whole = {0};
    mcpage__tokens_scan(s, n, &whole);
    assert_int_equal(mcpage__tokens_total(&whole, n), mcpage__tokens_estimate(s, n));
    tokens_part part;
    assert_int_equal(mcpage__tokens_part(s, n, &part), mcpage__tokens_estimate(s, n));
    assert_true(part.from <= part.to && part.to <= n);
    int bad = 0;
    for (size_t at = 1; at < n; at++) {
        if (!mcpage__tokens_cut_ok(s, n, at))
            continue;
        (*allowed)++;
        tokens_sum split = {0};
        mcpage__tokens_scan(s, at, &split);
        mcpage__tokens_scan(s + at, n - at, &split);
        if (!sums_equal(&split, &whole)) {
            if (bad++ < 5)
                printf("  cut at %zu of \"%.*s\" changes the pieces\n", at, (int)n, s);
        }
    }
    return bad;
}

static void estimate_adds_up_across_allowed_cuts(void **state)
{
    (void)state;
    size_t allowed = 0;
    int bad = 0;
    /* The edges of records in a page: where copy_tokens cuts. */
    static const char *const pages[] = {
        "{\"sessions\":[[\"8a01e9c9-8c8e\",\"naïve\",12],[\"x y \",null]],\"returned\":2}",
        "20 of 372 sessions.\nsession_id\ttitle\n8a01\tdonnées \n\t7\nab.\n  x\nNext page.",
        "[{\"a\":\"b\"}]\n{\"c\":1}\n[\"🙂\",\"日本\"],[true]",
    };
    for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++)
        bad += check_cuts(pages[i], strlen(pages[i]), &allowed);
    /* Random strings over the characters whose pieces depend on their neighbours. */
    static const char *const alphabet[] = {"a",  "Z", "e",    "3",    " ",       "\t", "\n",
                                           "\r", "-", "[",    "\"",   ",",       "é",  "Ω",
                                           "日", "→", "🙂", "\xff", "\xe2\x82"};
    const size_t na = sizeof alphabet / sizeof alphabet[0];
    uint32_t seed = 18;
    char buf[128];
    for (int k = 0; k < 20000; k++) {
        size_t n = 0, parts = 1 + (seed = seed * 1103515245u + 12345u) % 24;
        for (size_t j = 0; j < parts; j++) {
            seed = seed * 1103515245u + 12345u;
            const char *c = alphabet[(seed >> 16) % na];
            memcpy(buf + n, c, strlen(c));
            n += strlen(c);
        }
        bad += check_cuts(buf, n, &allowed);
    }
    /* Real text: a stretch of every corpus file. */
    json_error_t jerr;
    json_t *ref = json_load_file(MCPAGE_TEST_DATA "/tokens/reference.json", 0, &jerr);
    assert_non_null(ref);
    const char *name;
    json_t *entry;
    json_object_foreach(ref, name, entry)
    {
        size_t len = 0;
        char *text = read_corpus_file(name, &len);
        bad += check_cuts(text, len < 1500 ? len : 1500, &allowed);
        free(text);
    }
    json_decref(ref);
    assert_int_equal(bad, 0);
    assert_true(allowed > 50000); /* the check allows cuts, not only refuses them */
}

/*
 * A COLUMNS record's two copies from one scan of its values
 * (mcpage__tokens_columns) against each copy scanned apart: random values
 * of letters, digits, blanks, marks, escapes and non-ASCII characters, as
 * page_list.c writes them (JSON strings quoted and escaped, text with
 * \t \n \\ escaped).
 */
static void columns_parts_are_the_parts_of_each_copy(void **state)
{
    (void)state;
    static const char *const alphabet[] = {"a",
                                           "e",
                                           "q",
                                           "Z",
                                           "E",
                                           "0",
                                           "9",
                                           " ",
                                           "  ",
                                           "-",
                                           "_",
                                           ".",
                                           "é",
                                           "ж",
                                           "日",
                                           "→",
                                           "🙂",
                                           "{",
                                           "'",
                                           "the ",
                                           "xyz",
                                           "c++",
                                           "\"",
                                           "\\",
                                           "\t",
                                           "\n",
                                           ":",
                                           "#",
                                           "\xe2\x80\xa8",
                                           "2025-12-28T20:32Z",
                                           "8a01e9c9-8c8e"};
    const size_t na = sizeof alphabet / sizeof alphabet[0];
    uint32_t seed = 7;
#define NEXT() (seed = seed * 1103515245u + 12345u, seed >> 16)
    char json[4096], text[4096];
    int bad = 0, taken = 0;
    for (int k = 0; k < 30000; k++) {
        size_t values = 1 + NEXT() % 6, jn = 0, tn = 0;
        json[jn++] = '[';
        for (size_t v = 0; v < values; v++) {
            char val[400];
            size_t vl = 0;
            bool num = NEXT() % 4 == 0;
            if (num) {
                vl = (size_t)snprintf(val, sizeof val, "%u", (unsigned)NEXT());
            } else {
                for (size_t p = NEXT() % 8; p > 0; p--) {
                    const char *c = alphabet[NEXT() % na];
                    memcpy(val + vl, c, strlen(c));
                    vl += strlen(c);
                }
            }
            if (v) {
                json[jn++] = ',';
                text[tn++] = '\t';
            }
            if (!num)
                json[jn++] = '"';
            for (size_t q = 0; q < vl; q++) {
                char c = val[q];
                bool jesc = !num && (c == '"' || c == '\\' || (unsigned char)c < 0x20);
                bool tesc = c == '\t' || c == '\n' || c == '\\';
                if (jesc)
                    json[jn++] = '\\';
                json[jn++] = jesc && c == '\t' ? 't' : jesc && c == '\n' ? 'n' : c;
                if (tesc)
                    text[tn++] = '\\';
                text[tn++] = c == '\t' ? 't' : c == '\n' ? 'n' : c;
            }
            if (!num)
                json[jn++] = '"';
        }
        json[jn++] = ']';
        tokens_part jp, tp, jp2, tp2;
        size_t jt, tt;
        if (!mcpage__tokens_columns(json, jn, text, tn, &jp, &jt, &tp, &tt))
            continue;
        taken++;
        size_t jt2 = mcpage__tokens_part(json, jn, &jp2), tt2 = mcpage__tokens_part(text, tn, &tp2);
        if (jt != jt2 || tt != tt2 || memcmp(&jp, &jp2, sizeof jp) != 0 ||
            memcmp(&tp, &tp2, sizeof tp) != 0) {
            if (bad++ < 5)
                print_message("differs: %.*s | %.*s\n", (int)jn, json, (int)tn, text);
        }
    }
#undef NEXT
    assert_int_equal(bad, 0);
    assert_true(taken > 2000); /* the clean case is common, not only refused */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(estimate_counts_pieces_plus_edge_allowance),
        cmocka_unit_test(estimate_survives_invalid_utf8_and_truncation),
        cmocka_unit_test(estimate_keeps_bounds_on_every_class_and_chunk),
        cmocka_unit_test(estimate_adds_up_across_allowed_cuts),
        cmocka_unit_test(columns_parts_are_the_parts_of_each_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
