// ResNets with basic or bottleneck blocks, ImageNet or CIFAR stem (see cohort/models/resnet.h).
#include "cohort/models/resnet.h"

#include <numeric>

#include "cohort/core/error.h"
#include "cohort/nn/init.h"
#include "cohort/utils/checkpoint.h"

namespace cohort::models {

namespace {

// The 3x3 convolutions carry no bias: the batch norm after each one has its own.
nn::Conv2d conv3x3(int64_t in, int64_t out, int64_t stride) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false));
}

nn::Conv2d conv1x1(int64_t in, int64_t out, int64_t stride) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, 1).stride(stride).bias(false));
}

// The shortcut's projection when a block changes the shape; empty (the identity) otherwise.
nn::Sequential downsample_of(int64_t in, int64_t out, int64_t stride) {
  if (stride == 1 && in == out) return nn::Sequential{nullptr};
  return nn::Sequential(conv1x1(in, out, stride), nn::BatchNorm2d(out));
}

// "resnet18" for Basic {2, 2, 2, 2}, "resnet50" for Bottleneck {3, 4, 6, 3}: each block has two or
// three convolutions, plus the stem and fc.
std::string resnet_arch(const std::array<int64_t, 4>& blocks, ResNetBlock block) {
  for (int64_t n : blocks)
    COHORT_CHECK(n >= 1, "ResNet: every layer needs at least one block, got blocks {", blocks[0], ", ", blocks[1],
                 ", ", blocks[2], ", ", blocks[3], "}");
  const int64_t per_block = block == ResNetBlock::Basic ? 2 : 3;
  return "resnet" + std::to_string(per_block * std::accumulate(blocks.begin(), blocks.end(), int64_t{0}) + 2);
}

// Below 64 pixels the ImageNet stem's 4x reduction leaves too little resolution for four layers.
ResNetStem resolve(ResNetStem stem, int64_t image_size) {
  if (stem != ResNetStem::Auto) return stem;
  return image_size >= 64 ? ResNetStem::ImageNet : ResNetStem::Cifar;
}

}  // namespace

BasicBlock::BasicBlock(int64_t in_channels, int64_t out_channels, int64_t stride) {
  conv1 = register_module("conv1", conv3x3(in_channels, out_channels, stride));
  bn1 = register_module("bn1", nn::BatchNorm2d(out_channels));
  relu = register_module("relu", nn::ReLU());
  conv2 = register_module("conv2", conv3x3(out_channels, out_channels, 1));
  bn2 = register_module("bn2", nn::BatchNorm2d(out_channels));
  // The sum needs x in the output's shape: a 1x1 convolution with the block's stride projects it.
  downsample = downsample_of(in_channels, out_channels, stride);
  if (downsample) register_module("downsample", downsample);
}

Tensor BasicBlock::forward(const Tensor& x) {
  Tensor out = relu(bn1(conv1(x)));
  out = bn2(conv2(out));
  return relu(out + (downsample ? downsample(x) : x));
}

Bottleneck::Bottleneck(int64_t in_channels, int64_t width, int64_t stride) {
  conv1 = register_module("conv1", conv1x1(in_channels, width, 1));
  bn1 = register_module("bn1", nn::BatchNorm2d(width));
  conv2 = register_module("conv2", conv3x3(width, width, stride));
  bn2 = register_module("bn2", nn::BatchNorm2d(width));
  conv3 = register_module("conv3", conv1x1(width, width * kExpansion, 1));
  bn3 = register_module("bn3", nn::BatchNorm2d(width * kExpansion));
  relu = register_module("relu", nn::ReLU());
  downsample = downsample_of(in_channels, width * kExpansion, stride);
  if (downsample) register_module("downsample", downsample);
}

Tensor Bottleneck::forward(const Tensor& x) {
  Tensor out = relu(bn1(conv1(x)));
  out = relu(bn2(conv2(out)));
  out = bn3(conv3(out));
  return relu(out + (downsample ? downsample(x) : x));
}

ResNet::ResNet(const ModelOptions& options, std::array<int64_t, 4> blocks, ResNetBlock block, ResNetStem stem)
    : Model(resnet_arch(blocks, block), options), blocks_(blocks), block_(block),
      stem_(resolve(stem, options.image_size())) {
  if (stem_ == ResNetStem::ImageNet) {
    conv1 = register_module(
        "conv1", nn::Conv2d(nn::Conv2dOptions(options.in_channels(), 64, 7).stride(2).padding(3).bias(false)));
  } else {
    conv1 = register_module("conv1", conv3x3(options.in_channels(), 64, 1));
  }
  bn1 = register_module("bn1", nn::BatchNorm2d(64));
  relu = register_module("relu", nn::ReLU());
  if (stem_ == ResNetStem::ImageNet)
    maxpool = register_module("maxpool", nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).padding(1)));
  const int64_t expansion = block == ResNetBlock::Basic ? 1 : Bottleneck::kExpansion;
  const std::array<int64_t, 4> widths = {64, 128, 256, 512};
  nn::Sequential* layers[4] = {&layer1, &layer2, &layer3, &layer4};
  int64_t in = 64;
  for (size_t i = 0; i < 4; ++i) {
    nn::Sequential layer;
    for (int64_t b = 0; b < blocks[i]; ++b) {
      // Layers 2-4 halve the resolution in their first block.
      const int64_t stride = (i > 0 && b == 0) ? 2 : 1;
      if (block == ResNetBlock::Basic) {
        layer->push_back(std::make_shared<BasicBlock>(in, widths[i], stride));
      } else {
        layer->push_back(std::make_shared<Bottleneck>(in, widths[i], stride));
      }
      in = widths[i] * expansion;
    }
    register_module("layer" + std::to_string(i + 1), layer);
    *layers[i] = layer;
  }
  avgpool = register_module("avgpool", nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions(1)));
  fc = register_module("fc", nn::Linear(512 * expansion, options.num_classes()));

  // He initialisation for the ReLU network (fan_out, as torchvision); batch norms start at the
  // identity (weight 1, bias 0), which BatchNorm2d already does.
  for (const auto& item : named_parameters())
    if (item.value().dim() == 4) nn::init::kaiming_normal_(item.value(), 0, nn::init::FanMode::FanOut,
                                                          nn::init::Nonlinearity::ReLU);
}

Tensor ResNet::forward(const Tensor& input) {
  check_input(input, /*exact_size=*/false);
  if (checkpoint_activations_ && is_training()) return checkpointed_forward(input);
  Tensor x = relu(bn1(conv1(input)));
  if (maxpool) x = maxpool(x);
  x = layer4(layer3(layer2(layer1(x))));
  return fc(avgpool(x).flatten(1));
}

// Note [ResNet checkpoints]
// The stem and every block but the network's last run under utils::checkpoint: between forward and
// backward only each segment's input stays (the image, the stem's output, every block's input) with
// the last block's activations, which backward needs at once (recomputing them would save nothing).
// Backward then recomputes one block at a time. By block rather than by stage: a stage's recompute
// holds all its blocks' activations at once, and the stem's and the first stage's, at full
// resolution, are most of the peak. The blocks run without the stage's forward hooks (a stage is
// not called as a module here).
template <class Block>
Tensor ResNet::checkpointed_blocks(Tensor x) {
  const std::array<nn::Sequential, 4> stages{layer1, layer2, layer3, layer4};
  for (size_t s = 0; s < stages.size(); ++s)
    for (size_t i = 0; i < stages[s]->size(); ++i) {
      const std::shared_ptr<Block> block = stages[s]->ptr<Block>(i);
      const bool last = s + 1 == stages.size() && i + 1 == stages[s]->size();
      x = last ? block->forward(x) : utils::checkpoint(block, x);
    }
  return x;
}

Tensor ResNet::checkpointed_forward(const Tensor& input) {
  nn::Sequential stem(conv1, bn1, relu);  // the model's own layers, not registered again
  if (maxpool) stem->push_back(maxpool);
  Tensor x = utils::checkpoint(stem, input);
  x = block_ == ResNetBlock::Basic ? checkpointed_blocks<BasicBlock>(x) : checkpointed_blocks<Bottleneck>(x);
  return fc(avgpool(x).flatten(1));
}

std::shared_ptr<Model> ResNet::create_fresh() const {
  auto fresh = std::make_shared<ResNet>(options(), blocks_, block_, stem_);
  fresh->set_checkpoint_activations(checkpoint_activations_);
  return fresh;
}

}  // namespace cohort::models
