/*
 * The secret scanner (sync_redact.h). One pass over the bytes; a byte
 * where a pattern can start (next_start: its first two bytes, or a `:`
 * or `=`) is looked at further, the others are skipped 16 at a time
 * (SSE2) or one table load each. Token patterns need a boundary before
 * them: not a letter, digit, `_` or `-`, or the letter of a JSON escape
 * (`\n`, `\t`, `\r`, `\"`), since the raw copy is JSON text.
 */
#include "sync/sync_redact.h"
#include "sync/sync_redact_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static const char *const kind_names[REDACT_KINDS] = {
    "aws-key", "aws-secret", "github",      "openai",       "anthropic", "google", "slack",
    "stripe",  "jwt",        "private-key", "url-password", "secret",    "custom",
};

const char *sync_redact_kind_name(int kind)
{
    return kind >= 0 && kind < REDACT_KINDS ? kind_names[kind] : "secret";
}

/* ---- character classes ---------------------------------------------- */

enum { C_ALNUM = 1, C_TOK = 2, C_VAL = 4, C_NAME = 8 };

/* Every byte's classes: a letter or digit, a token's (C_TOK: also `_` and
 * `-`), a value's (C_VAL: a token's and + / = . ~), a name's (C_NAME: a
 * token's and `.`). A table, since the scan asks for each byte it spans. */
/* clang-format off */
static const unsigned char classes[256] = {
     0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
     0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
     0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  4,  0, 14, 12,  4,
    15, 15, 15, 15, 15, 15, 15, 15, 15, 15,  0,  0,  0,  4,  0,  0,
     0, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15,
    15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15,  0,  0,  0,  0, 14,
     0, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15,
    15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15,  0,  0,  0,  4,  0,
     0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
     0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
     0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
     0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
     0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
     0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
     0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
     0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
};
/* clang-format on */

static int is_alnum(unsigned char c)
{
    return classes[c] & C_ALNUM;
}

/* A token's characters: base64url and the separators keys use. */
static int is_tok(unsigned char c)
{
    return classes[c] & C_TOK;
}

/* A value of NAME=value: also base64's + / =, and . ~ */
static int is_val(unsigned char c)
{
    return classes[c] & C_VAL;
}

/* A boundary before p[i]: the start, a byte that is not a token's, or
 * the letter after a backslash (a JSON escape such as \n). */
static int boundary(const unsigned char *p, size_t i)
{
    if (i == 0 || !is_tok(p[i - 1]))
        return 1;
    return i >= 2 && p[i - 2] == '\\';
}

/* Bytes from p[i] that satisfy cls, at most max. */
static size_t span(const unsigned char *p, size_t n, size_t i, int (*cls)(unsigned char),
                   size_t max)
{
    size_t k = 0;
    while (i + k < n && k < max && cls(p[i + k]))
        k++;
    return k;
}

static int starts(const unsigned char *p, size_t n, size_t i, const char *lit)
{
    size_t l = strlen(lit);
    return i + l <= n && memcmp(p + i, lit, l) == 0;
}

/* Shannon entropy of s[0..n) in bits per byte. */
static double entropy(const unsigned char *s, size_t n)
{
    unsigned cnt[256] = {0};
    for (size_t i = 0; i < n; i++)
        cnt[s[i]]++;
    double e = 0;
    for (int c = 0; c < 256; c++) {
        if (cnt[c] == 0)
            continue;
        double f = (double)cnt[c] / (double)n;
        e -= f * log2(f);
    }
    return e;
}

/* Letters and digits both, and random enough to be a key, not a word. */
static int looks_random(const unsigned char *s, size_t n, double min_bits)
{
    int digit = 0, alpha = 0;
    for (size_t i = 0; i < n; i++) {
        digit |= s[i] >= '0' && s[i] <= '9';
        alpha |= (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z');
    }
    return digit && alpha && entropy(s, n) >= min_bits;
}

/* ---- the patterns ------------------------------------------------------ */

/* A match: its start and length in the buffer, its kind. */
typedef struct hit {
    size_t at, len;
    int kind;
    int rule; /* REDACT_CUSTOM: the user's pattern */
} hit;

/* prefix + at least min token bytes (of cls), ending at a boundary. */
static int prefixed(const unsigned char *p, size_t n, size_t i, const char *pre, size_t min,
                    int (*cls)(unsigned char), int kind, hit *h)
{
    size_t l = strlen(pre);
    if (!starts(p, n, i, pre))
        return 0;
    size_t k = span(p, n, i + l, cls, 4096);
    if (k < min || (i + l + k < n && is_tok(p[i + l + k]) && cls != is_tok))
        return 0;
    *h = (hit){i, l + k, kind, 0};
    return 1;
}

static int is_upper_digit(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static int at_A(const unsigned char *p, size_t n, size_t i, hit *h)
{
    if ((starts(p, n, i, "AKIA") || starts(p, n, i, "ASIA")) &&
        span(p, n, i + 4, is_upper_digit, 17) == 16 && (i + 20 == n || !is_tok(p[i + 20]))) {
        *h = (hit){i, 20, REDACT_AWS_KEY, 0};
        return 1;
    }
    return starts(p, n, i, "AIza") && span(p, n, i + 4, is_tok, 36) == 35 &&
           (*h = (hit){i, 39, REDACT_GOOGLE, 0}, 1);
}

static int at_g(const unsigned char *p, size_t n, size_t i, hit *h)
{
    static const char *const pre[] = {"ghp_", "gho_", "ghs_", "ghu_", "ghr_"};
    for (size_t k = 0; k < sizeof pre / sizeof *pre; k++)
        if (prefixed(p, n, i, pre[k], 36, is_alnum, REDACT_GITHUB, h))
            return 1;
    return prefixed(p, n, i, "github_pat_", 22, is_tok, REDACT_GITHUB, h);
}

/* sk-ant-, sk-proj-, sk- (at least 32 random bytes), sk_live_ */
static int at_s(const unsigned char *p, size_t n, size_t i, hit *h)
{
    if (prefixed(p, n, i, "sk_live_", 16, is_alnum, REDACT_STRIPE, h))
        return 1;
    if (!starts(p, n, i, "sk-"))
        return 0;
    if (prefixed(p, n, i, "sk-ant-", 32, is_tok, REDACT_ANTHROPIC, h))
        return 1;
    if (prefixed(p, n, i, "sk-proj-", 32, is_tok, REDACT_OPENAI, h))
        return 1;
    size_t k = span(p, n, i + 3, is_tok, 4096);
    if (k >= 32 && looks_random(p + i + 3, k, 3.5)) {
        *h = (hit){i, 3 + k, REDACT_OPENAI, 0};
        return 1;
    }
    return 0;
}

static int at_r(const unsigned char *p, size_t n, size_t i, hit *h)
{
    return prefixed(p, n, i, "rk_live_", 16, is_alnum, REDACT_STRIPE, h);
}

static int at_x(const unsigned char *p, size_t n, size_t i, hit *h)
{
    if (!starts(p, n, i, "xox") || i + 5 > n || !strchr("abposr", p[i + 3]) || p[i + 3] == 0 ||
        p[i + 4] != '-')
        return 0;
    size_t k = span(p, n, i + 5, is_tok, 4096);
    if (k < 10 || !looks_random(p + i + 5, k, 3.0))
        return 0;
    *h = (hit){i, 5 + k, REDACT_SLACK, 0};
    return 1;
}

static int is_b64url(unsigned char c)
{
    return is_tok(c);
}

/* header.payload.signature, header and payload JSON objects in base64url ("eyJ") */
static int at_e(const unsigned char *p, size_t n, size_t i, hit *h)
{
    if (!starts(p, n, i, "eyJ"))
        return 0;
    size_t a = span(p, n, i, is_b64url, 8192);
    if (a < 10 || i + a >= n || p[i + a] != '.' || !starts(p, n, i + a + 1, "eyJ"))
        return 0;
    size_t b = span(p, n, i + a + 1, is_b64url, 65536);
    if (b < 10)
        return 0;
    size_t len = a + 1 + b;
    if (i + len < n && p[i + len] == '.')
        len += 1 + span(p, n, i + len + 1, is_b64url, 8192);
    *h = (hit){i, len, REDACT_JWT, 0};
    return 1;
}

/* The quote at p[e] ends its string: an even run of backslashes before it (after `from`). */
static int unescaped(const unsigned char *p, size_t from, size_t e)
{
    size_t k = 0;
    while (e - k > from && p[e - k - 1] == '\\')
        k++;
    return k % 2 == 0;
}

/* -----BEGIN [A-Z ]*PRIVATE KEY----- through its -----END ...----- line,
 * or, cut short, through the end of its JSON string or line. */
static int at_dash(const unsigned char *p, size_t n, size_t i, hit *h)
{
    if (!starts(p, n, i, "-----BEGIN "))
        return 0;
    size_t j = i + 11, k = 0;
    while (j + k < n && k < 40 && ((p[j + k] >= 'A' && p[j + k] <= 'Z') || p[j + k] == ' '))
        k++;
    if (k < 11 || memcmp(p + j + k - 11, "PRIVATE KEY", 11) != 0 || !starts(p, n, j + k, "-----"))
        return 0;
    size_t e = j + k + 5;
    for (; e < n && p[e] != '\n'; e++) {
        if (p[e] == '"' && unescaped(p, i, e))
            break; /* the end of the JSON string: redact up to it */
        if (starts(p, n, e, "-----END ")) {
            size_t t = e + 9;
            while (t < n && t < e + 60 && ((p[t] >= 'A' && p[t] <= 'Z') || p[t] == ' '))
                t++;
            e = starts(p, n, t, "-----") ? t + 5 : t;
            break;
        }
    }
    /* the span holds no backslash once overwritten: the JSON stays valid */
    *h = (hit){i, e - i, REDACT_PRIVATE_KEY, 0};
    return 1;
}

static int is_userinfo(unsigned char c)
{
    return c > ' ' && c != '/' && c != '@' && c != '"' && c != '\'' && c != '<' && c != '>' &&
           c != '\\' && c != '`' && c != 0x7f;
}

/* scheme://user:PASSWORD@host: the password. p[i] is the ':' of "://". */
static int at_url(const unsigned char *p, size_t n, size_t i, hit *h)
{
    if (i + 3 > n || p[i + 1] != '/' || p[i + 2] != '/' || i == 0 || !is_alnum(p[i - 1]))
        return 0;
    size_t u = i + 3;
    size_t k = span(p, n, u, is_userinfo, 256);
    if (u + k >= n || p[u + k] != '@')
        return 0;
    const unsigned char *colon = memchr(p + u, ':', k);
    if (!colon || colon == p + u)
        return 0;
    size_t pw = (size_t)(colon - p) + 1, len = u + k - pw;
    if (len == 0 || p[pw] == '$' || p[pw] == '{' || p[pw] == '*' || p[pw] == '%' ||
        (len >= 2 && p[pw] == '[' && memchr(p + pw, ']', len)))
        return 0; /* empty, a variable, a placeholder, already redacted */
    /* a host after the @ */
    if (u + k + 1 >= n || !is_alnum(p[u + k + 1]))
        return 0;
    *h = (hit){pw, len, REDACT_URL_PASSWORD, 0};
    return 1;
}

static int is_name(unsigned char c)
{
    return classes[c] & C_NAME;
}

/* What a name says: 0 (not a secret's), REDACT_ASSIGNMENT or REDACT_AWS_SECRET. */
static int secret_name(const unsigned char *s, size_t n)
{
    char low[72];
    if (n < 3 || n >= sizeof low)
        return 0;
    for (size_t i = 0; i < n; i++)
        low[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] + 32 : s[i]);
    low[n] = 0;
    if (strstr(low, "aws") && strstr(low, "secret"))
        return REDACT_AWS_SECRET;
    static const char *const says[] = {
        "secret",     "passw",     "token",       "api_key", "apikey",     "api-key",
        "access_key", "accesskey", "private_key", "auth",    "credential", "passphrase",
    };
    for (size_t i = 0; i < sizeof says / sizeof *says; i++)
        if (strstr(low, says[i]))
            return REDACT_ASSIGNMENT;
    return 0;
}

/*
 * NAME=value, NAME: value, "name": "value" (quotes may be JSON-escaped,
 * \"name\": \"value\"): p[i] is the '=' or ':'. The value is redacted when
 * the name says secret and the value is at least 16 bytes of high entropy
 * (letters and digits, >= 3.5 bits a byte); the name stays.
 */
static int at_assign(const unsigned char *p, size_t n, size_t i, hit *h)
{
    /* The value first: a short one (most JSON keys' values) settles it
     * without walking back over the name or its dozen substring searches. */
    size_t v = i + 1;
    while (v < n && p[v] == ' ')
        v++;
    while (v < n && p[v] == '\\')
        v++;
    if (v < n && (p[v] == '"' || p[v] == '\''))
        v++;
    size_t k = span(p, n, v, is_val, 4096);
    while (k > 0 && (p[v + k - 1] == '.' || p[v + k - 1] == '/'))
        k--; /* the end of a sentence or a path */
    if (k < 16)
        return 0;
    /* back over the name's closing quote, escaped or not, and blanks */
    size_t b = i;
    while (b > 0 && p[b - 1] == ' ')
        b--;
    if (b > 0 && p[b - 1] == '"') {
        b--;
        while (b > 0 && p[b - 1] == '\\')
            b--;
    }
    size_t e = b;
    while (b > 0 && e - b < 64 && is_name(p[b - 1]))
        b--;
    if (e - b < 3 || (b > 0 && is_name(p[b - 1])))
        return 0;
    int kind = secret_name(p + b, e - b);
    if (!kind)
        return 0;
    if (kind == REDACT_AWS_SECRET && k != 40)
        kind = REDACT_ASSIGNMENT;
    if (!looks_random(p + v, k, 3.5))
        return 0;
    *h = (hit){v, k, kind, 0};
    return 1;
}

/* ---- a user's rules ---------------------------------------------------- */

/* A user's pattern at p[i] (a boundary before it). Every match there ends
 * at the same byte (the token's end), so the most specific one names it:
 * the longest prefix. */
static int user_at(const sync_redact_rules *r, const unsigned char *p, size_t n, size_t i, hit *h)
{
    if (!r->first[p[i]] || !boundary(p, i))
        return 0;
    int found = 0;
    size_t best = 0;
    for (size_t k = 0; k < r->npat; k++) {
        const user_pattern *u = &r->pat[k];
        if (u->prefix_len <= best || !starts(p, n, i, u->prefix))
            continue;
        size_t t = span(p, n, i + u->prefix_len, is_tok, 4096);
        if (t < u->min)
            continue;
        best = u->prefix_len;
        *h = (hit){i, u->prefix_len + t, REDACT_CUSTOM, (int)k};
        found = 1;
    }
    return found;
}

/* The match is one of the user's exceptions. */
static int allowed(const sync_redact_rules *r, const char *p, size_t len)
{
    for (size_t k = 0; k < r->nallow; k++)
        if (r->allow_len[k] == len && memcmp(r->allow[k], p, len) == 0)
            return 1;
    return 0;
}

/* ---- the scan ------------------------------------------------------------ */

enum { T_NONE, T_TOKEN, T_COLON, T_EQUALS, T_DASH };

static const unsigned char first[256] = {
    ['A'] = T_TOKEN, ['g'] = T_TOKEN, ['s'] = T_TOKEN,  ['r'] = T_TOKEN, ['x'] = T_TOKEN,
    ['e'] = T_TOKEN, [':'] = T_COLON, ['='] = T_EQUALS, ['-'] = T_DASH,
};

static int token_at(const unsigned char *p, size_t n, size_t i, hit *h)
{
    if (!boundary(p, i))
        return 0;
    switch (p[i]) {
    case 'A':
        return at_A(p, n, i, h);
    case 'g':
        return at_g(p, n, i, h);
    case 's':
        return at_s(p, n, i, h);
    case 'r':
        return at_r(p, n, i, h);
    case 'x':
        return at_x(p, n, i, h);
    default:
        return at_e(p, n, i, h);
    }
}

/*
 * Whether a built-in pattern can match at p[i]: a `:` or `=`, or the
 * first two bytes of a token's prefix (AKIA ASIA AIza, gh gi, sk rk, xo,
 * ey) or of -----BEGIN. Every other byte is skipped without a look.
 */
static int may_start(const unsigned char *p, size_t n, size_t i)
{
    unsigned char c = i + 1 < n ? p[i + 1] : 0;
    switch (p[i]) {
    case ':':
    case '=':
        return 1;
    case '-':
        return c == '-';
    case 'A':
        return c == 'K' || c == 'S' || c == 'I';
    case 'g':
        return c == 'h' || c == 'i';
    case 's':
    case 'r':
        return c == 'k';
    case 'x':
        return c == 'o';
    case 'e':
        return c == 'y';
    default:
        return 0;
    }
}

/* The first i' >= i where a pattern can start (may_start, or a byte that
 * starts a user's pattern when `user`), else n. Without user patterns, 16
 * bytes a step where SSE2 is (the scan's cost was its loop over bytes). */
static size_t next_start(const unsigned char *p, size_t n, size_t i, const unsigned char *user)
{
#if defined(__SSE2__)
    if (!user) {
#define EQ(v, c) _mm_cmpeq_epi8((v), _mm_set1_epi8((char)(c)))
        for (; i + 17 <= n; i += 16) {
            __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
            __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(p + i + 1));
            __m128i m = _mm_or_si128(EQ(a, ':'), EQ(a, '='));
            m = _mm_or_si128(m, _mm_and_si128(EQ(a, '-'), EQ(b, '-')));
            m = _mm_or_si128(
                m, _mm_and_si128(EQ(a, 'A'),
                                 _mm_or_si128(_mm_or_si128(EQ(b, 'K'), EQ(b, 'S')), EQ(b, 'I'))));
            m = _mm_or_si128(m, _mm_and_si128(EQ(a, 'g'), _mm_or_si128(EQ(b, 'h'), EQ(b, 'i'))));
            m = _mm_or_si128(m, _mm_and_si128(_mm_or_si128(EQ(a, 's'), EQ(a, 'r')), EQ(b, 'k')));
            m = _mm_or_si128(m, _mm_and_si128(EQ(a, 'x'), EQ(b, 'o')));
            m = _mm_or_si128(m, _mm_and_si128(EQ(a, 'e'), EQ(b, 'y')));
            unsigned bits = (unsigned)_mm_movemask_epi8(m);
            if (bits)
                return i + (size_t)__builtin_ctz(bits);
        }
#undef EQ
    }
#endif
    for (; i < n; i++)
        if (may_start(p, n, i) || (user && user[p[i]]))
            return i;
    return n;
}

/* Writes the marker over p[0..len): the kind's name, or the user pattern's. */
static void overwrite(char *p, size_t len, const char *name)
{
    char m[40];
    size_t ml = (size_t)snprintf(m, sizeof m, "[REDACTED:%s]", name);
    if (len < ml) {
        memset(p, '*', len);
        return;
    }
    memcpy(p, m, ml);
    memset(p + ml, '*', len - ml);
}

/* One pass over p[0..n): each match, left to right, the scan resuming after it. */
static size_t scan_once(const sync_redact_rules *rules, char *buf, size_t n,
                        sync_redact_counts *counts, sync_redact_hit_fn hit_fn, void *arg)
{
    const unsigned char *p = (const unsigned char *)buf;
    size_t done = 0;
    const unsigned char *user = rules != NULL && rules->npat > 0 ? rules->first : NULL;
    for (size_t i = next_start(p, n, 0, user); i < n; i = next_start(p, n, i + 1, user)) {
        unsigned t = first[p[i]];
        if (t == T_NONE && (rules == NULL || !rules->first[p[i]]))
            continue;
        hit h = {0, 0, 0, 0};
        int found = t == T_NONE     ? 0
                    : t == T_TOKEN  ? token_at(p, n, i, &h)
                    : t == T_DASH   ? at_dash(p, n, i, &h)
                    : t == T_EQUALS ? at_assign(p, n, i, &h)
                                    : at_url(p, n, i, &h) || at_assign(p, n, i, &h);
        if (!found && rules != NULL)
            found = user_at(rules, p, n, i, &h);
        if (!found || h.len == 0)
            continue;
        if (rules != NULL && allowed(rules, buf + h.at, h.len)) {
            if (h.at + h.len > i + 1)
                i = h.at + h.len - 1; /* nothing inside an exception is a secret either */
            continue;
        }
        overwrite(buf + h.at, h.len,
                  h.kind == REDACT_CUSTOM ? rules->pat[h.rule].name : kind_names[h.kind]);
        if (counts)
            counts->n[h.kind]++;
        if (hit_fn)
            hit_fn(arg, h.at, h.kind);
        done++;
        if (h.at + h.len > i + 1)
            i = h.at + h.len - 1;
    }
    return done;
}

/*
 * A pass resumes after each match, so a match can hide another that
 * starts before its end: a URL's password at a colon hides the value of
 * a secret's name at the same colon. Passes repeat while one redacts
 * something (text with no secret is scanned once), so a second call finds
 * nothing; markers match no pattern, so this ends (at most 4 passes).
 */
size_t sync_redact(const sync_redact_rules *rules, char *buf, size_t n, sync_redact_counts *counts,
                   sync_redact_hit_fn hit_fn, void *arg)
{
    size_t done = 0, k;
    for (int pass = 0; pass < 4 && (k = scan_once(rules, buf, n, counts, hit_fn, arg)) > 0; pass++)
        done += k;
    return done;
}
