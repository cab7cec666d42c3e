/*
 * libFuzzer target: arbitrary call arguments through the four page
 * builders. The first byte picks the family and the data set's shape; the
 * rest is parsed as the JSON arguments. Every call must end in a result
 * that is either an isError rejection or a page whose structuredContent
 * parses and carries returned, total_<unit> and has_more.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcpage/page.h>

static const uint8_t fuzz_key[32] = {5, 4, 3, 2, 1};

static const char *const fields[] = {"id", "name", "body", NULL};
static const char *const ids[] = {"id", NULL};
static const mcpage_list_spec list_spec = {.tool = "list_items",
                                           .unit = "items",
                                           .default_limit = 10,
                                           .max_limit = 50,
                                           .fields = fields,
                                           .id_fields = ids};
static const mcpage_lines_spec lines_spec = {
    .tool = "read_text", .default_max_lines = 20, .max_max_lines = 200};
static const mcpage_bytes_spec bytes_spec = {
    .tool = "read_bytes", .default_max_bytes = 512, .max_max_bytes = 4096};
static const mcpage_grid_spec grid_spec = {.tool = "read_grid",
                                           .default_rows = 5,
                                           .max_rows = 40,
                                           .default_cols = 5,
                                           .max_cols = 40,
                                           .a1_labels = true};

static void check(const mcpage_result *res, const char *total_key)
{
    size_t n;
    const char *s = mcpage_result_structured(res, &n);
    if (s == NULL)
        abort();
    json_t *v = json_loadb(s, n, 0, NULL);
    if (v == NULL)
        abort();
    if (!mcpage_result_is_error(res) && (!json_is_integer(json_object_get(v, "returned")) ||
                                         !json_is_integer(json_object_get(v, total_key)) ||
                                         !json_is_boolean(json_object_get(v, "has_more"))))
        abort();
    json_decref(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static mcpage_keyring *kr;
    static mcpage_pager *pager;
    if (pager == NULL) {
        uint8_t key[32];
        memcpy(key, fuzz_key, sizeof key);
        if (mcpage_keyring_new(&kr) || mcpage_keyring_add(kr, 1, key, 32, true) ||
            mcpage_pager_new(NULL, kr, &pager))
            abort();
    }
    if (size < 1)
        return 0;
    uint8_t sel = data[0];
    json_t *args = json_loadb((const char *)data + 1, size - 1, JSON_DECODE_ANY, NULL);
    mcpage_result *res = mcpage_result_new();
    size_t count = (size_t)(sel >> 2) * 3; /* 0 to 189 units */
    switch (sel & 3) {
    case 0: {
        mcpage_list *pg;
        int rc = mcpage_list_begin(pager, &list_spec, args, &pg);
        if (rc < 0)
            abort();
        if (rc == 0) {
            const mcpage_list_window *w = mcpage_list_window_get(pg);
            int64_t start = w->resume ? w->after[0].i + 1 : w->offset;
            for (int64_t i = start; i >= 0 && i < (int64_t)count; i++) {
                mcpage_keypart k = {.i = i};
                json_t *rec =
                    json_pack("{s:I, s:s, s:s%}", "id", (json_int_t)i, "name", "n", "body",
                              "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", (size_t)(i % 40));
                if (mcpage_list_add(pg, rec, &k, 1) != 0)
                    break;
            }
            mcpage_list_set_total(pg, (int64_t)count, 1);
        }
        if (mcpage_list_finish(pg, res) != 0)
            abort();
        check(res, "total_items");
        break;
    }
    case 1: {
        mcpage_lines *pg;
        int rc = mcpage_lines_begin(pager, &lines_spec, args, &pg);
        if (rc < 0)
            abort();
        if (rc == 0) {
            mcpage_lines_set_total(pg, (int64_t)count);
            for (int64_t i = mcpage_lines_window_get(pg)->start_line; i <= (int64_t)count; i++)
                if (mcpage_lines_add(pg, "l\xC3\xA9ne of text", (size_t)(i % 13)) != 0)
                    break;
        }
        if (mcpage_lines_finish(pg, res) != 0)
            abort();
        check(res, "total_lines");
        break;
    }
    case 2: {
        mcpage_bytes *pg;
        int rc = mcpage_bytes_begin(pager, &bytes_spec, args, &pg);
        if (rc < 0)
            abort();
        if (rc == 0) {
            const mcpage_bytes_window *w = mcpage_bytes_window_get(pg);
            size_t total = count * 7;
            size_t off = w->offset < (int64_t)total ? (size_t)w->offset : total;
            char *buf = malloc(total + 1);
            for (size_t i = 0; i < total; i++)
                buf[i] = (char)(sel & 0x80 ? i * 31 : 'a' + i % 26);
            size_t n = total - off;
            if (n > (size_t)w->max_bytes)
                n = (size_t)w->max_bytes;
            if (mcpage_bytes_set(pg, buf + off, n, (int64_t)total) != 0)
                abort();
            free(buf);
        }
        if (mcpage_bytes_finish(pg, res) != 0)
            abort();
        check(res, "total_bytes");
        break;
    }
    default: {
        mcpage_grid *pg;
        int rc = mcpage_grid_begin(pager, &grid_spec, args, &pg);
        if (rc < 0)
            abort();
        if (rc == 0) {
            mcpage_grid_set_bounds(pg, (int64_t)count, (int64_t)(sel >> 3));
            const mcpage_region *r = &mcpage_grid_window_get(pg)->region;
            for (int64_t i = 0; i < r->rows * r->cols; i++)
                if (mcpage_grid_add(pg, json_integer(i)) != 0)
                    break;
        }
        if (mcpage_grid_finish(pg, res) != 0)
            abort();
        check(res, "total_cells");
        break;
    }
    }
    mcpage_result_free(res);
    json_decref(args);
    return 0;
}
