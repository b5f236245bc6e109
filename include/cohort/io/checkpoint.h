// Saving and loading a module's or an optimizer's state, through safetensors files (io/safetensors.h),
// so that the weights open in any safetensors reader (Python's safetensors.torch.load_file included).
//
//   io::save(*net, "net.safetensors");     io::load(*net, "net.safetensors");
//   io::save(opt, "opt.safetensors");      io::load(opt, "opt.safetensors");
#pragma once

#include <filesystem>
#include <map>
#include <string>

namespace cohort::nn {
class Module;
}
namespace cohort::optim {
class Optimizer;
}

namespace cohort::io {

// Writes module.state_dict() (parameters and buffers by dotted name) atomically; no metadata.
void save(const nn::Module& module, const std::filesystem::path& path);
// Reads the file and calls module.load_state_dict(state, strict): with strict, the error lists every
// missing, unexpected and mis-shaped key, and nothing is copied when there is one.
void load(nn::Module& module, const std::filesystem::path& path, bool strict = true);

// Writes optimizer.state_dict(): its tensors ("state.3.exp_avg", ...) as the safetensors tensors, and in
// "__metadata__":
//   "cohort.optimizer": the optimizer's name ("Adam"),
//   "cohort.scalars":   a JSON object text of every scalar ("param_groups.0.lr", "state.3.step", ...);
//                       numbers round-trip exactly, and inf / -inf / nan are written as those strings.
void save(const optim::Optimizer& optimizer, const std::filesystem::path& path);
// Reads such a file and calls optimizer.load_state_dict(); throws a cohort::Error if the file holds
// another optimizer type's state or no optimizer state at all, or if the state does not fit.
void load(optim::Optimizer& optimizer, const std::filesystem::path& path);

// Modules saved beside the checkpoint's main one, by name: an averaged copy of the weights ("ema"), a
// teacher. Each is stored as tensors "<name>/<key>"; names are non-empty, without '/', and neither
// "model" nor "optimizer".
using ModuleMap = std::map<std::string, const nn::Module*>;
using MutableModuleMap = std::map<std::string, nn::Module*>;

// A training checkpoint in one file, so it is written (and survives a crash) as one unit: the
// module's state as tensors "model/<name>", the optimizer's (if given) as "optimizer/<key>" with its
// scalars as above, the `others` modules' as "<their name>/<key>", the caller's own `metadata` (epoch,
// step, RNG state, ... as strings) and a CRC-32 of the tensor bytes (kChecksumKey in io/safetensors.h).
// Written atomically (Note [Atomic writes]).
void save_checkpoint(const std::filesystem::path& path, const nn::Module& module, const optim::Optimizer* optimizer,
                     const std::map<std::string, std::string>& metadata, const ModuleMap& others = {});
// Restores the module (strictly), the optimizer (if given) and each of `others` (strictly, each
// must be in the file) from such a file and returns the caller's metadata; other modules the file
// holds are left unread. Throws a cohort::Error naming the file when it is malformed or corrupt (its
// checksum, when present, does not match), holds another model's weights or another optimizer's
// state, or lacks a module asked for; nothing is changed then.
std::map<std::string, std::string> load_checkpoint(const std::filesystem::path& path, nn::Module& module,
                                                   optim::Optimizer* optimizer, const MutableModuleMap& others = {});
// Restores one module of such a file (strictly): "model" for the main one, else one of `others`.
// Throws a cohort::Error naming the file when it lacks that module or the weights do not fit.
void load_checkpoint_module(const std::filesystem::path& path, const std::string& name, nn::Module& module);

}  // namespace cohort::io
