/*
 * Internal allocation helpers: every allocation in the library goes
 * through these so that mcpage_set_allocator() reaches all of them.
 */
#ifndef MCPAGE_PAGE_ALLOC_H
#define MCPAGE_PAGE_ALLOC_H

#include <stddef.h>

void *mcpage__malloc(size_t size);
void *mcpage__calloc(size_t n, size_t size);
void *mcpage__realloc(void *ptr, size_t size);
void mcpage__free(void *ptr);
char *mcpage__strdup(const char *s);
char *mcpage__strndup(const char *s, size_t n);

#endif
