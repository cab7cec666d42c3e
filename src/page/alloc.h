/*
 * Internal allocation helpers: every allocation in the library goes
 * through these so that mcpage_set_allocator() reaches all of them.
 */
#ifndef MCPAGE_PAGE_ALLOC_H
#define MCPAGE_PAGE_ALLOC_H

#include <pthread.h>
#include <stddef.h>

void *mcpage__malloc(size_t size);
void *mcpage__calloc(size_t n, size_t size);
void *mcpage__realloc(void *ptr, size_t size);
void mcpage__free(void *ptr);
char *mcpage__strdup(const char *s);
char *mcpage__strndup(const char *s, size_t n);

/*
 * A per-thread block of memory made on a thread's first call and freed
 * when the thread ends. A `_Thread_local` array is made and zeroed in
 * every thread the process starts, used or not (glibc writes the whole
 * TLS block: 543 KB a thread for the tokenizer's and the list builder's
 * caches, 3.3 MB in a stdio server's six threads); this one costs a
 * thread nothing until it asks, and its zero pages only as they are
 * written. Callers keep the pointer in a `_Thread_local` of their own.
 */
typedef struct mcpage__thread_block_key {
    int made;          /* key is made (read with acquire) */
    pthread_key_t key; /* the thread's block */
} mcpage__thread_block_key;

/* This thread's zeroed block of `size` bytes (the same size on every call
 * with `b`), or NULL without memory: the caller then does without. */
void *mcpage__thread_block(mcpage__thread_block_key *b, size_t size);

#endif
