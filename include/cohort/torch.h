// libtorch's namespaces over cohort: a libtorch program ports by replacing
//   #include <torch/torch.h>
// with
//   #include <cohort/torch.h>
// and nothing else. torch::, at:: and c10:: all name cohort, so torch::Tensor, at::kFloat,
// c10::Error and c10::optional are cohort's. (Including <cohort/cohort.h> and writing
// `namespace torch = cohort;` is the same, for programs that use only torch::.)
#pragma once

#include "cohort/cohort.h"

#if __cplusplus >= 201703L  // else cohort.h has said why it stops: no second error here
namespace torch = cohort;
namespace at = cohort;
namespace c10 = cohort;
#endif
