// Compiled as C++17 with -Wpedantic -Werror by the main build (target cohort_cxx17_headers): the
// public headers must build with the flags libtorch programs use, though cohort itself is C++20.
#include <cohort/cohort.h>

int main() { return 0; }
