// The libtorch-port promise for the small things libtorch programs lean on: TORCH_MODULE holders,
// register_module's return, nn::Functional, TORCH_CHECK, choosing the device with
// torch::cuda::is_available(), dtype short names, torch::str, torch::optional, assigning into
// indexed tensors, the deprecated data accessors, and the small types: at:: and c10:: names,
// c10::Error's members, IntArrayRef::slice, iterating a Sequential, Module::as, the init modes,
// InferenceMode (compat.h has the rules).
#include "compat.h"

#include <string>

using namespace compat;

namespace {

struct BlockImpl : torch::nn::Module {
  BlockImpl(int64_t in, int64_t out) : fc(register_module("fc", torch::nn::Linear(in, out))) {}
  torch::Tensor forward(torch::Tensor x) { return torch::relu(fc->forward(x)); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Block);

struct NetImpl : torch::nn::Module {
  NetImpl() {
    first = register_module("first", Block(4, 3));
    head = register_module("head", torch::nn::Linear(3, 2));
    act = register_module("act", torch::nn::Functional(torch::leaky_relu, 0.1));
  }
  torch::Tensor forward(torch::Tensor x) { return act(head(first(x))); }
  Block first{nullptr};
  torch::nn::Linear head{nullptr};
  torch::nn::Functional act{nullptr};
};
TORCH_MODULE(Net);

// ---------------------------------------------------------------------------------------------------
void holders() {
  Net net;
  auto y = net(torch::ones({5, 4}));
  check(has_sizes(y, {5, 2}), "TORCH_MODULE holder: forward through nested holders");
  check(net->named_parameters().size() == 4, "TORCH_MODULE holder: parameters of the registered children");
  check(net->named_parameters().contains("first.fc.weight"), "TORCH_MODULE holder: dotted names");
  auto shared = net.ptr();
  check(shared.get() == net.get(), "holder: ptr() and get()");
  Block empty{nullptr};
  check(empty.is_empty(), "holder{nullptr} is empty");

  // libtorch overloads log_softmax (by dim name too), so a lambda picks the overload.
  torch::nn::Sequential seq(torch::nn::Linear(2, 2), torch::nn::Functional(torch::relu),
                            torch::nn::Functional([](torch::Tensor x) { return torch::log_softmax(x, 1); }));
  auto out = seq->forward(torch::ones({3, 2}));
  check(has_sizes(out, {3, 2}) && near(out.exp().sum(1)[0].item<double>(), 1.0, 1e-5),
        "Sequential with Functional(relu) and Functional(a lambda)");
}

// ---------------------------------------------------------------------------------------------------
void checks_and_names() {
  std::string message;
  try {
    int rows = 3;
    TORCH_CHECK(rows == 2, "expected 2 rows, got ", rows);
  } catch (const std::exception& e) {
    message = e.what();
  }
  check(message.find("expected 2 rows, got 3") != std::string::npos, "TORCH_CHECK throws with the streamed message");
  bool threw = false;
  try {
    TORCH_CHECK(false);
  } catch (const std::exception&) {
    threw = true;
  }
  check(threw, "TORCH_CHECK without a message throws");
  TORCH_CHECK(true, "never seen");

  check(torch::str("n=", 3, ", x=", 1.5) == "n=3, x=1.5", "torch::str");
  torch::optional<int64_t> none = torch::nullopt;
  check(!none.has_value(), "torch::optional, torch::nullopt");

  check(torch::kF32 == torch::kFloat && torch::kF64 == torch::kDouble && torch::kI64 == torch::kLong &&
            torch::kI32 == torch::kInt && torch::kU8 == torch::kByte,
        "dtype short names");

  torch::Device device(torch::kCPU);
  if (torch::cuda::is_available()) device = torch::Device(torch::kCUDA);
  check(device.is_cpu(), "the device chosen at run time is the CPU here");
  auto on = torch::ones({2}, torch::TensorOptions().device(device));
  check(on.device() == device, "a tensor on the chosen device");
}

// ---------------------------------------------------------------------------------------------------
void tensor_methods() {
  auto x = torch::tensor({{1.0, 0.0}, {2.0, 3.0}});
  check(!x.all().item<bool>() && x.any().item<bool>(), "all(), any()");
  check(torch::equal(x.all(1), torch::tensor({false, true})), "all(dim)");
  check(torch::equal(x.any(0), torch::tensor({true, true})), "any(dim)");

  auto u = torch::empty({1000});
  u.uniform_(-2, 3);
  check(u.min().item<float>() >= -2 && u.max().item<float>() < 3, "uniform_(from, to)");
  check(std::abs(u.mean().item<double>() - 0.5) < 0.25, "uniform_: the mean");
  auto n = torch::empty({4000});
  n.normal_(1.0, 2.0);
  check(std::abs(n.mean().item<double>() - 1.0) < 0.2 && std::abs(n.std().item<double>() - 2.0) < 0.2,
        "normal_(mean, std)");

  auto e = torch::tensor({1.0, 2.0, 3.0});
  e.eq_(2);
  check(torch::equal(e, torch::tensor({0.0, 1.0, 0.0})) && e.scalar_type() == torch::kFloat, "eq_ in place");

  auto rows = torch::zeros({3, 2});
  rows[1] = torch::tensor({5.0, 6.0});
  rows[2] = 7;
  check(torch::equal(rows, torch::tensor({{0.0, 0.0}, {5.0, 6.0}, {7.0, 7.0}})), "t[i] = tensor, t[i] = scalar");
  rows.index({torch::indexing::Slice(), 0}) = -1;
  check(rows[2][0].item<float>() == -1 && rows[2][1].item<float>() == 7, "t.index({Slice(), 0}) = scalar");

  auto w = torch::ones({2}, torch::requires_grad());
  float* p = w.data<float>();
  check(p == w.data_ptr<float>() && p[1] == 1.0f, "data<T>() is data_ptr<T>()");
  auto d = w.data();
  check(!d.requires_grad() && d.data_ptr<float>() == p, "data(): the values without autograd, sharing storage");
}

// ---------------------------------------------------------------------------------------------------
void small_types() {
  at::Tensor a = at::ones({2, 3}, at::kFloat);
  check(a.scalar_type() == c10::kFloat, "at::Tensor, at::kFloat, c10::kFloat");

  std::string msg, bare;
  try {
    TORCH_CHECK(a.dim() == 3, "expected 3 dims, got ", a.dim());
  } catch (const c10::Error& e) {
    msg = e.msg();
    bare = e.what_without_backtrace();
  }
  check(msg.find("expected 3 dims, got 2") != std::string::npos, "c10::Error::msg()");
  check(bare.find("expected 3 dims, got 2") != std::string::npos, "c10::Error::what_without_backtrace()");

  std::vector<int64_t> dims{4, 3, 2, 1};
  c10::IntArrayRef ref(dims);
  check(ref.slice(1).vec() == std::vector<int64_t>{3, 2, 1} && ref.slice(1, 2).vec() == std::vector<int64_t>{3, 2},
        "IntArrayRef::slice(n), slice(n, m)");

  torch::nn::Sequential seq(torch::nn::Linear(3, 4), torch::nn::ReLU(), torch::nn::Linear(4, 2));
  int linears = 0, modules = 0;
  for (const auto& m : *seq) {
    ++modules;
    if (auto* linear = m.ptr()->as<torch::nn::Linear>()) linears += linear->weight.size(0) > 0;
  }
  check(modules == 3 && linears == 2, "range-for over a Sequential, Module::as<holder>()");
  check(seq->ptr<torch::nn::LinearImpl>(2)->weight.size(0) == 2 && seq->size() == 3, "Sequential::ptr<T>(i), size()");
  std::shared_ptr<torch::nn::Module> second = seq->ptr(1);
  check(second->as<torch::nn::ReLUImpl>() != nullptr && second->parameters().empty(), "Sequential::ptr(i) as a Module");
  check(seq[1]->as<torch::nn::LinearImpl>() == nullptr, "Module::as<T>() is null for another type");

  auto w = torch::empty({64, 16, 3, 3});
  torch::nn::init::kaiming_normal_(w, 0, torch::kFanOut, torch::kReLU);
  const double expected_std = std::sqrt(2.0 / (64 * 9));
  check(std::abs(w.std().item<double>() / expected_std - 1) < 0.05, "kaiming_normal_(w, 0, kFanOut, kReLU)");
  check(near(torch::nn::init::calculate_gain(torch::kTanh), 5.0 / 3.0, 1e-12), "calculate_gain(kTanh)");

  auto leaf = torch::ones({2}, torch::requires_grad());
  {
    c10::InferenceMode guard;
    check(c10::InferenceMode::is_enabled() && !(leaf * 2).requires_grad(), "InferenceMode: nothing is recorded");
  }
  check(!c10::InferenceMode::is_enabled() && (leaf * 2).requires_grad(), "InferenceMode ends with its scope");
}

}  // namespace

int main() {
  section("holders", holders);
  section("checks and names", checks_and_names);
  section("tensor methods", tensor_methods);
  section("small types", small_types);
  return finish("porting");
}
