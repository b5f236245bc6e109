// Checkpoints of a distributed run: rank 0 writes, every rank waits for the file, every rank can load.
//
//   distributed::save_checkpoint_on_rank0(*pg, "ckpt.safetensors", *ddp, &opt, {{"epoch", "3"}});
//   io::load_checkpoint("ckpt.safetensors", *ddp, &opt);   // on every rank (the wrapper has no prefixes)
//
// The ranks hold equal parameters after each DDP step, so one copy is the model's state; optimizer
// state is equal too when it depends only on parameters and averaged gradients (SGD, Adam, ...).
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "cohort/distributed/process_group.h"

namespace cohort::nn {
class Module;
}
namespace cohort::optim {
class Optimizer;
}

namespace cohort::distributed {

// Collective. Rank 0 writes io::save_checkpoint(path, module, optimizer, metadata) (atomically); the call
// returns on every rank once the file is complete. If rank 0 fails to write, every rank throws an Error
// with rank 0's message (rank 0 rethrows its own).
void save_checkpoint_on_rank0(ProcessGroup& group, const std::filesystem::path& path, const nn::Module& module,
                              const optim::Optimizer* optimizer, const std::map<std::string, std::string>& metadata = {});

}  // namespace cohort::distributed
