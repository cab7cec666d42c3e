/*
 * The escapes of transcript text (src/tools/text_out.c), shared by the
 * exports and the browser view: HTML specials, control characters as
 * pictures, bytes that are not UTF-8, Markdown prose with raw HTML,
 * fences left open, percent-encoding, the stylesheet's CSP hash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include "tools/text_out.h"

typedef void (*escape_fn)(text_out *o, const char *s, size_t n);

/* What `fn` writes for s[0..n) (malloc'd), and the counts it kept. */
static char *render(escape_fn fn, const char *s, size_t n, int64_t *lines)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    text_out o;
    text_out_init(&o, f);
    fn(&o, s, n);
    assert_int_equal(o.err, 0);
    assert_int_equal(fclose(f), 0);
    assert_int_equal((size_t)o.bytes, len);
    if (lines)
        *lines = o.lines;
    return buf;
}

static void expect(escape_fn fn, const char *in, size_t n, const char *want)
{
    char *got = render(fn, in, n, NULL);
    assert_string_equal(got, want);
    free(got);
}

static void html_specials_are_entities(void **state)
{
    (void)state;
    const char in[] = "<script>alert('x')</script> & \"q\" <img src=x onerror=y>";
    expect(text_out_html, in, sizeof in - 1,
           "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot; "
           "&lt;img src=x onerror=y&gt;");
}

static void controls_become_pictures(void **state)
{
    (void)state;
    /* ESC [31m, BEL, BS, NUL, DEL; tab and newline pass; CR before LF dropped */
    const char in[] = "\x1b[31mred\x07\x08\x00\x7f\tx\r\ny\rz";
    expect(text_out_plain, in, sizeof in - 1,
           "\xE2\x90\x9B[31mred\xE2\x90\x87\xE2\x90\x88\xE2\x90\x80\xE2\x90\xA1\tx\ny"
           "\xE2\x90\x8Dz");
}

static void bad_utf8_becomes_replacement(void **state)
{
    (void)state;
    /* a lone continuation, Latin-1, an overlong '/', a surrogate, a cut sequence, C1 NEL */
    const char in[] = "a\x80"
                      "b\xe9"
                      "c\xc0\xaf"
                      "d\xed\xa0\x80"
                      "e\xe2\x82"
                      "f\xc2\x85";
    expect(text_out_plain, in, sizeof in - 1,
           "a\xEF\xBF\xBD"
           "b\xEF\xBF\xBD"
           "c\xEF\xBF\xBD\xEF\xBF\xBD"
           "d\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"
           "e\xEF\xBF\xBD\xEF\xBF\xBD"
           "f\xEF\xBF\xBD");
    /* valid text passes untouched: emoji with a joiner, Arabic, Hebrew, CJK */
    const char ok[] = "\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x92\xBB \xD9\x85\xD8\xB1 "
                      "\xD7\xA9\xD7\x9C \xE6\x97\xA5\xE6\x9C\xAC";
    expect(text_out_plain, ok, sizeof ok - 1, ok);
}

static void markdown_escapes_text_as_text(void **state)
{
    (void)state;
    /* raw HTML, emphasis, links and block markers are shown, not interpreted; a code span
       that closes on its line stays code; a fenced block becomes our own fence */
    const char in[] = "Use <b>x</b> *and* `<script>` [a](javascript:y)\n"
                      "# not a heading\n"
                      "```html\n<img onerror=1>\n```\n"
                      "1. after & &lt;i>";
    expect(text_out_markdown, in, sizeof in - 1,
           "Use &lt;b>x&lt;/b> \\*and\\* `<script>` \\[a\\](javascript:y)\\\n"
           "\\# not a heading\n"
           "\n```html\n<img onerror=1>\n```\n\n"
           "1\\. after & &amp;lt;i>");
}

static void markdown_backslashes_are_text(void **state)
{
    (void)state;
    /* The old writer took \`...\` for a span where CommonMark reads two literal backticks,
       and let <img> through. Now a transcript's backslash is text (written \\), so the
       backticks after it delimit a span for us and for the renderer alike; a run with no
       closer, or a span holding `|` (GFM cuts table cells first), is escaped. */
    const char in[] = "\\`<img src=x onerror=1>\\` and ``a`|<b>`` \\<";
    expect(text_out_markdown, in, sizeof in - 1,
           "\\\\`<img src=x onerror=1>\\` and \\`\\`a\\`\\|&lt;b>\\`\\` \\\\&lt;");
}

static void markdown_fence_in_a_list_item_is_ours(void **state)
{
    (void)state;
    /* the renderer ends a list item's fence at the next unindented line: the fence is
       rewritten at column 0, so its extent is the one we escaped by */
    const char in[] = "1. foo\n   ```\n<img onerror=1>";
    expect(text_out_markdown, in, sizeof in - 1, "1\\. foo\n\n```\n<img onerror=1>\n```");
    /* a fence's content with a longer backtick run gets a longer fence */
    const char in2[] = "~~~\n````\n~~~";
    expect(text_out_markdown, in2, sizeof in2 - 1, "\n`````\n````\n`````");
}

static void markdown_indent_is_not_code(void **state)
{
    (void)state;
    const char in[] = "a\n\n    <b>\n\tc";
    expect(text_out_markdown, in, sizeof in - 1,
           "a\n\n\xC2\xA0\xC2\xA0\xC2\xA0\xC2\xA0&lt;b>\\\n"
           "\xC2\xA0\xC2\xA0\xC2\xA0\xC2\xA0"
           "c");
}

static void markdown_closes_a_fence_left_open(void **state)
{
    (void)state;
    const char in[] = "text\n~~~~ js\n<b>open";
    int64_t lines = 0;
    char *got = render(text_out_markdown, in, sizeof in - 1, &lines);
    assert_string_equal(got, "text\n\n```js\n<b>open\n```");
    assert_int_equal(lines, 4);
    free(got);
}

static void markdown_inline_values(void **state)
{
    (void)state;
    /* an underscore inside a word is no emphasis and stays; one at a word's edge is escaped */
    const char in[] = "id`<img>`|x\n# y_z _w_";
    expect(text_out_md_inline, in, sizeof in - 1, "id\\`&lt;img>\\`\\|x \\# y_z \\_w\\_");
}

static void percent_encoding(void **state)
{
    (void)state;
    char buf[64];
    assert_int_equal(text_percent_encode(buf, sizeof buf, "a b/é&#", NULL), 20);
    assert_string_equal(buf, "a%20b%2F%C3%A9%26%23");
    text_percent_encode(buf, sizeof buf, "/tmp/x y", "/");
    assert_string_equal(buf, "/tmp/x%20y");
    /* a short buffer is cut at a whole escape */
    char small[8];
    text_percent_encode(small, sizeof small, "ab&&&", NULL);
    assert_string_equal(small, "ab%26");
    assert_int_equal(text_longest_backticks("a ``` b ```` c", 14), 4);
}

static void csp_hash_is_the_stylesheets(void **state)
{
    (void)state;
    unsigned char d[SHA256_DIGEST_LENGTH], b64[48];
    SHA256((const unsigned char *)text_css, strlen(text_css), d);
    int n = EVP_EncodeBlock(b64, d, sizeof d);
    char want[80];
    snprintf(want, sizeof want, "'sha256-%.*s'", n, (const char *)b64);
    assert_string_equal(text_css_csp_hash(), want);
    assert_null(strstr(text_css, "url(")); /* nothing the CSP would have to allow */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(html_specials_are_entities),
        cmocka_unit_test(controls_become_pictures),
        cmocka_unit_test(bad_utf8_becomes_replacement),
        cmocka_unit_test(markdown_escapes_text_as_text),
        cmocka_unit_test(markdown_backslashes_are_text),
        cmocka_unit_test(markdown_fence_in_a_list_item_is_ours),
        cmocka_unit_test(markdown_indent_is_not_code),
        cmocka_unit_test(markdown_inline_values),
        cmocka_unit_test(markdown_closes_a_fence_left_open),
        cmocka_unit_test(percent_encoding),
        cmocka_unit_test(csp_hash_is_the_stylesheets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
