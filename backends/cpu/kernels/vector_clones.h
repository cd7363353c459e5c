// HSCHED_VECTOR_CLONES: compiles a hot loop function for AVX-512, AVX2 and the baseline, one picked
// at load time (GCC/clang function multiversioning). The build targets baseline x86-64 (SSE2),
// where exp, the normalizations and the quantization loops ran ~3x slower than with AVX-512 on the
// CI-class Zen 4. Float results are the same in each clone up to rounding (a summation order is
// fixed by the lanes); elementwise loops give the same bits in each.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(HSCHED_NO_TARGET_CLONES)
#define HSCHED_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define HSCHED_VECTOR_CLONES
#endif

