// ResNets as torchvision builds them ("resnet18", "resnet34", "resnet50" in models::create), with
// the stem chosen for the image size:
//   - ImageNet stem (image_size >= 64, torchvision's architecture exactly): a 7x7 stride-2
//     convolution, batch norm, relu and a 3x3 stride-2 max pool, so a 224x224 photo reaches layer1
//     at 56x56;
//   - CIFAR stem (image_size < 64): one 3x3 stride-1 convolution, batch norm and relu, no max pool,
//     so 32x32 images keep their resolution into layer1 (the ImageNet stem would leave 8x8).
// ResNetStem::ImageNet / ::Cifar force one. Then
//   layer1 (64) -> layer2 (128, /2) -> layer3 (256, /2) -> layer4 (512, /2)
//   -> avgpool (adaptive, 1x1) -> flatten -> fc(512 * expansion, num_classes)
// Each layer is an nn::Sequential of blocks: BasicBlocks (resnet18, resnet34) or Bottlenecks
// (resnet50, expansion 4, the stride on the 3x3 convolution as torchvision's "v1.5"). A layer's first
// block has stride 2 (layers 2-4) and then a 1x1 convolution + batch norm shortcut ("downsample").
// Names follow torchvision's scheme, so its state dicts map one-to-one: conv1.weight,
// bn1.running_mean, layer1.0.conv1.weight, layer2.0.downsample.0.weight, fc.weight (torchvision's
// weights, trained at 224x224, need image_size >= 64 for their 7x7 conv1). Initialised as
// torchvision does: convolutions kaiming_normal_(fan_out, relu), batch norms weight 1 and bias 0, fc
// PyTorch's Linear default. Any input size works (the pool is adaptive).
//   auto net = models::create("resnet18");   // x [N, 3, 32, 32] -> [N, 10]
//   auto big = models::create("resnet50", models::ModelOptions().image_size(224).num_classes(5));
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

// relu(bn3(conv3(relu(bn2(conv2(relu(bn1(conv1 x)))))) + shortcut x): conv1 1x1 to `width`, conv2
// 3x3 with `stride`, conv3 1x1 to 4 * width; downsample = 1x1 conv + bn when the shape changes.
// [N, in_channels, H, W] -> [N, 4 * width, ceil(H / stride), ceil(W / stride)].
class Bottleneck : public nn::Module {
 public:
  static constexpr int64_t kExpansion = 4;
  Bottleneck(int64_t in_channels, int64_t width, int64_t stride);
  Tensor forward(const Tensor& x);

  nn::Conv2d conv1{nullptr}, conv2{nullptr}, conv3{nullptr};
  nn::BatchNorm2d bn1{nullptr}, bn2{nullptr}, bn3{nullptr};
  nn::ReLU relu{nullptr};
  nn::Sequential downsample{nullptr};  // empty when the shortcut is the identity
};

enum class ResNetBlock { Basic, Bottleneck };
enum class ResNetStem { Auto, ImageNet, Cifar };  // Auto: ImageNet for image_size >= 64

class ResNet : public Model {
 public:
  // blocks: blocks per layer; {2, 2, 2, 2} Basic is resnet18, {3, 4, 6, 3} Basic resnet34,
  // {3, 4, 6, 3} Bottleneck resnet50 (arch() is "resnet" followed by the depth: 2 or 3 layers per
  // block, plus the stem and fc). Throws cohort::Error for a count < 1.
  explicit ResNet(const ModelOptions& options = {}, std::array<int64_t, 4> blocks = {2, 2, 2, 2},
                  ResNetBlock block = ResNetBlock::Basic, ResNetStem stem = ResNetStem::Auto);
  // [N, in_channels, H, W] -> [N, num_classes]; checks the channel count.
  Tensor forward(const Tensor& x) override;
  std::shared_ptr<Model> create_fresh() const override;

  nn::Conv2d conv1{nullptr};
  nn::BatchNorm2d bn1{nullptr};
  nn::ReLU relu{nullptr};
  nn::MaxPool2d maxpool{nullptr};  // ImageNet stem only
  nn::Sequential layer1{nullptr}, layer2{nullptr}, layer3{nullptr}, layer4{nullptr};
  nn::AdaptiveAvgPool2d avgpool{nullptr};
  nn::Linear fc{nullptr};

  // The stem this model has (Auto resolved).
  ResNetStem stem() const { return stem_; }

  // Activation checkpointing: in training the stem and every block but the last run under
  // utils::checkpoint (backward runs each block again instead of keeping its activations; Note
  // [ResNet checkpoints]). Off by default; create_fresh and clones keep it.
  void set_checkpoint_activations(bool on) { checkpoint_activations_ = on; }
  bool checkpoint_activations() const { return checkpoint_activations_; }

 private:
  Tensor checkpointed_forward(const Tensor& input);
  template <class Block>
  Tensor checkpointed_blocks(Tensor x);

  bool checkpoint_activations_ = false;
  std::array<int64_t, 4> blocks_;
  ResNetBlock block_;
  ResNetStem stem_;
};

}  // namespace cohort::models
