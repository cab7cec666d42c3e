/*
 * minimal_server: the smallest paged MCP server. One LIST tool,
 * list_numbers, walks the numbers 1 to 10,000 with their squares, by
 * cursor or offset, within the model's token budget.
 *
 * Usage: minimal_server [--http PORT] [--key-file PATH]   (--help for all)
 */
#include <mcpage.h>

#define COUNT 10000

static const mcpage_list_spec spec = {
    .tool = "list_numbers",
    .unit = "numbers",
    .default_limit = 100,
    .max_limit = 1000,
};

/* The runtime began the page from `args` and finishes it into `res`. */
static int list_numbers(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    (void)args, (void)res;
    mcpage_list *pg = mcpage_call_list(call);
    const mcpage_list_window *w = mcpage_list_window_get(pg);
    mcpage_list_set_total(pg, COUNT, MCPAGE_GENERATION_NONE);
    /* The keyset: resume after the cursor's number, else skip `offset`. */
    int64_t n = w->resume ? w->after[0].i + 1 : w->offset + 1;
    int rc = 0;
    for (; n <= COUNT && rc == 0; n++) {
        mcpage_keypart pos = {.i = n};
        rc = mcpage_list_add(pg, json_pack("{s:I, s:I}", "n", n, "square", n * n), &pos, 1);
    }
    return rc; /* 0 or MCPAGE_PAGE_FULL: the page is done; negative: it is dropped */
}

static int setup(mcpage_server *srv, int argc, char **argv, void *ud)
{
    (void)argc, (void)argv, (void)ud; /* no arguments, no state */
    mcpage_tool t = {.name = "list_numbers",
                     .description = "Lists the numbers 1 to 10000 with their squares. Follow "
                                    "next_cursor to walk them all.",
                     .read_only = MCPAGE_HINT_TRUE,
                     .handler = list_numbers};
    return mcpage_server_add_list_tool(srv, &t, &spec);
}

int main(int argc, char **argv)
{
    mcpage_program prog = {.name = "minimal-server", .version = "1.0.0", .setup = setup};
    return mcpage_main(&prog, argc, argv);
}
