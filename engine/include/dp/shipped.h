/* shipped.h: where driple finds the files it ships: assets/ (GPU catalog, setting lists, op-type
 * weights, inspectors) and samples/ (graphs a new user can open). One search order, used by
 * every command, the explorer and the engine's *_load_default functions. */
#ifndef DP_SHIPPED_H
#define DP_SHIPPED_H

#include <stddef.h>

#include "dp/status.h"

/* Finds the shipped file (or directory) rel, a path relative to the project's root
 * ("assets/gpus.json", "samples/graphs/resnet50.json"). The candidates, in order; the first
 * readable one wins:
 *   1. $DRIPLE_ASSETS/<rest> for rel "assets/<rest>", when DRIPLE_ASSETS is set and non-empty
 *      (an assets directory of one's own);
 *   2. $DRIPLE_HOME/<rel>, when DRIPLE_HOME is set and non-empty (an installed tree);
 *   3. <rel> from the working directory (a source checkout);
 *   4. <directory of the running binary>/../<rel> (build/driple in a checkout);
 *   5. <directory of the running binary>/../share/driple/<rel> (PREFIX/bin/driple installed by
 *      `make install`, its files in PREFIX/share/driple).
 * Writes the path found into buf (n bytes) and returns DP_OK. When none is readable: buf holds
 * rel, and DP_ERR_NOT_FOUND with "<rel>: not found (tried <candidates>; set DRIPLE_ASSETS or
 * DRIPLE_HOME, or pass <option>)" (option: the command-line option that names such a file
 * instead, "--gpus"; NULL leaves that part out). err may be NULL. */
enum dp_status dp_shipped_path(const char *rel, const char *option, char *buf, size_t n,
                               struct dp_error *err);

#endif
