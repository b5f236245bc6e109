// save_checkpoint_on_rank0 and check_equal_batches: small collectives around io and the data loader.
#include "cohort/distributed/checkpoint.h"

#include <exception>

#include "cohort/distributed/uneven.h"
#include "cohort/io/checkpoint.h"
#include "cohort/ops/creation.h"

namespace cohort::distributed {

void save_checkpoint_on_rank0(ProcessGroup& group, const std::filesystem::path& path, const nn::Module& module,
                              const optim::Optimizer* optimizer, const std::map<std::string, std::string>& metadata) {
  std::exception_ptr error;
  std::string message;
  if (group.rank() == 0) {
    try {
      io::save_checkpoint(path, module, optimizer, metadata);
    } catch (const std::exception& e) {
      error = std::current_exception();
      message = e.what();
    }
  }
  // The status travels from rank 0, so it doubles as the barrier: nobody returns before the file is whole.
  Tensor status = zeros({1}, TensorOptions(kInt64));
  status.fill_(static_cast<int64_t>(message.size()) + (error ? 1 : 0));
  group.broadcast({status}, 0);
  int64_t n = status.item<int64_t>();
  if (n == 0) return;
  Tensor text = zeros({n - 1}, TensorOptions(kUInt8));
  if (group.rank() == 0 && n > 1) std::copy(message.begin(), message.end(), text.data_ptr<uint8_t>());
  if (n > 1) group.broadcast({text}, 0);
  if (error) std::rethrow_exception(error);
  const auto* bytes = text.data_ptr<uint8_t>();
  throw Error(detail::str("save_checkpoint_on_rank0: rank 0 could not write ", path, ": ",
                          std::string(bytes, bytes + (n - 1))));
}

void check_equal_batches(ProcessGroup& group, int64_t batches) {
  Tensor mine = zeros({1}, TensorOptions(kInt64));
  mine.fill_(batches);
  std::vector<Tensor> all = group.all_gather(mine);
  std::string list;
  bool equal = true;
  for (size_t r = 0; r < all.size(); ++r) {
    int64_t b = all[r].item<int64_t>();
    equal = equal && b == batches;
    list += detail::str(r ? ", " : "", "rank ", r, ": ", b);
  }
  COHORT_CHECK(equal, "check_equal_batches: the ranks have different numbers of batches (", list,
               "), so DistributedDataParallel would wait for a rank that has stopped; hint: use data::DistributedSampler "
               "with the same dataset size and batch size on every rank (drop_last=true drops a last, partial batch "
               "on every rank alike)");
}

}  // namespace cohort::distributed
