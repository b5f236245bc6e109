// cohort::save / cohort::load, spelled as libtorch's torch::save / torch::load, in the format of
// Python's torch.save (io/torch_file.h), so that Python's torch.load reads what they write and they read
// what Python wrote:
//
//   torch::save(model, "model.pt");      // Python: model.load_state_dict(torch.load("model.pt"))
//   torch::load(model, "model.pt");      // Python wrote torch.save(model.state_dict(), "model.pt")
//   torch::save(optimizer, "opt.pt");    // Python: opt.load_state_dict(torch.load("opt.pt"))
//   torch::save(tensor, "t.pt");         torch::load(tensor, "t.pt");
//   torch::save(tensors, "v.pt");        torch::load(tensors, "v.pt");      // std::vector<Tensor>
//
// What each writes, as Python sees it:
//   a module (a holder such as nn::Linear or nn::Sequential, or std::shared_ptr<M>): an OrderedDict
//     of its state_dict(), name -> tensor (parameters and buffers);
//   a tensor: the tensor (its values, shape, strides and requires_grad);
//   a std::vector<Tensor>: a list of tensors;
//   an optimizer: the dict of Python's optimizer.state_dict(), {"state": {index: {...}},
//     "param_groups": [{options..., "params": [index...]}]}, with PyTorch 1.13's names for the options
//     and the state (SGD's momentum_buffer, Adam's step, exp_avg, exp_avg_sq, ...).
// Files are written atomically (Note [Atomic writes] in src/io/file_util.h). Loading a module copies
// each parameter and buffer in by name, converting dtypes, strictly as load_state_dict does: every
// missing, unexpected or mis-shaped name is listed in one error and nothing is copied. Loading a
// tensor into a defined tensor re-points it in place (as libtorch's set_), so every handle to it sees
// the loaded value. libtorch's own torch::save archives of modules, tensors and vectors of tensors
// load too; of optimizers they do not (a clear error says so).
// Every failure throws a cohort::Error "save: <path>: ..." or "load: <path>: ...".
#pragma once

#include <filesystem>
#include <iosfwd>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "cohort/core/device.h"
#include "cohort/core/tensor.h"
#include "cohort/nn/module.h"
#include "cohort/nn/module_holder.h"

namespace cohort {

namespace optim {
class Optimizer;
}

namespace io::detail {
void save_module(const nn::Module& module, const std::filesystem::path& path);
void save_module(const nn::Module& module, std::ostream& out);
void load_module(nn::Module& module, const std::filesystem::path& path);
void load_module(nn::Module& module, std::istream& in);
}  // namespace io::detail

void save(const Tensor& tensor, const std::filesystem::path& path);
void save(const Tensor& tensor, std::ostream& out);
void save(const std::vector<Tensor>& tensors, const std::filesystem::path& path);
void save(const std::vector<Tensor>& tensors, std::ostream& out);
void save(const optim::Optimizer& optimizer, const std::filesystem::path& path);
void save(const optim::Optimizer& optimizer, std::ostream& out);

// `device`: where the loaded tensors go (libtorch's argument); the CPU when not given.
void load(Tensor& tensor, const std::filesystem::path& path, std::optional<Device> device = std::nullopt);
void load(Tensor& tensor, std::istream& in, std::optional<Device> device = std::nullopt);
void load(std::vector<Tensor>& tensors, const std::filesystem::path& path, std::optional<Device> device = std::nullopt);
void load(std::vector<Tensor>& tensors, std::istream& in, std::optional<Device> device = std::nullopt);
// The optimizer must be of the type that wrote the state, over parameters of the same shapes.
void load(optim::Optimizer& optimizer, const std::filesystem::path& path);
void load(optim::Optimizer& optimizer, std::istream& in);

template <class Impl>
void save(const nn::ModuleHolder<Impl>& module, const std::filesystem::path& path) {
  io::detail::save_module(*module, path);
}
template <class Impl>
void save(const nn::ModuleHolder<Impl>& module, std::ostream& out) {
  io::detail::save_module(*module, out);
}
template <class M, std::enable_if_t<std::is_base_of_v<nn::Module, M>, int> = 0>
void save(const std::shared_ptr<M>& module, const std::filesystem::path& path) {
  io::detail::save_module(*module, path);
}
template <class M, std::enable_if_t<std::is_base_of_v<nn::Module, M>, int> = 0>
void save(const std::shared_ptr<M>& module, std::ostream& out) {
  io::detail::save_module(*module, out);
}

// The module's parameters and buffers keep their device; `device` is accepted for libtorch's spelling.
template <class Impl>
void load(const nn::ModuleHolder<Impl>& module, const std::filesystem::path& path,
          std::optional<Device> /*device*/ = std::nullopt) {
  io::detail::load_module(*module.ptr(), path);
}
template <class Impl>
void load(const nn::ModuleHolder<Impl>& module, std::istream& in, std::optional<Device> /*device*/ = std::nullopt) {
  io::detail::load_module(*module.ptr(), in);
}
template <class M, std::enable_if_t<std::is_base_of_v<nn::Module, M>, int> = 0>
void load(const std::shared_ptr<M>& module, const std::filesystem::path& path,
          std::optional<Device> /*device*/ = std::nullopt) {
  io::detail::load_module(*module, path);
}
template <class M, std::enable_if_t<std::is_base_of_v<nn::Module, M>, int> = 0>
void load(const std::shared_ptr<M>& module, std::istream& in, std::optional<Device> /*device*/ = std::nullopt) {
  io::detail::load_module(*module, in);
}

}  // namespace cohort
