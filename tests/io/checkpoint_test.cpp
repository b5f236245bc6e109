// io::save / io::load of modules and optimizers (through safetensors).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "io/io_test_util.h"
#include "support/error_of.h"

#include "cohort/io/checkpoint.h"
#include "cohort/io/safetensors.h"
#include "cohort/nn/linear.h"
#include "cohort/nn/module.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/reduction.h"
#include "cohort/optim/adam.h"
#include "cohort/optim/sgd.h"

using namespace cohort;
using namespace cohort::testing;
using ::testing::HasSubstr;

namespace {

struct Net : nn::Module {
  explicit Net(int64_t hidden = 3) : fc1(nn::LinearOptions(4, hidden)), fc2(hidden, 2) {
    register_module("fc1", fc1);
    register_module("fc2", fc2);
    register_buffer("steps", zeros({1}, TensorOptions(kInt64)));
  }
  Tensor forward(const Tensor& x) { return fc2->forward(fc1->forward(x).relu()); }
  nn::Linear fc1, fc2;
};

class Checkpoint : public ScratchDir {};

TEST_F(Checkpoint, ModuleRoundTrip) {
  auto a = std::make_shared<Net>();
  a->named_buffers()["steps"].fill_(7);
  io::save(*a, path("net.safetensors"));
  auto b = std::make_shared<Net>();
  EXPECT_FALSE(b->fc1->weight.equal(a->fc1->weight));
  io::load(*b, path("net.safetensors"));
  auto sa = a->state_dict(), sb = b->state_dict();
  ASSERT_EQ(sa.size(), sb.size());
  for (const auto& item : sa) EXPECT_TRUE(same_tensor(sb[item.key()], item.value())) << item.key();
  EXPECT_TRUE(b->fc1->weight.requires_grad());  // values copied into the existing parameters
  // A plain weights file: the keys are the dotted state-dict names, no metadata.
  EXPECT_EQ(io::load_safetensors(path("net.safetensors")).size(), 5u);
  EXPECT_TRUE(io::load_safetensors_metadata(path("net.safetensors")).empty());
}

TEST_F(Checkpoint, ModuleLoadErrorsListKeys) {
  auto small = std::make_shared<Net>(3);
  io::save(*small, path("net.safetensors"));
  auto big = std::make_shared<Net>(5);
  const std::string e = error_of([&] { io::load(*big, path("net.safetensors")); });
  EXPECT_THAT(e, HasSubstr("fc1.weight"));
  EXPECT_THAT(e, HasSubstr("load_state_dict"));
  io::save_safetensors(path("partial.safetensors"), {{"fc2.bias", ones({2})}, {"extra", ones({1})}});
  const std::string e2 = error_of([&] { io::load(*small, path("partial.safetensors")); });
  EXPECT_THAT(e2, HasSubstr("extra"));
  EXPECT_THAT(e2, HasSubstr("fc1.weight"));
  io::save_safetensors(path("partial.safetensors"), {{"fc2.bias", ones({2})}});
  io::load(*small, path("partial.safetensors"), /*strict=*/false);
  EXPECT_TRUE(small->fc2->bias.equal(ones({2})));
}

TEST_F(Checkpoint, OptimizerRoundTrip) {
  auto make_params = [] { return std::vector<Tensor>{arange(6, TensorOptions(kFloat64)).reshape({2, 3}).requires_grad_(),
                                                     ones({3}, TensorOptions(kFloat64)).requires_grad_()}; };
  auto pa = make_params(), pb = make_params();
  optim::Adam a(pa, optim::AdamOptions(0.1).betas({0.8, 0.9}).amsgrad(true));
  optim::Adam b(pb, optim::AdamOptions(0.5));
  auto step = [](optim::Optimizer& opt, std::vector<Tensor>& ps) {
    opt.zero_grad();
    ((ps[0] * ps[0]).sum() + (ps[1] * 3).sum()).backward();
    opt.step();
  };
  for (int i = 0; i < 3; ++i) step(a, pa);
  for (size_t i = 0; i < pa.size(); ++i) pb[i].detach().copy_(pa[i].detach());
  io::save(a, path("opt.safetensors"));
  const io::Metadata md = io::load_safetensors_metadata(path("opt.safetensors"));
  EXPECT_EQ(md.at("cohort.optimizer"), "Adam");
  EXPECT_THAT(md.at("cohort.scalars"), HasSubstr("\"param_groups.0.lr\":0.1"));
  io::load(b, path("opt.safetensors"));

  const auto sa = a.state_dict(), sb = b.state_dict();
  EXPECT_EQ(sa.scalars, sb.scalars);
  ASSERT_EQ(sa.tensors.size(), sb.tensors.size());
  for (const auto& [k, t] : sa.tensors) EXPECT_TRUE(same_tensor(sb.tensors.at(k), t)) << k;
  // Both continue identically.
  step(a, pa);
  step(b, pb);
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_TRUE(pa[i].equal(pb[i])) << i;
}

TEST_F(Checkpoint, OptimizerLoadErrors) {
  std::vector<Tensor> p = {ones({2}).requires_grad_()};
  optim::Adam adam(p, optim::AdamOptions(0.1));
  optim::SGD sgd(p, optim::SGDOptions(0.1));
  io::save(adam, path("adam.safetensors"));
  EXPECT_THAT(error_of([&] { io::load(sgd, path("adam.safetensors")); }),
              HasSubstr("the file holds the state of a Adam optimizer, got a SGD"));
  io::save_safetensors(path("w.safetensors"), {{"a", ones({1})}});
  EXPECT_THAT(error_of([&] { io::load(adam, path("w.safetensors")); }), HasSubstr("no optimizer state in this file"));
  io::save_safetensors(path("bad.safetensors"), std::map<std::string, Tensor>{},
                       {{"cohort.optimizer", "Adam"}, {"cohort.scalars", "{\"x\": \"y\"}"}});
  EXPECT_THAT(error_of([&] { io::load(adam, path("bad.safetensors")); }), HasSubstr("scalar 'x' must be a number"));
  std::vector<Tensor> q = {ones({2}).requires_grad_(), ones({2}).requires_grad_()};
  optim::Adam two(q, optim::AdamOptions(0.1));
  EXPECT_THAT(error_of([&] { io::load(two, path("adam.safetensors")); }), HasSubstr("does not fit this optimizer"));
}

}  // namespace

TEST_F(Checkpoint, AFlippedBitInTheTensorBytesIsReportedAsCorrupt) {
  auto net = std::make_shared<Net>();
  const fs::path path = this->path("ckpt.safetensors");
  io::save_checkpoint(path, *net, nullptr, {{"step", "1"}});
  EXPECT_EQ(io::load_safetensors_metadata(path).at(io::kChecksumKey).size(), 8u);
  std::string bytes = read_bytes(path);
  bytes[bytes.size() - 5] ^= 0x04;  // inside the last tensor's bytes: a value that still looks plausible
  write_bytes(path, bytes);
  auto other = std::make_shared<Net>();
  const std::string error = error_of([&] { io::load_checkpoint(path, *other, nullptr); });
  EXPECT_THAT(error, HasSubstr(path.string()));
  EXPECT_THAT(error, HasSubstr("corrupt"));
  EXPECT_THAT(error_of([&] { io::load_safetensors(path); }), HasSubstr("corrupt"));
}

// Other modules beside the main one ("ema" here): stored as "<name>/<key>", restored with the main
// one or alone; a file lacking one asked for, or whose copy does not fit, changes nothing.
TEST_F(Checkpoint, OtherModulesRideAlong) {
  auto net = std::make_shared<Net>(), average = std::make_shared<Net>();
  const fs::path path = this->path("ckpt.safetensors");
  io::save_checkpoint(path, *net, nullptr, {{"step", "1"}}, {{"ema", average.get()}});
  EXPECT_TRUE(io::load_safetensors(path).contains("ema/fc1.weight"));
  auto net2 = std::make_shared<Net>(), average2 = std::make_shared<Net>();
  io::load_checkpoint(path, *net2, nullptr, {{"ema", average2.get()}});
  EXPECT_TRUE(net2->fc1->weight.equal(net->fc1->weight));
  EXPECT_TRUE(average2->fc1->weight.equal(average->fc1->weight));
  // Left unread when not asked for; alone, into any module that fits.
  auto net3 = std::make_shared<Net>();
  EXPECT_NO_THROW(io::load_checkpoint(path, *net3, nullptr));
  io::load_checkpoint_module(path, "ema", *net3);
  EXPECT_TRUE(net3->fc1->weight.equal(average->fc1->weight));
  io::load_checkpoint_module(path, "model", *net3);
  EXPECT_TRUE(net3->fc1->weight.equal(net->fc1->weight));

  auto wide = std::make_shared<Net>(5);
  const Tensor before = net3->fc1->weight.clone();
  EXPECT_THAT(error_of([&] { io::load_checkpoint(path, *net3, nullptr, {{"ema", wide.get()}}); }),
              HasSubstr("load_checkpoint: " + path.string() + ": module 'ema': "));
  EXPECT_TRUE(net3->fc1->weight.equal(before));
  EXPECT_THAT(error_of([&] { io::load_checkpoint(path, *net3, nullptr, {{"teacher", average2.get()}}); }),
              HasSubstr("no module 'teacher' in this file"));
  EXPECT_THAT(error_of([&] { io::load_checkpoint_module(path, "teacher", *net3); }),
              HasSubstr("load_checkpoint_module: " + path.string() + ": no module 'teacher' in this file"));
  for (const char* bad : {"", "model", "optimizer", "a/b"})
    EXPECT_THAT(error_of([&] { io::save_checkpoint(path, *net, nullptr, {}, {{bad, average.get()}}); }),
                HasSubstr("a module's name must be non-empty, without '/', and neither 'model' nor 'optimizer'"));
}

TEST_F(Checkpoint, FilesWithoutAChecksumStillLoad) {
  // Written by Python's safetensors (tests/fixtures/io): no checksum in their metadata.
  EXPECT_EQ(io::load_safetensors_metadata(io_fixture("reference.safetensors")).count(io::kChecksumKey), 0u);
  EXPECT_NO_THROW(io::load_safetensors(io_fixture("reference.safetensors")));
}
