/* graph_ref.c: input references as TensorFlow GraphDef and driple-graph/1 write them ("^x" a
 * control input, "x:1" output 1 of x, "x"), resolved to node indices. Shared by the JSON, text
 * and binary GraphDef readers; graph_load.c only dispatches to them. */
#include "dp/graph_io.h"

#include <stdlib.h>
#include <string.h>

int dp_graph_resolve_input(const struct dp_graph *g, const char *ref, bool *control) {
    *control = ref[0] == '^';
    if (*control) ref++;
    int i = dp_graph_find(g, ref);
    if (i >= 0) return i;
    const char *colon = strrchr(ref, ':');
    if (!colon || colon == ref || !colon[1]) return -1;
    for (const char *p = colon + 1; *p; p++)
        if (*p < '0' || *p > '9') return -1;
    size_t n = (size_t)(colon - ref);
    char buf[256];
    char *name = n < sizeof buf ? buf : malloc(n + 1);
    if (!name) return -1;
    memcpy(name, ref, n);
    name[n] = '\0';
    i = dp_graph_find(g, name);
    if (name != buf) free(name);
    return i;
}
