/*
 * The smallest useful mcpage server: one tool, served on stdio.
 * (The same code is shown in docs/runtime.md.)
 */
#include <string.h>
#include <mcpage/server.h>

static int echo(mcpage_call *call, const json_t *args, mcpage_result *res)
{
    const char *text = json_string_value(json_object_get(args, "text"));
    mcpage_call_log(call, MCPAGE_LOG_INFO, "echo", "echoing %zu bytes", strlen(text));
    return mcpage_result_add_text(res, text, strlen(text));
}

int main(void)
{
    mcpage_server_config cfg;
    mcpage_server_config_init(&cfg, "echo-server", "1.0.0");
    mcpage_server *srv;
    if (mcpage_server_new(&cfg, &srv) != 0)
        return 1;
    mcpage_tool tool = {
        .name = "echo",
        .description = "Echoes its text.",
        .input_schema = "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},"
                        "\"required\":[\"text\"]}",
        .read_only = MCPAGE_HINT_TRUE,
        .handler = echo,
    };
    if (mcpage_server_add_tool(srv, &tool) != 0)
        return 1;
    int rc = mcpage_serve_stdio(srv, 0, 1);
    mcpage_server_free(srv);
    return rc == 0 ? 0 : 1;
}
