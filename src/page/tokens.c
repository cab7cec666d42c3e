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

/* Costs, in hundredths of a token. */
#define COST_PIECE      100 /* any pre-tokenizer piece: BPE makes at least one token */
#define WORD_FREE_LEN   5   /* letters of an ordinary word covered by its first token */
#define WORD_PER_LETTER 12  /* each letter of an ordinary word past WORD_FREE_LEN */
#define WORD_PER_2BYTE  15  /* extra for each 2-byte letter of a word in one script (Cyrillic) */
#define WORD_PER_GREEK  60  /* extra for each Greek letter: fewer Greek merges in the vocabulary */
#define WORD_PER_ACCENT 40  /* extra for each 2-byte letter among ASCII ones: accents split words  \
                             */
#define WORD_PER_UPPER  40  /* each capital after a piece's first: all-caps merges are few */
#define COST_JOINED     30  /* a punctuation character joined to the word after it */
#define COST_EDGES      200 /* once per call: text cut from a larger whole splits worse */
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

/* Byte classes. */
enum {
    B_LOWER, /* a-z */
    B_UPPER, /* A-Z */
    B_DIGIT, /* 0-9 */
    B_SPACE, /* space, tab, vertical tab, form feed */
    B_NL,    /* \r, \n */
    B_PUNCT, /* other ASCII, control characters included */
    B_LEAD2, /* lead byte of a 2-byte sequence */
    B_LEAD3, /* lead byte of a 3-byte sequence */
    B_LEAD4, /* lead byte of a 4-byte sequence */
    B_OTHER  /* continuation or never-valid byte where a character should start */
};

static uint8_t byte_class(unsigned char c)
{
    if (c >= 'a' && c <= 'z')
        return B_LOWER;
    if (c >= 'A' && c <= 'Z')
        return B_UPPER;
    if (c >= '0' && c <= '9')
        return B_DIGIT;
    if (c == ' ' || c == '\t' || c == '\v' || c == '\f')
        return B_SPACE;
    if (c == '\n' || c == '\r')
        return B_NL;
    if (c < 0x80)
        return B_PUNCT;
    if (c >= 0xC2 && c <= 0xDF)
        return B_LEAD2;
    if ((c & 0xF0) == 0xE0)
        return B_LEAD3;
    if (c >= 0xF0 && c <= 0xF4)
        return B_LEAD4;
    return B_OTHER;
}

/* Length of a well-formed-looking sequence of `want` bytes at s[i..n), or 1. */
static size_t seq_len(const unsigned char *s, size_t i, size_t n, size_t want)
{
    if (n - i < want)
        return 1;
    for (size_t k = 1; k < want; k++)
        if ((s[i + k] & 0xC0) != 0x80)
            return 1;
    return want;
}

/* The alphanumeric run being scanned: letters and digits with no separator. */
typedef struct run {
    size_t word_cost;   /* its letter pieces charged as ordinary words */
    size_t rand_cost;   /* its letter pieces charged as identifier fragments */
    size_t digits;      /* digits in the current digit piece */
    size_t letters;     /* letters in the current letter piece (all bytes classes) */
    size_t wide;        /* 2-byte letters in the current letter piece */
    size_t greek;       /* of which Greek (lead byte 0xCE or 0xCF) */
    size_t upper;       /* capitals in the current letter piece */
    size_t pieces;      /* letter pieces finished in this run */
    size_t ascii_cost;  /* of word_cost, pieces of ASCII letters only */
    size_t accented;    /* pieces mixing ASCII and 2-byte letters */
    size_t run_letters; /* letters in the whole run */
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
    r->pieces++;
    r->letters = 0;
    r->wide = 0;
    r->greek = 0;
    r->upper = 0;
}

/* Digits split into groups of up to three, each one token. */
static size_t finish_digits(run *r)
{
    size_t cost = (r->digits + 2) / 3 * COST_PIECE;
    if (r->digits)
        r->has_digit = true;
    r->digits = 0;
    return cost;
}

/*
 * Ends the run and returns its cost. A run that mixes letters and digits,
 * or is cut by case changes into many short pieces, is an identifier, a
 * hash or base64, and its letters are charged at the identifier rate.
 */
static size_t finish_run(run *r, size_t *ascii_cost, size_t *accented, size_t *words)
{
    size_t cost = finish_digits(r);
    finish_letters(r);
    bool mixed = r->has_digit && r->pieces > 0;
    bool choppy = r->pieces >= 3 && r->run_letters < r->pieces * 4;
    if (mixed || choppy) {
        cost += r->rand_cost;
    } else {
        cost += r->word_cost;
        *ascii_cost += r->ascii_cost;
        *accented += r->accented;
        *words += r->pieces;
    }
    *r = (run){0};
    return cost;
}

size_t mcpage__tokens_estimate(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t total = n ? COST_EDGES : 0; /* hundredths of a token */
    run r = {0};                       /* the open alphanumeric run */
    bool in_run = false;
    size_t ascii_cost = 0; /* cost of plain ASCII words, for the foreign-text surcharge */
    size_t accented = 0;   /* words with accented letters */
    size_t words = 0;      /* all words */
    size_t punct = 0;      /* length of the open punctuation run */
    size_t spaces = 0;     /* spaces since the last newline in the open whitespace run */
    bool newline = false;  /* the open whitespace run has a newline not yet charged */
    bool nl_free = false;  /* newlines right after punctuation join its piece */
    bool spaced = false;   /* the open punctuation run starts with a joined space */

    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        uint8_t cls = byte_class(c);
        size_t len = 1;
        if (cls == B_LEAD2 || cls == B_LEAD3 || cls == B_LEAD4) {
            len = seq_len(p, i, n, (size_t)(cls - B_LEAD2) + 2);
            if (len == 1)
                cls = B_OTHER;
        }
        /* Latin Extended Additional (U+1E00-U+1EFF, Vietnamese) letters count as accents. */
        bool latin3 =
            cls == B_LEAD3 && len == 3 && c == 0xE1 && p[i + 1] >= 0xB8 && p[i + 1] <= 0xBB;
        bool letter = cls == B_LOWER || cls == B_UPPER || cls == B_LEAD2 || latin3;
        bool absorbs = letter || cls == B_LEAD3 || cls == B_LEAD4;

        /* Close the punctuation run unless this continues it. */
        if (punct && cls != B_PUNCT) {
            /* A single character before a letter joins the letter's piece. */
            if (punct == 1 && absorbs && !spaced) {
                total += COST_JOINED;
            } else {
                size_t extra = punct > PUNCT_FREE_LEN ? punct - PUNCT_FREE_LEN : 0;
                total += COST_PIECE + extra * PUNCT_PER_CHAR;
            }
            nl_free = cls == B_NL;
            punct = 0;
        }
        /* Close the whitespace run unless this continues it. */
        if ((spaces || newline) && cls != B_SPACE && cls != B_NL) {
            if (newline)
                total += COST_PIECE;
            /* The last space joins a following word or punctuation run. */
            size_t left = spaces && cls != B_DIGIT ? spaces - 1 : spaces;
            spaced = spaces && cls == B_PUNCT;
            if (left)
                total += COST_PIECE + left * SPACE_PER_CHAR;
            spaces = 0;
            newline = false;
        }
        /* Close the alphanumeric run unless this continues it. */
        if (in_run && !letter && cls != B_DIGIT) {
            total += finish_run(&r, &ascii_cost, &accented, &words);
            in_run = false;
        }

        switch (cls) {
        case B_LOWER:
        case B_UPPER:
        case B_LEAD2:
        letter:
            if (r.digits)
                total += finish_digits(&r);
            if (cls == B_UPPER && r.last_lower)
                finish_letters(&r); /* camelCase: a new piece starts */
            r.letters++;
            if (cls == B_LEAD2 || cls == B_LEAD3) {
                r.wide++;
                r.greek += c == 0xCE || c == 0xCF;
            }
            if (cls == B_UPPER)
                r.upper++;
            r.last_lower = cls == B_LOWER;
            in_run = true;
            break;
        case B_DIGIT:
            finish_letters(&r);
            r.last_lower = false;
            r.digits++;
            if (r.digits == 3)
                total += finish_digits(&r);
            in_run = true;
            break;
        case B_SPACE:
            spaces++;
            nl_free = false;
            break;
        case B_NL:
            if (!nl_free)
                newline = true;
            spaces = 0;
            break;
        case B_PUNCT:
            punct++;
            nl_free = false;
            break;
        case B_LEAD3:
            if (latin3)
                goto letter;
            total += c == 0xE2 && p[i + 1] >= 0x81 ? COST_SYMBOL : COST_3BYTE;
            nl_free = false;
            break;
        case B_LEAD4:
            total += COST_4BYTE;
            nl_free = false;
            break;
        default:
            total += COST_BAD_BYTE;
            nl_free = false;
            break;
        }
        i += len;
    }
    if (in_run)
        total += finish_run(&r, &ascii_cost, &accented, &words);
    /* One word in twenty with an accent: French, German, Spanish... whose
     * plain words also split more than English ones. */
    if (accented * 20 >= words && accented > 0)
        total += ascii_cost * FOREIGN_PERCENT / 100;
    if (punct) {
        size_t extra = punct > PUNCT_FREE_LEN ? punct - PUNCT_FREE_LEN : 0;
        total += COST_PIECE + extra * PUNCT_PER_CHAR;
    }
    if (newline)
        total += COST_PIECE;
    if (spaces)
        total += COST_PIECE + spaces * SPACE_PER_CHAR;
    return (total + 99) / 100;
}
