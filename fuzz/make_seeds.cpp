// Writes the seed corpora: small valid inputs for each fuzz target, made by the library's own
// writers, into <out>/<target>/seed-<n>.   usage: make_seeds <out>
#include <zlib.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <vector>

#include "cohort/io/checkpoint.h"
#include "cohort/io/npy.h"
#include "cohort/io/onnx.h"
#include "cohort/io/safetensors.h"
#include "cohort/io/serialize.h"
#include "cohort/io/torch_file.h"
#include "cohort/nn/conv.h"
#include "cohort/nn/linear.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pooling.h"
#include "cohort/ops/reduction.h"
#include "fuzz_util.h"

#include "app/config.h"
#include "app/run_checkpoint.h"

namespace fs = std::filesystem;
using namespace cohort;
using Bytes = std::vector<uint8_t>;

namespace {

fs::path out_root;

void put(const std::string& target, const Bytes& bytes) {
  const fs::path dir = out_root / target;
  fs::create_directories(dir);
  size_t n = 0;
  while (fs::exists(dir / ("seed-" + std::to_string(n)))) ++n;
  std::ofstream(dir / ("seed-" + std::to_string(n)), std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

Bytes read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

Bytes idx(const std::vector<uint32_t>& dims) {
  Bytes b = {0, 0, 8, static_cast<uint8_t>(dims.size())};
  size_t n = 1;
  for (uint32_t d : dims) {
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(d >> s));
    n *= d;
  }
  for (size_t i = 0; i < n; ++i) b.push_back(static_cast<uint8_t>(i * 7 % 10));
  return b;
}

Bytes gzip(const Bytes& in) {
  z_stream z{};
  deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  Bytes out(deflateBound(&z, in.size()) + 32);
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

Bytes with_mode(uint8_t mode, Bytes b) {
  b.insert(b.begin(), mode);
  return b;
}

Bytes text(const std::string& s) { return Bytes(s.begin(), s.end()); }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_seeds <out>\n";
    return 2;
  }
  out_root = argv[1];
  const fs::path tmp = fuzz::scratch_dir() / "seeds";
  fs::create_directories(tmp);

  for (const auto& dims : std::vector<std::vector<uint32_t>>{{3}, {2, 3}, {1, 28, 28}, {0, 28, 28}, {2, 1, 2, 2}})
    put("idx", idx(dims));
  put("idx_gz", with_mode(0, gzip(idx({2, 3}))));
  put("idx_gz", with_mode(0, gzip(idx({1, 28, 28}))));
  put("idx_gz", with_mode(1, idx({2, 3})));
  put("idx_gz", with_mode(2, idx({4, 5})));

  put("csv", text("x1,x2,y\n1.5,-2,cat\n3,4e-1,dog\n"));
  put("csv", text("\xEF\xBB\xBF\"a,b\",y\r\n\"1\",0\r\n2,1\r\n\n"));
  put("csv", text("y,x\n1,NA\n2,\"say \"\"hi\"\"\"\n"));

  for (int records : {1, 2}) {
    Bytes b;
    for (int r = 0; r < records; ++r) {
      b.push_back(static_cast<uint8_t>(r * 3 % 10));
      for (int i = 0; i < 3072; ++i) b.push_back(static_cast<uint8_t>(i / 1024 * 80 + i % 32));
    }
    put("cifar10", b);
  }

  const std::vector<Tensor> samples = {
      arange(6, TensorOptions(kFloat32)).reshape({2, 3}), scalar_tensor(3.5, TensorOptions(kFloat64)),
      arange(4, TensorOptions(kInt64)), arange(3, TensorOptions(kInt32)).reshape({3, 1}),
      arange(5, TensorOptions(kUInt8)), tensor({1, 0, 1}).to(kBool), empty({0, 2})};
  for (const Tensor& t : samples) {
    io::save_npy(tmp / "x.npy", t);
    put("npy", read(tmp / "x.npy"));
  }
  std::map<std::string, Tensor> named;
  for (size_t i = 0; i < samples.size(); ++i) named["t" + std::to_string(i)] = samples[i];
  io::save_safetensors(tmp / "x.safetensors", named, {{"format", "pt"}, {"note", "seed"}});
  put("safetensors", read(tmp / "x.safetensors"));
  io::save_safetensors(tmp / "x.safetensors", std::map<std::string, Tensor>{{"w", samples[0]}});
  put("safetensors", read(tmp / "x.safetensors"));

  // PyTorch's format: a tensor, a list, a dict of views sharing a storage; the tiny run's model and
  // optimizer below.
  io::write_torch_file(tmp / "x.pt", io::PyValue::list(io::PyValue::Items(samples.begin(), samples.end())));
  put("torch_file", read(tmp / "x.pt"));
  io::write_torch_file(tmp / "x.pt", io::PyValue::dict({{"w", samples[0]}, {"wt", samples[0].t()}, {"n", 3.5}}, true));
  put("torch_file", read(tmp / "x.pt"));

  fuzz::TinyRun run;
  cohort::save(run.model, tmp / "m.pt");
  put("torch_file", read(tmp / "m.pt"));
  cohort::save(*run.optimizer, tmp / "o.pt");
  put("torch_file", read(tmp / "o.pt"));
  io::save_checkpoint(tmp / "c.safetensors", *run.model, run.optimizer.get(), {{"epoch", "1"}});
  put("checkpoint", read(tmp / "c.safetensors"));
  io::save_checkpoint(tmp / "c.safetensors", *run.model, nullptr, {});
  put("checkpoint", read(tmp / "c.safetensors"));

  // ONNX models from the exporter: a linear layer, and a small convolutional net with a softmax.
  nn::Linear fc(3, 2);
  const std::string onnx_fc = io::export_onnx_bytes(*fc, [&](const Tensor& x) { return fc(x); }, ones({2, 3}));
  put("onnx", Bytes(onnx_fc.begin(), onnx_fc.end()));
  nn::Conv2d conv(nn::Conv2dOptions(1, 2, 3).padding(1));
  const std::string onnx_conv = io::export_onnx_bytes(
      *conv, [&](const Tensor& x) { return softmax(max_pool2d(conv(x), 2).flatten(1), 1); }, ones({1, 1, 4, 4}));
  put("onnx", Bytes(onnx_conv.begin(), onnx_conv.end()));

  app::TrainConfig config;
  put("train_config", text(app::to_json(config).dump()));
  config.model = "resnet18", config.dataset = "cifar10", config.optimizer = "adamw", config.scheduler = "onecycle";
  config.lr = 0.1, config.seed = 7, config.limit = 100, config.checkpoint_every = 5, config.devices = "cpu:0";
  put("train_config", text(app::to_json(config).dump(2)));

  app::TrainProgress progress;
  progress.step = 12, progress.loader = {1, 4}, progress.loss_sum = 3.25, progress.correct = 40, progress.seen = 64;
  app::DataSpec images;
  images.classes = {"a", "b"}, images.mean = {0.5}, images.std = {0.25};
  app::DataSpec table;  // a table whose class names include bytes that are not UTF-8
  table.kind = app::DataKind::kTable, table.classes = {"low", "h\xe9gh"}, table.channels = 2, table.image_size = 1;
  table.mean = {0.5, -1}, table.std = {2, 0.25}, table.features = {"x", "y"};
  for (const app::Schedule* schedule : {static_cast<const app::Schedule*>(run.schedule.get()),
                                        static_cast<const app::Schedule*>(nullptr)}) {
    fs::remove_all(tmp / "run");
    const fs::path file = app::save_run_checkpoint(tmp / "run", "seed-run", config, schedule ? images : table,
                                                   progress, *run.model, *run.optimizer, schedule);
    put("run_checkpoint", text(io::load_safetensors_metadata(file).at("cohort.run")));
  }
  // The decoder fixtures (tests/fixtures/generate_images.py): every kind of JPEG and PNG read_image handles.
  for (const auto& e : fs::directory_iterator(COHORT_FIXTURES_DIR "/images")) {
    const std::string ext = e.path().extension().string();
    if (ext == ".jpg" || ext == ".png") put(ext == ".jpg" ? "jpeg" : "png", read(e.path()));
  }
  fs::remove_all(tmp);
  std::cout << "make_seeds: wrote the seed corpora in " << out_root.string() << "\n";
}
