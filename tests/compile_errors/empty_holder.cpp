// flags: -std=c++17
// expect: declare an empty holder with `= nullptr`
// A holder member without an initialiser, for a module that has no default constructor: libtorch
// programs write `nn::Linear fc{nullptr};` and assign it in the constructor.
#include <cohort/cohort.h>

struct Net : cohort::nn::Module {
  Net() { fc = register_module("fc", cohort::nn::Linear(4, 2)); }
  cohort::nn::Linear fc;
};

int main() { Net net; }
