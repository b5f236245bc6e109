// The iterator of libtorch's data loaders (torch::data::Iterator<Batch>): a single-pass input iterator
// over one loop's batches. Copies share the loop; end() is a sentinel that compares equal to an
// iterator whose loop is over. The first batch is loaded when first needed (dereference or compare).
#pragma once

#include <cstddef>
#include <iterator>
#include <memory>
#include <optional>
#include <utility>

#include "cohort/core/error.h"
#include "cohort/data/batch_pipeline.h"

namespace cohort::data {

namespace detail {

// One loop's batches, handed out of a BatchPipeline; stop() ends it early (joining the workers).
template <typename Batch>
class Loop {
 public:
  explicit Loop(std::unique_ptr<BatchPipeline> pipeline) : pipeline_(std::move(pipeline)) {}

  Batch& get() {
    start();
    COHORT_CHECK(current_.has_value(), "DataLoader iterator: dereferencing the past-the-end iterator");
    return *current_;
  }
  void next() {
    start();
    COHORT_CHECK(current_.has_value(), "DataLoader iterator: incrementing past the end");
    advance();
  }
  bool at_end() {
    start();
    return !current_.has_value();
  }
  void stop() {
    started_ = true;
    current_.reset();
    pipeline_.reset();
  }

 private:
  void start() {
    if (started_) return;
    started_ = true;
    advance();
  }
  void advance() {
    current_.reset();
    if (pipeline_ == nullptr || pipeline_->done()) {
      pipeline_.reset();
      return;
    }
    try {
      current_.emplace(std::move(*std::static_pointer_cast<Batch>(pipeline_->take())));
    } catch (...) {
      pipeline_.reset();  // a failed loop is over; the next begin() starts a new epoch
      throw;
    }
  }

  std::unique_ptr<BatchPipeline> pipeline_;
  std::optional<Batch> current_;
  bool started_ = false;
};

}  // namespace detail

template <typename Batch>
class Iterator {
 public:
  using difference_type = std::ptrdiff_t;
  using value_type = Batch;
  using pointer = Batch*;
  using reference = Batch&;
  using iterator_category = std::input_iterator_tag;

  Iterator() = default;  // the end
  explicit Iterator(std::shared_ptr<detail::Loop<Batch>> loop) : loop_(std::move(loop)) {}

  // Loads the next batch; rethrows (as a cohort::Error naming the batch) what loading it threw.
  Iterator& operator++() {
    COHORT_CHECK(loop_ != nullptr, "DataLoader iterator: incrementing the past-the-end iterator");
    loop_->next();
    return *this;
  }
  Batch& operator*() {
    COHORT_CHECK(loop_ != nullptr, "DataLoader iterator: dereferencing the past-the-end iterator");
    return loop_->get();
  }
  Batch* operator->() { return &**this; }

  bool operator==(const Iterator& other) const {
    if (loop_ == nullptr || other.loop_ == nullptr) return at_end() == other.at_end();
    return loop_ == other.loop_;
  }
  bool operator!=(const Iterator& other) const { return !(*this == other); }

 private:
  bool at_end() const { return loop_ == nullptr || loop_->at_end(); }
  std::shared_ptr<detail::Loop<Batch>> loop_;
};

}  // namespace cohort::data
