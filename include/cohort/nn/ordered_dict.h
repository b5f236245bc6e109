// OrderedDict: insertion-ordered key -> value map, spelled as libtorch's (items have key() and
// value()), used for named parameters, buffers and children.
#pragma once

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cohort/core/error.h"

namespace cohort {

template <class Key, class Value>
class OrderedDict {
 public:
  class Item {
   public:
    Item(Key key, Value value) : pair_(std::move(key), std::move(value)) {}
    const Key& key() const { return pair_.first; }
    Value& value() { return pair_.second; }
    const Value& value() const { return pair_.second; }
    Value& operator*() { return pair_.second; }
    Value* operator->() { return &pair_.second; }
    const std::pair<Key, Value>& pair() const { return pair_; }

   private:
    std::pair<Key, Value> pair_;
  };

  OrderedDict() = default;
  explicit OrderedDict(std::string key_description) : key_description_(std::move(key_description)) {}

  // Throws if key exists already.
  Value& insert(Key key, Value value) {
    COHORT_CHECK(!contains(key), key_description_, " '", key, "' already defined");
    index_.emplace(key, items_.size());
    items_.emplace_back(std::move(key), std::move(value));
    return items_.back().value();
  }
  // Inserts or replaces.
  Value& insert_or_assign(Key key, Value value) {
    if (Value* v = find(key)) return *v = std::move(value);
    return insert(std::move(key), std::move(value));
  }
  bool contains(const Key& key) const { return index_.count(key) != 0; }
  Value* find(const Key& key) {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].value();
  }
  const Value* find(const Key& key) const {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].value();
  }
  Value& operator[](const Key& key) {
    Value* v = find(key);
    COHORT_CHECK(v != nullptr, key_description_, " '", key, "' is not defined");
    return *v;
  }
  const Value& operator[](const Key& key) const {
    const Value* v = find(key);
    COHORT_CHECK(v != nullptr, key_description_, " '", key, "' is not defined");
    return *v;
  }
  Item& operator[](size_t i) { return items_.at(i); }
  const Item& operator[](size_t i) const { return items_.at(i); }

  size_t size() const { return items_.size(); }
  bool is_empty() const { return items_.empty(); }
  bool empty() const { return items_.empty(); }
  auto begin() { return items_.begin(); }
  auto end() { return items_.end(); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }
  const std::vector<Item>& items() const { return items_; }
  std::vector<Key> keys() const {
    std::vector<Key> k;
    for (const auto& i : items_) k.push_back(i.key());
    return k;
  }
  std::vector<Value> values() const {
    std::vector<Value> v;
    for (const auto& i : items_) v.push_back(i.value());
    return v;
  }
  void clear() {
    items_.clear();
    index_.clear();
  }

 private:
  std::string key_description_ = "Key";
  std::vector<Item> items_;
  std::unordered_map<Key, size_t> index_;
};

}  // namespace cohort
