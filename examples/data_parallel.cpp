// The DataParallel tutorial (PyTorch's "Optional: Data Parallelism"), on CPU devices: a dataset of
// 100 random samples in batches of 30 through Linear(5, 2) wrapped in nn::DataParallel. The model
// prints the size of its part of each batch; outside, the gathered output has the whole batch.
//   ./data_parallel [devices] [chunk]   (default 2; 3 and 8 are the tutorial's other runs)
// cohort splits 10 on 3 as 4, 3, 3 (balanced); "chunk" gives PyTorch's 4, 4, 2, as the tutorial prints.
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>

#include <cohort/cohort.h>
#include <cohort/parallel/data_parallel.h>

using namespace cohort;

struct Model : nn::Cloneable<Model> {
  Model(int64_t input_size, int64_t output_size) : in(input_size), out(output_size) { reset(); }
  void reset() override { fc = register_module("fc", nn::Linear(in, out)); }
  Tensor forward(const Tensor& input) {
    Tensor output = fc(input);
    static std::mutex print;  // replicas run at once: one line at a time
    std::lock_guard<std::mutex> l(print);
    std::cout << "\tIn Model: input size " << input.sizes().vec() << " output size " << output.sizes().vec() << "\n";
    return output;
  }
  int64_t in, out;
  nn::Linear fc{nullptr};
};

int main(int argc, char** argv) {
  const int64_t input_size = 5, output_size = 2, batch_size = 30, data_size = 100;
  set_device_count(argc > 1 ? std::atoi(argv[1]) : 2);
  manual_seed(0);
  Tensor data = randn({data_size, input_size});  // RandomDataset(5, 100)

  auto model = std::make_shared<Model>(input_size, output_size);
  std::cout << "Let's use " << device_count() << " devices!\n";
  parallel::DataParallelOptions options;
  if (argc > 2 && std::strcmp(argv[2], "chunk") == 0) options.rule(parallel::kChunk);
  nn::DataParallel<Model> dp(model, parallel::all_devices(), options);  // the module stays on cpu:0

  Tensor perm = randperm(data_size);  // shuffle=True
  for (int64_t start = 0; start < data_size; start += batch_size) {
    Tensor input = data.index_select(0, perm.narrow(0, start, std::min(batch_size, data_size - start)));
    Tensor output = dp.forward(input);
    std::cout << "Outside: input size " << input.sizes().vec() << " output_size " << output.sizes().vec() << "\n";
  }
}
