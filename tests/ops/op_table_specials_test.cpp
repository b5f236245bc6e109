// The op table's special-values references against PyTorch: for each case of
// tests/fixtures/specials.json (written by tests/fixtures/generate_specials.py), the row of that name
// must opt in to special values, and its reference and its op must both give PyTorch 1.13's values
// on PyTorch's inputs. This is what makes the references' NaN and inf rules PyTorch's and not ours.
#include <gtest/gtest.h>

#include <set>

#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/creation.h"
#include "support/op_table.h"
#include "support/pytorch_fixture.h"

namespace cohort::testing {
namespace {

const OpRow* row_named(const std::string& name) {
  for (const OpRow& r : op_table())
    if (r.name == name) return &r;
  return nullptr;
}

Tensor tensor_of(const Nd& nd) {
  Tensor t = zeros(nd.shape, TensorOptions(nd.dtype));
  for (int64_t i = 0; i < nd.numel(); ++i) set_element(t, i, nd.v[i]);
  return t;
}

TEST(OpTableSpecials, ReferencesAndOpsAgreeWithPyTorch) {
  const nlohmann::json& cases = load_fixture("specials.json").at("cases");
  ASSERT_GE(cases.size(), 40u);
  for (const auto& [name, c] : cases.items()) {
    SCOPED_TRACE(name);
    const OpRow* row = row_named(name);
    ASSERT_TRUE(row) << "specials.json has a case " << name << " but the op table no such row";
    EXPECT_TRUE(row->specials) << name << " has PyTorch's special values but does not opt in to the check";
    std::vector<Tensor> xs;
    Refs in;
    for (const auto& e : c.at("inputs")) xs.push_back(decode_tensor(e)), in.push_back(to_nd(xs.back()));
    const auto& want = c.at("outputs");
    Refs refs = row->ref(in);
    std::vector<Tensor> got;
    {
      NoGradGuard no_grad;
      got = row->op(xs);
    }
    ASSERT_EQ(refs.size(), want.size());
    ASSERT_EQ(got.size(), want.size());
    for (size_t o = 0; o < want.size(); ++o) {
      EXPECT_TRUE(matches_pytorch(name + " reference, output " + std::to_string(o), tensor_of(refs[o]), want[o]));
      EXPECT_TRUE(matches_pytorch(name + " op, output " + std::to_string(o), got[o], want[o]));
    }
  }
}

}  // namespace
}  // namespace cohort::testing
