// The benchmark workloads in cohort, one per process run, under the names bench/workloads_torch.py
// gives the same work in PyTorch; bench/compare runs both and prints the table. W1: the blitz CNN's
// training step; W2: a LeNet epoch on Fashion-MNIST through the DataLoader; W3: grouped convolutions
// and an einsum grouped linear; W4: ResNet-18 training and inference; W5: sgemm and a 3x3 convolution;
// W6: an LSTM and a transformer layer; W7: W1, W4 and W5 in bfloat16 (autocast; the sgemm on bfloat16
// tensors); W8: a DCGAN's training step.
//   workloads <name> <threads> [reps=10] [warmup=2]    (workloads list: the names)
// Prints one line: "<name> threads <t> median_ms <m> reps <r> peak_rss_kb <k>" (peak RSS of the
// whole process, from getrusage, so it includes the library and the data).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <cohort/cohort.h>
#include <cohort/models/model.h>

using namespace cohort;
namespace F = cohort::nn::functional;
using Clock = std::chrono::steady_clock;
using Step = std::function<void()>;

namespace {

// A training step of `net` on fixed random data: forward, cross-entropy, backward, SGD with momentum.
// `autocast`: the forward pass and the loss under bfloat16 autocast, as torch.autocast("cpu") runs them.
Step train_step(std::shared_ptr<nn::Module> net, std::function<Tensor(const Tensor&)> forward, Shape input,
                int64_t classes, bool autocast = false) {
  auto opt = std::make_shared<optim::SGD>(net->parameters(), optim::SGDOptions(0.01).momentum(0.9));
  Tensor x = randn(input), y = randint(0, classes, {input[0]});
  return [=] {
    opt->zero_grad();
    Tensor loss;
    {
      autocast::AutocastGuard region(kBFloat16, autocast);
      loss = F::cross_entropy(forward(x), y);
    }
    loss.backward();
    opt->step();
  };
}

Step zoo_train(const std::string& arch, Shape input, bool autocast = false) {
  std::shared_ptr<models::Model> net = models::create(arch, models::ModelOptions().in_channels(input[1]).image_size(input[2]));
  net->train();
  return train_step(net, [net](const Tensor& x) { return net->forward(x); }, input, 10, autocast);
}

Step resnet_inference(int64_t batch, bool autocast = false) {
  std::shared_ptr<models::Model> net = models::create("resnet18");
  net->eval();
  Tensor x = randn({batch, 3, 32, 32});
  return [=] {
    NoGradGuard no_grad;
    autocast::AutocastGuard region(kBFloat16, autocast);
    net->forward(x);
  };
}

// The grouped bottleneck of examples/grouped_branches.cpp's blog post (groups 12, group_channels 64,
// at 14x14): squeeze 1x1 to 12 x 32 channels, 3x3 grouped, expand 1x1 grouped to 12 x 64, batch norm
// and ReLU between.
struct GroupedBottleneck : nn::Module {
  GroupedBottleneck()
      : conv1(nn::Conv2dOptions(64, 384, 1).bias(false)), bn1(384),
        conv2(nn::Conv2dOptions(384, 384, 3).padding(1).groups(12).bias(false)), bn2(384),
        conv3(nn::Conv2dOptions(384, 768, 1).groups(12).bias(false)), bn3(768) {
    register_module("conv1", conv1), register_module("bn1", bn1), register_module("conv2", conv2);
    register_module("bn2", bn2), register_module("conv3", conv3), register_module("bn3", bn3);
  }
  Tensor forward(const Tensor& x) {
    Tensor h = relu(bn1(conv1(x)));
    h = relu(bn2(conv2(h)));
    return relu(bn3(conv3(h)));
  }
  nn::Conv2d conv1;
  nn::BatchNorm2d bn1;
  nn::Conv2d conv2;
  nn::BatchNorm2d bn2;
  nn::Conv2d conv3;
  nn::BatchNorm2d bn3;
};

// The same computation as the blog post first wrote it: 12 branches of ordinary convolutions,
// concatenated.
struct SerialBranches : nn::Module {
  SerialBranches() {
    for (int g = 0; g < 12; ++g) {
      auto branch = nn::Sequential(nn::Conv2d(nn::Conv2dOptions(64, 32, 1).bias(false)), nn::BatchNorm2d(32), nn::ReLU(),
                                   nn::Conv2d(nn::Conv2dOptions(32, 32, 3).padding(1).bias(false)), nn::BatchNorm2d(32),
                                   nn::ReLU(), nn::Conv2d(nn::Conv2dOptions(32, 64, 1).bias(false)), nn::BatchNorm2d(64),
                                   nn::ReLU());
      register_module("branch" + std::to_string(g), branch);
      branches.push_back(branch);
    }
  }
  Tensor forward(const Tensor& x) {
    std::vector<Tensor> outs;
    for (auto& b : branches) outs.push_back(b->forward(x));
    return cat(outs, 1);
  }
  std::vector<nn::Sequential> branches;
};

template <class Net>
Step block_train(int64_t batch) {
  auto net = std::make_shared<Net>();
  Tensor x = randn({batch, 64, 14, 14});
  return [=] { net->forward(x).sum().backward(); };
}

// The blog post's einsum grouped linear, 'bgi,gio->bgo': batch 8, 12 groups, 64 -> 32, forward and
// backward.
Step einsum_group_linear() {
  Tensor w = randn({12, 64, 32}).requires_grad_(true);
  Tensor x = randn({8, 12, 64});
  return [=] { einsum("bgi,gio->bgo", {x, w}).sum().backward(); };
}

Step sgemm(int64_t n, DType dtype = kFloat32) {
  Tensor a = randn({n, n}).to(dtype), b = randn({n, n}).to(dtype);
  return [=] { mm(a, b); };
}

// 3x3 convolution 64 -> 64 on 8x64x56x56 (padding 1): forward alone, or forward and backward.
Step conv3x3(bool backward) {
  auto conv = std::make_shared<nn::Conv2dImpl>(nn::Conv2dOptions(64, 64, 3).padding(1).bias(false));
  Tensor x = randn({8, 64, 56, 56}).requires_grad_(backward);
  if (!backward) return [=] {
    NoGradGuard no_grad;
    conv->forward(x);
  };
  return [=] { conv->forward(x).sum().backward(); };
}

// A 2-layer LSTM, hidden 512, over 64 steps of a batch of 32 (input 512): forward and backward.
Step lstm_train() {
  auto lstm = std::make_shared<nn::LSTMImpl>(nn::LSTMOptions(512, 512).num_layers(2));
  Tensor x = randn({64, 32, 512});
  return [=] { std::get<0>(lstm->forward(x)).sum().backward(); };
}

// One transformer encoder layer (d_model 512, 8 heads, feed-forward 2048, dropout 0) on 64 steps of
// a batch of 32 with a causal mask: forward and backward.
Step transformer_layer_train() {
  auto layer = std::make_shared<nn::TransformerEncoderLayerImpl>(
      nn::TransformerEncoderLayerOptions(512, 8).dim_feedforward(2048).dropout(0.0));
  Tensor x = randn({64, 32, 512});
  Tensor mask = nn::generate_square_subsequent_mask(64);
  return [=] { layer->forward(x, mask).sum().backward(); };
}

// The libtorch DCGAN example's networks and training step on 28x28 single-channel images, batch `batch`,
// with a fixed random "real" batch in [-1, 1] in place of MNIST: the discriminator's update on the real
// batch (labels drawn in [0.8, 1]) and a generated one (labels 0), then the generator's (labels 1), each
// with Adam (lr 2e-4, betas 0.5, 0.999) on binary cross-entropy. No convolution has a bias, as there.
Step dcgan_train(int64_t batch) {
  using nn::BatchNorm2d, nn::Conv2d, nn::Conv2dOptions, nn::ConvTranspose2d, nn::ConvTranspose2dOptions;
  auto generator = std::make_shared<nn::SequentialImpl>(
      ConvTranspose2d(ConvTranspose2dOptions(100, 256, 4).bias(false)), BatchNorm2d(256), nn::ReLU(),  // 4x4
      ConvTranspose2d(ConvTranspose2dOptions(256, 128, 3).stride(2).padding(1).bias(false)), BatchNorm2d(128),
      nn::ReLU(),  // 7x7
      ConvTranspose2d(ConvTranspose2dOptions(128, 64, 4).stride(2).padding(1).bias(false)), BatchNorm2d(64),
      nn::ReLU(),  // 14x14
      ConvTranspose2d(ConvTranspose2dOptions(64, 1, 4).stride(2).padding(1).bias(false)), nn::Tanh());  // 28x28
  const auto leaky = nn::LeakyReLUOptions().negative_slope(0.2);
  auto discriminator = std::make_shared<nn::SequentialImpl>(
      Conv2d(Conv2dOptions(1, 64, 4).stride(2).padding(1).bias(false)), nn::LeakyReLU(leaky),  // 14x14
      Conv2d(Conv2dOptions(64, 128, 4).stride(2).padding(1).bias(false)), BatchNorm2d(128), nn::LeakyReLU(leaky),
      Conv2d(Conv2dOptions(128, 256, 4).stride(2).padding(1).bias(false)), BatchNorm2d(256),
      nn::LeakyReLU(leaky),  // 3x3
      Conv2d(Conv2dOptions(256, 1, 3).bias(false)), nn::Sigmoid());  // 1x1
  auto adam = [](const std::shared_ptr<nn::SequentialImpl>& net) {
    return std::make_shared<optim::Adam>(net->parameters(), optim::AdamOptions(2e-4).betas({0.5, 0.999}));
  };
  auto g_opt = adam(generator), d_opt = adam(discriminator);
  Tensor real = rand({batch, 1, 28, 28}) * 2 - 1;
  return [=] {
    auto d = [&](const Tensor& images) { return discriminator->forward(images).reshape({batch}); };
    d_opt->zero_grad();
    F::binary_cross_entropy(d(real), empty({batch}).uniform_(0.8, 1.0)).backward();
    Tensor fake = generator->forward(randn({batch, 100, 1, 1}));
    F::binary_cross_entropy(d(fake.detach()), zeros({batch})).backward();
    d_opt->step();
    g_opt->zero_grad();
    F::binary_cross_entropy(d(fake), ones({batch})).backward();
    g_opt->step();
  };
}

// Fashion-MNIST through the DataLoader, one epoch of LeNet training with the trainer's recipe.
Step lenet_epoch() {
  namespace tf = data::transforms;
  auto train = std::make_shared<data::FashionMNIST>("/usr/share/datasets/fashion-mnist", true);
  auto transform = tf::Compose({tf::ToTensor(), tf::Normalize({0.2860}, {0.3530})});
  auto loader = std::make_shared<data::DataLoader>(train, data::DataLoaderOptions(64).shuffle(true).seed(0).transform(transform));
  std::shared_ptr<models::Model> net = models::create("lenet", models::ModelOptions().in_channels(1).image_size(28));
  auto opt = std::make_shared<optim::SGD>(net->parameters(), optim::SGDOptions(0.01).momentum(0.9));
  return [=] {
    for (const data::Batch& batch : *loader) {  // one loop is one epoch
      opt->zero_grad();
      F::cross_entropy(net->forward(batch.data), batch.target).backward();
      opt->step();
    }
  };
}

const std::map<std::string, std::function<Step()>>& workloads() {
  static const std::map<std::string, std::function<Step()>> all = {
      {"W1_blitz_train_b4", [] { return zoo_train("blitz-cnn", {4, 3, 32, 32}); }},
      {"W1_blitz_train_b64", [] { return zoo_train("blitz-cnn", {64, 3, 32, 32}); }},
      {"W1_blitz_train_b256", [] { return zoo_train("blitz-cnn", {256, 3, 32, 32}); }},
      {"W2_lenet_fashion_epoch", lenet_epoch},
      {"W3_grouped_bottleneck_b8", [] { return block_train<GroupedBottleneck>(8); }},
      {"W3_serial_branches_b8", [] { return block_train<SerialBranches>(8); }},
      {"W3_einsum_group_linear", einsum_group_linear},
      {"W4_resnet18_train_b32", [] { return zoo_train("resnet18", {32, 3, 32, 32}); }},
      {"W4_resnet18_infer_b128", [] { return resnet_inference(128); }},
      {"W5_sgemm_512", [] { return sgemm(512); }},
      {"W5_sgemm_1024", [] { return sgemm(1024); }},
      {"W5_sgemm_2048", [] { return sgemm(2048); }},
      {"W5_conv3x3_64_fwd", [] { return conv3x3(false); }},
      {"W5_conv3x3_64_fwd_bwd", [] { return conv3x3(true); }},
      {"W6_lstm_2x512_s64_b32", lstm_train},
      {"W6_transformer_layer_d512_s64_b32", transformer_layer_train},
      {"W7_bf16_blitz_train_b256", [] { return zoo_train("blitz-cnn", {256, 3, 32, 32}, true); }},
      {"W7_bf16_resnet18_train_b32", [] { return zoo_train("resnet18", {32, 3, 32, 32}, true); }},
      {"W7_bf16_resnet18_infer_b128", [] { return resnet_inference(128, true); }},
      {"W7_bf16_sgemm_2048", [] { return sgemm(2048, kBFloat16); }},
      {"W8_dcgan_train_b64", [] { return dcgan_train(64); }},
  };
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "list") {
    for (const auto& [name, make] : workloads()) std::printf("%s\n", name.c_str());
    return 0;
  }
  if (argc < 3 || !workloads().count(argv[1])) {
    std::fprintf(stderr, "usage: workloads <name> <threads> [reps=10] [warmup=2]; `workloads list` names them\n");
    return 2;
  }
  const std::string name = argv[1];
  const int threads = std::atoi(argv[2]);
  const int reps = argc > 3 ? std::atoi(argv[3]) : 10;
  const int warmup = argc > 4 ? std::atoi(argv[4]) : 2;
  set_num_threads(threads);
  manual_seed(0);
  Step step = workloads().at(name)();
  for (int i = 0; i < warmup; ++i) step();  // oneDNN primitives are created on first use
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    auto t0 = Clock::now();
    step();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("%s threads %d median_ms %.4f reps %d peak_rss_kb %ld\n", name.c_str(), threads, ms[ms.size() / 2], reps,
              usage.ru_maxrss);
  return 0;
}
