// The libtorch-port promise for printing: `std::cout << tensor` prints what libtorch prints, character
// for character. Each expected string is libtorch 1.13's output for the same expression (this program
// checks it against libtorch on every run, too). compat.h has the rules. libtorch 2.x prints three of
// them differently (a double scalar with 15 digits; the first row of each slice of a 3-d or 4-d tensor
// one space to the left); built against 2.x, those expectations are 2.x's. cohort prints 1.13's.
#include "compat.h"

#include <cmath>
#include <sstream>
#include <string>

using namespace compat;

namespace {

#if !defined(COMPAT_COHORT) && TORCH_VERSION_MAJOR >= 2
constexpr bool kLibtorch2 = true;
#else
constexpr bool kLibtorch2 = false;
#endif

void expect_printed(const torch::Tensor& t, const std::string& expected, const std::string& name) {
  std::ostringstream os;
  os << t;
  const bool ok = os.str() == expected;
  check(ok, "printing " + name);
  if (!ok) std::cerr << "  expected:\n" << expected << "\n  printed:\n" << os.str() << "\n";
}

void printing() {
  expect_printed(torch::eye(2),
            " 1  0\n"
            " 0  1\n"
            "[ CPUFloatType{2,2} ]",
            "eye2");
  expect_printed(torch::tensor(3.5),
            "3.5\n"
            "[ CPUFloatType{} ]",
            "scalar");
  expect_printed(torch::tensor(7),
            "7\n"
            "[ CPULongType{} ]",
            "scalar_int");
  expect_printed(torch::tensor(3.14159265358979, torch::kDouble),
            std::string(kLibtorch2 ? "3.14159265358979\n" : "3.14159\n") +
            "[ CPUDoubleType{} ]",
            "scalar_pi");
  expect_printed(torch::tensor({1, 2, 3}),
            " 1\n"
            " 2\n"
            " 3\n"
            "[ CPULongType{3} ]",
            "vec_int");
  expect_printed(torch::tensor({1.5, -2.25, 3.0}),
            " 1.5000\n"
            "-2.2500\n"
            " 3.0000\n"
            "[ CPUFloatType{3} ]",
            "vec_float");
  expect_printed(torch::tensor({1.0, 1000000.0}),
            "       1\n"
            "   1e+06\n"
            "[ CPUFloatType{2} ]",
            "vec_big");
  expect_printed(torch::tensor({0.001, 0.002}),
            "0.001 *\n"
            " 1.0000\n"
            " 2.0000\n"
            "[ CPUFloatType{2} ]",
            "vec_small");
  expect_printed(torch::tensor({0.0001, 100.0}),
            " 1.0000e-04\n"
            " 1.0000e+02\n"
            "[ CPUFloatType{2} ]",
            "vec_range");
  expect_printed(torch::tensor({12.5, 100.0}),
            "  12.5000\n"
            " 100.0000\n"
            "[ CPUFloatType{2} ]",
            "vec_100");
  expect_printed(torch::tensor({1.0, double(NAN), double(INFINITY), -double(INFINITY)}),
            " 1\n"
            "nan\n"
            "inf\n"
            "-inf\n"
            "[ CPUFloatType{4} ]",
            "vec_nan");
  expect_printed(torch::tensor({double(NAN), double(NAN)}),
            "nan\n"
            "nan\n"
            "[ CPUFloatType{2} ]",
            "vec_allnan");
  expect_printed(torch::tensor({true, false}),
            " 1\n"
            " 0\n"
            "[ CPUBoolType{2} ]",
            "bool");
  expect_printed(torch::tensor({int64_t(12345678901), int64_t(1)}),
            " 1.2346e+10\n"
            " 1.0000e+00\n"
            "[ CPULongType{2} ]",
            "long_big");
  expect_printed(torch::arange(6, torch::kFloat).view({2, 3}) / 3,
            " 0.0000  0.3333  0.6667\n"
            " 1.0000  1.3333  1.6667\n"
            "[ CPUFloatType{2,3} ]",
            "mat");
  expect_printed(torch::arange(30, torch::kFloat).view({2, 15}) * 1.5,
            "Columns 1 to 8  0.0000   1.5000   3.0000   4.5000   6.0000   7.5000   9.0000  10.5000\n"
            " 22.5000  24.0000  25.5000  27.0000  28.5000  30.0000  31.5000  33.0000\n"
            "\n"
            "Columns 9 to 15 12.0000  13.5000  15.0000  16.5000  18.0000  19.5000  21.0000\n"
            " 34.5000  36.0000  37.5000  39.0000  40.5000  42.0000  43.5000\n"
            "[ CPUFloatType{2,15} ]",
            "mat_wide");
  expect_printed(torch::tensor({{-1.0, 2.0}, {3.0, -4.5}}),
            "-1.0000  2.0000\n"
            " 3.0000 -4.5000\n"
            "[ CPUFloatType{2,2} ]",
            "mat_neg");
  expect_printed(torch::tensor({{1000000.0, 2.5}, {3.0, 4.0}}),
            " 1.0000e+06  2.5000e+00\n"
            " 3.0000e+00  4.0000e+00\n"
            "[ CPUFloatType{2,2} ]",
            "mat_scale");
  expect_printed(torch::tensor({{0.00012, 0.00034}, {0.0005, 0.0007}}),
            "0.0001 *\n"
            " 1.2000  3.4000\n"
            "  5.0000  7.0000\n"
            "[ CPUFloatType{2,2} ]",
            "mat_small");
  expect_printed(torch::arange(12, torch::kFloat).view({2, 2, 3}),
            "(1,.,.) = \n" +
                std::string(kLibtorch2 ? " 0  1  2\n" : "  0  1  2\n") +
            "  3  4  5\n"
            "\n"
            "(2,.,.) = \n" +
                std::string(kLibtorch2 ? "  6   7   8\n" : "   6   7   8\n") +
            "   9  10  11\n"
            "[ CPUFloatType{2,2,3} ]",
            "t3");
  expect_printed(torch::arange(16, torch::kLong).view({2, 2, 2, 2}),
            "(1,1,.,.) = \n" +
                std::string(kLibtorch2 ? " 0  1\n" : "  0  1\n") +
            "  2  3\n"
            "\n"
            "(2,1,.,.) = \n" +
                std::string(kLibtorch2 ? "  8   9\n" : "   8   9\n") +
            "  10  11\n"
            "\n"
            "(1,2,.,.) = \n" +
                std::string(kLibtorch2 ? " 4  5\n" : "  4  5\n") +
            "  6  7\n"
            "\n"
            "(2,2,.,.) = \n" +
                std::string(kLibtorch2 ? " 12  13\n" : "  12  13\n") +
            "  14  15\n"
            "[ CPULongType{2,2,2,2} ]",
            "t4");
  expect_printed(torch::zeros({0}),
            "[ CPUFloatType{0} ]",
            "empty");
  expect_printed(torch::zeros({2, 0}),
            "[ CPUFloatType{2,0} ]",
            "empty2");
  expect_printed(torch::zeros({2, 0, 3}),
            "[ CPUFloatType{2,0,3} ]",
            "empty3");
  expect_printed(torch::Tensor(),
            "[ Tensor (undefined) ]",
            "undef");
  expect_printed(torch::ones({2}, torch::kDouble),
            " 1\n"
            " 1\n"
            "[ CPUDoubleType{2} ]",
            "double");
  expect_printed(torch::ones({2}, torch::kInt),
            " 1\n"
            " 1\n"
            "[ CPUIntType{2} ]",
            "int32");
  expect_printed(torch::ones({2}, torch::kByte),
            " 1\n"
            " 1\n"
            "[ CPUByteType{2} ]",
            "uint8");
  expect_printed(torch::ones({2}, torch::requires_grad()),
            " 1\n"
            " 1\n"
            "[ CPUFloatType{2} ]",
            "grad");
  expect_printed(torch::tensor({{1e10, 1.0}}),
            " 1.0000e+10  1.0000e+00\n"
            "[ CPUFloatType{1,2} ]",
            "mat_big_ints");
  expect_printed(torch::tensor({1e-5, 1e5}),
            " 1.0000e-05\n"
            " 1.0000e+05\n"
            "[ CPUFloatType{2} ]",
            "vec_large_range");
  expect_printed(torch::tensor({1e-120, 1e120}, torch::kDouble),
            " 1.0000e-120\n"
            " 1.0000e+120\n"
            "[ CPUDoubleType{2} ]",
            "vec_exp100");
  expect_printed(torch::tensor({0.5, 0.25, 123.0}),
            "   0.5000\n"
            "   0.2500\n"
            " 123.0000\n"
            "[ CPUFloatType{3} ]",
            "vec_mixed");
  expect_printed(torch::tensor({-0.05, 0.01}),
            "0.01 *\n"
            "-5.0000\n"
            " 1.0000\n"
            "[ CPUFloatType{2} ]",
            "vec_neg_small");
  expect_printed(torch::zeros({2, 2}),
            " 0  0\n"
            " 0  0\n"
            "[ CPUFloatType{2,2} ]",
            "zeros2");
  expect_printed(torch::tensor({1234567.0, 0.5}),
            " 1.2346e+06\n"
            " 5.0000e-01\n"
            "[ CPUFloatType{2} ]",
            "vec_7digits");
  expect_printed(torch::arange(40, torch::kFloat).view({40, 1}).slice(0, 0, 3),
            " 0\n"
            " 1\n"
            " 2\n"
            "[ CPUFloatType{3,1} ]",
            "mat_many_rows");
}

}  // namespace

int main() {
  section("printing", printing);
  return finish("printing");
}
