/*
 * The FTS5 table's tokens, faster: unicode61 with remove_diacritics 2 and
 * tokenchars '_' (sqlite_schema.c) gives an ASCII word exactly as its
 * bytes, A-Z folded to a-z, from its first byte to past its last. Such a
 * word, between two ASCII separators, is cut here from a byte table; a
 * stretch with a byte from 0x80, between two ASCII separators, goes to
 * the built-in unicode61 itself, its offsets moved by where it starts.
 * That gives the built-in's tokens exactly, because unicode61 decodes an
 * ASCII byte as itself whatever comes before it (a lead byte takes only
 * the continuation bytes 0x80-0xBF after it), and every ASCII byte but
 * letters, digits and '_' ends a token. test_fts_tokens and
 * fuzz_fts_tokens compare the two on any bytes.
 */
#include <string.h>

#include "store/sqlite/sqlite_internal.h"

/* The arguments the fast path is exact for: the table's. */
static const char *const u61_args[] = {"remove_diacritics", "2", "tokenchars", "_"};

/* Byte classes: an ASCII separator, an ASCII token character, a byte from 0x80. */
enum { U61_SEP, U61_WORD, U61_HIGH };

static const unsigned char *u61_classes(void)
{
    static unsigned char cls[256];
    if (cls[0x80] != U61_HIGH) /* filled on first use; every thread writes the same bytes */
        for (int c = 255; c >= 0; c--)
            cls[c] = (unsigned char)(c >= 0x80 ? U61_HIGH
                                     : (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
                                             (c >= 'A' && c <= 'Z') || c == '_'
                                         ? U61_WORD
                                         : U61_SEP);
    return cls;
}

int store_sqlite__u61_open(sq_u61 *u, const fts5_tokenizer *builtin, void *builtin_ud,
                           const char **args, int nargs)
{
    *u = (sq_u61){.tk = *builtin};
    int rc = builtin->xCreate(builtin_ud, args, nargs, &u->inner);
    if (rc != SQLITE_OK)
        return rc;
    u->fast = nargs == 4;
    for (int i = 0; u->fast && i < nargs; i++)
        u->fast = strcmp(args[i], u61_args[i]) == 0;
    return SQLITE_OK;
}

void store_sqlite__u61_close(sq_u61 *u)
{
    if (u->inner)
        u->tk.xDelete(u->inner);
    sqlite3_free(u->fold);
    *u = (sq_u61){0};
}

/* A stretch handed to the built-in: its tokens' offsets moved by `base`. */
typedef struct u61_shift {
    void *ctx;
    int (*token)(void *, int, const char *, int, int, int);
    int base;
    int rc; /* what the caller's callback last said */
} u61_shift;

static int u61_shifted(void *ud, int flags, const char *tok, int ntok, int from, int to)
{
    u61_shift *s = ud;
    s->rc = s->token(s->ctx, flags, tok, ntok, s->base + from, s->base + to);
    return s->rc;
}

int store_sqlite__u61_tokenize(sq_u61 *u, void *ctx, int flags, const char *text, int n,
                               int (*token)(void *, int, const char *, int, int, int))
{
    if (!u->fast)
        return u->tk.xTokenize(u->inner, ctx, flags, text, n, token);
    const unsigned char *cls = u61_classes(), *s = (const unsigned char *)text;
    int i = 0, rc = SQLITE_OK;
    while (rc == SQLITE_OK) {
        while (i < n && cls[s[i]] == U61_SEP)
            i++;
        if (i == n)
            break;
        int j = i;
        while (j < n && cls[s[j]] == U61_WORD)
            j++;
        if (j == n || cls[s[j]] == U61_SEP) { /* an ASCII word */
            if (j - i > u->cap) {
                int cap = j - i > 256 ? j - i : 256;
                char *f = sqlite3_realloc(u->fold, cap);
                if (f == NULL)
                    return SQLITE_NOMEM;
                u->fold = f;
                u->cap = cap;
            }
            for (int k = i; k < j; k++)
                u->fold[k - i] = (char)((unsigned)(s[k] - 'A') < 26u ? s[k] + 32 : s[k]);
            rc = token(ctx, 0, u->fold, j - i, i, j);
            i = j;
            continue;
        }
        while (j < n && cls[s[j]] != U61_SEP)
            j++;
        u61_shift shift = {.ctx = ctx, .token = token, .base = i, .rc = SQLITE_OK};
        rc = u->tk.xTokenize(u->inner, &shift, flags, text + i, j - i, u61_shifted);
        if (shift.rc != SQLITE_OK) /* the callback stopped it (the built-in says OK for DONE) */
            rc = shift.rc;
        i = j;
    }
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}
