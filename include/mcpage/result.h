/*
 * mcpage_result: what a tool call returns. An ordered list of content
 * blocks (text, image, audio, resource link, embedded resource), an
 * optional structuredContent object, and the isError flag.
 *
 * Tools usually do not fill one by hand: the page builder of
 * <mcpage/page.h> writes both copies of a paged result into it. Each
 * function returns 0 or a negative MCPAGE_E* status; after a failure the
 * result keeps what it held before the call.
 */
#ifndef MCPAGE_RESULT_H
#define MCPAGE_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <mcpage/mcpage.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcpage_result mcpage_result; /* opaque */

/* A link to a resource the client may read with resources/read. */
typedef struct mcpage_resource_link {
    const char *uri;         /* required */
    const char *name;        /* required: a short programmatic name */
    const char *title;       /* optional: a human title */
    const char *description; /* optional: what is in it */
    const char *mime_type;   /* optional */
    int64_t size;            /* size in bytes, or -1 when unknown */
} mcpage_resource_link;

/*
 * Creates an empty result (no blocks, not an error), or returns NULL when
 * out of memory. The runtime makes one per tool call; tests and other
 * transports make their own. mcpage_result_free accepts NULL.
 */
MCPAGE_API mcpage_result *mcpage_result_new(void);
MCPAGE_API void mcpage_result_free(mcpage_result *r);
/* Empties the result for reuse: no blocks, no structuredContent, not an error. */
MCPAGE_API void mcpage_result_clear(mcpage_result *r);

/* Appends a text block; invalid UTF-8 is replaced by U+FFFD. */
MCPAGE_API int mcpage_result_add_text(mcpage_result *r, const char *text, size_t len);
/* Appends an image or audio block; `data` is raw bytes, base64-encoded here. */
MCPAGE_API int mcpage_result_add_image(mcpage_result *r, const char *mime_type, const void *data,
                                       size_t len);
MCPAGE_API int mcpage_result_add_audio(mcpage_result *r, const char *mime_type, const void *data,
                                       size_t len);
MCPAGE_API int mcpage_result_add_resource_link(mcpage_result *r, const mcpage_resource_link *link);
/* Appends an embedded resource with text contents. */
MCPAGE_API int mcpage_result_add_embedded_text(mcpage_result *r, const char *uri,
                                               const char *mime_type, const char *text,
                                               size_t len);
/* Appends an embedded resource with binary contents (base64-encoded here). */
MCPAGE_API int mcpage_result_add_embedded_blob(mcpage_result *r, const char *uri,
                                               const char *mime_type, const void *data,
                                               size_t len);

/* Sets structuredContent from a JSON object (serialized at once; not kept). */
MCPAGE_API int mcpage_result_set_structured(mcpage_result *r, const json_t *object);
/*
 * Sets structuredContent to `len` bytes of serialized JSON the caller
 * vouches for (it must be one JSON object). The bytes are sent as given.
 */
MCPAGE_API int mcpage_result_set_structured_raw(mcpage_result *r, const char *json, size_t len);
MCPAGE_API void mcpage_result_set_error(mcpage_result *r, bool is_error);
/*
 * Makes the result an error: a single text block formatted printf-style,
 * isError true, and no structuredContent.
 */
MCPAGE_API int mcpage_result_errorf(mcpage_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Read access, for tests and transports. */
MCPAGE_API bool mcpage_result_is_error(const mcpage_result *r);
MCPAGE_API size_t mcpage_result_block_count(const mcpage_result *r);
/* The structuredContent bytes, or NULL when none was set. */
MCPAGE_API const char *mcpage_result_structured(const mcpage_result *r, size_t *len);
/* The text of block i when it is a text block, else NULL. */
MCPAGE_API const char *mcpage_result_text(const mcpage_result *r, size_t i, size_t *len);
/*
 * Serializes the whole result as the CallToolResult JSON object
 * ({"content":[...],"structuredContent":{...},"isError":...}).
 * Returns a NUL-terminated string to free with mcpage_free().
 */
MCPAGE_API char *mcpage_result_to_json(const mcpage_result *r, size_t *len);

/* Frees memory the library handed to the caller. */
MCPAGE_API void mcpage_free(void *ptr);

#ifdef __cplusplus
}
#endif
#endif /* MCPAGE_RESULT_H */
