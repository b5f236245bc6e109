// Uneven inputs. cohort's choice: equal batches, checked (not PyTorch's Join, which shadows the missing
// ranks' collectives). DistributedDataParallel needs every rank to run the same number of iterations:
// a rank that stops early leaves the others waiting in a collective until they fail (at once with
// "peer rank r" if its process exits, else after the timeout). data::DistributedSampler gives every
// rank the same number of examples (it pads, or cuts with drop_last), hence the same number of batches
// for the same batch size; call check_equal_batches at the start of each epoch to catch the rest
// (a dataset that differs between ranks, a batch size given per rank).
//
//   distributed::check_equal_batches(*pg, loader.size());
#pragma once

#include <cstdint>

#include "cohort/distributed/process_group.h"

namespace cohort::distributed {

// Collective. Throws cohort::Error on every rank, listing each rank's count, when the counts differ.
void check_equal_batches(ProcessGroup& group, int64_t batches);

}  // namespace cohort::distributed
