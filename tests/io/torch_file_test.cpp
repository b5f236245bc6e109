// PyTorch's file format: files written by Python's torch.save (tests/fixtures/generate_torch_files.py)
// and by libtorch's torch::save (generate_libtorch_files.cpp) read by cohort, cohort's files read by
// Python's torch.load (PythonReadsCohortFiles), and one crafted file per rule the reader checks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "io/io_test_util.h"
#include "io/pickle.h"
#include "io/zip.h"
#include "support/error_of.h"
#include "support/pytorch_fixture.h"
#include "support/subprocess.h"

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/tensor_impl.h"
#include "cohort/io/serialize.h"
#include "cohort/io/torch_file.h"
#include "cohort/nn/batchnorm.h"
#include "cohort/nn/container.h"
#include "cohort/nn/conv.h"
#include "cohort/nn/init.h"
#include "cohort/nn/linear.h"
#include "cohort/nn/module_holder.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/optim/adam.h"
#include "cohort/optim/sgd.h"
#include "support/paths.h"

using namespace cohort;
using namespace cohort::testing;
using ::testing::HasSubstr;

namespace {

fs::path torch_fixture(const std::string& name) { return fs::path(cohort::testing::fixtures_dir()) / "torch" / name; }
const nlohmann::json& expected() { return load_fixture("torch/torch.json"); }

// The net of generate_torch_files.py.
struct ConvNetImpl : nn::Module {
  ConvNetImpl() {
    conv = register_module("conv", nn::Conv2d(nn::Conv2dOptions(1, 2, 3)));
    bn = register_module("bn", nn::BatchNorm2d(2));
    fc = register_module("fc", nn::Linear(8, 3));
  }
  Tensor forward(Tensor x) {
    x = bn(conv(x)).relu();
    return fc(x.flatten(1));
  }
  nn::Conv2d conv{nullptr};
  nn::BatchNorm2d bn{nullptr};
  nn::Linear fc{nullptr};
};
TORCH_MODULE(ConvNet);

Tensor net_input() { return linspace(-1, 1, 2 * 16).reshape({2, 1, 4, 4}); }

const StorageImpl* storage_of(const Tensor& t) { return t.unsafe_impl()->storage().get(); }

// Builds pickles byte by byte, for crafted files.
struct Pickle {
  std::string b = "\x80\x02";
  Pickle& raw(const std::string& s) { b += s; return *this; }
  Pickle& str(const std::string& s) {
    b += 'X';
    for (int i = 0; i < 4; ++i) b += static_cast<char>((s.size() >> (8 * i)) & 0xFF);
    b += s;
    return *this;
  }
  Pickle& small_int(int v) { b += 'K'; b += static_cast<char>(v); return *this; }
  // _rebuild_tensor_v2 of a FloatStorage `key` of `numel` elements, 1-d with `size` and stride 1.
  Pickle& tensor(const std::string& key, int numel, int offset, int size) {
    raw("ctorch._utils\n_rebuild_tensor_v2\n((").str("storage").raw("ctorch\nFloatStorage\n").str(key).str("cpu");
    small_int(numel).raw("tQ");
    small_int(offset).small_int(size).raw("\x85").small_int(1).raw("\x85\x89").raw("ccollections\nOrderedDict\n)R");
    return raw("tR");
  }
  std::string done() const { return b + "."; }
};

// A zip archive "archive/..." of these records (data.pkl, version "3" unless given, ...).
std::string archive(const std::string& pkl, std::map<std::string, std::string> records = {}) {
  std::string out;
  io::detail::ZipWriter zip([&](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); });
  zip.add("archive/data.pkl", pkl.data(), pkl.size());
  if (!records.count("version")) records["version"] = "3\n";
  for (const auto& [name, bytes] : records)
    if (!bytes.empty()) zip.add("archive/" + name, bytes.data(), bytes.size());
  zip.finish();
  return out;
}

std::string floats(int n) {
  std::string s(4 * static_cast<size_t>(n), '\0');
  for (int i = 0; i < n; ++i) {
    const float v = static_cast<float>(i);
    std::memcpy(s.data() + 4 * i, &v, 4);
  }
  return s;
}

class TorchFile : public ScratchDir {};

// ---- Python's files ------------------------------------------------------------------------------

TEST_F(TorchFile, ReadsPythonStateDict) {
  const auto sd = io::read_torch_state_dict(torch_fixture("conv_net.pt"));
  const auto& want = expected()["conv_net"];
  ASSERT_EQ(sd.size(), want.size());
  for (const auto& item : sd) EXPECT_TRUE(matches_pytorch(item.key(), item.value(), want[item.key()], 0)) << item.key();
  EXPECT_TRUE(io::read_torch_file(torch_fixture("conv_net.pt")).is_ordered_dict());

  ConvNet net;
  cohort::load(net, torch_fixture("conv_net.pt"));
  net->eval();
  EXPECT_TRUE(matches_pytorch("output", net->forward(net_input()).detach(), expected()["conv_net_output"], 1e-5));
  EXPECT_EQ(net->bn->named_buffers()["num_batches_tracked"].item<int64_t>(), 1);
}

TEST_F(TorchFile, ReadsViewsThatShareAStorage) {
  const io::PyValue v = io::read_torch_file(torch_fixture("views.pt"));
  const Tensor base = v.find("base")->to_tensor();
  const Tensor view = v.find("view")->to_tensor();
  const Tensor row = v.find("row")->to_tensor();
  EXPECT_TRUE(matches_pytorch("view", view, expected()["views"]["view"], 0));
  EXPECT_TRUE(matches_pytorch("row", row, expected()["views"]["row"], 0));
  EXPECT_EQ(view.storage_offset(), 5);
  EXPECT_EQ(view.strides(), IntArrayRef({2, 5}));
  EXPECT_EQ(row.storage_offset(), 10);
  EXPECT_EQ(storage_of(base), storage_of(view));
  EXPECT_EQ(storage_of(base), storage_of(row));
}

TEST_F(TorchFile, ReadsListsParametersAndProtocol4) {
  std::vector<Tensor> list;
  cohort::load(list, torch_fixture("list.pt"));
  ASSERT_EQ(list.size(), 2u);
  EXPECT_TRUE(same_tensor(list[0], ones({2, 2})));
  EXPECT_TRUE(same_tensor(list[1], arange(3)));

  Tensor p;
  cohort::load(p, torch_fixture("parameter.pt"));
  EXPECT_TRUE(p.requires_grad());
  EXPECT_TRUE(same_tensor(p.detach(), tensor({0.5f, -1.0f})));

  Tensor q;
  cohort::load(q, torch_fixture("protocol4.pt"));
  EXPECT_TRUE(same_tensor(q, tensor(std::vector<int64_t>{1, 2, 3, 4}).reshape({2, 2})));
}

// bfloat16 and float16 tensors are written as PyTorch's BFloat16Storage and HalfStorage and read back
// as themselves, bit for bit.
TEST_F(TorchFile, RoundTripsBfloat16AndFloat16) {
  const Tensor values = tensor({1.5f, -3.0f, 0.1f, 65504.0f, -0.0f});
  for (DType t : {kBFloat16, kFloat16}) {
    cohort::save(values.to(t), path("narrow.pt"));
    Tensor back;
    cohort::load(back, path("narrow.pt"));
    EXPECT_EQ(back.dtype(), t);
    EXPECT_TRUE(equal(back, values.to(t))) << t;
  }
}

TEST_F(TorchFile, ReadsEveryDtypeWideningWhatCohortLacks) {
  const io::PyValue v = io::read_torch_file(torch_fixture("dtypes.pt"));
  const auto& want = expected()["dtypes"];
  ASSERT_EQ(v.dict_items().size(), want.size());
  for (const auto& [key, value] : v.dict_items())
    EXPECT_TRUE(matches_pytorch(key.to_string(), value.to_tensor(), want[key.to_string()], 0)) << key.to_string();
}

// cohort loads the model and the optimizer state Python saved after two steps, takes a third step and
// lands where Python's third step did.
template <class Optimizer, class Options>
void continue_python_training(const std::string& kind, Options options) {
  nn::Linear model(3, 2);
  cohort::load(model, torch_fixture(kind + "_model.pt"));
  Optimizer opt(model->parameters(), options);
  cohort::load(opt, torch_fixture(kind + ".pt"));
  const Tensor x = decode_tensor(expected()[kind]["x"]);
  opt.zero_grad();
  model->forward(x).pow(2).sum().backward();
  opt.step();
  for (const auto& item : model->named_parameters())
    EXPECT_TRUE(matches_pytorch(kind + " " + item.key(), item.value().detach(), expected()[kind]["after_step"][item.key()], 1e-6));
}

TEST_F(TorchFile, ContinuesPythonOptimizers) {
  // Options that differ from the file's: loading replaces them.
  continue_python_training<optim::SGD>("sgd", optim::SGDOptions(1.0));
  continue_python_training<optim::Adam>("adam", optim::AdamOptions(1.0));
}

// ---- libtorch's files ----------------------------------------------------------------------------

TEST_F(TorchFile, ReadsLibtorchModuleAndTensorArchives) {
  const auto sd = io::read_torch_state_dict(torch_fixture("libtorch_net.pt"));
  std::vector<std::string> names;
  for (const auto& item : sd) names.push_back(item.key());
  EXPECT_THAT(names, ::testing::ElementsAre("fc.weight", "fc.bias", "seq.0.weight", "seq.0.bias", "seq.0.running_mean",
                                            "seq.0.running_var", "seq.0.num_batches_tracked"));
  EXPECT_TRUE(same_tensor(sd["fc.weight"], arange(6, TensorOptions(kFloat32)).reshape({3, 2}) + 10));
  EXPECT_TRUE(same_tensor(sd["seq.0.bias"], arange(3, TensorOptions(kFloat32)) + 40));
  EXPECT_TRUE(same_tensor(sd["seq.0.running_mean"], full({3}, 0.5)));

  Tensor t;
  cohort::load(t, torch_fixture("libtorch_tensor.pt"));
  EXPECT_TRUE(same_tensor(t, arange(6, TensorOptions(kFloat64)).reshape({2, 3}).t()));

  optim::SGD sgd({ones({2}).requires_grad_()}, optim::SGDOptions(0.1).momentum(0.9));
  EXPECT_THAT(error_of([&] { cohort::load(sgd, torch_fixture("libtorch_sgd.pt")); }),
              HasSubstr("libtorch_sgd.pt: an optimizer archive of libtorch's C++ torch::save"));
}

// ---- cohort's files, read by cohort and by Python -------------------------------------------------

TEST_F(TorchFile, RoundTripsValuesInCohort) {
  const Tensor base = arange(12, TensorOptions(kFloat64)).reshape({3, 4});
  const io::PyValue value = io::PyValue::dict(
      {{"t", base.t()},
       {"row", base[1]},
       {"ints", io::PyValue::list({0, 255, 256, 65535, 65536, -1, INT32_MIN, int64_t{1} << 40, INT64_MIN, INT64_MAX})},
       {"floats", io::PyValue::tuple({0.1, -0.0, INFINITY, 1e-310})},
       {"other", io::PyValue::list({true, false, io::PyValue(), "text"})},
       {7, tensor({true, false})},
       {"empty", zeros({0, 2}, TensorOptions(kInt32))}},
      /*ordered=*/true);
  io::write_torch_file(path("v.pt"), value);
  const io::PyValue back = io::read_torch_file(path("v.pt"));
  ASSERT_TRUE(back.is_ordered_dict());
  EXPECT_TRUE(same_tensor(back.find("t")->to_tensor(), base.t()));
  EXPECT_EQ(back.find("t")->to_tensor().strides(), IntArrayRef({1, 4}));
  EXPECT_EQ(storage_of(back.find("t")->to_tensor()), storage_of(back.find("row")->to_tensor()));
  const auto& ints = back.find("ints")->items();
  const auto& want = value.find("ints")->items();
  ASSERT_EQ(ints.size(), want.size());
  for (size_t i = 0; i < ints.size(); ++i) EXPECT_EQ(ints[i].to_int(), want[i].to_int()) << i;
  const auto& fl = back.find("floats")->items();
  EXPECT_TRUE(back.find("floats")->is_tuple());
  EXPECT_EQ(fl[0].to_double(), 0.1);
  EXPECT_TRUE(std::signbit(fl[1].to_double()));
  EXPECT_EQ(fl[2].to_double(), INFINITY);
  EXPECT_EQ(fl[3].to_double(), 1e-310);
  const auto& other = back.find("other")->items();
  EXPECT_TRUE(other[0].to_bool());
  EXPECT_FALSE(other[1].to_bool());
  EXPECT_TRUE(other[2].is_none());
  EXPECT_EQ(other[3].to_string(), "text");
  EXPECT_EQ(back.dict_items()[5].first.to_int(), 7);
  EXPECT_TRUE(same_tensor(back.dict_items()[5].second.to_tensor(), tensor({true, false})));
  EXPECT_TRUE(same_tensor(back.find("empty")->to_tensor(), zeros({0, 2}, TensorOptions(kInt32))));

  // Streams and bytes give the same.
  std::stringstream s;
  io::write_torch_stream(s, value);
  EXPECT_TRUE(same_tensor(io::read_torch_stream(s).find("t")->to_tensor(), base.t()));
  EXPECT_TRUE(same_tensor(io::read_torch_bytes(io::write_torch_bytes(value)).find("row")->to_tensor(), base[1]));
}

// Every record's data starts at a multiple of 64 bytes, as PyTorch lays them out.
TEST_F(TorchFile, RecordsAreStoredAndAligned) {
  ConvNet net;
  cohort::save(net, path("net.pt"));
  const std::string bytes = read_bytes(path("net.pt"));
  int records = 0;
  for (size_t at = bytes.find("PK\x03\x04"); at != std::string::npos; at = bytes.find("PK\x03\x04", at + 4)) {
    auto u16 = [&](size_t o) { return static_cast<uint8_t>(bytes[at + o]) | static_cast<uint8_t>(bytes[at + o + 1]) << 8; };
    if (u16(8) != 0) continue;  // not a stored local header (a chance match inside data)
    const size_t data = at + 30 + u16(26) + u16(28);
    EXPECT_EQ(data % 64, 0u) << "record at " << at;
    ++records;
  }
  EXPECT_EQ(records, 1 + 9 + 1);  // data.pkl, 9 tensors (each its own storage), version
  EXPECT_EQ(bytes.substr(30, 12), "net/data.pkl");
  EXPECT_THAT(others("net.pt"), ::testing::IsEmpty());  // no temp file left
}

TEST_F(TorchFile, Zip64RecordsRead) {
  const Tensor t = arange(10, TensorOptions(kFloat32));
  std::vector<io::detail::StorageRecord> storages;
  const std::string pkl = io::detail::pickle(io::PyValue(t), storages);
  std::string out;
  io::detail::ZipWriter zip([&](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); }, /*zip64_from=*/0);
  zip.add("z/data.pkl", pkl.data(), pkl.size());
  zip.add("z/data/0", t.data_ptr(), 40);
  zip.add("z/version", "3\n", 2);
  zip.finish();
  EXPECT_TRUE(same_tensor(io::read_torch_bytes(out).to_tensor(), t));
}

TEST_F(TorchFile, ModulesOptimizersTensorsAndStreams) {
  ConvNet a;
  {
    NoGradGuard no_grad;
    for (auto& p : a->parameters()) nn::init::uniform_(p, -1, 1);
    a->bn->named_buffers()["running_mean"].fill_(0.25);
  }
  std::stringstream s;
  cohort::save(a, s);
  auto b = std::make_shared<ConvNetImpl>();
  cohort::load(b, s);
  for (const auto& item : a->state_dict()) EXPECT_TRUE(item.value().equal(b->state_dict()[item.key()])) << item.key();

  // Loading converts dtypes, as load_state_dict copies.
  nn::Linear f64(2, 2);
  f64->to(kFloat64);
  {
    NoGradGuard no_grad;
    f64->weight.fill_(1.0 / 3);
  }
  cohort::save(f64, path("f64.pt"));
  nn::Linear f32(2, 2);
  cohort::load(f32, path("f64.pt"));
  EXPECT_EQ(f32->weight.dtype(), kFloat32);
  EXPECT_EQ(f32->weight[0][0].item<float>(), 1.0f / 3);

  // A defined tensor is re-pointed in place: its other handles see the loaded value.
  Tensor dst = zeros({4});
  Tensor alias = dst;
  cohort::save(arange(6, TensorOptions(kInt64)).reshape({2, 3}), path("t.pt"));
  cohort::load(dst, path("t.pt"));
  EXPECT_TRUE(same_tensor(alias, arange(6, TensorOptions(kInt64)).reshape({2, 3})));

  // Optimizer state, with the options, into an optimizer built with other options.
  nn::Linear m(3, 2);
  optim::Adam adam(m->parameters(), optim::AdamOptions(0.01).betas({0.5, 0.6}).weight_decay(0.1));
  m->forward(ones({1, 3})).sum().backward();
  adam.step();
  cohort::save(adam, path("adam.pt"));
  const io::PyValue state = io::read_torch_file(path("adam.pt"));
  const io::PyValue& group = state.find("param_groups")->items()[0];
  EXPECT_EQ(group.find("betas")->items()[1].to_double(), 0.6);
  EXPECT_FALSE(group.find("amsgrad")->to_bool());
  EXPECT_TRUE(group.find("foreach")->is_none());
  EXPECT_TRUE(state.find("state")->dict_items()[0].second.find("step")->is_tensor());
  optim::Adam adam2(m->parameters(), optim::AdamOptions(1.0));
  cohort::load(adam2, path("adam.pt"));
  EXPECT_EQ(adam2.get_lr(), 0.01);
  EXPECT_EQ(std::get<0>(static_cast<const optim::AdamOptions&>(adam2.param_groups()[0].options()).betas()), 0.5);
  EXPECT_EQ(adam2.state().at(m->weight.unsafe_impl()).scalars.at("step"), 1);
}

// ---- Python reads cohort's files ------------------------------------------------------------------

TEST_F(TorchFile, PythonReadsCohortFiles) {
  // The files generate_torch_files.py --check expects; COHORT_TORCH_CHECK_DIR keeps them.
  const char* keep = std::getenv("COHORT_TORCH_CHECK_DIR");
  const fs::path dir = keep ? fs::path(keep) : dir_;
  fs::create_directories(dir);

  ConvNet net;
  {
    NoGradGuard no_grad;
    for (auto& p : net->parameters()) nn::init::uniform_(p, -0.5, 0.5);
  }
  net->forward(net_input());  // training mode: batch-norm statistics move
  cohort::save(net, dir / "conv_net.pt");
  net->eval();
  cohort::save(net->forward(net_input()).detach(), dir / "conv_net_output.pt");

  const Tensor base = arange(20, TensorOptions(kFloat32)).reshape({4, 5});
  io::write_torch_file(dir / "views.pt", io::PyValue::dict({{"base", base},
                                                            {"view", base.slice(0, 1, 4).slice(1, 0, 5, 2).t()},
                                                            {"row", base[2]}}));
  cohort::save(std::vector<Tensor>{ones({2, 2}), tensor({true, false}),
                                   tensor(std::vector<int32_t>{-7, 0, INT32_MAX})},
               dir / "list.pt");
  cohort::save(tensor(std::vector<double>{1.0 / 3, -2.5e-300, 1e300}), dir / "f64.pt");
  cohort::save(tensor({0.5f, -1.0f}).requires_grad_(), dir / "requires_grad.pt");
  const Tensor narrow_values = tensor({1.5f, -3.0f, 0.1f});
  cohort::save(std::vector<Tensor>{narrow_values.to(kBFloat16), narrow_values.to(kFloat16)}, dir / "narrow.pt");

  auto train = [&](const std::string& kind, optim::Optimizer& opt, nn::Linear& model) {
    const Tensor x = linspace(-1, 2, 12).reshape({4, 3});
    for (int i = 0; i < 3; ++i) {
      if (i == 2) {  // Python takes this step after loading
        cohort::save(model, dir / (kind + "_model.pt"));
        cohort::save(opt, dir / (kind + ".pt"));
      }
      opt.zero_grad();
      model->forward(x).pow(2).sum().backward();
      opt.step();
    }
    cohort::save(model, dir / (kind + "_after_step.pt"));
  };
  nn::Linear m1(3, 2), m2(3, 2);
  optim::SGD sgd(m1->parameters(), optim::SGDOptions(0.1).momentum(0.9).weight_decay(0.01).nesterov(true));
  train("sgd", sgd, m1);
  optim::Adam adam(m2->parameters(), optim::AdamOptions(0.01).betas({0.8, 0.99}).eps(1e-6).amsgrad(true));
  train("adam", adam, m2);

  const Finished probe = run_process({"/usr/bin/python3", "-c", "import torch"}, dir_, "probe", std::chrono::seconds(120));
  if (probe.exit_code != 0)
    GTEST_SKIP() << "/usr/bin/python3 has no torch (scripts/install-deps.sh --oracle installs python3-torch): " << probe.err;
  const Finished check = run_process({"/usr/bin/python3", cohort::testing::fixtures_dir() + "/generate_torch_files.py",
                                      "--check", dir.string()},
                                     dir_, "check", std::chrono::seconds(240));
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
}

// ---- refused files ---------------------------------------------------------------------------------

TEST_F(TorchFile, RefusesWhatIsNotAnArchive) {
  write_bytes(path("text.pt"), "hello");
  EXPECT_THAT(error_of([&] { io::read_torch_file(path("text.pt")); }),
              HasSubstr("read_torch_file: " + path("text.pt").string() + ": not a zip archive"));
  const std::string good = read_bytes(torch_fixture("conv_net.pt"));
  for (size_t keep : {size_t{0}, size_t{100}, good.size() / 2, good.size() - 10}) {
    write_bytes(path("cut.pt"), good.substr(0, keep));
    EXPECT_THAT(error_of([&] { Tensor t; cohort::load(t, path("cut.pt")); }), HasSubstr("load: " + path("cut.pt").string() + ": "))
        << keep;
  }
  EXPECT_THAT(error_of([&] { io::read_torch_file(path("missing.pt")); }), HasSubstr("missing.pt: cannot open"));
}

TEST_F(TorchFile, RefusesCorruptRecords) {
  std::string bytes = read_bytes(torch_fixture("list.pt"));
  const size_t at = bytes.find("list/data/0");
  ASSERT_NE(at, std::string::npos);
  bytes[(at + 64) / 64 * 64 + 1] ^= 0x40;  // a byte of the first storage's data
  write_bytes(path("flipped.pt"), bytes);
  EXPECT_THAT(error_of([&] { io::read_torch_file(path("flipped.pt")); }),
              HasSubstr("flipped.pt: record 'list/data/0' is corrupt: CRC error"));
}

TEST_F(TorchFile, RefusesGlobalsOpcodesAndBadStructure) {
  auto read = [&](const std::string& bytes) {
    write_bytes(path("crafted.pt"), bytes);
    return error_of([&] { io::read_torch_file(path("crafted.pt")); });
  };
  const std::string where = "read_torch_file: " + path("crafted.pt").string() + ": data.pkl: ";
  EXPECT_THAT(read(archive(Pickle().raw("cos\nsystem\n").str("ls").raw("\x85R").done())),
              HasSubstr(where + "unsupported global 'os.system'"));
  EXPECT_THAT(read(archive(Pickle().raw("c__main__\nNet\n)\x81").done())), HasSubstr("unsupported global '__main__.Net'"));
  EXPECT_THAT(read(archive(Pickle().raw("\xff").done())), HasSubstr(where + "unsupported pickle opcode 0xff"));
  EXPECT_THAT(read(archive(Pickle().raw("I1\n").done())), HasSubstr("unsupported pickle opcode 0x49 ('I')"));
  EXPECT_THAT(read(archive(Pickle().str("no stop").b)), HasSubstr("ends without a STOP"));
  EXPECT_THAT(read(archive(Pickle().raw("X\xff\xff\xff\x7f").b)), HasSubstr("ends inside an opcode's argument"));
  EXPECT_THAT(read(archive(Pickle().raw(std::string("]q\0h\0a", 6)).done())), HasSubstr("nested more than 1000 deep"));
  // 200000 lists each inside the next: refused, and freed without recursing 200000 deep.
  EXPECT_THAT(read(archive(Pickle().raw(std::string(200000, ']') + std::string(199999, 'a')).done())),
              HasSubstr("nested more than 1000 deep"));
  EXPECT_THAT(read(archive(Pickle().raw("h\x05").done())), HasSubstr("memo entry 5 is read before it is written"));
  EXPECT_THAT(read(archive(Pickle().raw("a").done())), HasSubstr("pops from an empty stack"));
  EXPECT_THAT(read(archive(Pickle().raw("ctorch\nComplexFloatStorage\n").done())),
              HasSubstr("unsupported storage type torch.ComplexFloatStorage: cohort has no complex dtype"));

  // Storages: out of range views, records of the wrong size, missing records, bad bools.
  EXPECT_THAT(read(archive(Pickle().tensor("0", 4, 0, 10).done(), {{"data/0", floats(4)}})),
              HasSubstr("reaches past the end of storage '0' (4 elements)"));
  EXPECT_THAT(read(archive(Pickle().tensor("0", 4, 3, 2).done(), {{"data/0", floats(4)}})),
              HasSubstr("at offset 3 reaches past the end"));
  EXPECT_THAT(read(archive(Pickle().tensor("0", 8, 0, 2).done(), {{"data/0", floats(4)}})),
              HasSubstr("storage '0' is a FloatStorage of 8 elements, but its record 'archive/data/0' has 16 bytes"));
  EXPECT_THAT(read(archive(Pickle().tensor("1", 4, 0, 2).done(), {{"data/0", floats(4)}})),
              HasSubstr("storage '1' has no record 'archive/data/1'"));
  EXPECT_EQ(read(archive(Pickle().tensor("0", 4, 2, 2).done(), {{"data/0", floats(4)}})), "<no error>");

  // The archive around the pickle.
  const std::string ok = Pickle().small_int(1).done();
  EXPECT_THAT(read(archive(ok, {{"byteorder", "big"}})), HasSubstr("written on a big-endian machine"));
  EXPECT_EQ(read(archive(ok, {{"byteorder", "little"}})), "<no error>");
  EXPECT_THAT(read(archive(ok, {{"version", "99\n"}})), HasSubstr("unsupported format version '99'"));
  std::string no_pickle;
  {
    io::detail::ZipWriter zip([&](const void* p, size_t n) { no_pickle.append(static_cast<const char*>(p), n); });
    zip.add("archive/version", "3\n", 2);
    zip.finish();
  }
  EXPECT_THAT(read(no_pickle), HasSubstr("no 'archive/data.pkl' record"));
}

TEST_F(TorchFile, LoadSaysWhatTheFileHolds) {
  ConvNet net;
  EXPECT_THAT(error_of([&] { cohort::load(net, torch_fixture("list.pt")); }),
              HasSubstr("list.pt: the file holds a list, not a state dict"));
  nn::Linear small(3, 2);
  const std::string strict = error_of([&] { cohort::load(small, torch_fixture("conv_net.pt")); });
  EXPECT_THAT(strict, HasSubstr("load: " + torch_fixture("conv_net.pt").string() + ": load_state_dict:"));
  EXPECT_THAT(strict, HasSubstr("missing key(s): weight, bias"));
  EXPECT_THAT(strict, HasSubstr("unexpected key(s): conv.weight"));
  nn::Linear wrong(2, 3);
  EXPECT_THAT(error_of([&] { cohort::load(wrong, torch_fixture("sgd_model.pt")); }), HasSubstr("size mismatch for: weight"));
  optim::SGD sgd(small->parameters(), optim::SGDOptions(0.1));
  EXPECT_THAT(error_of([&] { cohort::load(sgd, torch_fixture("conv_net.pt")); }), HasSubstr("not an optimizer state dict"));
  EXPECT_THAT(error_of([&] { cohort::load(sgd, torch_fixture("adam.pt")); }), HasSubstr("unknown to SGD"));
  Tensor t;
  EXPECT_THAT(error_of([&] { cohort::load(t, torch_fixture("conv_net.pt")); }),
              HasSubstr("conv_net.pt: the file holds a OrderedDict, not a tensor"));
}

TEST_F(TorchFile, FailedSavesLeaveTheOldFile) {
  cohort::save(ones({2}), path("t.pt"));
  const std::string before = read_bytes(path("t.pt"));
  EXPECT_THAT(error_of([&] { cohort::save(std::vector<Tensor>{ones({1}), Tensor()}, path("t.pt")); }),
              HasSubstr("save: " + path("t.pt").string() + ": pickle: cannot write an undefined tensor"));
  EXPECT_EQ(read_bytes(path("t.pt")), before);
  EXPECT_THAT(others("t.pt"), ::testing::IsEmpty());
  EXPECT_THAT(error_of([&] { cohort::save(ones({2}), path("no/such/dir/t.pt")); }), HasSubstr("save: cannot create"));
}

}  // namespace
