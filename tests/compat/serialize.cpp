// The libtorch-port promise for torch::save / torch::load: a model (a TORCH_MODULE holder, a
// Sequential and a shared_ptr), optimizers, a tensor and a vector of tensors are saved to files and to
// streams, then loaded into fresh objects that must equal the originals (compat.h has the rules).
// Each library reads its own files: libtorch writes TorchScript archives, cohort PyTorch's format.
#include "compat.h"

#include <cstdio>
#include <sstream>

using namespace compat;

namespace {

struct NetImpl : torch::nn::Module {
  NetImpl() {
    conv = register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 2, 3)));
    bn = register_module("bn", torch::nn::BatchNorm2d(2));
    fc = register_module("fc", torch::nn::Linear(8, 3));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(bn(conv(x)));
    return fc(x.view({x.size(0), -1}));
  }
  torch::nn::Conv2d conv{nullptr};
  torch::nn::BatchNorm2d bn{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(Net);

// Deterministic, distinct values for every parameter and buffer, so that a fresh module differs.
void fill(torch::nn::Module& m, double scale) {
  torch::NoGradGuard no_grad;
  double k = 1;
  for (auto& p : m.parameters()) {
    p.copy_(torch::arange(p.numel(), torch::kFloat64).view(p.sizes()).mul(scale).add(k).to(p.scalar_type()));
    k += 1;
  }
  for (auto& b : m.buffers())
    if (b.is_floating_point()) b.fill_(scale * k++);
}

bool same_state(torch::nn::Module& a, torch::nn::Module& b) {
  auto pa = a.named_parameters(), pb = b.named_parameters();
  auto ba = a.named_buffers(), bb = b.named_buffers();
  if (pa.size() != pb.size() || ba.size() != bb.size()) return false;
  for (const auto& item : pa)
    if (!pb.contains(item.key()) || !torch::equal(item.value(), pb[item.key()])) return false;
  for (const auto& item : ba)
    if (!bb.contains(item.key()) || !torch::equal(item.value(), bb[item.key()])) return false;
  return true;
}

std::string temp_path(const char* name) { return std::string("compat_serialize_") + name + ".pt"; }

// Two training steps, so the optimizer has state to save.
template <class Optimizer>
void train(Net& net, Optimizer& opt) {
  auto x = torch::linspace(-1, 1, 2 * 16).view({2, 1, 4, 4});
  for (int i = 0; i < 2; ++i) {
    opt.zero_grad();
    net->forward(x).pow(2).sum().backward();
    opt.step();
  }
}

void modules() {
  Net net;
  fill(*net, 0.01);
  const auto path = temp_path("net");
  torch::save(net, path);
  Net fresh;
  check(!same_state(*net, *fresh), "module: a fresh Net differs");
  torch::load(fresh, path);
  check(same_state(*net, *fresh), "module: save/load a TORCH_MODULE holder through a file");
  auto x = torch::linspace(-1, 1, 16).view({1, 1, 4, 4});
  net->eval();
  fresh->eval();
  check(close(net->forward(x), fresh->forward(x)), "module: the loaded Net computes the same output");
  std::remove(path.c_str());

  std::stringstream stream;
  torch::save(net, stream);
  Net from_stream;
  torch::load(from_stream, stream);
  check(same_state(*net, *from_stream), "module: save/load through a stream");

  torch::nn::Sequential seq(torch::nn::Linear(3, 4), torch::nn::ReLU(), torch::nn::Linear(4, 2));
  fill(*seq, 0.5);
  const auto seq_path = temp_path("seq");
  torch::save(seq, seq_path);
  torch::nn::Sequential seq2(torch::nn::Linear(3, 4), torch::nn::ReLU(), torch::nn::Linear(4, 2));
  torch::load(seq2, seq_path);
  check(same_state(*seq, *seq2), "module: save/load a Sequential");
  std::remove(seq_path.c_str());

  auto shared = std::make_shared<NetImpl>();
  fill(*shared, 0.25);
  const auto shared_path = temp_path("shared");
  torch::save(shared, shared_path);
  auto shared2 = std::make_shared<NetImpl>();
  torch::load(shared2, shared_path);
  check(same_state(*shared, *shared2), "module: save/load a std::shared_ptr<NetImpl>");
  std::remove(shared_path.c_str());
}

template <class Optimizer, class Options>
void optimizer_round_trip(const char* name, Options options) {
  Net net;
  fill(*net, 0.01);
  Optimizer opt(net->parameters(), options);
  train(net, opt);
  const auto path = temp_path(name);
  torch::save(opt, path);

  // A second optimizer, same options, over a copy of the trained parameters: loading the state makes
  // the next steps of both the same. (libtorch 1.13 restores the state but not the options.)
  Net net2;
  {
    std::stringstream s;
    torch::save(net, s);
    torch::load(net2, s);
  }
  Optimizer opt2(net2->parameters(), options);
  torch::load(opt2, path);
  train(net, opt);
  train(net2, opt2);
  check(same_state(*net, *net2), std::string(name) + ": after loading the state, training continues identically");
  std::remove(path.c_str());
}

void optimizers() {
  optimizer_round_trip<torch::optim::SGD>("sgd", torch::optim::SGDOptions(0.1).momentum(0.9));
  optimizer_round_trip<torch::optim::Adam>("adam", torch::optim::AdamOptions(0.01).betas({0.8, 0.9}));
}

void tensors() {
  auto t = torch::arange(12, torch::kFloat64).view({3, 4}).t();
  const auto path = temp_path("tensor");
  torch::save(t, path);
  torch::Tensor u;
  torch::load(u, path);
  check(u.scalar_type() == torch::kFloat64 && torch::equal(u, t), "tensor: a transposed float64 tensor");
  std::remove(path.c_str());

  auto existing = torch::zeros({2});
  auto alias = existing;
  std::stringstream s;
  torch::save(torch::tensor({1.0, 2.0, 3.0}), s);
  torch::load(existing, s);
  check(has_sizes(existing, {3}) && existing[2].item<float>() == 3.0f, "tensor: load into a defined tensor");
  check(has_sizes(alias, {3}) && alias[2].item<float>() == 3.0f, "tensor: ... and every handle to it sees the value");

  std::vector<torch::Tensor> list = {torch::ones({2, 2}), torch::tensor({true, false}),
                                     torch::arange(5).to(torch::kInt32), torch::zeros({0, 3})};
  const auto list_path = temp_path("list");
  torch::save(list, list_path);
  std::vector<torch::Tensor> back;
  torch::load(back, list_path);
  bool same = back.size() == list.size();
  for (size_t i = 0; same && i < list.size(); ++i)
    same = back[i].scalar_type() == list[i].scalar_type() && back[i].sizes() == list[i].sizes() && torch::equal(back[i], list[i]);
  check(same, "tensor: a vector of float, bool, int32 and empty tensors");
  std::remove(list_path.c_str());
}

}  // namespace

int main() {
  section("modules", modules);
  section("optimizers", optimizers);
  section("tensors", tensors);
  return finish("serialize");
}
