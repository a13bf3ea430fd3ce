/* compute.h: how the engine computes the inspector network: which SIMD kernels run and how many
 * threads one call may use. Process-wide settings, read on first use; set them before starting
 * threads that use the engine. */
#ifndef DP_COMPUTE_H
#define DP_COMPUTE_H

#include <stdbool.h>

/* The kernel level in effect: "avx512", "avx2" or "portable" (plain C). By default the best the
 * CPU supports; $DRIPLE_KERNELS (one of those names) asks for a lower one. */
const char *dp_kernels(void);
/* Forces a level by name ("auto" or NULL: the default above, $DRIPLE_KERNELS ignored); a level
 * above what the CPU (or this build) supports is lowered to the best it does. Returns false,
 * changing nothing, for an unknown name. */
bool dp_kernels_set(const char *name);

/* Threads one engine call may use: a prediction splits its graph's rows among them, a training
 * step or a batch of predictions its graphs. By default $DRIPLE_THREADS, else the CPUs online
 * (at most 4: a 100-group graph's rows). One call at a time uses them: a call made while
 * another holds them (another thread's, or one made from inside the engine) runs on its own
 * thread alone, with the same results. */
int dp_threads(void);
/* Sets the count (n >= 1; at most 64); n < 1 changes nothing. Returns the count in effect. */
int dp_threads_set(int n);

#endif
