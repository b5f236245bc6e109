// ResNet with basic blocks, CIFAR variant ("resnet18" in models::create): the stem is one 3x3
// convolution (stride 1, 64 channels, no bias), batch norm and relu, without the ImageNet stem's
// 7x7 stride-2 convolution and max pool, so 32x32 images keep their resolution into layer1.
//   conv1 bn1 relu -> layer1 (64) -> layer2 (128, /2) -> layer3 (256, /2) -> layer4 (512, /2)
//   -> avgpool (adaptive, 1x1) -> flatten -> fc(512, num_classes)
// Each layer is an nn::Sequential of BasicBlocks; a layer's first block has stride 2 (layers 2-4)
// and then a 1x1 convolution + batch norm shortcut ("downsample"). Names follow torchvision's
// scheme, so PyTorch state dicts map one-to-one: conv1.weight, bn1.running_mean,
// layer1.0.conv1.weight, layer2.0.downsample.0.weight, layer2.0.downsample.1.weight, fc.weight.
// Initialised as torchvision does: convolutions kaiming_normal_(fan_out, relu), batch norms
// weight 1 and bias 0, fc PyTorch's Linear default. Any image_size works (the pool is adaptive).
//   auto net = models::create("resnet18");   // x [N, 3, 32, 32] -> [N, 10]
#pragma once

#include <array>

#include "cohort/models/model.h"
#include "cohort/nn/activation.h"
#include "cohort/nn/batchnorm.h"
#include "cohort/nn/container.h"
#include "cohort/nn/conv.h"
#include "cohort/nn/linear.h"
#include "cohort/nn/pooling.h"

namespace cohort::models {

// relu(bn2(conv2(relu(bn1(conv1 x)))) + shortcut x), where conv1 is 3x3 with `stride` and the
// shortcut is x itself or, when the stride or channel count changes, downsample = 1x1 conv + bn.
// [N, in_channels, H, W] -> [N, out_channels, ceil(H / stride), ceil(W / stride)].
class BasicBlock : public nn::Module {
 public:
  BasicBlock(int64_t in_channels, int64_t out_channels, int64_t stride);
  Tensor forward(const Tensor& x);

  nn::Conv2d conv1{nullptr};
  nn::BatchNorm2d bn1{nullptr};
  nn::ReLU relu{nullptr};
  nn::Conv2d conv2{nullptr};
  nn::BatchNorm2d bn2{nullptr};
  nn::Sequential downsample{nullptr};  // empty when the shortcut is the identity
};

class ResNet : public Model {
 public:
  // blocks: BasicBlocks per layer; {2, 2, 2, 2} is resnet18, {3, 4, 6, 3} resnet34 (arch() is
  // "resnet" followed by the depth, 2 * sum(blocks) + 2). Throws cohort::Error for a count < 1.
  explicit ResNet(const ModelOptions& options = {}, std::array<int64_t, 4> blocks = {2, 2, 2, 2});
  // [N, in_channels, H, W] -> [N, num_classes]; checks the channel count.
  Tensor forward(const Tensor& x) override;
  std::shared_ptr<Model> create_fresh() const override;

  nn::Conv2d conv1{nullptr};
  nn::BatchNorm2d bn1{nullptr};
  nn::ReLU relu{nullptr};
  nn::Sequential layer1{nullptr}, layer2{nullptr}, layer3{nullptr}, layer4{nullptr};
  nn::AdaptiveAvgPool2d avgpool{nullptr};
  nn::Linear fc{nullptr};

 private:
  std::array<int64_t, 4> blocks_;
};

}  // namespace cohort::models
