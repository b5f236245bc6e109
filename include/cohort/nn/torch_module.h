// TORCH_MODULE(Name): libtorch's macro for a user module's holder, kept because ported programs spell
// it (STYLE: where libtorch's public API is a macro, compatibility wins). It declares `Name`, a
// nn::ModuleHolder<NameImpl>:
//
//   struct NetImpl : nn::Module { ... };
//   TORCH_MODULE(Net);          // Net net;  net->forward(x);  torch::save(net, "net.pt");
#pragma once

#include "cohort/nn/module_holder.h"

#define TORCH_MODULE_IMPL(Name, ImplType)                             \
  class Name : public ::cohort::nn::ModuleHolder<ImplType> {          \
   public:                                                            \
    using ::cohort::nn::ModuleHolder<ImplType>::ModuleHolder;         \
    using Impl = ImplType;                                            \
  }

#define TORCH_MODULE(Name) TORCH_MODULE_IMPL(Name, Name##Impl)
