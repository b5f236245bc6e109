// Packed sequences: every conversion is one index_select of rows (a padding row appended where the
// result has padding), so autograd differentiates it with an index_add of the same size.
#include "cohort/nn/utils/rnn.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/indexing.h"
#include "cohort/ops/shape.h"

namespace cohort::nn::utils::rnn {

namespace {

thread_local detail::PadRecorder* current_recorder = nullptr;

std::vector<int64_t> to_vector(const Tensor& t) {
  if (!t.defined()) return {};
  Tensor c = t.to(Device(kCPU, 0)).to(kInt64).contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  return {p, p + c.numel()};
}

Tensor index_tensor(const std::vector<int64_t>& v, Device device = Device(kCPU, 0)) {
  return tensor(v, TensorOptions(kInt64).device(device));
}

// Row offsets of each step in a packed data tensor.
std::vector<int64_t> step_offsets(const std::vector<int64_t>& batch_sizes) {
  std::vector<int64_t> offsets(batch_sizes.size() + 1, 0);
  std::partial_sum(batch_sizes.begin(), batch_sizes.end(), offsets.begin() + 1);
  return offsets;
}

// Lengths longest first -> how many sequences have each step.
std::vector<int64_t> batch_sizes_of(const std::vector<int64_t>& sorted_lengths) {
  std::vector<int64_t> bs(sorted_lengths.empty() ? 0 : static_cast<size_t>(sorted_lengths[0]), 0);
  for (int64_t len : sorted_lengths)
    for (int64_t t = 0; t < len; ++t) ++bs[static_cast<size_t>(t)];
  return bs;
}

// rows of x [R, *] picked by index, where index R means a row of padding_value.
Tensor rows_with_padding(const Tensor& x, const std::vector<int64_t>& index, double padding_value) {
  Shape pad_shape = x.sizes().vec();
  pad_shape[0] = 1;
  Tensor source = cat({x, full(pad_shape, padding_value, x.options())}, 0);
  return source.index_select(0, index_tensor(index, x.device()));
}

Shape with_leading(IntArrayRef lead, const Tensor& x, int64_t skip) {
  Shape s(lead.begin(), lead.end());
  for (int64_t d = skip; d < x.dim(); ++d) s.push_back(x.size(d));
  return s;
}

}  // namespace

Tensor invert_permutation(const Tensor& permutation) {
  if (!permutation.defined()) return {};
  std::vector<int64_t> p = to_vector(permutation), inv(p.size(), -1);
  for (size_t i = 0; i < p.size(); ++i) {
    COHORT_CHECK(p[i] >= 0 && p[i] < static_cast<int64_t>(p.size()) && inv[static_cast<size_t>(p[i])] < 0,
                 "invert_permutation: expected a permutation of 0..", p.size() - 1, ", got ", p[i], " at position ", i);
    inv[static_cast<size_t>(p[i])] = static_cast<int64_t>(i);
  }
  return index_tensor(inv, permutation.device());
}

PackedSequence::PackedSequence(Tensor data, Tensor batch_sizes, Tensor sorted_indices, Tensor unsorted_indices)
    : data_(std::move(data)), batch_sizes_(std::move(batch_sizes)), sorted_indices_(std::move(sorted_indices)),
      unsorted_indices_(std::move(unsorted_indices)) {
  if (!unsorted_indices_.defined()) unsorted_indices_ = invert_permutation(sorted_indices_);
  COHORT_CHECK(!batch_sizes_.defined() || (batch_sizes_.dim() == 1 && batch_sizes_.dtype() == kInt64),
               "PackedSequence: batch_sizes must be a 1-d int64 tensor, got ", batch_sizes_.dtype(), " of shape ",
               batch_sizes_.sizes(), "; hint: make packed sequences with pack_padded_sequence or pack_sequence");
}

PackedSequence PackedSequence::to(const TensorOptions& options) const {
  Device d = options.has_device() ? options.device() : data_.device();
  auto move = [&](const Tensor& t) { return t.defined() ? t.to(d) : t; };
  return PackedSequence(data_.to(options), batch_sizes_, move(sorted_indices_), move(unsorted_indices_));
}
PackedSequence PackedSequence::to(Device device) const { return to(TensorOptions(device)); }
PackedSequence PackedSequence::to(DType dtype) const { return to(TensorOptions(dtype)); }

int64_t PackedSequence::batch() const {
  return batch_sizes_.defined() && batch_sizes_.numel() > 0 ? to_vector(batch_sizes_.narrow(0, 0, 1))[0] : 0;
}

std::vector<int64_t> PackedSequence::lengths() const {
  std::vector<int64_t> bs = to_vector(batch_sizes_), order = to_vector(sorted_indices_);
  const int64_t n = bs.empty() ? 0 : bs[0];
  std::vector<int64_t> lengths(static_cast<size_t>(n), 0);
  for (int64_t b : bs)
    for (int64_t j = 0; j < b; ++j) ++lengths[static_cast<size_t>(order.empty() ? j : order[static_cast<size_t>(j)])];
  return lengths;
}

PackedSequence pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first, bool enforce_sorted) {
  COHORT_CHECK(input.defined() && input.dim() >= 2, "pack_padded_sequence: expected an input of at least 2 dims ",
               batch_first ? "[N, T, *]" : "[T, N, *]", ", got ", input.defined() ? input.sizes().vec() : Shape{});
  COHORT_CHECK(lengths.defined() && lengths.dim() == 1 && is_integral(lengths.dtype()),
               "pack_padded_sequence: lengths must be a 1-d integer tensor, got ",
               lengths.defined() ? lengths.sizes().vec() : Shape{}, lengths.defined() ? " of " : "",
               lengths.defined() ? lengths.dtype() : kInt64);
  Tensor x = batch_first ? input.transpose(0, 1) : input;  // [T, N, *]
  const int64_t T = x.size(0), N = x.size(1);
  std::vector<int64_t> len = to_vector(lengths);
  COHORT_CHECK(static_cast<int64_t>(len.size()) == N, "pack_padded_sequence: got ", len.size(),
               " lengths for a batch of ", N, " sequences (input of shape ", input.sizes(), ", batch_first=",
               batch_first ? "true" : "false", ")");
  COHORT_CHECK(N > 0, "pack_padded_sequence: the batch is empty (input of shape ", input.sizes(), ")");
  for (size_t i = 0; i < len.size(); ++i)
    COHORT_CHECK(len[i] > 0 && len[i] <= T, "pack_padded_sequence: sequence ", i, " has length ", len[i],
                 ", expected 1 to ", T, " (the input's time dim)");
  std::vector<int64_t> order(len.size());
  std::iota(order.begin(), order.end(), 0);
  if (enforce_sorted) {
    for (size_t i = 1; i < len.size(); ++i)
      COHORT_CHECK(len[i] <= len[i - 1], "pack_padded_sequence: lengths must be sorted longest first, got ",
                   lengths.sizes(), " lengths with ", len[i - 1], " before ", len[i], " at position ", i,
                   "; hint: pass enforce_sorted=false to sort them");
  } else {
    order = detail::sort_by_length(len);
  }
  std::vector<int64_t> sorted_len(len.size());
  for (size_t j = 0; j < order.size(); ++j) sorted_len[j] = len[static_cast<size_t>(order[j])];
  std::vector<int64_t> bs = batch_sizes_of(sorted_len), rows;
  for (size_t t = 0; t < bs.size(); ++t)
    for (int64_t j = 0; j < bs[t]; ++j) rows.push_back(static_cast<int64_t>(t) * N + order[static_cast<size_t>(j)]);
  Tensor data = x.reshape(with_leading({T * N}, x, 2)).index_select(0, index_tensor(rows, x.device()));
  Tensor sorted = enforce_sorted ? Tensor() : index_tensor(order, x.device());
  return PackedSequence(data, index_tensor(bs), sorted);
}

std::tuple<Tensor, Tensor> pad_packed_sequence(PackedSequence sequence, bool batch_first, double padding_value,
                                               std::optional<int64_t> total_length) {
  COHORT_CHECK(sequence.defined() && sequence.data().dim() >= 1, "pad_packed_sequence: the PackedSequence is empty");
  std::vector<int64_t> bs = to_vector(sequence.batch_sizes()), unsorted = to_vector(sequence.unsorted_indices());
  const auto T_max = static_cast<int64_t>(bs.size());
  const int64_t N = bs.empty() ? 0 : bs[0];
  std::vector<int64_t> offsets = step_offsets(bs);
  const Tensor& data = sequence.data();
  COHORT_CHECK(offsets.back() == data.size(0), "pad_packed_sequence: batch_sizes add up to ", offsets.back(),
               " steps but data has ", data.size(0), " rows");
  int64_t T = T_max;
  if (total_length) {
    COHORT_CHECK(*total_length >= T_max, "pad_packed_sequence: total_length=", *total_length,
                 " is shorter than the longest sequence, ", T_max, " steps");
    T = *total_length;
  }
  std::vector<int64_t> lengths(static_cast<size_t>(N), 0), index;
  for (int64_t b = 0; b < N; ++b) {
    const int64_t j = unsorted.empty() ? b : unsorted[static_cast<size_t>(b)];
    for (int64_t t = 0; t < T_max && bs[static_cast<size_t>(t)] > j; ++t) ++lengths[static_cast<size_t>(b)];
  }
  const int64_t pad_row = data.size(0);
  auto row = [&](int64_t t, int64_t b) {
    const int64_t j = unsorted.empty() ? b : unsorted[static_cast<size_t>(b)];
    return t < lengths[static_cast<size_t>(b)] ? offsets[static_cast<size_t>(t)] + j : pad_row;
  };
  index.reserve(static_cast<size_t>(T * N));
  for (int64_t a = 0; a < (batch_first ? N : T); ++a)
    for (int64_t c = 0; c < (batch_first ? T : N); ++c) index.push_back(batch_first ? row(c, a) : row(a, c));
  Tensor padded = rows_with_padding(data, index, padding_value)
                      .view(with_leading(batch_first ? Shape{N, T} : Shape{T, N}, data, 1));
  if (auto* r = detail::PadRecorder::current()) r->record({padded, batch_first ? 1 : 0, padding_value});
  return {padded, index_tensor(lengths)};
}

Tensor pad_sequence(ArrayRef<Tensor> sequences, bool batch_first, double padding_value) {
  COHORT_CHECK(!sequences.empty(), "pad_sequence: expected at least one sequence, got an empty list");
  const Tensor& first = sequences[0];
  std::vector<int64_t> starts, lengths;
  int64_t rows = 0, T = 0;
  for (size_t i = 0; i < sequences.size(); ++i) {
    const Tensor& s = sequences[i];
    COHORT_CHECK(s.defined() && s.dim() >= 1, "pad_sequence: sequence ", i, " must have at least one dim [L, *]");
    COHORT_CHECK(with_leading({}, s, 1) == with_leading({}, first, 1) && s.dtype() == first.dtype(),
                 "pad_sequence: sequence ", i, " is ", s.dtype(), " of shape ", s.sizes(), " but sequence 0 is ",
                 first.dtype(), " of shape ", first.sizes(), "; all must agree after their first (length) dim");
    starts.push_back(rows);
    lengths.push_back(s.size(0));
    rows += s.size(0);
    T = std::max(T, s.size(0));
  }
  const auto N = static_cast<int64_t>(sequences.size());
  std::vector<int64_t> index;
  index.reserve(static_cast<size_t>(T * N));
  auto row = [&](int64_t t, int64_t b) {
    return t < lengths[static_cast<size_t>(b)] ? starts[static_cast<size_t>(b)] + t : rows;
  };
  for (int64_t a = 0; a < (batch_first ? N : T); ++a)
    for (int64_t c = 0; c < (batch_first ? T : N); ++c) index.push_back(batch_first ? row(c, a) : row(a, c));
  std::vector<Tensor> all(sequences.begin(), sequences.end());
  return rows_with_padding(cat(all, 0), index, padding_value)
      .view(with_leading(batch_first ? Shape{N, T} : Shape{T, N}, first, 1));
}

PackedSequence pack_sequence(ArrayRef<Tensor> sequences, bool enforce_sorted) {
  std::vector<int64_t> lengths;
  for (const Tensor& s : sequences) lengths.push_back(s.defined() && s.dim() > 0 ? s.size(0) : 0);
  return pack_padded_sequence(pad_sequence(sequences), index_tensor(lengths), false, enforce_sorted);
}

namespace detail {

PadRecorder::PadRecorder() : previous_(current_recorder) { current_recorder = this; }
PadRecorder::~PadRecorder() { current_recorder = previous_; }
std::vector<PadRecord> PadRecorder::take() { return std::exchange(records_, {}); }
PadRecorder* PadRecorder::current() { return current_recorder; }

std::vector<int64_t> sort_by_length(const std::vector<int64_t>& lengths) {
  std::vector<int64_t> order(lengths.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return lengths[static_cast<size_t>(a)] > lengths[static_cast<size_t>(b)];
  });
  return order;
}

PackedSequence select_sequences(const PackedSequence& seq, const std::vector<int64_t>& samples) {
  std::vector<int64_t> all = seq.lengths(), unsorted = to_vector(seq.unsorted_indices());
  std::vector<int64_t> offsets = step_offsets(to_vector(seq.batch_sizes())), len;
  for (int64_t i : samples) {
    COHORT_CHECK(i >= 0 && i < static_cast<int64_t>(all.size()), "select_sequences: sample ", i,
                 " is out of range for a batch of ", all.size(), " sequences");
    len.push_back(all[static_cast<size_t>(i)]);
  }
  std::vector<int64_t> order = sort_by_length(len), sorted_len, rows;
  bool in_order = true;
  for (size_t j = 0; j < order.size(); ++j) {
    in_order = in_order && order[j] == static_cast<int64_t>(j);
    sorted_len.push_back(len[static_cast<size_t>(order[j])]);
  }
  std::vector<int64_t> bs = batch_sizes_of(sorted_len);
  for (size_t t = 0; t < bs.size(); ++t)
    for (int64_t j = 0; j < bs[t]; ++j) {
      const int64_t i = samples[static_cast<size_t>(order[static_cast<size_t>(j)])];
      rows.push_back(offsets[t] + (unsorted.empty() ? i : unsorted[static_cast<size_t>(i)]));
    }
  const Tensor& data = seq.data();
  Tensor sorted = in_order && !seq.sorted_indices().defined() ? Tensor() : index_tensor(order, data.device());
  return PackedSequence(data.index_select(0, index_tensor(rows, data.device())), index_tensor(bs), sorted);
}

PackedSequence join_sequences(const std::vector<PackedSequence>& parts, Device device,
                              const std::vector<int64_t>& sorted_indices) {
  COHORT_CHECK(!parts.empty(), "join_sequences: no parts to join");
  std::vector<int64_t> lengths, part_of, local_of, row_base;
  std::vector<std::vector<int64_t>> offsets, unsorted;
  std::vector<Tensor> data;
  int64_t rows = 0;
  bool any_sorted = false;
  for (size_t p = 0; p < parts.size(); ++p) {
    const PackedSequence& s = parts[p];
    COHORT_CHECK(s.defined(), "join_sequences: part ", p, " is an empty PackedSequence");
    std::vector<int64_t> len = s.lengths();
    for (size_t i = 0; i < len.size(); ++i) {
      lengths.push_back(len[i]);
      part_of.push_back(static_cast<int64_t>(p));
      local_of.push_back(static_cast<int64_t>(i));
    }
    offsets.push_back(step_offsets(to_vector(s.batch_sizes())));
    unsorted.push_back(to_vector(s.unsorted_indices()));
    any_sorted = any_sorted || s.sorted_indices().defined();
    row_base.push_back(rows);
    rows += s.data().size(0);
    data.push_back(s.data().to(device));
  }
  std::vector<int64_t> order = sorted_indices.empty() ? sort_by_length(lengths) : sorted_indices;
  COHORT_CHECK(order.size() == lengths.size(), "join_sequences: the order has ", order.size(),
               " entries for ", lengths.size(), " sequences");
  std::vector<int64_t> sorted_len, index;
  bool in_order = true;
  for (size_t j = 0; j < order.size(); ++j) {
    in_order = in_order && order[j] == static_cast<int64_t>(j);
    sorted_len.push_back(lengths[static_cast<size_t>(order[j])]);
    COHORT_CHECK(j == 0 || sorted_len[j] <= sorted_len[j - 1], "join_sequences: the order does not sort the lengths "
                 "longest first (", sorted_len[j - 1], " before ", sorted_len[j], ")");
  }
  std::vector<int64_t> bs = batch_sizes_of(sorted_len);
  for (size_t t = 0; t < bs.size(); ++t)
    for (int64_t j = 0; j < bs[t]; ++j) {
      const auto i = static_cast<size_t>(order[static_cast<size_t>(j)]);
      const auto p = static_cast<size_t>(part_of[i]);
      const int64_t local = local_of[i];
      const int64_t pos = unsorted[p].empty() ? local : unsorted[p][static_cast<size_t>(local)];
      index.push_back(row_base[p] + offsets[p][t] + pos);
    }
  Tensor joined = data.size() == 1 ? data[0] : cat(data, 0);
  Tensor sorted = in_order && !any_sorted && sorted_indices.empty() ? Tensor() : index_tensor(order, device);
  return PackedSequence(joined.index_select(0, index_tensor(index, device)), index_tensor(bs), sorted);
}

}  // namespace detail

}  // namespace cohort::nn::utils::rnn
