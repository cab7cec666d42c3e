/*
 * Numbers as the contract writes them for people: the builders' hints
 * and the tools' descriptions use the same form, so a description and a
 * clamp clause name a maximum the same way.
 */
#ifndef MCPAGE_PAGE_FMT_H
#define MCPAGE_PAGE_FMT_H

#include <stdint.h>

/* Bytes page_fmt_int writes at most, with the NUL ("-9,223,372,036,854,775,808"). */
#define PAGE_FMT_INT_CAP 32

/* Formats v with thousands separators ("1,240") into buf; returns buf. */
const char *page_fmt_int(int64_t v, char buf[PAGE_FMT_INT_CAP]);

#endif
