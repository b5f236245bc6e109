// The unpickler's values (unpickle.cpp): its nodes, and how a dict compares their keys.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "cohort/core/tensor.h"
#include "io/pickle.h"

namespace cohort::io::detail::unpickling {

// A value while unpickling: containers are shared and mutable (the memo and the stack hold the same
// list that APPENDS extends), and two kinds exist only here: a global and a storage. Nodes live in the
// unpickler's arena and point at each other with plain pointers: a crafted pickle may nest a million
// lists or put a list inside itself, which owning pointers would free by deep recursion or leak.
// What only tensors, dicts, objects and storages need sits in `x`, so the many small nodes stay small
// (Note [Unpickling in bounded memory]).
struct Node;
using NodePtr = Node*;
// A dict key as the reader compares keys: the kind, the bits of a number, a view of a str's bytes
// (a str node never changes once made, and outlives the dict in the arena).
using DictKey = std::tuple<int, uint64_t, std::string_view>;
// Keys that view the same bytes are equal without reading them: a long key used over and over (one
// str node fetched from the memo) costs no time per use.
struct DictKeyLess {
  bool operator()(const DictKey& a, const DictKey& b) const {
    if (std::get<0>(a) != std::get<0>(b)) return std::get<0>(a) < std::get<0>(b);
    if (std::get<1>(a) != std::get<1>(b)) return std::get<1>(a) < std::get<1>(b);
    const std::string_view x = std::get<2>(a), y = std::get<2>(b);
    if (x.data() == y.data() && x.size() == y.size()) return false;
    return x < y;
  }
};
struct NodeExtra {
  cohort::Tensor t;
  std::vector<std::pair<NodePtr, NodePtr>> entries;
  std::map<DictKey, size_t, DictKeyLess> index;  // entries by key, so a repeated key replaces its value
  StorageRecord storage;
};
struct Node {
  enum Kind : uint8_t { None, Bool, Int, Float, String, Tensor, List, Tuple, Dict, Object, Global, Storage } kind = None;
  bool b = false;
  bool ordered = false;
  int32_t depth = 0;  // containers: how deep the values inside it nest, as far as pushes have told
  int64_t i = 0;
  double d = 0;
  std::string s;  // a str; "module.name" of a global; an object's class
  std::vector<NodePtr> items;
  std::unique_ptr<NodeExtra> x;  // tensors, dicts, objects, storages
};

inline const char* kind_name(const Node& n) {
  switch (n.kind) {
    case Node::None: return "None";
    case Node::Bool: return "bool";
    case Node::Int: return "int";
    case Node::Float: return "float";
    case Node::String: return "str";
    case Node::Tensor: return "Tensor";
    case Node::List: return "list";
    case Node::Tuple: return "tuple";
    case Node::Dict: return n.ordered ? "OrderedDict" : "dict";
    case Node::Object: return "object";
    case Node::Global: return "global";
    case Node::Storage: return "storage";
  }
  return "?";
}

}  // namespace cohort::io::detail::unpickling
