// The text of a JSON value as this program writes it to files and terminals.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace cohort::app {

// j as JSON text, on one line (indent -1) or indented. Strings that are not UTF-8 (a path, class name
// or generated text in another encoding) have their bad bytes replaced by U+FFFD rather than making
// the whole write fail.
inline std::string json_text(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace cohort::app
