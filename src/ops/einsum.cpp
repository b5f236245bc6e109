// einsum, composed from sum, expand, permute, reshape, mul and bmm: autograd comes from those ops.
// Plan: parse the equation into integer labels, sum letters only one operand uses, then map the
// two-operand case onto one [B, L, C] x [B, C, R] bmm and permute to the output order.
#include <algorithm>
#include <string>
#include <vector>

#include "cohort/core/error.h"
#include "cohort/ops/linalg.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/shape.h"

namespace cohort {

namespace {

// A label is a letter's character code; the k-th dim under "..." (right-aligned over all operands)
// is kEllipsisLabel + k, so broadcast batch dims flow through the same code as letters.
constexpr int kEllipsis = -1;  // marks "..." inside a parsed term
constexpr int kEllipsisLabel = 256;

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::string label_name(int label) {
  return label >= kEllipsisLabel ? std::string("...") : std::string(1, static_cast<char>(label));
}

// A term's letters in order, kEllipsis where "..." stands.
std::vector<int> parse_term(const std::string& term, const std::string& eq) {
  std::vector<int> items;
  bool seen_ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    if (is_letter(term[i])) {
      items.push_back(term[i]);
      continue;
    }
    COHORT_CHECK(term[i] == '.' && term.compare(i, 3, "...") == 0 && !seen_ellipsis,
                 "einsum: '.' may only appear as one '...' per operand, got '", term, "' in '", eq, "'");
    seen_ellipsis = true;
    items.push_back(kEllipsis);
    i += 2;
  }
  return items;
}

bool contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// A tensor whose dim d carries labels[d].
struct Labelled {
  Tensor t;
  std::vector<int> labels;
};

// Sums the dims whose label satisfies `drop`, removing their labels.
template <class Pred>
Labelled sum_labels(const Labelled& x, Pred drop) {
  std::vector<int64_t> dims;
  std::vector<int> kept;
  for (size_t d = 0; d < x.labels.size(); ++d) {
    if (drop(x.labels[d])) dims.push_back(static_cast<int64_t>(d));
    else kept.push_back(x.labels[d]);
  }
  if (dims.empty()) return x;  // sum() over an empty dim list would reduce everything
  return {sum(x.t, IntArrayRef(dims)), kept};
}

// x's dims rearranged into `order` (a permutation of x.labels).
Tensor permute_to(const Labelled& x, const std::vector<int>& order) {
  std::vector<int64_t> perm;
  for (int label : order)
    perm.push_back(std::find(x.labels.begin(), x.labels.end(), label) - x.labels.begin());
  return permute(x.t, perm);
}

int64_t size_of(const Labelled& x, int label) {
  return x.t.size(std::find(x.labels.begin(), x.labels.end(), label) - x.labels.begin());
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t s : v) p *= s;
  return p;
}

// Two operands whose letters not in the output all appear in both (contracted) and whose shared
// letters have equal sizes: one bmm, or a broadcasting mul when nothing is contracted.
Tensor contract(const Labelled& a, const Labelled& b, const std::vector<int>& out) {
  std::vector<int> batch, left, right, contracted;
  for (int l : out) {
    bool in_a = contains(a.labels, l), in_b = contains(b.labels, l);
    (in_a && in_b ? batch : in_a ? left : right).push_back(l);
  }
  for (int l : a.labels)
    if (!contains(out, l)) contracted.push_back(l);

  auto sizes = [](const Labelled& x, const std::vector<int>& labels) {
    std::vector<int64_t> s;
    for (int l : labels) s.push_back(size_of(x, l));
    return s;
  };
  std::vector<int64_t> bs = sizes(a, batch), ls = sizes(a, left), cs = sizes(a, contracted), rs = sizes(b, right);
  const int64_t nb = product(bs), nl = product(ls), nc = product(cs), nr = product(rs);

  auto concat = [](std::vector<int> x, const std::vector<int>& y, const std::vector<int>& z) {
    x.insert(x.end(), y.begin(), y.end());
    x.insert(x.end(), z.begin(), z.end());
    return x;
  };
  Tensor a3 = reshape(permute_to(a, concat(batch, left, contracted)), {nb, nl, nc});
  Tensor b3 = reshape(permute_to(b, concat(batch, contracted, right)), {nb, nc, nr});
  Tensor r = nc == 1 ? mul(a3, b3) : bmm(a3, b3);  // [nb, nl, 1] * [nb, 1, nr] is the outer product

  std::vector<int64_t> r_sizes = bs;
  r_sizes.insert(r_sizes.end(), ls.begin(), ls.end());
  r_sizes.insert(r_sizes.end(), rs.begin(), rs.end());
  return permute_to({reshape(r, r_sizes), concat(batch, left, right)}, out);
}

}  // namespace

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  for (size_t i = 0; i < eq.size(); ++i) {
    char c = eq[i];
    bool arrow = (c == '-' && i + 1 < eq.size() && eq[i + 1] == '>') || (c == '>' && i > 0 && eq[i - 1] == '-');
    COHORT_CHECK(is_letter(c) || c == ',' || c == '.' || arrow, "einsum: invalid character '", c,
                 "' in equation '", equation, "'; hint: subscripts are letters a-z, A-Z, with ',', '->' and '...'");
  }
  const size_t arrow = eq.find("->");
  const bool explicit_out = arrow != std::string::npos;
  COHORT_CHECK(!explicit_out || eq.find("->", arrow + 2) == std::string::npos,
               "einsum: '->' may appear only once, got '", equation, "'");
  const std::string lhs = eq.substr(0, arrow), rhs = explicit_out ? eq.substr(arrow + 2) : "";
  COHORT_CHECK(rhs.find(',') == std::string::npos, "einsum: the output (after '->') cannot contain ',', got '",
               equation, "'");

  std::vector<std::string> terms(1);
  for (char c : lhs) {
    if (c == ',') terms.emplace_back();
    else terms.back() += c;
  }
  COHORT_CHECK(operands.size() == 1 || operands.size() == 2, "einsum: supports one or two operands, got ",
               operands.size(), " for '", equation, "'; hint: chain two-operand einsums");
  COHORT_CHECK(terms.size() == operands.size(), "einsum: the equation '", equation, "' has ", terms.size(),
               " operand(s), got ", operands.size(), " tensor(s)");

  // Parse each term and check it against its operand's dims.
  std::vector<std::vector<int>> items(terms.size());
  std::vector<int64_t> ellipsis_dims(terms.size(), 0);
  int64_t max_ellipsis = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    COHORT_CHECK(operands[i].defined(), "einsum: operand ", i, " is an undefined tensor");
    items[i] = parse_term(terms[i], equation);
    const bool has_ellipsis = contains(items[i], kEllipsis);
    const int64_t letters = static_cast<int64_t>(items[i].size()) - (has_ellipsis ? 1 : 0);
    const int64_t nd = operands[i].dim();
    COHORT_CHECK(has_ellipsis ? nd >= letters : nd == letters, "einsum: operand ", i, " has subscripts '", terms[i],
                 "' for ", has_ellipsis ? "at least " : "", letters, " dims, got shape ", operands[i].sizes(), " (",
                 nd, " dims)");
    for (size_t j = 0; j < items[i].size(); ++j)
      COHORT_CHECK(items[i][j] == kEllipsis || std::count(items[i].begin(), items[i].end(), items[i][j]) == 1,
                   "einsum: letter '", label_name(items[i][j]), "' repeats in operand ", i, " ('", terms[i],
                   "'); diagonals are not supported; hint: take the diagonal first");
    ellipsis_dims[i] = has_ellipsis ? nd - letters : 0;
    max_ellipsis = std::max(max_ellipsis, ellipsis_dims[i]);
  }

  // Labels per operand ("..." right-aligned over the widest one) and the merged size of each label.
  std::vector<Labelled> ops;
  std::vector<int64_t> label_size(kEllipsisLabel + max_ellipsis, -1);
  std::vector<size_t> label_owner(label_size.size(), 0);
  for (size_t i = 0; i < terms.size(); ++i) {
    Labelled x{operands[i], {}};
    for (int item : items[i]) {
      if (item != kEllipsis) {
        x.labels.push_back(item);
        continue;
      }
      for (int64_t k = max_ellipsis - ellipsis_dims[i]; k < max_ellipsis; ++k)
        x.labels.push_back(static_cast<int>(kEllipsisLabel + k));
    }
    for (size_t d = 0; d < x.labels.size(); ++d) {
      const int l = x.labels[d];
      const int64_t s = x.t.size(static_cast<int64_t>(d)), seen = label_size[l];
      if (l >= kEllipsisLabel)
        COHORT_CHECK(seen == -1 || seen == s || seen == 1 || s == 1, "einsum: the dims under '...' do not broadcast: ",
                     "shape ", operands[label_owner[l]].sizes(), " of operand ", label_owner[l], " against ",
                     operands[i].sizes(), " of operand ", i);
      else
        COHORT_CHECK(seen == -1 || seen == s || seen == 1 || s == 1, "einsum: letter '", label_name(l), "' has size ",
                     seen, " in operand ", label_owner[l], " but size ", s, " in operand ", i);
      if (seen == -1 || seen == 1) label_owner[l] = i;
      label_size[l] = seen == -1 || seen == 1 ? s : seen;
    }
    ops.push_back(std::move(x));
  }

  // The output labels: explicit, or "..." then the letters used once, in alphabetical order.
  std::vector<int> out;
  const std::vector<int> out_items = explicit_out ? parse_term(rhs, equation) : std::vector<int>{};
  if (!explicit_out && max_ellipsis > 0) out.push_back(kEllipsis);
  if (!explicit_out)
    for (int c = 0; c < 128; ++c)
      if (is_letter(static_cast<char>(c)) &&
          std::count_if(ops.begin(), ops.end(), [c](const Labelled& x) { return contains(x.labels, c); }) == 1)
        out.push_back(c);
  for (int item : out_items) {
    COHORT_CHECK(item == kEllipsis || label_size[item] != -1, "einsum: output letter '", label_name(item),
                 "' does not appear in any input of '", equation, "'");
    COHORT_CHECK(item == kEllipsis || std::count(out_items.begin(), out_items.end(), item) == 1,
                 "einsum: output letter '", label_name(item), "' appears more than once in '", equation, "'");
    out.push_back(item);
  }
  if (auto it = std::find(out.begin(), out.end(), kEllipsis); it != out.end()) {
    std::vector<int> dims;
    for (int64_t k = 0; k < max_ellipsis; ++k) dims.push_back(static_cast<int>(kEllipsisLabel + k));
    it = out.erase(it);
    out.insert(it, dims.begin(), dims.end());
  }
  auto in_out = [&out](int l) { return contains(out, l); };

  if (ops.size() == 1) {
    Labelled x = sum_labels(ops[0], [&](int l) { return !in_out(l); });
    return permute_to(x, out);
  }

  // Sum the letters only one operand uses and the output drops; then make the shared letters agree
  // in size: a size-1 batch letter expands, a size-1 contracted letter lets the other side be summed.
  Labelled a = sum_labels(ops[0], [&](int l) { return !in_out(l) && !contains(ops[1].labels, l); });
  Labelled b = sum_labels(ops[1], [&](int l) { return !in_out(l) && !contains(ops[0].labels, l); });
  for (int l : std::vector<int>(a.labels)) {
    if (!contains(b.labels, l) || size_of(a, l) == size_of(b, l)) continue;
    Labelled& small = size_of(a, l) == 1 ? a : b;
    Labelled& large = size_of(a, l) == 1 ? b : a;
    const int64_t d = std::find(large.labels.begin(), large.labels.end(), l) - large.labels.begin();
    if (in_out(l)) {
      std::vector<int64_t> sizes = small.t.sizes().vec();
      sizes[std::find(small.labels.begin(), small.labels.end(), l) - small.labels.begin()] = large.t.size(d);
      small.t = expand(small.t, sizes);
    } else {
      large.t = sum(large.t, {d}, /*keepdim=*/true);
    }
  }
  return contract(a, b, out);
}

}  // namespace cohort
