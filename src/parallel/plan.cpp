// parallel::plan's non-template part: checks the devices and the leaves of the arguments, finds
// the batch and cuts it into chunks (Note [Scatter plan] in cohort/parallel/plan.h).
#include "cohort/parallel/plan.h"

#include <cmath>
#include <numeric>
#include <ostream>
#include <sstream>

#include "cohort/core/error.h"
#include "cohort/ops/shape.h"

namespace cohort::parallel {

using Kind = ArgumentPlan::Kind;

std::ostream& operator<<(std::ostream& os, SplitRule rule) {
  switch (rule) {
    case kBalanced: return os << "balanced";
    case kChunk: return os << "chunk";
    case kWeighted: return os << "weighted";
    case kTimesteps: return os << "timesteps";
  }
  return os << "SplitRule(" << static_cast<int>(rule) << ")";
}

std::vector<Device> all_devices() {
  std::vector<Device> out;
  for (int i = 0; i < device_count(); ++i) out.emplace_back(kCPU, i);
  return out;
}

namespace detail {

void ArgRules<Tensor>::collect(const Tensor& x, const std::string& path, bool broadcast, std::vector<Leaf>& out) {
  if (!x.defined()) {
    out.push_back({Kind::kUndefined, path, {}, 0, {}, {}});
    return;
  }
  out.push_back({broadcast ? Kind::kBroadcast : Kind::kSplit, path, x.sizes().vec(), 0, {}, {}, x.requires_grad()});
}

namespace {

void check_devices(const std::vector<Device>& devices) {
  COHORT_CHECK(!devices.empty(), "parallel::plan: the device list is empty; hint: pass at least one device, "
               "e.g. parallel::all_devices() or {\"cpu:0\"}");
  for (size_t i = 0; i < devices.size(); ++i) {
    check_device(devices[i], "parallel::plan");
    for (size_t j = 0; j < i; ++j)
      COHORT_CHECK(devices[j] != devices[i], "parallel::plan: device ", devices[i], " is listed twice (positions ", j,
                   " and ", i, "); hint: each replica needs a device of its own, list every device once");
  }
}

void check_options(const ScatterOptions& options, size_t device_count) {
  if (options.rule() != kWeighted) {
    COHORT_CHECK(options.weights().empty(), "parallel::plan: weights are given but the rule is ", options.rule(),
                 "; hint: weights are used by the kWeighted rule only");
    return;
  }
  const std::vector<double>& w = options.weights();
  COHORT_CHECK(w.size() == device_count, "parallel::plan: the weighted rule needs one weight per device, got ",
               w.size(), " weights for ", device_count, " devices; hint: ScatterOptions().weights({...})");
  for (double x : w)
    COHORT_CHECK(std::isfinite(x) && x >= 0, "parallel::plan: weights must be finite and non-negative, got ", x);
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  COHORT_CHECK(total > 0 && std::isfinite(total), "parallel::plan: the weights sum to ", total,
               ", so they cannot share out the samples; hint: use positive weights such as each device's cores");
}

// Samples per device, in list order (options already checked); zeros are removed by the caller.
std::vector<int64_t> chunk_sizes(int64_t n, size_t device_count, const ScatterOptions& options,
                                 const std::vector<int64_t>& lengths) {
  const auto k = static_cast<int64_t>(device_count);
  std::vector<int64_t> sizes(device_count, 0);
  if (options.rule() == kTimesteps) {
    sizes = timestep_chunks(n, device_count, lengths);
  } else if (options.rule() == kBalanced) {
    for (int64_t i = 0; i < k; ++i) sizes[i] = n / k + (i < n % k ? 1 : 0);
  } else if (options.rule() == kChunk) {
    const int64_t each = (n + k - 1) / k;
    for (int64_t i = 0, left = n; i < k && left > 0; ++i, left -= each) sizes[i] = std::min(each, left);
  } else {
    const std::vector<double>& w = options.weights();
    const double total = std::accumulate(w.begin(), w.end(), 0.0);
    // Cumulative rounding: boundaries round(n * prefix / total) sum to n exactly and never decrease.
    double prefix = 0;
    int64_t previous = 0;
    for (int64_t i = 0; i < k; ++i) {
      prefix += w[i];
      int64_t boundary = i == k - 1 ? n : std::min<int64_t>(n, std::llround(static_cast<double>(n) * prefix / total));
      boundary = std::max(boundary, previous);
      sizes[i] = boundary - previous;
      previous = boundary;
    }
  }
  return sizes;
}

// A tensor inside a std::vector may be one item of a per-sample list (ragged items, one tensor per
// sample), so its error also suggests Split.
bool in_list(const Leaf& leaf) { return leaf.path.find('[') != std::string::npos; }

// The batch: from the first split tensor, else from the first Split list; -1 when neither exists.
int64_t find_batch(const std::vector<Leaf>& leaves, int64_t dim) {
  const Leaf* source = nullptr;
  int64_t batch = -1;
  for (const Leaf& leaf : leaves) {
    if (leaf.kind == Kind::kPacked) {
      if (!source) {
        source = &leaf, batch = leaf.items;
        continue;
      }
      check_sequences_join_batch(leaf, batch, *source);
      continue;
    }
    if (leaf.kind != Kind::kSplit) continue;
    const auto rank = static_cast<int64_t>(leaf.shape.size());
    COHORT_CHECK(rank > 0, "parallel::plan: ", leaf.path, " is a 0-d tensor, which has no dim ", dim,
                 " to split; hint: wrap it in parallel::Broadcast(x) so every replica gets it");
    COHORT_CHECK(dim >= -rank && dim < rank, "parallel::plan: ", leaf.path, " of shape ", leaf.shape,
                 " has no dim ", dim, " to split; hint: wrap it in parallel::Broadcast(x) if every replica "
                 "should see all of it, or choose ScatterOptions().dim(...)");
    const int64_t size = leaf.shape[static_cast<size_t>(wrap_dim(dim, rank, "parallel::plan"))];
    if (!source) {
      source = &leaf, batch = size;
      continue;
    }
    COHORT_CHECK(size == batch, "parallel::plan: ", leaf.path, " of shape ", leaf.shape, " has size ", size,
                 " along dim ", dim, ", but the batch is ", batch, " (set by ", source->path,
                 source->kind == Kind::kPacked ? ", a PackedSequence of " : " of shape ",
                 source->kind == Kind::kPacked ? ::cohort::detail::str(source->items, " sequences")
                                               : ::cohort::detail::str(source->shape), "); hint: wrap it in parallel::Broadcast(x) if every replica should see all of it",
                 in_list(leaf) ? "; if its list holds one tensor per sample, wrap the list in parallel::Split(v)" : "");
  }
  for (const Leaf& leaf : leaves) {
    if (leaf.kind != Kind::kSplitList) continue;
    if (!source) {
      source = &leaf, batch = leaf.items;
      continue;
    }
    COHORT_CHECK(leaf.items == batch, "parallel::plan: ", leaf.path, " is a parallel::Split list of ", leaf.items,
                 " items, but the batch is ", batch, " (set by ", source->path, "); hint: a Split list needs one item per "
                 "sample, wrap it in parallel::Share(v) if every replica should see all of it");
  }
  return batch;
}

// Why some devices get no replica; the plan says so rather than leaving the user to wonder.
std::string idle_note(int64_t batch, size_t device_count, const Plan& p, SplitRule rule) {
  const std::string of = std::to_string(device_count) + " devices: using " + std::to_string(p.replicas());
  if (rule == kTimesteps) return "the timesteps rule gives no sequences to " + std::to_string(device_count - p.replicas()) + " of " + of;
  if (rule == kWeighted) return "the weights give no samples to " + std::to_string(device_count - p.replicas()) + " of " + of;
  if (batch < static_cast<int64_t>(device_count)) return "batch " + std::to_string(batch) + " is smaller than " + of;
  return "the chunk rule (" + std::to_string(p.chunk_sizes[0]) + " samples per chunk) makes " +
         std::to_string(p.replicas()) + " chunks for " + of;
}

Shape replica_shape(const Leaf& leaf, int64_t dim, int64_t chunk) {
  Shape s = leaf.shape;
  if (leaf.kind == Kind::kSplit) s[static_cast<size_t>(wrap_dim(dim, static_cast<int64_t>(s.size()), "plan"))] = chunk;
  if (leaf.kind == Kind::kSplitList) s = {chunk};
  return s;
}

}  // namespace

Plan make_plan(const std::vector<Device>& devices, const ScatterOptions& options, const std::vector<Leaf>& leaves,
               size_t argument_count) {
  check_devices(devices);
  check_options(options, devices.size());
  Plan p;
  p.dim = options.dim();
  p.rule = options.rule();
  const int64_t batch = find_batch(leaves, options.dim());
  COHORT_CHECK(batch >= 0 || argument_count == 0, "parallel::plan: nothing to split: no plain tensor and no parallel::Split "
               "list among the ", argument_count, " arguments, so every replica would compute the same thing; hint: pass the batch as a plain tensor (not Broadcast), or call the module directly");
  if (batch <= 0) {
    // No arguments, or an empty batch: one run on the first device, as on a single device.
    p.batch = 0;
    p.devices = {devices[0]};
    p.chunk_sizes = {0};
    p.offsets = {0};
    p.notes.push_back(argument_count == 0 ? "no arguments: running once on " + devices[0].str()
                                          : "batch 0: running once on " + devices[0].str());
  } else {
    p.batch = batch;
    const Leaf* packed = sequence_source(leaves, options.rule() == kTimesteps);
    if (packed) {
      p.sequence_lengths = packed->lengths;
      p.sequence_order = packed->order;
    }
    std::vector<int64_t> sizes = chunk_sizes(batch, devices.size(), options, p.sequence_lengths);
    int64_t offset = 0;
    for (size_t i = 0; i < devices.size(); ++i) {
      if (sizes[i] == 0) continue;  // Note [Scatter plan], rule 4: no empty replica
      p.devices.push_back(devices[i]);
      p.chunk_sizes.push_back(sizes[i]);
      p.offsets.push_back(offset);
      offset += sizes[i];
    }
    if (p.devices.size() < devices.size()) p.notes.push_back(idle_note(batch, devices.size(), p, options.rule()));
    if (packed && p.replicas() > 1)
      p.notes.push_back(sequences_note());
  }
  for (const Leaf& leaf : leaves) {
    ArgumentPlan a{leaf.path, leaf.kind, leaf.shape, {}, leaf.requires_grad};
    if (leaf.kind == Kind::kPacked) {
      for (size_t r = 0; r < p.chunk_sizes.size(); ++r)
        a.replica_shapes.push_back(packed_replica_shape(leaf, p.offsets[r], p.chunk_sizes[r]));
    } else if (leaf.kind != Kind::kShare) {
      for (int64_t chunk : p.chunk_sizes) a.replica_shapes.push_back(replica_shape(leaf, p.dim, chunk));
    }
    p.arguments.push_back(std::move(a));
  }
  return p;
}

}  // namespace detail

namespace {
std::string describe(const ArgumentPlan& a, const Plan& p) {
  using cohort::operator<<;  // Shape's, hidden by the operator<< of this namespace
  std::ostringstream os;
  switch (a.kind) {
    case Kind::kPacked: return detail::describe_packed(a, p);
    case Kind::kSplit: os << "split " << a.shape << " ->"; break;
    case Kind::kSplitList: os << "Split list of " << a.shape[0] << " items ->"; break;
    case Kind::kBroadcast: return ::cohort::detail::str("broadcast ", a.shape, " to every replica");
    case Kind::kUndefined: return "undefined tensor, passed on undefined";
    case Kind::kShare: return "shared read-only";
  }
  for (size_t r = 0; r < a.replica_shapes.size(); ++r) {
    os << (r ? ", " : " ");
    if (a.kind == Kind::kSplitList) os << a.replica_shapes[r][0];
    else os << a.replica_shapes[r];
  }
  return os.str();
}
}  // namespace

std::ostream& operator<<(std::ostream& os, const Plan& p) {
  os << "parallel::Plan: batch " << p.batch << " along dim " << p.dim << ", " << p.rule << " over " << p.replicas()
     << (p.replicas() == 1 ? " device\n" : " devices\n");
  for (size_t r = 0; r < p.replicas(); ++r)
    os << "  replica " << r << " on " << p.devices[r] << ": " << p.chunk_sizes[r] << " samples [" << p.offsets[r]
       << ", " << p.offsets[r] + p.chunk_sizes[r] << ")\n";
  for (const ArgumentPlan& a : p.arguments) os << "  " << a.path << ": " << describe(a, p) << "\n";
  for (const std::string& note : p.notes) os << "  note: " << note << "\n";
  return os;
}

}  // namespace cohort::parallel
