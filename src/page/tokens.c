/*
 * The token estimator (see tokens.h and docs/tokens.md). It follows the
 * shape of o200k_base's pre-tokenizer: text is cut into pieces (letter
 * words, digit groups of up to three, punctuation runs, whitespace) and
 * BPE never merges across pieces, so the number of pieces is a floor on
 * the token count. Each piece is charged what BPE typically makes of it:
 * one token for a short word, more for long words, and much more for the
 * letters of identifier-like runs (hashes, uuids, base64), where the
 * vocabulary has no long merges. Costs are in hundredths of a token and
 * were calibrated on tests/data/tokens/ so that no class is undercounted.
 *
 * One pass, no allocation, no state outside the call.
 */
#include "page/tokens.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Costs, in hundredths of a token. */
#define COST_PIECE      100 /* any pre-tokenizer piece: BPE makes at least one token */
#define WORD_FREE_LEN   5   /* letters of an ordinary word covered by its first token */
#define WORD_PER_LETTER 12  /* each letter of an ordinary word past WORD_FREE_LEN */
#define WORD_PER_2BYTE  15  /* extra for each 2-byte letter of a word in one script (Cyrillic) */
#define WORD_PER_GREEK  60  /* extra for each Greek letter: fewer Greek merges in the vocabulary */
#define WORD_PER_ACCENT                                                                            \
    40                      /* extra for each 2-byte letter among ASCII ones: accents split words  \
                             */
#define WORD_PER_UPPER  40  /* each capital after a piece's first: all-caps merges are few */
#define COST_JOINED     50  /* a punctuation character joined to the word after it */
#define COST_EDGES      250 /* once per call: text cut from a larger whole splits worse */
#define FOREIGN_PERCENT 15  /* extra on ASCII words of text with accents: not English */
#define RAND_BASE       50  /* a letter piece inside an identifier-like run ... */
#define RAND_PER_LETTER 55  /* ... plus this per letter: ids get no long merges */
#define COST_3BYTE      100 /* a 3-byte character: CJK, kana, Hangul, punctuation */
#define COST_SYMBOL     150 /* a 3-byte symbol from U+2040-U+2FFF (arrows, dingbats, ...) */
#define COST_4BYTE      200 /* a 4-byte character: emoji and other astral symbols */
#define COST_BAD_BYTE   100 /* a byte that is not valid UTF-8 on its own */
#define PUNCT_FREE_LEN  3   /* punctuation characters covered by a run's first token */
#define PUNCT_PER_CHAR  50  /* each punctuation character past PUNCT_FREE_LEN */
#define SPACE_PER_CHAR  4   /* long runs of spaces still cost a little per space */

/* Character classes. */
enum {
    B_LOWER,  /* a-z */
    B_UPPER,  /* A-Z */
    B_DIGIT,  /* 0-9 */
    B_SPACE,  /* space, tab, vertical tab, form feed */
    B_NL,     /* \r, \n */
    B_PUNCT,  /* other ASCII, control characters included */
    B_WIDE,   /* a 2-byte character: a letter of Latin-1, Greek, Cyrillic, ... */
    B_LATIN3, /* a 3-byte letter of Latin Extended Additional (Vietnamese) */
    B_SYM3,   /* any other 3-byte character: CJK, kana, Hangul, symbols */
    B_ASTRAL, /* a 4-byte character: emoji and other astral symbols */
    B_BAD     /* a byte that does not start a well-formed-looking sequence */
};

#define L B_LOWER
#define U B_UPPER
#define D B_DIGIT
#define S B_SPACE
#define N B_NL
#define P B_PUNCT
static const uint8_t ascii_class[128] = {
    P, P, P, P, P, P, P, P, P, S, N, S, S, N, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P,
    S, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, D, D, D, D, D, D, D, D, D, D, P, P, P, P, P, P,
    P, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, P, P, P, P, P,
    P, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, P, P, P, P, P,
};
#undef L
#undef U
#undef D
#undef S
#undef N
#undef P

/* Classifies the character at s[i..n) and stores its length in *len. */
static inline uint8_t char_class(const unsigned char *s, size_t i, size_t n, size_t *len)
{
    unsigned char c = s[i];
    *len = 1;
    if (c < 0x80)
        return ascii_class[c];
    size_t want = c >= 0xC2 && c <= 0xDF   ? 2
                  : (c & 0xF0) == 0xE0     ? 3
                  : c >= 0xF0 && c <= 0xF4 ? 4
                                           : 0;
    if (want == 0 || n - i < want)
        return B_BAD;
    for (size_t k = 1; k < want; k++)
        if ((s[i + k] & 0xC0) != 0x80)
            return B_BAD;
    *len = want;
    if (want == 2)
        return B_WIDE;
    if (want == 4)
        return B_ASTRAL;
    return c == 0xE1 && s[i + 1] >= 0xB8 && s[i + 1] <= 0xBB ? B_LATIN3 : B_SYM3;
}

static inline bool is_alnum_class(uint8_t cls)
{
    return cls <= B_DIGIT || cls == B_WIDE || cls == B_LATIN3;
}

/* Letters of any script and other characters a preceding punctuation mark joins. */
static inline bool joins_punct(uint8_t cls)
{
    return cls == B_LOWER || cls == B_UPPER || (cls >= B_WIDE && cls <= B_ASTRAL);
}

/* 1 if letter number k (0 = a) is a vowel: a, e, i, o, u, y. */
#define VOWEL(k) ((0x1104111u >> (k)) & 1u)

/* Where the run of ASCII lowercase letters starting at p[i] ends. */
static inline size_t lower_end(const unsigned char *p, size_t i, size_t n)
{
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* Eight bytes at a time: the high bit of each byte that is a-z. */
    const uint64_t high = 0x8080808080808080u, low7 = 0x7F7F7F7F7F7F7F7Fu;
    while (n - i >= 8) {
        uint64_t x;
        memcpy(&x, p + i, 8);
        uint64_t y = x & low7;
        uint64_t ge_a = y + 0x1F1F1F1F1F1F1F1Fu, past_z = y + 0x0505050505050505u;
        uint64_t other = ~(ge_a & ~past_z & ~x) & high;
        if (other)
            return i + ((size_t)__builtin_ctzll(other) >> 3);
        i += 8;
    }
#endif
    while (i < n && (unsigned)(p[i] - 'a') < 26u)
        i++;
    return i;
}

/* Whether the lowercase letters p[i..j) have a vowel (most find one at once). */
static inline bool has_vowel(const unsigned char *p, size_t i, size_t j)
{
    for (; i < j; i++)
        if (VOWEL(p[i] - 'a'))
            return true;
    return false;
}

/* The alphanumeric run being scanned: letters and digits with no separator. */
typedef struct run {
    size_t word_cost;   /* its letter pieces charged as ordinary words */
    size_t rand_cost;   /* its letter pieces charged as identifier fragments */
    size_t letters;     /* letters in the current letter piece (all bytes classes) */
    size_t wide;        /* 2-byte letters in the current letter piece */
    size_t greek;       /* of which Greek (lead byte 0xCE or 0xCF) */
    size_t upper;       /* capitals in the current letter piece */
    size_t pieces;      /* letter pieces finished in this run */
    size_t ascii_cost;  /* of word_cost, pieces of ASCII letters only */
    size_t accented;    /* pieces mixing ASCII and 2-byte letters */
    size_t run_letters; /* letters in the whole run */
    size_t vowels;      /* nonzero when the current letter piece has an ASCII vowel (a e i o u y) */
    bool vowelless;     /* the run has a piece of 3+ ASCII letters and no vowel */
    bool has_digit;     /* the run has a digit */
    bool last_lower;    /* the previous letter was ASCII lowercase */
} run;

static void finish_letters(run *r)
{
    if (r->letters == 0)
        return;
    size_t extra = r->letters > WORD_FREE_LEN ? r->letters - WORD_FREE_LEN : 0;
    size_t caps = r->upper > 1 ? r->upper - 1 : 0;
    /* Accented letters inside Latin words break merges; whole words of
     * another script (Cyrillic, Greek) have merges of their own. */
    size_t wide_cost = r->wide < r->letters
                           ? r->wide * WORD_PER_ACCENT
                           : (r->wide - r->greek) * WORD_PER_2BYTE + r->greek * WORD_PER_GREEK;
    size_t cost = COST_PIECE + extra * WORD_PER_LETTER + wide_cost + caps * WORD_PER_UPPER;
    r->word_cost += cost;
    if (r->wide == 0)
        r->ascii_cost += cost;
    else if (r->wide < r->letters)
        r->accented++;
    r->rand_cost += RAND_BASE + r->letters * RAND_PER_LETTER + r->wide * WORD_PER_2BYTE;
    r->run_letters += r->letters;
    if (r->letters >= 3 && r->wide == 0 && r->vowels == 0)
        r->vowelless = true;
    r->vowels = 0;
    r->pieces++;
    r->letters = 0;
    r->wide = 0;
    r->greek = 0;
    r->upper = 0;
}

/*
 * Ends the run and returns its cost. A run that mixes letters and digits,
 * or is cut by case changes into many short pieces, is an identifier, a
 * hash or base64, and its letters are charged at the identifier rate.
 */
static size_t finish_run(run *r, size_t *ascii_cost, size_t *accented, size_t *words)
{
    size_t cost = 0;
    finish_letters(r);
    bool mixed = r->has_digit && r->pieces > 0;
    bool choppy = r->pieces >= 3 && r->run_letters < r->pieces * 4;
    if (mixed || choppy || r->vowelless) {
        cost += r->rand_cost;
    } else {
        cost += r->word_cost;
        *ascii_cost += r->ascii_cost;
        *accented += r->accented;
        *words += r->pieces;
    }
    return cost;
}

/*
 * Scans the ASCII letters and digits of a run already known to be an
 * identifier (it has digits and letters, so finish_run charges its letter
 * pieces at the identifier rate). Hashes and base64 change class every
 * character or two, which defeats branch prediction; here pieces and digit
 * groups are counted with arithmetic instead. Letter pieces finished here
 * go straight into *total; the open one stays in r. Returns where the
 * ASCII alphanumerics end.
 */
static size_t scan_identifier(const unsigned char *p, size_t i, size_t n, run *r, size_t *total)
{
    size_t cur = r->letters; /* letters in the open piece */
    size_t ended = 0;        /* letter pieces finished */
    size_t letters = 0;      /* letters seen here */
    size_t groups = 0;       /* digit groups started */
    size_t digit_pos = 0;    /* 1-3 within the current digit group, 0 after a letter */
    size_t prev_lower = r->last_lower;
    for (; i < n; i++) {
        unsigned char c = p[i];
        size_t lower = (unsigned)(c - 'a') < 26u;
        size_t upper = (unsigned)(c - 'A') < 26u;
        size_t digit = (unsigned)(c - '0') < 10u;
        if (!(lower | upper | digit))
            break;
        size_t end = (cur != 0) & (digit | (prev_lower & upper));
        ended += end;
        cur = (cur & (0 - (size_t)!end)) + (lower | upper);
        letters += lower | upper;
        digit_pos = digit * (digit_pos == 3 ? 1 : digit_pos + 1);
        groups += digit_pos == 1;
        prev_lower = lower;
    }
    /* Letters of the pieces that ended: the open piece's letters at entry,
     * plus those seen here, minus what is still open. */
    size_t ended_letters = r->letters + letters - cur;
    *total += groups * COST_PIECE + ended * RAND_BASE + ended_letters * RAND_PER_LETTER;
    r->pieces += ended;
    r->run_letters += ended_letters;
    if (ended) {
        r->upper = 0;
        r->vowels = 1; /* no longer matters: the run is an identifier */
    }
    r->letters = cur;
    r->last_lower = prev_lower != 0;
    return i;
}

/* The cost of a punctuation run of `len` characters standing as its own piece. */
static size_t punct_cost(size_t len)
{
    size_t extra = len > PUNCT_FREE_LEN ? len - PUNCT_FREE_LEN : 0;
    return COST_PIECE + extra * PUNCT_PER_CHAR;
}

void mcpage__tokens_scan(const char *s, size_t n, tokens_sum *sum)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t total = 0;         /* hundredths of a token */
    size_t ascii_cost = 0;    /* cost of plain ASCII words, for the foreign surcharge */
    size_t accented = 0;      /* words with accented letters */
    size_t words = 0;         /* all words */
    bool after_space = false; /* the previous piece was whitespace ending in a space */
    size_t i = 0;

    while (i < n) {
        /* One space before a letter (or any non-ASCII character) joins it
           and costs nothing: what the blanks' case below makes of it. */
        if (p[i] == ' ' && i + 1 < n && (p[i + 1] >= 0x80 || ascii_class[p[i + 1]] <= B_UPPER)) {
            i++;
            after_space = false;
        }
        size_t len;
        uint8_t cls = char_class(p, i, n, &len);
        bool spaced = after_space;
        after_space = false;
        if (cls == B_LOWER || cls == B_DIGIT) {
            /* Most runs are one lowercase word or one number standing
               alone: charged here as finish_run would, without a run. */
            size_t j = cls == B_LOWER ? lower_end(p, i + 1, n) : i + 1;
            if (cls == B_DIGIT)
                while (j < n && (unsigned)(p[j] - '0') < 10u)
                    j++;
            if (j == n || (p[j] < 0x80 && ascii_class[p[j]] > B_DIGIT)) {
                size_t chars = j - i;
                if (cls == B_DIGIT) {
                    total += (chars + 2) / 3 * COST_PIECE;
                } else if (chars >= 3 && !has_vowel(p, i, j)) {
                    total += RAND_BASE + chars * RAND_PER_LETTER; /* no vowel: an identifier */
                } else {
                    size_t extra = chars > WORD_FREE_LEN ? chars - WORD_FREE_LEN : 0;
                    size_t cost = COST_PIECE + extra * WORD_PER_LETTER;
                    total += cost;
                    ascii_cost += cost;
                    words++;
                }
                i = j;
                continue;
            }
        }
        if (is_alnum_class(cls)) {
            /* An alphanumeric run: words, digit groups, identifiers. */
            run r = {0};
            for (;;) {
                size_t j = i + 1;
                if (r.has_digit && (r.pieces || r.letters) && r.wide == 0 && cls <= B_DIGIT) {
                    /* Already an identifier: the rest is counted without branches. */
                    i = scan_identifier(p, i, n, &r, &total);
                    if (i >= n)
                        break;
                    cls = p[i] < 0x80 ? ascii_class[p[i]] : char_class(p, i, n, &len);
                    if (!is_alnum_class(cls))
                        break;
                    continue;
                }
                if (cls == B_LOWER) {
                    j = lower_end(p, j, n);
                    r.vowels += has_vowel(p, i, j); /* only whether there is one counts */
                    r.letters += j - i;
                    r.last_lower = true;
                } else if (cls == B_DIGIT) {
                    /* Digits go in groups of up to three, one token each. */
                    while (j < n && (unsigned)(p[j] - '0') < 10u)
                        j++;
                    finish_letters(&r);
                    total += (j - i + 2) / 3 * COST_PIECE;
                    r.has_digit = true;
                    r.last_lower = false;
                } else if (cls == B_UPPER) {
                    r.vowels += VOWEL(p[i] - 'A');
                    while (j < n && (unsigned)(p[j] - 'A') < 26u)
                        r.vowels += VOWEL(p[j++] - 'A');
                    if (r.last_lower)
                        finish_letters(&r); /* camelCase: a new piece starts */
                    r.letters += j - i;
                    r.upper += j - i;
                    r.last_lower = false;
                } else {
                    j = i + len;
                    r.letters++;
                    r.wide++;
                    r.greek += p[i] == 0xCE || p[i] == 0xCF;
                    r.last_lower = false;
                }
                i = j;
                if (i >= n)
                    break;
                cls = p[i] < 0x80 ? ascii_class[p[i]] : char_class(p, i, n, &len);
                if (!is_alnum_class(cls))
                    break;
            }
            total += finish_run(&r, &ascii_cost, &accented, &words);
            continue;
        }
        switch (cls) {
        case B_PUNCT: {
            size_t j = i + 1;
            while (j < n && p[j] < 0x80 && ascii_class[p[j]] == B_PUNCT)
                j++;
            size_t next_len;
            uint8_t next = j < n ? char_class(p, j, n, &next_len) : B_BAD;
            /* One mark before a word joins the word's piece (unless a space
             * already did); newlines right after punctuation join its piece. */
            if (j - i == 1 && j < n && joins_punct(next) && !spaced)
                total += COST_JOINED;
            else
                total += punct_cost(j - i);
            while (j < n && (p[j] == '\n' || p[j] == '\r'))
                j++;
            i = j;
            break;
        }
        case B_SPACE:
        case B_NL: {
            size_t spaces = 0; /* spaces since the last newline */
            bool newline = false;
            size_t j = i;
            for (; j < n && p[j] < 0x80; j++) {
                uint8_t c = ascii_class[p[j]];
                if (c == B_SPACE) {
                    spaces++;
                } else if (c == B_NL) {
                    newline = true;
                    spaces = 0; /* spaces before a newline join it */
                } else {
                    break;
                }
            }
            if (newline)
                total += COST_PIECE;
            /* The last blank joins a following word (a space or a tab) or
             * punctuation run (a space only); never digits. One that does
             * not join stands alone after the others: "   104\t-" is
             * "  ", " ", "104", "\t", "-" (read_session's line numbers). */
            bool joins = false;
            if (j < n && spaces) {
                uint8_t next = p[j] < 0x80 ? ascii_class[p[j]] : B_WIDE;
                joins = next == B_PUNCT ? p[j - 1] == ' ' : next != B_DIGIT;
            }
            size_t left = joins ? spaces - 1 : spaces;
            if (left)
                total += COST_PIECE + left * SPACE_PER_CHAR;
            if (!joins && spaces >= 2 && j < n)
                total += COST_PIECE;
            after_space = joins && p[j] < 0x80 && ascii_class[p[j]] == B_PUNCT;
            i = j;
            break;
        }
        case B_SYM3:
            total += p[i] == 0xE2 && p[i + 1] >= 0x81 ? COST_SYMBOL : COST_3BYTE;
            i += len;
            break;
        case B_ASTRAL:
            total += COST_4BYTE;
            i += len;
            break;
        default:
            total += COST_BAD_BYTE;
            i += len;
            break;
        }
    }
    sum->cost += total;
    sum->ascii_cost += ascii_cost;
    sum->accented += accented;
    sum->words += words;
}

size_t mcpage__tokens_total(const tokens_sum *sum, size_t n)
{
    size_t total = sum->cost + (n ? COST_EDGES : 0);
    /* One word in twenty with an accent: French, German, Spanish... whose
     * plain words also split more than English ones. */
    if (sum->accented > 0 && sum->accented * 20 >= sum->words)
        total += sum->ascii_cost * FOREIGN_PERCENT / 100;
    return (total + 99) / 100;
}

size_t mcpage__tokens_estimate(const char *s, size_t n)
{
    tokens_sum sum = {0};
    mcpage__tokens_scan(s, n, &sum);
    return mcpage__tokens_total(&sum, n);
}

/*
 * Whether the scan of s[0..n) cuts a piece at `at` that depends on nothing
 * past it, and starts the next one afresh, so that s[0..at) and s[at..n)
 * scanned apart make exactly the pieces of s. The byte before the cut and
 * the one after decide it (and, after punctuation, whether its run is a
 * single mark that would join the following word):
 *   - a letter or digit (or the end of any character of two bytes or more):
 *     the run ends there when the next byte is ASCII and not a letter or
 *     digit;
 *   - punctuation: the run ends when the next byte is neither punctuation
 *     nor a newline (newlines join the run before them), and it is not a
 *     single mark joining a following word;
 *   - a newline: the blanks end when the next byte is not a blank, and
 *     end without a space, so nothing joins the next piece;
 *   - a space or tab: never (the last blank joins what follows).
 * The byte after the cut must not continue a character.
 */
bool mcpage__tokens_cut_ok(const char *s, size_t n, size_t at)
{
    const unsigned char *p = (const unsigned char *)s;
    if (at == 0 || at >= n)
        return true;
    unsigned char a = p[at - 1], x = p[at];
    if ((x & 0xC0) == 0x80)
        return false;
    uint8_t next = x < 0x80 ? ascii_class[x] : B_WIDE; /* B_WIDE: any non-ASCII character */
    if (a >= 0x80)
        return x < 0x80 && next > B_DIGIT;
    switch (ascii_class[a]) {
    case B_LOWER:
    case B_UPPER:
    case B_DIGIT:
        return x < 0x80 && next > B_DIGIT;
    case B_PUNCT:
        if (next == B_PUNCT || next == B_NL)
            return false;
        /* A single mark joins a following letter or any non-ASCII character. */
        if (at >= 2 && p[at - 2] < 0x80 && ascii_class[p[at - 2]] == B_PUNCT)
            return true;
        return next == B_DIGIT || next == B_SPACE;
    case B_NL:
        return next != B_SPACE && next != B_NL;
    default:
        return false;
    }
}

size_t mcpage__tokens_part(const char *s, size_t n, tokens_part *part)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t from = 0, to = n;
    while (from < n && p[from] < 0x80 && ascii_class[p[from]] == B_PUNCT)
        from++;
    while (to > from && p[to - 1] < 0x80 && ascii_class[p[to - 1]] == B_PUNCT)
        to--;
    part->from = from;
    part->to = to;
    part->sum = (tokens_sum){0};
    mcpage__tokens_scan(s + from, to - from, &part->sum);
    if (!mcpage__tokens_cut_ok(s, n, from) || !mcpage__tokens_cut_ok(s, n, to))
        return mcpage__tokens_estimate(s, n); /* a mark joining the word after it, say */
    tokens_sum whole = part->sum;
    mcpage__tokens_scan(s, from, &whole);
    mcpage__tokens_scan(s + to, n - to, &whole);
    return mcpage__tokens_total(&whole, n);
}

/* Whether c may start a value of mcpage__tokens_columns: a letter, a digit, a non-ASCII lead. */
static bool clean_start(unsigned char c)
{
    return c >= 0xC2 || (c < 0x80 && ascii_class[c] <= B_DIGIT);
}

/* Whether c may end one: a letter, a digit, the last byte of a non-ASCII character. */
static bool clean_end(unsigned char c)
{
    return c >= 0x80 || ascii_class[c] <= B_DIGIT;
}

/* Whether the value p[0..n) is the same bytes in a JSON string and a text line. */
static bool clean_bytes(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = p[i];
        if (c < 0x20 || c == '"' || c == '\\')
            return false;
        /* U+2028 and U+2029: escaped in JSON. */
        if (c == 0xE2 && n - i >= 3 && p[i + 1] == 0x80 && (p[i + 2] == 0xA8 || p[i + 2] == 0xA9))
            return false;
    }
    return true;
}

bool mcpage__tokens_columns(const char *json, size_t jn, const char *text, size_t tn,
                            tokens_part *jp, size_t *jtok, tokens_part *tp, size_t *ttok)
{
    const unsigned char *j = (const unsigned char *)json, *t = (const unsigned char *)text;
    if (jn < 3 || tn == 0 || j[0] != '[' || j[jn - 1] != ']')
        return false;
    tokens_sum sum = {0};
    size_t ji = 1, ti = 0, values = 0, digit_starts = 0, jfrom = 0, jto = 0;
    for (;;) {
        const unsigned char *tab = memchr(t + ti, '\t', tn - ti);
        size_t te = tab ? (size_t)(tab - t) : tn, len = te - ti;
        if (len == 0 || !clean_start(t[ti]) || !clean_end(t[te - 1]) || !clean_bytes(t + ti, len))
            return false;
        bool quoted = j[ji] == '"';
        size_t at = ji + quoted;
        if (jn - at < len + quoted + 1 || memcmp(j + at, t + ti, len) != 0 ||
            (quoted && j[at + len] != '"'))
            return false;
        if (values == 0)
            jfrom = at;
        ji = at + len + quoted;
        jto = at + len;
        if (values > 0 && (unsigned)(t[ti] - '0') < 10u)
            digit_starts++;
        mcpage__tokens_scan(text + ti, len, &sum);
        values++;
        if (te == tn)
            break;
        if (j[ji] != ',')
            return false;
        ji++;
        ti = te + 1;
    }
    if (ji != jn - 1)
        return false;
    tp->from = 0;
    tp->to = tn;
    tp->sum = sum;
    tp->sum.cost += digit_starts * (COST_PIECE + SPACE_PER_CHAR); /* a tab alone */
    jp->from = jfrom;
    jp->to = jto;
    jp->sum = sum;
    jp->sum.cost += (values - 1) * COST_PIECE; /* ",", ", or , between values */
    tokens_sum whole = jp->sum;
    whole.cost += 2 * COST_PIECE; /* [" or [ before, "] or ] after */
    *ttok = mcpage__tokens_total(&tp->sum, tn);
    *jtok = mcpage__tokens_total(&whole, jn);
    return true;
}
