// A libtorch program after the port: the include and the namespace alias are the only changes.
#include <cohort/cohort.h>
namespace torch = cohort;

int main() {
  torch::manual_seed(1);
  torch::nn::Linear fc(3, 2);
  torch::Tensor y = fc->forward(torch::ones({4, 3}));
  std::cout << y.sizes() << std::endl;
  return y.sizes() == std::vector<int64_t>{4, 2} ? 0 : 1;
}
