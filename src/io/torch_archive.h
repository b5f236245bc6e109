// Internal to io/: torch_file.cpp's readers and writers with the operation named in their messages
// ("load: <path>: ..."), for serialize.cpp.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>

#include "cohort/io/torch_file.h"

namespace cohort::io::detail {

PyValue read_torch_archive(const std::filesystem::path& path, const std::string& op);
PyValue read_torch_archive(std::istream& in, const std::string& where, const std::string& op);
void write_torch_archive(const std::filesystem::path& path, const PyValue& value, const std::string& op);
void write_torch_archive(std::ostream& out, const PyValue& value, const std::string& op);

// Name -> tensor of a state dict value (see read_torch_state_dict); `fail` names the source.
OrderedDict<std::string, Tensor> state_dict_of(const PyValue& value, const std::string& where, const std::string& op);

}  // namespace cohort::io::detail
