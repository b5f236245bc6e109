// Op-table rows for nll_loss (the fused loops of src/ops/cpu/nll_loss.cpp, and so cross_entropy's
// core): reductions, class weights, ignore_index, a class dim with trailing dims and a single
// sample. The reference picks -weight[t] * x[.., t, ..] with plain loops.
#include "cohort/nn/functional/loss.h"
#include "cohort/ops/creation.h"
#include "support/op_table.h"

namespace cohort::testing {
namespace {

namespace F = cohort::nn::functional;
using S = std::vector<std::vector<Shape>>;

// x: [N, C, d...] or [C]; t: x's shape without the class dim. Returns the per-sample losses (t's
// shape) and the summed weight of the samples not ignored.
std::pair<Nd, double> nll_reference(const Nd& x, const Nd& t, const std::vector<double>& weight, int64_t ignore) {
  double total_weight = 0;
  Nd per_sample = build(t.shape, [&](const std::vector<int64_t>& idx) {
    const auto c = static_cast<int64_t>(t.at(idx));
    if (c == ignore) return 0.0;
    std::vector<int64_t> at = idx;
    at.insert(x.dim() == 1 ? at.begin() : at.begin() + 1, c);
    const double w = weight.empty() ? 1.0 : weight[c];
    total_weight += w;
    return -w * x.at(at);
  });
  return {per_sample, total_weight};
}

OpRow nll_row(std::string name, Reduction reduction, std::vector<double> weight = {}, int64_t ignore = -100) {
  const S samples = weight.empty() ? S{{{4, 5}, {4}}, {{2, 3, 4}, {2, 4}}, {{5}, {}}} : S{{{6, 5}, {6}}};
  return {.name = std::move(name),
          .samples = samples,
          .op = [=](const In& x) {
            auto options = F::NLLLossOptions().reduction(reduction).ignore_index(ignore);
            if (!weight.empty()) options.weight(tensor(weight, x[0].options()));
            return Out{F::nll_loss(x[0], x[1], options)};
          },
          .ref = [=](const Refs& x) {
            auto [per_sample, total_weight] = nll_reference(x[0], x[1], weight, ignore);
            if (reduction == Reduction::None) return Refs{per_sample};
            double sum = 0;
            for (double v : per_sample.v) sum += v;
            Nd out = zeros_nd({});
            out.v[0] = reduction == Reduction::Mean ? sum / total_weight : sum;
            return Refs{out};
          },
          .domains = {real(-3, 0), index_below(3)}};
}

std::vector<OpRow> loss_rows() {
  return {
      nll_row("nll_loss_mean", Reduction::Mean),
      nll_row("nll_loss_sum", Reduction::Sum),
      nll_row("nll_loss_none", Reduction::None),
      nll_row("nll_loss_weight_mean", Reduction::Mean, {0.5, 2.0, 1.5, 3.0, 0.25}),
      nll_row("nll_loss_weight_ignore_mean", Reduction::Mean, {0.5, 2.0, 1.5, 3.0, 0.25}, 1),
      nll_row("nll_loss_weight_ignore_none", Reduction::None, {0.5, 2.0, 1.5, 3.0, 0.25}, 2),
  };
}
COHORT_OP_ROWS("loss", loss_rows);

}  // namespace
}  // namespace cohort::testing
