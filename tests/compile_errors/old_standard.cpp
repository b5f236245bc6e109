// flags: -std=c++14
// expect: cohort needs C++17 or later
#include <cohort/cohort.h>

int main() {}
