// A table for the program's tests: two classes a linear model separates only after standardisation,
// "inside" and "outside" a ring in the columns a (scale 1000) and b (offset 50), plus a noise column,
// with the target between them as a CSV may have it.
#pragma once

#include <filesystem>
#include <fstream>
#include <random>

namespace cohort::testing {

// Writes <dir>/rings.csv with `rows` rows drawn from `seed` and returns its path.
inline std::filesystem::path write_ring_table(const std::filesystem::path& dir, int rows, unsigned seed = 3) {
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / "rings.csv";
  std::ofstream out(file);
  out << "a,label,b,noise\n";
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int i = 0; i < rows; ++i) {
    const double x = u(rng), y = u(rng);
    out << 1000 * x << "," << (x * x + y * y < 0.5 ? "inside" : "outside") << "," << 50 + y << "," << u(rng) << "\n";
  }
  return file;
}

}  // namespace cohort::testing
