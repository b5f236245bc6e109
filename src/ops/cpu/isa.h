// COHORT_ISA_CLONES: compile a hot loop once per x86 ISA level and pick one at load time.
//
// Note [Kernel ISA dispatch]
// The library is built without -march (cmake/CohortBuildType.cmake): the binary must run on any
// x86-64, so our loops would get SSE2 only. The few loops that dominate a training step (ReLU's
// backward, where, batch norm's statistics and normalisation; src/ops/cpu/vector_loops.cpp) are
// marked with GCC/clang's target_clones: the compiler emits an AVX-512, an AVX2 and a baseline
// version of each, and the dynamic loader binds the symbol to the best one for the running CPU
// (an ifunc resolved once, through cpuid). A call costs what any call into the shared library costs.
// Why this and not PyTorch's way (each kernel file compiled once per ISA, a function-pointer table
// chosen at start-up): it needs no CMake machinery and no dispatch table, and the clones are still
// plain functions in one file. Its limits, from clang 14 (the fuzz and TSan builds): no
// target_clones on templates, so the cloned functions are plain overloads (float, double) around an
// always-inline template, and only what is inlined into a clone is compiled for its ISA; and its
// dispatcher is named `<symbol>.ifunc`, so a clone cannot be called from another file: the clones
// are internal to vector_loops.cpp, and exported plain functions forward to them.
// The results do not depend on the clone chosen: vector_loops.cpp is compiled with
// -ffp-contract=off (AVX-512 implies FMA, which would otherwise fuse a*b+c and round differently),
// and reductions keep a fixed number of lanes written out in the code, so every ISA adds the same
// numbers in the same order. The AVX-512 clones prefer 256-bit vectors (-mprefer-vector-width=256
// on vector_loops.cpp, as GCC's own tuning for AVX-512 CPUs does): with 16-float vectors a row of
// 14 or 5 (the blitz CNN's pools) never fills one and ran whole in the scalar remainder, which with
// AVX-512 compares into mask registers; the 2x2 max pool of 256x6x28x28 took 1.44 ms that way and
// 0.70 ms with 256-bit vectors on the Zen 4 EPYC (Zen 4 splits 512-bit operations in two anyway).
// COHORT_NO_ISA_CLONES (e.g. for a non-x86 or a non-ELF target) builds
// the baseline only; the sanitizer and fuzz builds set it, since an ifunc resolver runs while the
// dynamic loader relocates, before the sanitizer runtime is initialised (a TSan build crashes at start).
#pragma once

#if defined(__x86_64__) && defined(__ELF__) && !defined(COHORT_NO_ISA_CLONES)
#define COHORT_ISA_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define COHORT_ISA_CLONES
#endif

// Forces a helper template into the clone that calls it, so that it is compiled for the clone's ISA.
#define COHORT_ALWAYS_INLINE inline __attribute__((always_inline))
