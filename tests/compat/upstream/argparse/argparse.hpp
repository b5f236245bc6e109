// A stand-in for the few calls of p-ranav/argparse that libtorch's dcgan example makes (Debian does
// not package the library; the example's CMakeLists downloads it): integer options "--name value"
// with a default. Only for tests/compat/upstream_examples.sh.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <stdexcept>
#include <string>

namespace argparse {

class Argument {
 public:
  Argument& help(std::string text) { help_ = std::move(text); return *this; }
  Argument& default_value(std::int64_t v) { value_ = v; return *this; }
  template <char, class T>
  Argument& scan() { return *this; }

  std::string help_;
  std::int64_t value_ = 0;
};

class ArgumentParser {
 public:
  explicit ArgumentParser(std::string name) : name_(std::move(name)) {}
  Argument& add_argument(const std::string& name) { return arguments_[name]; }
  void parse_args(int argc, const char* argv[]) {
    for (int i = 1; i < argc; ++i) {
      auto it = arguments_.find(argv[i]);
      if (it == arguments_.end() || i + 1 >= argc) throw std::runtime_error(std::string("unknown or incomplete option ") + argv[i]);
      it->second.value_ = std::stoll(argv[++i]);
    }
  }
  template <class T>
  T get(const std::string& name) const { return static_cast<T>(arguments_.at(name).value_); }
  friend std::ostream& operator<<(std::ostream& os, const ArgumentParser& p) {
    os << "usage: " << p.name_ << "\n";
    for (const auto& [name, a] : p.arguments_) os << "  " << name << " N   " << a.help_ << "\n";
    return os;
  }

 private:
  std::string name_;
  std::map<std::string, Argument> arguments_;
};

}  // namespace argparse
