// Memory formats against PyTorch 1.13 (tests/fixtures/memory_format.json, written by
// generate_memory_format.py): the strides of each format and is_contiguous per format for strided
// views; the format suggested by libtorch's rule (tests/compat/channels_last.cpp checks the same
// cases against libtorch's C++); then the layout kept or changed by contiguous, clone, to and the
// factories, gradients through a change of layout, ops on channels-last inputs, and the errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <sstream>
#include <string>

#include "cohort/ops/convolution.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/interpolate.h"
#include "cohort/ops/normalization.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/pooling.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/shape.h"
#include "support/error_of.h"
#include "support/pytorch_fixture.h"

namespace cohort::testing {
namespace {

using ::testing::HasSubstr;

MemoryFormat format_named(const std::string& name) {
  if (name == "ChannelsLast") return MemoryFormat::ChannelsLast;
  if (name == "ChannelsLast3d") return MemoryFormat::ChannelsLast3d;
  return MemoryFormat::Contiguous;
}

std::vector<int64_t> ints(const nlohmann::json& j) { return j.get<std::vector<int64_t>>(); }

const Shape kChannelsLast{60, 1, 15, 3};  // [2, 3, 4, 5] channels-last

TEST(MemoryFormat, StridesOfEachFormatArePyTorchs) {
  for (const auto& c : load_fixture("memory_format.json").at("layouts")) {
    const Shape sizes = ints(c.at("sizes"));
    const MemoryFormat format = format_named(c.at("format"));
    SCOPED_TRACE(::testing::Message() << format << " " << IntArrayRef(sizes));
    EXPECT_EQ(memory_format_strides(sizes, format, "test"), ints(c.at("strides")));
    Tensor t = empty(sizes, TensorOptions().memory_format(format));
    EXPECT_EQ(t.strides().vec(), ints(c.at("strides")));
    EXPECT_TRUE(t.is_contiguous(format));
    EXPECT_EQ(empty(sizes, {}, format).strides().vec(), ints(c.at("strides")));
  }
}

TEST(MemoryFormat, StridesAreReadAsPyTorchReadsThem) {
  for (const auto& c : load_fixture("memory_format.json").at("strides")) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    Tensor t = empty_strided(ints(c.at("sizes")), ints(c.at("strides")));
    EXPECT_EQ(t.is_contiguous(), c.at("is_contiguous").get<bool>());
    EXPECT_EQ(t.is_contiguous(MemoryFormat::Contiguous), c.at("is_contiguous").get<bool>());
    EXPECT_EQ(t.is_contiguous(MemoryFormat::ChannelsLast), c.at("is_channels_last").get<bool>());
    EXPECT_EQ(t.is_contiguous(MemoryFormat::ChannelsLast3d), c.at("is_channels_last_3d").get<bool>());
  }
}

TEST(MemoryFormat, SuggestionsOfDenseAndAmbiguousLayouts) {
  Tensor x = empty({2, 3, 4, 5});
  EXPECT_EQ(x.suggest_memory_format(), MemoryFormat::Contiguous);
  EXPECT_EQ(x.contiguous(MemoryFormat::ChannelsLast).suggest_memory_format(), MemoryFormat::ChannelsLast);
  EXPECT_EQ(empty({2, 3, 4, 5, 6}).contiguous(MemoryFormat::ChannelsLast3d).suggest_memory_format(),
            MemoryFormat::ChannelsLast3d);
  // [N, 1, 1, 1] and broadcast channels: ambiguous, read as contiguous.
  EXPECT_EQ(empty({4, 1, 1, 1}).suggest_memory_format(), MemoryFormat::Contiguous);
  EXPECT_EQ(empty({2, 1, 4, 5}).expand({2, 3, 4, 5}).suggest_memory_format(), MemoryFormat::Contiguous);
  // A channels-last tensor narrowed along H keeps strides in channels-last order without being dense;
  // sliced with a step along W, its W stride outgrows H's, which reads as contiguous (libtorch's rule).
  Tensor narrowed = x.contiguous(MemoryFormat::ChannelsLast).narrow(2, 1, 2);
  EXPECT_EQ(narrowed.suggest_memory_format(), MemoryFormat::ChannelsLast);
  EXPECT_EQ(narrowed.suggest_memory_format(/*channels_last_strides_exact_match=*/true), MemoryFormat::Contiguous);
  EXPECT_TRUE(empty_like(narrowed).is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_EQ(x.contiguous(MemoryFormat::ChannelsLast).slice(3, 0, 5, 2).suggest_memory_format(),
            MemoryFormat::Contiguous);
  EXPECT_EQ(empty({2, 3, 4, 5, 6}).contiguous(MemoryFormat::ChannelsLast3d).narrow(3, 0, 2).suggest_memory_format(),
            MemoryFormat::ChannelsLast3d);
  EXPECT_EQ(empty({3, 4}).suggest_memory_format(), MemoryFormat::Contiguous);
}

TEST(MemoryFormat, ContiguousRoundTripsAndKeepsValues) {
  Tensor x = randn({2, 3, 4, 5}, kFloat64);
  Tensor cl = x.contiguous(MemoryFormat::ChannelsLast);
  EXPECT_EQ(cl.strides().vec(), kChannelsLast);
  EXPECT_FALSE(cl.is_contiguous());
  EXPECT_TRUE(cl.is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_TRUE(cl.contiguous(MemoryFormat::ChannelsLast).is_same(cl));  // already so: no copy
  EXPECT_TRUE(x.contiguous(MemoryFormat::Contiguous).is_same(x));
  EXPECT_EQ(max_abs_diff(cl, x), 0);
  Tensor back = cl.contiguous();
  EXPECT_TRUE(back.is_contiguous());
  EXPECT_EQ(max_abs_diff(back, x), 0);
  // The same bytes as PyTorch's permute(0, 2, 3, 1).contiguous().
  Tensor nhwc = x.permute({0, 2, 3, 1}).contiguous();
  EXPECT_EQ(std::memcmp(nhwc.data_ptr(), cl.data_ptr(), nhwc.nbytes()), 0);
}

TEST(MemoryFormat, CloneToAndLikeFactoriesPreserveChannelsLast) {
  Tensor cl = randn({2, 3, 4, 5}).contiguous(MemoryFormat::ChannelsLast);
  EXPECT_EQ(cl.clone().strides().vec(), kChannelsLast);
  EXPECT_EQ(clone(cl).strides().vec(), kChannelsLast);
  EXPECT_TRUE(cl.clone(MemoryFormat::Contiguous).is_contiguous());
  EXPECT_EQ(max_abs_diff(cl.clone(MemoryFormat::Contiguous), cl), 0);
  EXPECT_EQ(cl.to(kFloat64).strides().vec(), kChannelsLast);
  EXPECT_EQ(max_abs_diff(cl.to(kFloat64), cl), 0);
  EXPECT_TRUE(cl.to(kFloat64, false, false, MemoryFormat::Contiguous).is_contiguous());
  Tensor relaid = cl.to(kFloat32, false, false, MemoryFormat::Contiguous);
  EXPECT_TRUE(relaid.is_contiguous());  // same dtype, another layout: a copy
  EXPECT_TRUE(cl.to(kFloat32).is_same(cl));
  Tensor x = randn({2, 3, 4, 5});
  EXPECT_TRUE(x.to(TensorOptions(kFloat32).memory_format(MemoryFormat::ChannelsLast)).is_contiguous(
      MemoryFormat::ChannelsLast));
  for (const Tensor& t : {empty_like(cl), zeros_like(cl), ones_like(cl), full_like(cl, 2), rand_like(cl),
                          randn_like(cl), randint_like(cl, 0, 5)})
    EXPECT_EQ(t.strides().vec(), kChannelsLast);
  EXPECT_EQ(zeros_like(cl).sum().item<double>(), 0);
  EXPECT_EQ(full_like(cl, 2).sum().item<double>(), 240);
  EXPECT_TRUE(zeros_like(cl, TensorOptions().memory_format(MemoryFormat::Contiguous)).is_contiguous());
  EXPECT_TRUE(zeros_like(x).is_contiguous());  // a contiguous model stays contiguous
  // A transposed matrix's clone is contiguous, as cohort's always were (only channels-last is kept).
  EXPECT_TRUE(randn({3, 4}).t().clone().is_contiguous());
}

TEST(MemoryFormat, FactoriesTakeTheFormatInTheirOptions) {
  const TensorOptions cl = TensorOptions(kFloat64).memory_format(MemoryFormat::ChannelsLast);
  Tensor z = zeros({2, 3, 4, 5}, cl), o = ones({2, 3, 4, 5}, cl), f = full({2, 3, 4, 5}, 1.5, cl);
  Tensor r = rand({2, 3, 4, 5}, cl.requires_grad(true));
  for (const Tensor& t : {z, o, f, r}) EXPECT_EQ(t.strides().vec(), kChannelsLast);
  EXPECT_EQ(z.sum().item<double>(), 0);
  EXPECT_EQ(o.sum().item<double>(), 120);
  EXPECT_EQ(f.sum().item<double>(), 180);
  EXPECT_TRUE(r.is_leaf());
  EXPECT_TRUE(r.requires_grad());
  EXPECT_EQ(r.dtype(), kFloat64);
}

TEST(MemoryFormat, GradientsFlowThroughAChangeOfLayout) {
  Tensor x = randn({2, 3, 4, 5}, TensorOptions(kFloat64).requires_grad(true));
  Tensor w = randn({2, 3, 4, 5}, kFloat64);
  (x.contiguous(MemoryFormat::ChannelsLast) * w).sum().backward();
  EXPECT_EQ(max_abs_diff(x.grad(), w), 0);
  Tensor y = randn({2, 3, 4, 5}, TensorOptions(kFloat64).requires_grad(true));
  (y.to(kFloat32, false, false, MemoryFormat::ChannelsLast).to(kFloat64) * w).sum().backward();
  EXPECT_EQ(max_abs_diff(y.grad(), w.to(kFloat32).to(kFloat64)), 0);  // through float32 and back
}

// Every op reads a channels-last input by its logical indices: the values and gradients are those
// of the contiguous input.
TEST(MemoryFormat, OpsOnChannelsLastInputsMatchContiguousOnes) {
  Tensor x = randn({2, 4, 6, 6}, kFloat64), weight = randn({5, 4, 3, 3}, kFloat64), bias = randn({5}, kFloat64);
  Tensor mean = randn({4}, kFloat64), var = rand({4}, kFloat64) + 0.5;
  auto run = [&](const Tensor& input) {
    Tensor in = input.detach().requires_grad_(true);
    Tensor conv = conv2d(in, weight, bias, 1, 1);
    Tensor pooled = max_pool2d(relu(in), {2, 2}) + avg_pool2d(in, {2, 2});
    Tensor normed = batch_norm(in, Tensor(), Tensor(), mean, var, false, 0.1, 1e-5);
    Tensor up = upsample_bilinear2d(in, {9, 9}, false);
    Tensor out = conv.sum() + (pooled * pooled).sum() + normed.pow(3).sum() + up.sin().sum() +
                 adaptive_avg_pool2d(in, {1, 1}).flatten(1).sum() + (in * in).sum();
    out.backward();
    return std::vector<Tensor>{conv, pooled, normed, up, out, in.grad()};
  };
  auto plain = run(x), cl = run(x.contiguous(MemoryFormat::ChannelsLast));
  for (size_t i = 0; i < plain.size(); ++i) EXPECT_LT(max_abs_diff(plain[i], cl[i]), 1e-12) << "output " << i;
}

TEST(MemoryFormat, ErrorsNameTheOpTheFormatAndTheShape) {
  Tensor m = randn({3, 4});
  EXPECT_THAT(error_of([&] { m.contiguous(MemoryFormat::ChannelsLast); }),
              HasSubstr("contiguous: ChannelsLast needs a 4-d tensor ([N, C, H, W]), got sizes [3, 4]"));
  EXPECT_THAT(error_of([&] { randn({2, 3, 4, 5}).contiguous(MemoryFormat::ChannelsLast3d); }),
              HasSubstr("contiguous: ChannelsLast3d needs a 5-d tensor ([N, C, D, H, W]), got sizes [2, 3, 4, 5]"));
  EXPECT_THAT(error_of([&] { m.contiguous(MemoryFormat::Preserve); }),
              HasSubstr("contiguous: Preserve is no layout"));
  EXPECT_THAT(error_of([&] { m.is_contiguous(MemoryFormat::Preserve); }),
              HasSubstr("is_contiguous: Preserve names no layout"));
  EXPECT_THAT(error_of([&] { empty({3, 4}, TensorOptions().memory_format(MemoryFormat::ChannelsLast)); }),
              HasSubstr("empty: ChannelsLast needs a 4-d tensor"));
  EXPECT_THAT(error_of([&] { empty({3, 4}, {}, MemoryFormat::Preserve); }), HasSubstr("empty: Preserve names no layout"));
  EXPECT_THAT(error_of([&] {
                empty({2, 3, 4, 5}, TensorOptions().memory_format(MemoryFormat::ChannelsLast), MemoryFormat::ChannelsLast);
              }),
              HasSubstr("empty: the memory format is given twice"));
  EXPECT_THAT(error_of([&] { m.to(kFloat64, false, false, MemoryFormat::ChannelsLast); }),
              HasSubstr("to: ChannelsLast needs a 4-d tensor"));
  // A 2-d tensor is simply not channels-last, as in PyTorch.
  EXPECT_FALSE(m.is_contiguous(MemoryFormat::ChannelsLast));
}

TEST(MemoryFormat, PrintsAsLibtorchNamesIt) {
  std::ostringstream os;
  os << MemoryFormat::Contiguous << " " << MemoryFormat::Preserve << " " << MemoryFormat::ChannelsLast << " "
     << MemoryFormat::ChannelsLast3d;
  EXPECT_EQ(os.str(), "Contiguous Preserve ChannelsLast ChannelsLast3d");
  EXPECT_EQ(get_contiguous_memory_format(), MemoryFormat::Contiguous);
}

}  // namespace
}  // namespace cohort::testing
