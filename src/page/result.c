/*
 * Tool call results (see <mcpage/result.h>). Blocks are kept as a vector
 * of serialized JSON objects, text blocks also as their raw text so tests
 * and the command line can read them back.
 */
#include <mcpage/result.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "page/alloc.h"
#include "page/base64.h"
#include "page/dbuf.h"
#include "page/result_internal.h"

/* Caps that keep one result from growing without bound. */
#define RESULT_MAX_BLOCKS 1024
#define RESULT_MAX_BYTES  ((size_t)256 << 20)

typedef struct block {
    char *json;   /* the serialized content block object */
    size_t len;   /* bytes in json */
    size_t cps;   /* code points in json */
    size_t units; /* UTF-16 units in json */
    char *text;   /* text blocks: the text itself; else NULL */
    size_t tlen;  /* bytes in text */
} block;

struct mcpage_result {
    block *blocks;    /* content blocks in order */
    size_t count;     /* blocks in use */
    size_t cap;       /* blocks allocated */
    char *structured; /* serialized structuredContent, or NULL */
    size_t slen;      /* bytes in structured */
    size_t scps;      /* code points in structured */
    size_t sunits;    /* UTF-16 units in structured */
    bool is_error;    /* isError */
};

mcpage_result *mcpage_result_new(void)
{
    return mcpage__calloc(1, sizeof(mcpage_result));
}

void mcpage_result_clear(mcpage_result *r)
{
    for (size_t i = 0; i < r->count; i++) {
        mcpage__free(r->blocks[i].json);
        mcpage__free(r->blocks[i].text);
    }
    r->count = 0;
    mcpage__free(r->structured);
    r->structured = NULL;
    r->slen = 0;
    r->is_error = false;
}

void mcpage_result_free(mcpage_result *r)
{
    if (r == NULL)
        return;
    mcpage_result_clear(r);
    mcpage__free(r->blocks);
    mcpage__free(r);
}

void mcpage_free(void *ptr)
{
    mcpage__free(ptr);
}

/* Takes the writer's bytes as a new block; frees them on failure. */
static int push_block(mcpage_result *r, jw *w, char *text, size_t tlen)
{
    if (w->err) {
        int err = w->err;
        jw_free(w);
        mcpage__free(text);
        return err;
    }
    void *blocks = r->blocks;
    int rc = dbuf_grow(&blocks, &r->cap, r->count + 1, sizeof *r->blocks, 4, RESULT_MAX_BLOCKS);
    if (rc != 0) {
        jw_free(w);
        mcpage__free(text);
        return rc;
    }
    r->blocks = blocks;
    block *b = &r->blocks[r->count++];
    b->cps = w->codepoints;
    b->units = w->utf16;
    b->json = jw_take(w, &b->len);
    b->text = text;
    b->tlen = tlen;
    return 0;
}

int mcpage__result_take_text(mcpage_result *r, char *text, size_t len)
{
    jw w;
    jw_init(&w, RESULT_MAX_BYTES);
    /* Room for the text unescaped and the block's keys: one allocation. */
    if (len < RESULT_MAX_BYTES && jw_reserve(&w, len + 32) != 0) {
        mcpage__free(text);
        return MCPAGE_ENOMEM;
    }
    jw_object_begin(&w);
    jw_kv_string(&w, "type", "text");
    jw_key(&w, "text");
    jw_stringn(&w, text, len);
    jw_object_end(&w);
    return push_block(r, &w, text, len);
}

int mcpage__result_take_text_block(mcpage_result *r, char *text, size_t len, jw *w)
{
    return push_block(r, w, text, len);
}

int mcpage_result_add_text(mcpage_result *r, const char *text, size_t len)
{
    char *copy = mcpage__strndup(text, len);
    if (copy == NULL)
        return MCPAGE_ENOMEM;
    return mcpage__result_take_text(r, copy, len);
}

/* Writes "key": base64(data) without an intermediate string in the writer. */
static void kv_base64(jw *w, const char *key, const void *data, size_t len)
{
    if (len > RESULT_MAX_BYTES / 2) {
        w->err = MCPAGE_ERANGE;
        return;
    }
    char *b64 = mcpage__malloc(b64_encoded_len(len, false) + 1);
    if (b64 == NULL) {
        w->err = MCPAGE_ENOMEM;
        return;
    }
    size_t n = b64_encode(data, len, b64, false);
    jw_key(w, key);
    jw_stringn(w, b64, n);
    mcpage__free(b64);
}

static int add_media(mcpage_result *r, const char *type, const char *mime, const void *data,
                     size_t len)
{
    if (mime == NULL || (data == NULL && len > 0))
        return MCPAGE_EINVAL;
    jw w;
    jw_init(&w, RESULT_MAX_BYTES);
    jw_object_begin(&w);
    jw_kv_string(&w, "type", type);
    kv_base64(&w, "data", data, len);
    jw_kv_string(&w, "mimeType", mime);
    jw_object_end(&w);
    return push_block(r, &w, NULL, 0);
}

int mcpage_result_add_image(mcpage_result *r, const char *mime_type, const void *data, size_t len)
{
    return add_media(r, "image", mime_type, data, len);
}

int mcpage_result_add_audio(mcpage_result *r, const char *mime_type, const void *data, size_t len)
{
    return add_media(r, "audio", mime_type, data, len);
}

int mcpage_result_add_resource_link(mcpage_result *r, const mcpage_resource_link *link)
{
    if (link == NULL || link->uri == NULL || link->name == NULL)
        return MCPAGE_EINVAL;
    jw w;
    jw_init(&w, RESULT_MAX_BYTES);
    jw_object_begin(&w);
    jw_kv_string(&w, "type", "resource_link");
    jw_kv_string(&w, "uri", link->uri);
    jw_kv_string(&w, "name", link->name);
    if (link->title)
        jw_kv_string(&w, "title", link->title);
    if (link->description)
        jw_kv_string(&w, "description", link->description);
    if (link->mime_type)
        jw_kv_string(&w, "mimeType", link->mime_type);
    if (link->size >= 0)
        jw_kv_int(&w, "size", link->size);
    jw_object_end(&w);
    return push_block(r, &w, NULL, 0);
}

static int add_embedded(mcpage_result *r, const char *uri, const char *mime, const void *data,
                        size_t len, bool text)
{
    if (uri == NULL || (data == NULL && len > 0))
        return MCPAGE_EINVAL;
    jw w;
    jw_init(&w, RESULT_MAX_BYTES);
    jw_object_begin(&w);
    jw_kv_string(&w, "type", "resource");
    jw_key(&w, "resource");
    jw_object_begin(&w);
    jw_kv_string(&w, "uri", uri);
    if (mime)
        jw_kv_string(&w, "mimeType", mime);
    if (text) {
        jw_key(&w, "text");
        jw_stringn(&w, data ? data : "", len);
    } else {
        kv_base64(&w, "blob", data, len);
    }
    jw_object_end(&w);
    jw_object_end(&w);
    return push_block(r, &w, NULL, 0);
}

int mcpage_result_add_embedded_text(mcpage_result *r, const char *uri, const char *mime_type,
                                    const char *text, size_t len)
{
    return add_embedded(r, uri, mime_type, text, len, true);
}

int mcpage_result_add_embedded_blob(mcpage_result *r, const char *uri, const char *mime_type,
                                    const void *data, size_t len)
{
    return add_embedded(r, uri, mime_type, data, len, false);
}

int mcpage_result_set_structured_raw(mcpage_result *r, const char *json, size_t len)
{
    if (json == NULL || len < 2 || json[0] != '{')
        return MCPAGE_EINVAL;
    char *copy = mcpage__strndup(json, len);
    if (copy == NULL)
        return MCPAGE_ENOMEM;
    size_t cps, units;
    jw_measure_utf8(json, len, &cps, &units);
    mcpage__result_take_structured(r, copy, len, cps, units);
    return 0;
}

void mcpage__result_take_structured(mcpage_result *r, char *json, size_t len, size_t cps,
                                    size_t units)
{
    mcpage__free(r->structured);
    r->structured = json;
    r->slen = len;
    r->scps = cps;
    r->sunits = units;
}

int mcpage_result_set_structured(mcpage_result *r, const json_t *object)
{
    if (!json_is_object(object))
        return MCPAGE_EINVAL;
    jw w;
    jw_init(&w, RESULT_MAX_BYTES);
    jw_json(&w, object);
    if (w.err) {
        int err = w.err;
        jw_free(&w);
        return err;
    }
    size_t cps = w.codepoints, units = w.utf16, len;
    char *json = jw_take(&w, &len);
    mcpage__result_take_structured(r, json, len, cps, units);
    return 0;
}

void mcpage_result_set_error(mcpage_result *r, bool is_error)
{
    r->is_error = is_error;
}

int mcpage_result_errorf(mcpage_result *r, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return MCPAGE_EINVAL;
    char *text = small;
    if ((size_t)n >= sizeof small) {
        text = mcpage__malloc((size_t)n + 1);
        if (text == NULL)
            return MCPAGE_ENOMEM;
        va_start(ap, fmt);
        vsnprintf(text, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    mcpage_result_clear(r);
    int rc = mcpage_result_add_text(r, text, (size_t)n);
    if (text != small)
        mcpage__free(text);
    r->is_error = true;
    return rc;
}

bool mcpage_result_is_error(const mcpage_result *r)
{
    return r->is_error;
}

size_t mcpage_result_block_count(const mcpage_result *r)
{
    return r->count;
}

const char *mcpage_result_structured(const mcpage_result *r, size_t *len)
{
    if (len)
        *len = r->slen;
    return r->structured;
}

const char *mcpage_result_text(const mcpage_result *r, size_t i, size_t *len)
{
    if (i >= r->count || r->blocks[i].text == NULL)
        return NULL;
    if (len)
        *len = r->blocks[i].tlen;
    return r->blocks[i].text;
}

void mcpage__result_write(const mcpage_result *r, jw *w)
{
    jw_object_begin(w);
    jw_key(w, "content");
    jw_array_begin(w);
    for (size_t i = 0; i < r->count; i++)
        jw_raw_value_counted(w, r->blocks[i].json, r->blocks[i].len, r->blocks[i].cps,
                             r->blocks[i].units);
    jw_array_end(w);
    if (r->structured) {
        jw_key(w, "structuredContent");
        jw_raw_value_counted(w, r->structured, r->slen, r->scps, r->sunits);
    }
    if (r->is_error)
        jw_kv_bool(w, "isError", true);
    jw_object_end(w);
}

size_t mcpage__result_size(const mcpage_result *r)
{
    size_t n = 64 + r->slen; /* the keys, brackets and isError around the parts */
    for (size_t i = 0; i < r->count; i++)
        n += r->blocks[i].len + 1;
    return n;
}

char *mcpage_result_to_json(const mcpage_result *r, size_t *len)
{
    jw w;
    jw_init(&w, 0);
    mcpage__result_write(r, &w);
    if (w.err) {
        jw_free(&w);
        return NULL;
    }
    return jw_take(&w, len);
}
