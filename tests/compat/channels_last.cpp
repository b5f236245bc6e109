// Channels-last as libtorch programs use it (PyTorch's "channels last memory format" tutorial in
// C++): the input and the model's activations converted with contiguous(MemoryFormat::ChannelsLast),
// the strides and format queries, tensors made in that format, and a training step whose values
// and gradients are those of the contiguous run. Expected values: the same computation in the
// contiguous layout (compat.h has the rules).
#include "compat.h"

#include <sstream>

using namespace compat;
using torch::MemoryFormat;

namespace {

torch::Tensor ramp(std::vector<int64_t> sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return torch::arange(n, torch::kFloat32).sin().reshape(sizes);
}

void layout() {
  auto x = ramp({2, 3, 4, 5});
  auto cl = x.contiguous(MemoryFormat::ChannelsLast);
  check(cl.strides() == std::vector<int64_t>{60, 1, 15, 3}, "ChannelsLast strides of [2, 3, 4, 5]");
  check(!cl.is_contiguous() && cl.is_contiguous(MemoryFormat::ChannelsLast), "is_contiguous per format");
  check(cl.suggest_memory_format() == MemoryFormat::ChannelsLast, "suggest_memory_format: ChannelsLast");
  check(x.suggest_memory_format() == MemoryFormat::Contiguous, "suggest_memory_format: Contiguous");
  // Views: narrowed along H the strides keep channels-last order; sliced with a step along W they read
  // as contiguous; [N, 1, 1, 1] and broadcast channels are ambiguous, read as contiguous.
  check(cl.narrow(2, 1, 2).suggest_memory_format() == MemoryFormat::ChannelsLast, "a narrowed channels-last view");
  check(cl.narrow(2, 1, 2).suggest_memory_format(true) == MemoryFormat::Contiguous, "exact match wants it dense");
  check(cl.slice(3, 0, 5, 2).suggest_memory_format() == MemoryFormat::Contiguous, "a strided W slice");
  check(torch::ones({4, 1, 1, 1}).suggest_memory_format() == MemoryFormat::Contiguous, "[N, 1, 1, 1]");
  check(torch::ones({2, 1, 4, 5}).expand({2, 3, 4, 5}).suggest_memory_format() == MemoryFormat::Contiguous,
        "broadcast channels");
  check(torch::equal(cl, x), "the values do not change with the layout");
  check(cl.contiguous().is_contiguous() && torch::equal(cl.contiguous(), x), "back to contiguous");
  auto nhwc = x.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
  check(nhwc.is_contiguous(MemoryFormat::ChannelsLast), "a permuted NHWC buffer is channels-last");
  auto x5 = ramp({2, 3, 2, 4, 5}).contiguous(MemoryFormat::ChannelsLast3d);
  check(x5.strides() == std::vector<int64_t>{120, 1, 60, 15, 3}, "ChannelsLast3d strides");
  check(x5.suggest_memory_format() == MemoryFormat::ChannelsLast3d, "suggest_memory_format: ChannelsLast3d");
  std::ostringstream os;
  os << MemoryFormat::ChannelsLast;
  check(os.str() == "ChannelsLast", "MemoryFormat prints its name");
}

void made_and_kept() {
  auto options = torch::TensorOptions().dtype(torch::kFloat32).memory_format(MemoryFormat::ChannelsLast);
  check(torch::empty({2, 3, 4, 5}, options).is_contiguous(MemoryFormat::ChannelsLast), "empty with the format");
  check(torch::empty({2, 3, 4, 5}, torch::kFloat32, MemoryFormat::ChannelsLast).is_contiguous(MemoryFormat::ChannelsLast),
        "empty with the format as an argument");
  auto cl = ramp({2, 3, 4, 5}).contiguous(MemoryFormat::ChannelsLast);
  check(torch::zeros_like(cl).is_contiguous(MemoryFormat::ChannelsLast), "zeros_like keeps it");
  check(torch::empty_like(cl).is_contiguous(MemoryFormat::ChannelsLast), "empty_like keeps it");
  check(torch::ones_like(cl, MemoryFormat::Contiguous).is_contiguous(), "ones_like asked for Contiguous");
  check(cl.clone().is_contiguous(MemoryFormat::ChannelsLast), "clone keeps it");
  check(cl.clone(MemoryFormat::Contiguous).is_contiguous(), "clone(Contiguous)");
  check(cl.to(torch::kFloat64).is_contiguous(MemoryFormat::ChannelsLast), "to(kFloat64) keeps it");
  check(cl.to(torch::kFloat64, false, false, MemoryFormat::Contiguous).is_contiguous(), "to(..., Contiguous)");
  bool refused = false;
  try {
    ramp({3, 4}).contiguous(MemoryFormat::ChannelsLast);
  } catch (const c10::Error&) {
    refused = true;
  }
  check(refused, "a 2-d tensor cannot be channels-last");
}

struct NetImpl : torch::nn::Module {
  NetImpl()
      : conv1(register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 8, 3).padding(1)))),
        bn(register_module("bn", torch::nn::BatchNorm2d(8))),
        conv2(register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(8, 4, 3).stride(2)))),
        fc(register_module("fc", torch::nn::Linear(4 * 3 * 3, 5))) {}
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(bn(conv1(x)));
    x = torch::max_pool2d(x, 2);
    x = torch::relu(conv2(x.contiguous(MemoryFormat::ChannelsLast)));
    return fc(x.flatten(1));
  }
  torch::nn::Conv2d conv1;
  torch::nn::BatchNorm2d bn;
  torch::nn::Conv2d conv2;
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);

// One SGD step from the same weights with a contiguous and a channels-last batch.
std::pair<torch::Tensor, std::vector<torch::Tensor>> step(const torch::Tensor& input) {
  torch::manual_seed(0);
  Net net;
  for (auto& p : net->parameters()) {
    torch::NoGradGuard no_grad;
    p.copy_(ramp(p.sizes().vec()) * 0.2);
  }
  torch::optim::SGD sgd(net->parameters(), torch::optim::SGDOptions(0.1));
  auto target = torch::arange(4) % 5;
  auto loss = torch::nn::functional::cross_entropy(net->forward(input), target);
  sgd.zero_grad();
  loss.backward();
  std::vector<torch::Tensor> grads;
  for (auto& p : net->parameters()) grads.push_back(p.grad().clone());
  sgd.step();
  return {loss.detach(), grads};
}

void training() {
  auto input = ramp({4, 3, 14, 14});
  auto [loss, grads] = step(input);
  auto [loss_cl, grads_cl] = step(input.contiguous(MemoryFormat::ChannelsLast));
  check(near(loss.item<double>(), loss_cl.item<double>(), 1e-5), "the loss of a channels-last batch");
  bool same = grads.size() == grads_cl.size();
  for (size_t i = 0; same && i < grads.size(); ++i) same = close(grads[i], grads_cl[i], 1e-4);
  check(same, "the gradients of a channels-last batch");
}

}  // namespace

int main() {
  section("layout", layout);
  section("made and kept", made_and_kept);
  section("training", training);
  return finish("channels_last");
}
