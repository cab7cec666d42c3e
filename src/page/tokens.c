/*
 * TEMPORARY stand-in for the token estimator while the real one (branch
 * `tokens`) has not landed: about one token per two bytes, which
 * over-counts every text the contract meets. On merge, take theirs.
 */
#include "page/tokens.h"

size_t mcpage__tokens_estimate(const char *s, size_t n)
{
    (void)s;
    return (n + 1) / 2;
}
