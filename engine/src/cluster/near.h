/* near.h: the "did you mean" rule shared by the catalogs' strict lookups (issue 30: a name is
 * exact or refused; near names are listed, never taken). Internal to engine/src/cluster. */
#ifndef DP_CLUSTER_NEAR_H
#define DP_CLUSTER_NEAR_H

#include <stdbool.h>
#include <stddef.h>

/* Case-insensitive edit distance (insert, delete, substitute, swap of neighbours) between a
 * and b, counted up to limit + 1 (anything farther reads limit + 1). */
int dp_near_distance(const char *a, const char *b, int limit);
/* Whether a user's `typed` is near `name`: a case-insensitive prefix or part of it (at least 2
 * characters), or within edit distance 2 (1 for names of 4 characters or fewer). */
bool dp_near(const char *typed, const char *name);
/* Appends ", name" (or "name" when buf is empty) to buf of n bytes; "..." when it is full. */
void dp_near_append(char *buf, size_t n, const char *name);

#endif
