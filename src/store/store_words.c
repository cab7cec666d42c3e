/*
 * Words for both full-text indexes (store_words.h): the Porter stemmer
 * (M. F. Porter, "An algorithm for suffix stripping", 1980, written here
 * from the paper's rules), identifier parts and the class a query word
 * asks for.
 */
#include "store/store_words.h"

#include <stdint.h>
#include <string.h>

#include "page/alloc.h"

/* ---- the Porter stemmer ------------------------------------------------ */

/* The word being stemmed: b[0..k] (inclusive), j an offset the rules set. */
typedef struct stem {
    char b[STORE_WORD_MAX + 8]; /* the word, rewritten in place */
    int k;                      /* its last byte */
    int j;                      /* the end of the stem a rule looks at */
} stem;

/* Whether b[i] is a consonant: y is one at the start and after a vowel. */
static int cons(const stem *z, int i)
{
    switch (z->b[i]) {
    case 'a':
    case 'e':
    case 'i':
    case 'o':
    case 'u':
        return 0;
    case 'y':
        return i == 0 ? 1 : !cons(z, i - 1);
    default:
        return 1;
    }
}

/* m, the number of vowel-consonant sequences in b[0..j]. */
static int measure(const stem *z)
{
    int n = 0, i = 0;
    for (;;) {
        if (i > z->j)
            return n;
        if (!cons(z, i))
            break;
        i++;
    }
    i++;
    for (;;) {
        for (;;) {
            if (i > z->j)
                return n;
            if (cons(z, i))
                break;
            i++;
        }
        i++;
        n++;
        for (;;) {
            if (i > z->j)
                return n;
            if (!cons(z, i))
                break;
            i++;
        }
        i++;
    }
}

/* Whether b[0..j] holds a vowel. */
static int vowel_in_stem(const stem *z)
{
    for (int i = 0; i <= z->j; i++)
        if (!cons(z, i))
            return 1;
    return 0;
}

/* Whether b[i-1..i] is a double consonant. */
static int double_cons(const stem *z, int i)
{
    return i >= 1 && z->b[i] == z->b[i - 1] && cons(z, i);
}

/* Whether b[i-2..i] is consonant-vowel-consonant, the last not w, x or y
 * (`hop`, not `snow`): a short syllable. */
static int cvc(const stem *z, int i)
{
    if (i < 2 || !cons(z, i) || cons(z, i - 1) || !cons(z, i - 2))
        return 0;
    char c = z->b[i];
    return c != 'w' && c != 'x' && c != 'y';
}

/* Whether b[0..k] ends with s; sets j to the byte before it. The last
 * byte is compared first: most words end otherwise (this runs for every
 * suffix of every word a sync indexes). */
static int ends(stem *z, const char *s)
{
    int len = (int)strlen(s);
    if (len > z->k + 1 || z->b[z->k] != s[len - 1] ||
        memcmp(z->b + z->k - len + 1, s, (size_t)len - 1) != 0)
        return 0;
    z->j = z->k - len;
    return 1;
}

/* Replaces b[j+1..k] with s. */
static void set_to(stem *z, const char *s)
{
    int len = (int)strlen(s);
    memcpy(z->b + z->j + 1, s, (size_t)len);
    z->k = z->j + len;
}

/* set_to() when the stem's measure is positive. */
static void replace_m(stem *z, const char *s)
{
    if (measure(z) > 0)
        set_to(z, s);
}

/* Plurals and -ed, -ing: caresses caress, ponies poni, feed feed,
 * agreed agree, plastered plaster, hopping hop, filing file. */
static void step1ab(stem *z)
{
    if (z->b[z->k] == 's') {
        if (ends(z, "sses"))
            z->k -= 2;
        else if (ends(z, "ies"))
            set_to(z, "i");
        else if (z->b[z->k - 1] != 's')
            z->k--;
    }
    if (ends(z, "eed")) {
        if (measure(z) > 0)
            z->k--;
    } else if ((ends(z, "ed") || ends(z, "ing")) && vowel_in_stem(z)) {
        z->k = z->j;
        if (ends(z, "at"))
            set_to(z, "ate");
        else if (ends(z, "bl"))
            set_to(z, "ble");
        else if (ends(z, "iz"))
            set_to(z, "ize");
        else if (double_cons(z, z->k)) {
            z->k--;
            char c = z->b[z->k];
            if (c == 'l' || c == 's' || c == 'z')
                z->k++;
        } else {
            z->j = z->k;
            if (measure(z) == 1 && cvc(z, z->k)) {
                z->j = z->k;
                set_to(z, "e");
            }
        }
    }
}

/* A final y after a vowel in the stem becomes i: happy happi. */
static void step1c(stem *z)
{
    if (ends(z, "y") && vowel_in_stem(z))
        z->b[z->k] = 'i';
}

/* A table of suffixes and their replacements. */
typedef struct rule {
    const char *suffix;
    const char *to;
} rule;

/* The first rule whose suffix ends the word: replaced when the stem's measure > 0. */
static void apply(stem *z, const rule *r)
{
    char last = z->b[z->k];
    for (; r->suffix; r++) {
        size_t n = strlen(r->suffix);
        if (r->suffix[n - 1] == last && ends(z, r->suffix)) {
            replace_m(z, r->to);
            return;
        }
    }
}

/* Double suffixes to single ones: relational relate, conditional condition. */
static void step2(stem *z)
{
    static const rule rules[] = {
        {"ational", "ate"}, {"tional", "tion"}, {"enci", "ence"},   {"anci", "ance"},
        {"izer", "ize"},    {"bli", "ble"},     {"alli", "al"},     {"entli", "ent"},
        {"eli", "e"},       {"ousli", "ous"},   {"ization", "ize"}, {"ation", "ate"},
        {"ator", "ate"},    {"alism", "al"},    {"iveness", "ive"}, {"fulness", "ful"},
        {"ousness", "ous"}, {"aliti", "al"},    {"iviti", "ive"},   {"biliti", "ble"},
        {"logi", "log"},    {NULL, NULL}};
    if (z->k >= 1)
        apply(z, rules);
}

/* -ic-, -full, -ness: triplicate triplic, hopeful hope, goodness good. */
static void step3(stem *z)
{
    static const rule rules[] = {{"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"},
                                 {"ical", "ic"},  {"ful", ""},   {"ness", ""},    {NULL, NULL}};
    apply(z, rules);
}

/* -ant, -ence and the like, off a stem of measure > 1: revival reviv. */
static void step4(stem *z)
{
    static const char *const suffixes[] = {"al",  "ance",  "ence", "er",  "ic",  "able", "ible",
                                           "ant", "ement", "ment", "ent", "ion", "ou",   "ism",
                                           "ate", "iti",   "ous",  "ive", "ize", NULL};
    if (z->k < 1)
        return;
    for (const char *const *s = suffixes; *s; s++) {
        if (!ends(z, *s))
            continue;
        /* -ion only after s or t (adoption adopt, not onion) */
        if (strcmp(*s, "ion") == 0 && !(z->j >= 0 && (z->b[z->j] == 's' || z->b[z->j] == 't')))
            return;
        if (measure(z) > 1)
            z->k = z->j;
        return;
    }
}

/* A final -e and a double l: probate probat, controll control. */
static void step5(stem *z)
{
    z->j = z->k;
    if (z->b[z->k] == 'e') {
        int m = measure(z);
        if (m > 1 || (m == 1 && !cvc(z, z->k - 1)))
            z->k--;
    }
    if (z->b[z->k] == 'l' && double_cons(z, z->k) && measure(z) > 1)
        z->k--;
}

size_t store_word_stem(const char *w, size_t n, char *out)
{
    if (n > STORE_WORD_MAX)
        n = STORE_WORD_MAX;
    if (n <= 2) { /* the rules leave short words as they are */
        memcpy(out, w, n);
        out[n] = 0;
        return n;
    }
    stem z;
    memset(&z, 0, sizeof z);
    memcpy(z.b, w, n);
    z.k = (int)n - 1;
    step1ab(&z);
    if (z.k > 0) {
        step1c(&z);
        step2(&z);
        step3(&z);
        step4(&z);
        step5(&z);
    }
    size_t len = (size_t)z.k + 1;
    memcpy(out, z.b, len);
    out[len] = 0;
    return len;
}

/* ---- identifiers ------------------------------------------------------- */

static int is_lower(char c)
{
    return c >= 'a' && c <= 'z';
}

static int is_upper(char c)
{
    return c >= 'A' && c <= 'Z';
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Whether a part starts at s[i] (0 < i < n): an upper-case letter after a
 * lower-case one (sessionLive), or one that starts a capitalised word
 * after capitals or digits (HTTPServer, v2Handler). */
static int hump(const char *s, size_t n, size_t i)
{
    if (!is_upper(s[i]))
        return 0;
    if (is_lower(s[i - 1]))
        return 1;
    return (is_upper(s[i - 1]) || is_digit(s[i - 1])) && i + 1 < n && is_lower(s[i + 1]);
}

/* The extras of one token being collected: each distinct once. */
typedef struct extras {
    char seen[8][STORE_WORD_CAP]; /* the first few emitted, to skip repeats */
    int nseen;                    /* entries of seen in use */
    store_word_emit emit;         /* the caller's */
    void *ud;                     /* and its data */
    const char *whole;            /* the token as written, folded */
    size_t whole_len;             /* its length */
} extras;

/* Emits tok unless it is the token itself or was emitted already. */
static int extra(extras *x, const char *tok, size_t len)
{
    if (len == 0 || len >= STORE_WORD_CAP)
        return 0;
    if (len == x->whole_len && memcmp(tok, x->whole, len) == 0)
        return 0;
    for (int i = 0; i < x->nseen; i++)
        if (strlen(x->seen[i]) == len && memcmp(x->seen[i], tok, len) == 0)
            return 0;
    if (x->nseen < 8) {
        memcpy(x->seen[x->nseen], tok, len);
        x->seen[x->nseen++][len] = 0;
    }
    return x->emit(x->ud, tok, len);
}

/* The class token of the lower-case word w[0..n) of letters only, into out. */
static size_t class_of(const char *w, size_t n, char *out)
{
    out[0] = STORE_WORD_CLASS;
    return 1 + store_word_stem(w, n, out + 1);
}

/*
 * The class of the last words seen, per thread: text repeats its words
 * (a sync's 34 MB of transcripts: most tokens are among a few thousand
 * words), and stemming each again cost a fifth of a sync's CPU. Direct
 * mapped by a hash of the lower-case word.
 */
#define CLASS_CACHE 4096

typedef struct class_slot {
    uint32_t hash;             /* the word's hash */
    unsigned char wlen;        /* the word's length, 0 for an empty slot */
    unsigned char clen;        /* its class's length */
    char word[STORE_WORD_MAX]; /* the lower-case word */
    char cls[STORE_WORD_CAP];  /* its class */
} class_slot;

static mcpage__thread_block_key class_key;      /* the cache, made on a thread's first word */
static _Thread_local class_slot *class_cache;   /* CLASS_CACHE slots, or NULL: none */
static _Thread_local class_slot class_uncached; /* the one slot without a cache */

size_t store_word_class(const char *w, size_t n, const char **cls)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)w[i]) * 16777619u;
    if (!class_cache)
        class_cache = mcpage__thread_block(&class_key, CLASS_CACHE * sizeof(class_slot));
    class_slot *c = class_cache ? &class_cache[h & (CLASS_CACHE - 1)] : &class_uncached;
    if (c->hash != h || c->wlen != n || memcmp(c->word, w, n) != 0) {
        c->clen = (unsigned char)class_of(w, n, c->cls);
        memcpy(c->word, w, n);
        c->wlen = (unsigned char)n;
        c->hash = h;
    }
    *cls = c->cls;
    return c->clen;
}

/* The class of the lower-case word w[0..n) of letters only, into out, from the cache when there. */
static size_t class_cached(const char *w, size_t n, char *out)
{
    const char *cls = NULL;
    size_t len = store_word_class(w, n, &cls);
    memcpy(out, cls, len);
    return len;
}

/* One part (lower-cased into part[0..n)): its class, or as written with digits. */
static int part_extra(extras *x, const char *part, size_t n)
{
    if (n == 0 || n > STORE_WORD_MAX)
        return 0;
    int letters = 1;
    for (size_t i = 0; i < n; i++)
        letters &= is_lower(part[i]);
    if (!letters)
        return extra(x, part, n);
    char cls[STORE_WORD_CAP];
    return extra(x, cls, class_cached(part, n, cls));
}

int store_word_extras(const char *orig, size_t n, store_word_emit emit, void *ud)
{
    if (n == 0 || n > STORE_IDENT_MAX)
        return 0;
    char cls[STORE_WORD_CAP];
    /* the common case: a lower-case word, its class only */
    size_t i0 = 0;
    while (i0 < n && is_lower(orig[i0]))
        i0++;
    if (i0 == n) {
        if (n > STORE_WORD_MAX)
            return 0;
        const char *c = NULL;
        size_t len = store_word_class(orig, n, &c);
        return store_word_class_is_self(c, len, orig, n) ? 0 : emit(ud, c, len);
    }
    char low[STORE_IDENT_MAX];
    int letters = 1, humps = 0, unders = 0;
    for (size_t i = 0; i < n; i++) {
        char c = orig[i];
        if (is_upper(c))
            low[i] = (char)(c + 32);
        else if (is_lower(c) || is_digit(c) || c == '_')
            low[i] = c;
        else
            return 0; /* not ASCII: unicode61's word, matched as written */
        letters &= is_lower(low[i]);
        unders += c == '_';
        humps += i > 0 && hump(orig, n, i);
    }
    extras x; /* seen[] is not cleared: nseen says what of it is in use */
    x.nseen = 0;
    x.emit = emit;
    x.ud = ud;
    x.whole = low;
    x.whole_len = n;
    int rc = 0;
    if (letters && n <= STORE_WORD_MAX) {
        size_t len = class_cached(low, n, cls);
        if (!store_word_class_is_self(cls, len, low, n) && (rc = extra(&x, cls, len)) != 0)
            return rc;
    }
    if (!humps && !unders)
        return 0;
    /* the parts, split at `_` and at humps */
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        int cut = i == n || orig[i] == '_' || (i > 0 && hump(orig, n, i));
        if (!cut)
            continue;
        if ((rc = part_extra(&x, low + start, i - start)) != 0)
            return rc;
        start = i < n && orig[i] == '_' ? i + 1 : i;
    }
    return 0;
}

size_t store_word_query(const char *term, size_t n, char *out)
{
    size_t a = 0, b = n;
    /* separators around the word (ASCII other than letters, digits, `_`) */
    while (a < b && (unsigned char)term[a] < 0x80 && !is_lower(term[a]) && !is_upper(term[a]) &&
           !is_digit(term[a]) && term[a] != '_')
        a++;
    while (b > a && (unsigned char)term[b - 1] < 0x80 && !is_lower(term[b - 1]) &&
           !is_upper(term[b - 1]) && !is_digit(term[b - 1]) && term[b - 1] != '_')
        b--;
    if (a == b || b - a > STORE_WORD_MAX)
        return 0;
    char low[STORE_WORD_MAX];
    for (size_t i = a; i < b; i++) {
        char c = term[i];
        if (!is_lower(c) && !is_upper(c))
            return 0; /* a digit, `_`, a separator inside, a byte from 0x80 */
        if (i > a && hump(term + a, b - a, i - a))
            return 0; /* an identifier: SessionLive asks for itself */
        low[i - a] = is_upper(c) ? (char)(c + 32) : c;
    }
    return class_of(low, b - a, out);
}

int store_word_query_self(const char *cls, size_t len)
{
    if (len < 2 || len > STORE_WORD_MAX + 1 || cls[0] != STORE_WORD_CLASS)
        return 0;
    const char *own = NULL;
    size_t n = store_word_class(cls + 1, len - 1, &own);
    return n == len && memcmp(own, cls, len) == 0;
}
