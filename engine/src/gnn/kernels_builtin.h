/* kernels_builtin.h: auto's built-in tables (included by kernels_json.c only): dp_kernels_measure's
 * cells, one table per kernel level and kind of OpenBLAS core (with AVX-512 kernels or without),
 * each measured once with `driple bench kernels` on the machine its source names (a 2-core AMD
 * EPYC VM shared with other jobs, load average 5-7: a cell within a few per cent may go either
 * way). On another CPU, measure it: `driple bench kernels`. */
static const struct builtin builtins[] = {
    {DP_KN_PORTABLE, false,
     "2026-12-07, AMD EPYC (2 cores, AVX-512; OpenBLAS 0.3.21 Debian pthread): own portable kernels against OpenBLAS core Nehalem (OPENBLAS_CORETYPE=Nehalem)",
     {"obbbboobbbooooooooooooooooobbboooobooooooooooooooooooooooooooooobooboboooobooooooooobooooboobbooobbbooooooobooooobboobobooboo",
      "oobbbobbbbboobbobobboobbboobbboobbboobbboobbboobbbbooooooboboobbboobbboobbbooooooooooooobboobbboobbbooooooooooooobboobobbbbob",
      "oobbboobbbooooooooooooooooobbboobbbobbobooobooobobobbbboobbbobbbbooobboobbbooobbbobbboobbboobbooobbboooboooobboobbboobbboobbo",
      "oobbbobbbooboboobbbbooobboooboobbbbbbbbbbobbbooboboobbboobbbobbbboobbboobbbboboboobbboobbboobbooobbbboobboobbboobbbooobboobbo"}},
    {DP_KN_AVX2, false,
     "2026-12-07, AMD EPYC (2 cores, AVX-512; OpenBLAS 0.3.21 Debian pthread): own avx2 kernels against OpenBLAS core Haswell (OPENBLAS_CORETYPE=Haswell)",
     {"oobbboobbbooooooooooooooooobbbobbbboooooooooooooooobbbbbbbbboooooooooooooooobbbbbbbbbooooobooboooooobbbbbbbbbboooooooooooobob",
      "obbbbbbbbbobbbbbbbbbobbbbobbbbbbbbboobbbobbbbbbbbbobbbbbbbbboooobooobbooobbbbbbbbbbbboooooooobboobbbbbbbbbbbbboooooooooooobbb",
      "oobbboobbboooooooooooooooobbbbobbbbooooooooooooooobbbbbbbbbbooooooooooooooobbbbbbbbbbooooooobbbooooobbbbbbbbbbooooooooooooobb",
      "oobbbobbbbobbbbobbbbbbbbbobbbbobbbbobbbboobbbobbbbbbbbbbbbbbooobboobbbooobobbbbbbbbbboooooooobbooobbbbbbbbbbbbooooboobooooooo"}},
    {DP_KN_AVX512, false,
     "2026-12-07, AMD EPYC (2 cores, AVX-512; OpenBLAS 0.3.21 Debian pthread): own avx512 kernels against OpenBLAS core Haswell (OPENBLAS_CORETYPE=Haswell)",
     {"oobbbooobooooooooooooooooobbbbooobboooooooooooooooobbbooooooooooooooooooooobbbbbooooooooooooooooooooobboobooooooooooooooooooo",
      "oobbboobbbbbbbbobbbbbbbbbobbbbobbbboooooooooboobbbobbbbooooooooooooooooooooobbbboooooooooooooooooooobbbbooooooooooooooooooooo",
      "obbobooobbooooooooooooooooobbbooobboooooooooooooooobbbbooooooooooooooooooooobbbboooooooooooooooooooobbboboooooooooooooooooooo",
      "obbbbooobbobbbbobbbbobbbbobbbboobbbooooooobobooobobbbbboooooooooooooooooooobbbbboboooooooooooooooooobbbbboooooooooooooooooooo"}},
    {DP_KN_AVX512, true,
     "2026-12-07, AMD EPYC (2 cores, AVX-512; OpenBLAS 0.3.21 Debian pthread): own avx512 kernels against OpenBLAS core Cooperlake (its own detection)",
     {"bbbbbbbbbbooooboooobobboobbbbbbbbbboooooooooobbooobbbbbbbbbbooooooooooooooobbbbbbbbboooooooooooooooobbbbbbbbooooooooooboooooo",
      "oobbboobbboobbbobbbbobbbboobbboobbboobbbobbbbobbbboobbboobbbooooooooobooobboobbboooooooooooobooooooboobbboooooooooooobbbooobb",
      "obbbbbbbbboooooooooooooooobbbbbbbbboooooooobobbboobbbbbbbbbbooooobooooooooobbbbbbbbbooooooooooooooobbbbbbbbboooooooboooobobbo",
      "obbbbobbbbobbbbobbbbobbbbbbbbbobbbbobbbbobbbbobbbbbbbbbbbbbbobboooobbbobbbbbbbbbbbbbooooooooooboobobbbbbbbbbooooooooooooooobb"}},
};
