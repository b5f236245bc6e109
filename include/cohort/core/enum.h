// libtorch's option tags (its torch/enum.h): each is an empty type in cohort::enumtype and a constant
// of that type in cohort, so options spell them as libtorch programs do:
//   nn::init::kaiming_normal_(w, 0, torch::kFanOut, torch::kReLU);
//   nn::RNNOptions(4, 8).nonlinearity(torch::kReLU);
//   nn::TransformerEncoderLayerOptions(16, 4).activation(torch::kGELU);
// An option that takes some of them holds a std::variant of their types.
#pragma once

namespace cohort {

namespace enumtype {
struct kLinear {};
struct kConv1D {};
struct kConv2D {};
struct kConv3D {};
struct kConvTranspose1D {};
struct kConvTranspose2D {};
struct kConvTranspose3D {};
struct kSigmoid {};
struct kTanh {};
struct kReLU {};
struct kLeakyReLU {};
struct kSELU {};
struct kGELU {};
struct kFanIn {};
struct kFanOut {};
struct kConstant {};
struct kReflect {};
struct kReplicate {};
struct kCircular {};
}  // namespace enumtype

inline constexpr enumtype::kLinear kLinear{};
inline constexpr enumtype::kConv1D kConv1D{};
inline constexpr enumtype::kConv2D kConv2D{};
inline constexpr enumtype::kConv3D kConv3D{};
inline constexpr enumtype::kConvTranspose1D kConvTranspose1D{};
inline constexpr enumtype::kConvTranspose2D kConvTranspose2D{};
inline constexpr enumtype::kConvTranspose3D kConvTranspose3D{};
inline constexpr enumtype::kSigmoid kSigmoid{};
inline constexpr enumtype::kTanh kTanh{};
inline constexpr enumtype::kReLU kReLU{};
inline constexpr enumtype::kLeakyReLU kLeakyReLU{};
inline constexpr enumtype::kSELU kSELU{};
inline constexpr enumtype::kGELU kGELU{};
inline constexpr enumtype::kFanIn kFanIn{};
inline constexpr enumtype::kFanOut kFanOut{};
inline constexpr enumtype::kConstant kConstant{};
inline constexpr enumtype::kReflect kReflect{};
inline constexpr enumtype::kReplicate kReplicate{};
inline constexpr enumtype::kCircular kCircular{};

}  // namespace cohort
