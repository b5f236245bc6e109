# Default build type, and the sanitizer builds (COHORT_SANITIZE, COHORT_SANITIZE_THREAD).

if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  if(COHORT_SANITIZE OR COHORT_SANITIZE_THREAD)
    set(_cohort_default_type Debug)    # keep assert()s; -O1 -g is forced below
  else()
    set(_cohort_default_type Release)
  endif()
  set(CMAKE_BUILD_TYPE ${_cohort_default_type} CACHE STRING
      "Build type (Debug, Release, RelWithDebInfo, MinSizeRel)" FORCE)
  set_property(CACHE CMAKE_BUILD_TYPE PROPERTY STRINGS Debug Release RelWithDebInfo MinSizeRel)
endif()

# Release is CMake's "-O3 -DNDEBUG". No -march=native: oneDNN picks its ISA at
# run time, and our own loops stay portable.

if(COHORT_SANITIZE)
  set(_cohort_san -fsanitize=address,undefined -fno-omit-frame-pointer
                  -fno-sanitize-recover=undefined)
  # Applies to every target (library, tests, examples); comes after the
  # build type's flags on the command line, so -O1 wins.
  # No per-ISA clones (Note [Kernel ISA dispatch]): their ifunc resolvers run while the dynamic
  # loader relocates, before a sanitizer's runtime is up (a TSan build crashes at start-up).
  add_compile_options(${_cohort_san} -O1 -g -D_GLIBCXX_ASSERTIONS -DCOHORT_NO_ISA_CLONES)
  add_link_options(${_cohort_san})
  message(STATUS "cohort: sanitizer build (ASan + UBSan)")
endif()

# ThreadSanitizer (scripts/test.sh runs the threaded suites with it). GCC's OpenMP runtime is not
# instrumented, so its barriers are invisible to TSan: run with one OpenMP thread (OMP_NUM_THREADS=1,
# and one core so cohort's own thread shares are 1), which tests/tsan.supp explains.
if(COHORT_SANITIZE_THREAD)
  if(COHORT_SANITIZE)
    message(FATAL_ERROR "cohort: COHORT_SANITIZE (ASan) and COHORT_SANITIZE_THREAD cannot be combined")
  endif()
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer -O1 -g1 -DCOHORT_NO_ISA_CLONES)  # as above
  add_link_options(-fsanitize=thread)
  message(STATUS "cohort: ThreadSanitizer build")
endif()
