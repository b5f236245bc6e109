// Matrix products (oneDNN for float32, plain loops for the other dtypes) and einsum.
#pragma once

#include <string>
#include <vector>

#include "cohort/core/tensor.h"

namespace cohort {

Tensor mm(const Tensor& a, const Tensor& b);   // [n, k] x [k, m] -> [n, m]
Tensor bmm(const Tensor& a, const Tensor& b);  // [b, n, k] x [b, k, m] -> [b, n, m]
// numpy matmul: 1-d operands are promoted and the added dim removed; batch dims broadcast.
Tensor matmul(const Tensor& a, const Tensor& b);
// beta * input + alpha * (a x b); input broadcasts to [n, m].
Tensor addmm(const Tensor& input, const Tensor& a, const Tensor& b, const Scalar& beta = 1, const Scalar& alpha = 1);
// beta * input + alpha * bmm(batch1, batch2); input broadcasts to [b, n, m]. With beta 0, input is
// not read (NaN in it does not propagate), as in PyTorch.
Tensor baddbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
               const Scalar& alpha = 1);
// y = input weight^T + bias: input [*, in], weight [out, in], bias [out] or undefined -> [*, out].
// Throws when the last dim of input is not in_features or weight is not 2-d.
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = {});
Tensor dot(const Tensor& a, const Tensor& b);
Tensor outer(const Tensor& a, const Tensor& b);

// The lower (tril) or upper (triu) triangle of the matrices in the last two dims of x [..., m, n]:
// elements with col - row <= diagonal (tril) or >= diagonal (triu) are kept, the others are 0
// (even where x is NaN). diagonal 0 is the main diagonal, 1 the one above it, -1 the one below.
// Throws for an x of fewer than 2 dims. Differentiable (any order).
Tensor tril(const Tensor& x, int64_t diagonal = 0);
Tensor triu(const Tensor& x, int64_t diagonal = 0);

// Einstein summation over one or two operands: "bgi,gio->bgo", "gik,gkj->gij", "ij->ji",
// "...ij,...jk->...ik". Letters in the inputs but not in the output are summed; without "->" the
// output is the letters seen once, in alphabetical order. Repeated letters within one operand
// (diagonals) are not supported and throw.
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);

}  // namespace cohort
