// Python's pickle as PyTorch's files use it, the reading half: only the opcodes and globals of those
// files run. Nothing a pickle names is ever called: each allowed global has its meaning written here.
#include <array>
#include <bit>
#include <cstdio>
#include <map>
#include <memory>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "cohort/core/error.h"
#include "cohort/core/tensor_impl.h"
#include "cohort/ops/creation.h"
#include "io/pickle.h"
#include "io/unpickle_nodes.h"

namespace cohort::io::detail {

namespace {

using namespace opcode;

using unpickling::DictKey;
using unpickling::DictKeyLess;
using unpickling::Node;
using unpickling::NodeExtra;
using unpickling::NodePtr;
using unpickling::kind_name;

// Note [Unpickling in bounded memory]
// A pickle is a program, and a short one can ask for a lot: a million MARKs, a list appended into
// itself, one long string fetched from the memo a million times, a dict keyed by that string. The
// reader refuses such files while it reads them, before their cost is paid, so that a refusal costs
// a small multiple of the file's size in memory and time:
// - every allocation the reader makes (a node, a string's bytes, a slot on the stack or in a
//   container, a value of the result) is charged to a budget of kBytesPerPickleByte times the
//   pickle's size (plus kBudgetFloor, so that a tiny file's few values fit): the files of PyTorch's
//   torch.save and libtorch's take 26 to 42 bytes per byte of their pickle, and a test keeps them
//   under half of it (tests/io/torch_file_hostile_test.cpp); on a file that is all pickle, a refusal
//   costs at most kBytesPerPickleByte times the file's size;
// - MARKs and nested containers go at most kMaxDepth deep, checked as they are pushed;
// - dict keys are compared in place, never copied, so a long key repeated costs no time per use;
// - None, True, False and the ints 0 to 255 are one node each, whoever pushes them.
// The storages' bytes are not part of it: each is checked against its record before it is allocated,
// and records that inflate are capped by the zip reader (Note [PyTorch's zip layout]).
constexpr uint64_t kBytesPerPickleByte = 128;
constexpr uint64_t kBudgetFloor = 16 << 20;
constexpr size_t kMaxDepth = 1000;

// What the reader allows to be named, and what each means.
enum class Callable { OrderedDict, RebuildTensor, RebuildParameter, RebuildParameterWithState, StorageType, Class };

class Unpickler {
 public:
  Unpickler(std::string_view bytes, const UnpickleContext& context)
      : in_(bytes),
        context_(context),
        budget_(kBytesPerPickleByte * (context.budget_base ? context.budget_base : bytes.size()) + kBudgetFloor) {
    none_ = make(Node::None);
    true_ = make(Node::Bool);
    true_->b = true;
    false_ = make(Node::Bool);
  }


  PyValue run() {
    while (true) {
      if (pos_ >= in_.size()) fail("the pickle ends without a STOP opcode (truncated?)");
      op_at_ = pos_;
      const uint8_t code = byte();
      if (code == STOP) break;
      step(code);
    }
    if (stack_.size() != 1 || !marks_.empty()) fail("the pickle leaves " + std::to_string(stack_.size()) + " values on its stack");
    PyValue result = convert(*stack_.back(), 0);
    if (context_.charged) *context_.charged = charged_;
    return result;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    context_.fail("data.pkl: " + what + " (at byte " + std::to_string(op_at_) + ")");
    COHORT_ASSERT(false);
  }

  // ---- bytes
  void need(uint64_t n) const {
    if (n > in_.size() - pos_) fail("the pickle ends inside an opcode's argument (truncated?)");
  }
  uint8_t byte() {
    need(1);
    return static_cast<uint8_t>(in_[pos_++]);
  }
  uint64_t le(int n) {
    need(static_cast<uint64_t>(n));
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(in_[pos_ + i])) << (8 * i);
    pos_ += static_cast<size_t>(n);
    return v;
  }
  std::string bytes(uint64_t n) {
    need(n);
    std::string s(in_.substr(pos_, static_cast<size_t>(n)));
    pos_ += static_cast<size_t>(n);
    return s;
  }
  std::string line() {
    const size_t end = in_.find('\n', pos_);
    if (end == std::string_view::npos) fail("a GLOBAL's name has no end of line (truncated?)");
    std::string s(in_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }

  // ---- memory (Note [Unpickling in bounded memory])
  void charge(uint64_t nbytes) {
    charged_ += nbytes;
    if (charged_ > budget_)
      fail("reading the pickle takes more than " + std::to_string(budget_ >> 20) + " MiB (" +
           std::to_string(kBytesPerPickleByte) + " bytes per byte of the file, and " +
           std::to_string(kBudgetFloor >> 20) + " MiB); a tensor file's pickle needs a small share of that, this one "
           "repeats or shares values without end (a crafted file?)");
  }
  // A container now holding `item`: its depth, checked as it grows.
  void deepen(Node& container, const Node& item) {
    if (item.depth + 1 > container.depth) container.depth = item.depth + 1;
    if (static_cast<size_t>(container.depth) > kMaxDepth)
      fail("values are nested more than " + std::to_string(kMaxDepth) + " deep (or contain themselves)");
  }
  void fill(Node& container, std::vector<NodePtr> items) {
    charge(items.size() * sizeof(NodePtr));
    for (NodePtr item : items) deepen(container, *item);
    container.items.insert(container.items.end(), items.begin(), items.end());
  }

  // ---- the stack
  void push(NodePtr n) {
    charge(sizeof(NodePtr));
    stack_.push_back(n);
  }
  NodePtr pop() {
    if (stack_.empty() || (!marks_.empty() && stack_.size() == marks_.back()))
      fail("an opcode pops from an empty stack (a malformed pickle)");
    NodePtr n = std::move(stack_.back());
    stack_.pop_back();
    return n;
  }
  NodePtr& top() {
    if (stack_.empty() || (!marks_.empty() && stack_.size() == marks_.back())) fail("an opcode needs a value on the stack");
    return stack_.back();
  }
  std::vector<NodePtr> pop_mark() {
    if (marks_.empty()) fail("an opcode needs a MARK that is not there (a malformed pickle)");
    const size_t mark = marks_.back();
    marks_.pop_back();
    std::vector<NodePtr> items(stack_.begin() + static_cast<std::ptrdiff_t>(mark), stack_.end());
    stack_.resize(mark);
    return items;
  }
  NodePtr make(Node::Kind kind) {
    const bool extra = kind == Node::Tensor || kind == Node::Dict || kind == Node::Object || kind == Node::Storage;
    // The node, the arena's pointer to it and the allocator's header of each allocation.
    charge(sizeof(Node) + sizeof(std::unique_ptr<Node>) + 16 + (extra ? sizeof(NodeExtra) + 16 : 0));
    arena_.push_back(std::make_unique<Node>());
    Node& n = *arena_.back();
    n.kind = kind;
    if (extra) n.x = std::make_unique<NodeExtra>();
    return &n;
  }
  NodePtr integer(int64_t v) {
    // Small ints (a tensor's sizes, strides, offsets) are one node per value, as in Python.
    const bool small = v >= 0 && v < static_cast<int64_t>(small_ints_.size());
    if (small && small_ints_[static_cast<size_t>(v)]) return small_ints_[static_cast<size_t>(v)];
    NodePtr n = make(Node::Int);
    n->i = v;
    if (small) small_ints_[static_cast<size_t>(v)] = n;
    return n;
  }
  NodePtr string(std::string s) {
    charge(s.size());
    NodePtr n = make(Node::String);
    n->s = std::move(s);
    return n;
  }
  NodePtr tuple(std::vector<NodePtr> items) {
    NodePtr n = make(Node::Tuple);
    fill(*n, std::move(items));
    return n;
  }

  void memo_put(uint64_t index) {
    NodePtr value = top();
    charge(64);  // a hash map entry
    memo_[index] = value;
  }
  void memo_get(uint64_t index) {
    auto it = memo_.find(index);
    if (it == memo_.end()) fail("memo entry " + std::to_string(index) + " is read before it is written");
    push(it->second);
  }

  // The key under which a dict remembers an entry: only hashable kinds may be keys.
  DictKey key_of(const Node& k) {
    switch (k.kind) {
      case Node::None: return {0, 0, {}};
      case Node::Bool: return {1, k.b, {}};  // True == 1 in Python; never mixed in PyTorch's files
      case Node::Int: return {2, static_cast<uint64_t>(k.i), {}};
      case Node::Float: return {3, std::bit_cast<uint64_t>(k.d), {}};
      case Node::String: return {4, 0, k.s};
      default: fail(std::string("a dict key is a ") + kind_name(k) + ", which cohort does not read as a key");
    }
  }
  void set_item(Node& dict, NodePtr key, NodePtr value) {
    deepen(dict, *key);
    deepen(dict, *value);
    auto [it, inserted] = dict.x->index.emplace(key_of(*key), dict.x->entries.size());
    if (inserted) {
      charge(2 * sizeof(NodePtr) + 96);  // the entry and its index's tree node
      dict.x->entries.emplace_back(key, value);
    } else {
      dict.x->entries[it->second].second = value;
    }
  }
  Node& dict_at_top() {
    Node& d = *top();
    if (d.kind != Node::Dict) fail(std::string("SETITEM(S) on a ") + kind_name(d) + ", not a dict");
    return d;
  }
  Node& list_at_top() {
    Node& l = *top();
    if (l.kind != Node::List) fail(std::string("APPEND(S) on a ") + kind_name(l) + ", not a list");
    return l;
  }

  // ---- globals: the whole list of what a file may name
  NodePtr global(const std::string& module, const std::string& name) {
    const std::string full = module + "." + name;
    NodePtr n = make(Node::Global);
    n->s = full;
    if (full == "collections.OrderedDict") n->i = static_cast<int64_t>(Callable::OrderedDict);
    else if (full == "torch._utils._rebuild_tensor_v2") n->i = static_cast<int64_t>(Callable::RebuildTensor);
    else if (full == "torch._utils._rebuild_parameter") n->i = static_cast<int64_t>(Callable::RebuildParameter);
    else if (full == "torch._utils._rebuild_parameter_with_state")
      n->i = static_cast<int64_t>(Callable::RebuildParameterWithState);
    else if (module == "torch" && name.size() > 7 && name.compare(name.size() - 7, 7, "Storage") == 0) {
      size_t size;
      DType dtype;
      std::string why;
      if (!parse_storage_type(name, size, dtype, why)) fail("unsupported storage type torch." + name + ": " + why);
      n->i = static_cast<int64_t>(Callable::StorageType);
    } else if (context_.torchscript && (module == "__torch__" || module.rfind("__torch__.", 0) == 0)) {
      n->i = static_cast<int64_t>(Callable::Class);
    } else {
      fail("unsupported global '" + full +
           "': cohort reads tensors, state dicts, lists, dicts, numbers and strings only, and never runs code "
           "named by a file; hint: in Python, save tensors and state dicts (model.state_dict(), "
           "optimizer.state_dict()), not modules or other objects");
    }
    return n;
  }

  // ---- the callables
  const Node& arg(const std::vector<NodePtr>& args, size_t i, Node::Kind kind, const char* what) {
    if (i >= args.size() || args[i]->kind != kind)
      fail(std::string("argument ") + std::to_string(i) + " (" + what + ") of a tensor is " +
           (i < args.size() ? kind_name(*args[i]) : "missing"));
    return *args[i];
  }
  std::vector<int64_t> int_tuple(const Node& t, const char* what) {
    std::vector<int64_t> out;
    for (const auto& item : t.items) {
      if (item->kind != Node::Int || item->i < 0) fail(std::string("a tensor's ") + what + " holds a " + kind_name(*item) + " that is not a non-negative int");
      out.push_back(item->i);
    }
    return out;
  }

  NodePtr rebuild_tensor(const std::vector<NodePtr>& args) {
    if (args.size() != 6 && args.size() != 7) fail("_rebuild_tensor_v2 takes 6 or 7 arguments, got " + std::to_string(args.size()));
    const StorageRecord& s = arg(args, 0, Node::Storage, "storage").x->storage;
    const Node& offset_node = arg(args, 1, Node::Int, "storage offset");
    const std::vector<int64_t> sizes = int_tuple(arg(args, 2, Node::Tuple, "size"), "size");
    const std::vector<int64_t> strides = int_tuple(arg(args, 3, Node::Tuple, "stride"), "stride");
    const bool requires_grad = arg(args, 4, Node::Bool, "requires_grad").b;
    if (offset_node.i < 0) fail("a tensor has a negative storage offset " + std::to_string(offset_node.i));
    if (sizes.size() != strides.size())
      fail("a tensor has " + std::to_string(sizes.size()) + " sizes but " + std::to_string(strides.size()) + " strides");
    if (sizes.size() > 64) fail("a tensor has " + std::to_string(sizes.size()) + " dimensions");
    const int64_t offset = offset_node.i;
    // Every element must lie in the storage: offset + sum((size - 1) * stride) < numel, computed
    // without overflow (each term is checked against what is left).
    bool empty = false;
    for (int64_t size : sizes) empty = empty || size == 0;
    try {
      checked_numel(sizes, "read_torch_file");
    } catch (const Error& e) {
      fail(std::string("a tensor's size: ") + e.what());
    }
    NodePtr n = make(Node::Tensor);
    if (empty) {
      n->x->t = zeros(sizes, TensorOptions(s.dtype));
    } else {
      int64_t last = offset;
      bool inside = offset < s.numel;
      for (size_t i = 0; i < sizes.size() && inside; ++i) {
        const int64_t left = s.numel - 1 - last;
        inside = strides[i] == 0 || sizes[i] - 1 <= left / strides[i];
        if (inside) last += (sizes[i] - 1) * strides[i];
      }
      if (!inside)
        fail("a tensor of sizes " + cohort::detail::str(IntArrayRef(sizes)) + ", strides " +
             cohort::detail::str(IntArrayRef(strides)) +
             " at offset " + std::to_string(offset) + " reaches past the end of storage '" + s.key + "' (" +
             std::to_string(s.numel) + " elements)");
      n->x->t = cohort::Tensor(std::make_shared<TensorImpl>(s.storage, s.dtype, Shape(sizes), Shape(strides), offset));
    }
    if (requires_grad) {
      if (!is_floating_point(s.dtype)) fail("an integer tensor is marked requires_grad");
      n->x->t.requires_grad_(true);
    }
    return n;
  }

  NodePtr rebuild_parameter(const std::vector<NodePtr>& args, bool with_state) {
    if (args.size() != (with_state ? 4u : 3u)) fail("_rebuild_parameter got " + std::to_string(args.size()) + " arguments");
    const Node& data = arg(args, 0, Node::Tensor, "data");
    const bool requires_grad = arg(args, 1, Node::Bool, "requires_grad").b;
    NodePtr n = make(Node::Tensor);
    n->x->t = data.x->t.detach();
    if (requires_grad) {
      if (!is_floating_point(n->x->t.dtype())) fail("an integer parameter is marked requires_grad");
      n->x->t.requires_grad_(true);
    }
    return n;
  }

  void reduce() {
    NodePtr args = pop();
    NodePtr callable = pop();
    if (callable->kind != Node::Global) fail(std::string("REDUCE calls a ") + kind_name(*callable) + ", not a global");
    if (args->kind != Node::Tuple) fail("REDUCE's arguments are a " + std::string(kind_name(*args)) + ", not a tuple");
    switch (static_cast<Callable>(callable->i)) {
      case Callable::OrderedDict: {
        if (!args->items.empty()) fail("collections.OrderedDict is called with arguments");
        NodePtr d = make(Node::Dict);
        d->ordered = true;
        push(d);
        return;
      }
      case Callable::RebuildTensor: push(rebuild_tensor(args->items)); return;
      case Callable::RebuildParameter: push(rebuild_parameter(args->items, false)); return;
      case Callable::RebuildParameterWithState: push(rebuild_parameter(args->items, true)); return;
      case Callable::StorageType:
      case Callable::Class: break;
    }
    fail("REDUCE calls " + callable->s + ", which cohort does not call");
  }

  void persistent_load() {
    NodePtr pid = pop();
    const auto& it = pid->items;
    if (pid->kind != Node::Tuple || it.size() != 5 || it[0]->kind != Node::String || it[0]->s != "storage" ||
        it[1]->kind != Node::Global || static_cast<Callable>(it[1]->i) != Callable::StorageType ||
        it[2]->kind != Node::String || it[3]->kind != Node::String || it[4]->kind != Node::Int || it[4]->i < 0)
      fail("a persistent id is not ('storage', <storage type>, key, location, numel)");
    auto cached = storages_.find(it[2]->s);
    const std::string type = it[1]->s.substr(6);  // after "torch."
    if (cached != storages_.end()) {
      if (cached->second->x->storage.type != type || cached->second->x->storage.numel != it[4]->i)
        fail("storage '" + it[2]->s + "' is named as " + cached->second->x->storage.type + " of " +
             std::to_string(cached->second->x->storage.numel) + " elements and as " + type + " of " +
             std::to_string(it[4]->i));
      push(cached->second);
      return;
    }
    NodePtr n = make(Node::Storage);
    n->x->storage.key = it[2]->s;
    n->x->storage.type = type;
    n->x->storage.numel = it[4]->i;
    context_.load_storage(n->x->storage);
    storages_[n->x->storage.key] = n;
    push(n);
  }

  void build() {
    NodePtr state = pop();
    Node& target = *top();
    if (target.kind == Node::Dict && target.ordered) return;  // an OrderedDict's attributes (state_dict()'s _metadata)
    if (target.kind != Node::Object) fail(std::string("BUILD on a ") + kind_name(target));
    if (state->kind != Node::Dict) fail(std::string("an object's state is a ") + kind_name(*state) + ", not a dict");
    for (auto& [key, value] : state->x->entries) {
      if (key->kind != Node::String) fail("an object's attribute name is a " + std::string(kind_name(*key)));
      set_item(target, key, value);
    }
  }

  void step(uint8_t code) {
    switch (code) {
      case PROTO: {
        const uint8_t version = byte();
        if (version < 2 || version > 5) fail("pickle protocol " + std::to_string(version) + " (cohort reads 2 to 5)");
        return;
      }
      case FRAME: le(8); return;
      case MARK:
        if (marks_.size() >= kMaxDepth)
          fail("MARKs are nested more than " + std::to_string(kMaxDepth) + " deep (a tensor file's nest a few)");
        marks_.push_back(stack_.size());
        return;
      case NONE: push(none_); return;
      case NEWTRUE: push(true_); return;
      case NEWFALSE: push(false_); return;
      case BININT1: push(integer(byte())); return;
      case BININT2: push(integer(static_cast<int64_t>(le(2)))); return;
      case BININT: push(integer(static_cast<int32_t>(static_cast<uint32_t>(le(4))))); return;
      case LONG1: {
        const uint8_t n = byte();
        if (n > 8) fail("an integer of " + std::to_string(n) + " bytes does not fit in 64 bits");
        uint64_t v = n ? le(n) : 0;
        if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n);  // sign-extend
        push(integer(static_cast<int64_t>(v)));
        return;
      }
      case BINFLOAT: {
        need(8);
        uint64_t bits = 0;
        for (int i = 0; i < 8; ++i) bits = (bits << 8) | static_cast<uint8_t>(in_[pos_ + i]);
        pos_ += 8;
        NodePtr n = make(Node::Float);
        n->d = std::bit_cast<double>(bits);
        push(n);
        return;
      }
      case SHORT_BINUNICODE: push(string(bytes(byte()))); return;
      case BINUNICODE: push(string(bytes(le(4)))); return;
      case BINUNICODE8: push(string(bytes(le(8)))); return;
      case EMPTY_TUPLE: push(tuple({})); return;
      case TUPLE1:
      case TUPLE2:
      case TUPLE3: {
        std::vector<NodePtr> items(code - TUPLE1 + 1);
        for (size_t i = items.size(); i-- > 0;) items[i] = pop();
        push(tuple(std::move(items)));
        return;
      }
      case TUPLE: push(tuple(pop_mark())); return;
      case EMPTY_LIST: push(make(Node::List)); return;
      case LIST: {
        NodePtr l = make(Node::List);
        fill(*l, pop_mark());
        push(l);
        return;
      }
      case APPEND: {
        NodePtr v = pop();
        fill(list_at_top(), {v});
        return;
      }
      case APPENDS: {
        std::vector<NodePtr> items = pop_mark();
        fill(list_at_top(), std::move(items));
        return;
      }
      case EMPTY_DICT: push(make(Node::Dict)); return;
      case DICT: {
        std::vector<NodePtr> items = pop_mark();
        if (items.size() % 2) fail("DICT with an odd number of items");
        NodePtr d = make(Node::Dict);
        for (size_t i = 0; i < items.size(); i += 2) set_item(*d, items[i], items[i + 1]);
        push(d);
        return;
      }
      case SETITEM: {
        NodePtr value = pop();
        NodePtr key = pop();
        set_item(dict_at_top(), std::move(key), std::move(value));
        return;
      }
      case SETITEMS: {
        std::vector<NodePtr> items = pop_mark();
        if (items.size() % 2) fail("SETITEMS with an odd number of items");
        Node& d = dict_at_top();
        for (size_t i = 0; i < items.size(); i += 2) set_item(d, items[i], items[i + 1]);
        return;
      }
      case BINPUT: memo_put(byte()); return;
      case LONG_BINPUT: memo_put(le(4)); return;
      case MEMOIZE: memo_put(memo_.size()); return;
      case BINGET: memo_get(byte()); return;
      case LONG_BINGET: memo_get(le(4)); return;
      case GLOBAL: {
        std::string module = line();
        std::string name = line();
        push(global(module, name));
        return;
      }
      case STACK_GLOBAL: {
        NodePtr name = pop();
        NodePtr module = pop();
        if (name->kind != Node::String || module->kind != Node::String) fail("STACK_GLOBAL's names are not strings");
        push(global(module->s, name->s));
        return;
      }
      case REDUCE: reduce(); return;
      case BINPERSID: persistent_load(); return;
      case BUILD: build(); return;
      case NEWOBJ: {
        NodePtr args = pop();
        NodePtr cls = pop();
        if (cls->kind != Node::Global || static_cast<Callable>(cls->i) != Callable::Class || args->kind != Node::Tuple ||
            !args->items.empty())
          fail("NEWOBJ creates a " + (cls->kind == Node::Global ? cls->s : std::string(kind_name(*cls))) +
               ", which cohort does not create");
        NodePtr o = make(Node::Object);
        o->s = cls->s;
        push(o);
        return;
      }
      default: {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", code);
        fail(std::string("unsupported pickle opcode ") + hex +
             (code >= 0x20 && code < 0x7f ? std::string(" ('") + static_cast<char>(code) + "')" : std::string()) +
             "; cohort reads the opcodes of PyTorch's tensor files only");
      }
    }
  }

  // ---- the result: a tree, bounded (a crafted pickle can share or nest containers without end)
  PyValue convert(const Node& n, int depth) {
    if (depth > 1000) fail("values are nested more than 1000 deep (or contain themselves)");
    // The result is a tree: a value shared by the pickle is copied wherever it is used, and paid for
    // each time (the root's own PyValue and each container's slots are charged by their holder).
    charge(16);
    switch (n.kind) {
      case Node::None: return PyValue();
      case Node::Bool: return PyValue(n.b);
      case Node::Int: return PyValue(n.i);
      case Node::Float: return PyValue(n.d);
      case Node::String: charge(n.s.size()); return PyValue(n.s);
      case Node::Tensor: return PyValue(n.x->t);
      case Node::List:
      case Node::Tuple: {
        PyValue::Items items;
        charge(sizeof(PyValue::Items) + n.items.size() * sizeof(PyValue));
        items.reserve(n.items.size());
        for (const auto& item : n.items) items.push_back(convert(*item, depth + 1));
        return n.kind == Node::List ? PyValue::list(std::move(items)) : PyValue::tuple(std::move(items));
      }
      case Node::Dict:
      case Node::Object: {
        PyValue::DictItems items;
        charge(sizeof(PyValue::DictItems) + n.x->entries.size() * 2 * sizeof(PyValue));
        items.reserve(n.x->entries.size());
        for (const auto& [k, v] : n.x->entries) items.emplace_back(convert(*k, depth + 1), convert(*v, depth + 1));
        return n.kind == Node::Dict ? PyValue::dict(std::move(items), n.ordered) : PyValue::object(n.s, std::move(items));
      }
      case Node::Global: fail("the value holds the global " + n.s + " itself, not a value it builds");
      case Node::Storage: fail("the value holds a bare storage, not a tensor");
    }
    fail("unknown value");
  }

  std::string_view in_;
  const UnpickleContext& context_;
  size_t pos_ = 0;
  size_t op_at_ = 0;
  std::vector<std::unique_ptr<Node>> arena_;
  std::vector<NodePtr> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, NodePtr> memo_;
  std::map<std::string, NodePtr> storages_;
  uint64_t budget_;
  uint64_t charged_ = 0;
  NodePtr none_ = nullptr, true_ = nullptr, false_ = nullptr;
  std::array<NodePtr, 256> small_ints_{};
};

}  // namespace

PyValue unpickle(std::string_view bytes, const UnpickleContext& context) { return Unpickler(bytes, context).run(); }

}  // namespace cohort::io::detail
