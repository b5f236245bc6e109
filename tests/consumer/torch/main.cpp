// A libtorch program after the port: the include is the only change.
#include <cohort/torch.h>

int main() {
  torch::manual_seed(1);
  torch::nn::Linear fc(3, 2);
  at::Tensor y = fc->forward(torch::ones({4, 3}, at::kFloat));
  std::cout << y.sizes() << std::endl;
  return y.sizes() == std::vector<int64_t>{4, 2} ? 0 : 1;
}
