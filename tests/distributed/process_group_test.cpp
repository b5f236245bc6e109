// In one process: the post-accumulate-grad hook, LocalProcessGroup, DDP on a world of one, the
// environment rules of init_process_group, and a Gloo rendezvous that the other ranks never join.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "cohort/cohort.h"
#include "cohort/distributed/ddp.h"
#include "cohort/distributed/init.h"
#include "support/error_of.h"

using namespace cohort;
namespace dist = cohort::distributed;
using cohort::testing::error_of;
using ::testing::HasSubstr;

TEST(DistributedHook, PostAccumulateGradHookSeesTheAccumulatedGradient) {
  Tensor w = ones({3}).requires_grad_();
  std::vector<Tensor> seen;
  unsigned h = w.register_post_accumulate_grad_hook([&](const Tensor& t) { seen.push_back(t.grad().clone()); });
  (w * 2).sum().backward();
  (w * 3).sum().backward();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_TRUE(seen[0].equal(full({3}, 2.0)));
  EXPECT_TRUE(seen[1].equal(full({3}, 5.0)));  // after accumulation, not the incoming gradient
  w.remove_hook(h);
  (w * 3).sum().backward();
  EXPECT_EQ(seen.size(), 2u);
}

TEST(DistributedHook, PostAccumulateGradHookNeedsALeaf) {
  Tensor w = ones({3}).requires_grad_();
  EXPECT_THAT(error_of([&] { (w * 2).register_post_accumulate_grad_hook([](const Tensor&) {}); }),
              HasSubstr("is not a leaf"));
  EXPECT_THAT(error_of([&] { ones({1}).register_post_accumulate_grad_hook([](const Tensor&) {}); }),
              HasSubstr("does not require grad"));
}

TEST(DistributedLocal, EveryOpIsTheIdentity) {
  dist::LocalProcessGroup pg;
  EXPECT_EQ(pg.rank(), 0);
  EXPECT_EQ(pg.world_size(), 1);
  Tensor a = arange(0, 6, 1, TensorOptions(kFloat32)).view({2, 3});
  Tensor v = a.clone().t();
  pg.all_reduce({a, v}, dist::ReduceOp::kAvg);
  EXPECT_TRUE(a.equal(arange(0, 6, 1, TensorOptions(kFloat32)).view({2, 3})));
  pg.broadcast({a});
  auto all = pg.all_gather(a);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_TRUE(all[0].equal(a));
  pg.barrier();
  EXPECT_THAT(error_of([&] { pg.all_reduce({ones({2}, TensorOptions(kInt64))}, dist::ReduceOp::kAvg); }),
              HasSubstr("kAvg needs floating tensors, got int64"));
  EXPECT_THAT(error_of([&] { pg.broadcast({a}, 1); }), HasSubstr("root must be a rank in [0, 1), got 1"));
}

TEST(DistributedLocal, TraceSeesEveryOpInOrder) {
  dist::LocalProcessGroup pg;
  std::vector<std::string> events;
  pg.set_trace([&](const dist::TraceEvent& e) { events.push_back((e.start ? "+" : "-") + e.op + std::to_string(e.seq)); });
  pg.all_reduce({ones({2})});
  pg.barrier();
  EXPECT_EQ(events, (std::vector<std::string>{"+all_reduce0", "-all_reduce0", "+barrier1", "-barrier1"}));
}

struct TwoLayers : nn::Module {
  TwoLayers() {
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }
  Tensor forward(const Tensor& x) { return fc2(fc1(x).relu()); }
  nn::Linear fc1{4, 8}, fc2{8, 2};
};

TEST(DistributedDDPLocal, AWorldOfOneTrainsLikeTheModule) {
  auto pg = std::make_shared<dist::LocalProcessGroup>();
  manual_seed(1);
  auto net = std::make_shared<TwoLayers>();
  auto plain = std::make_shared<TwoLayers>();
  plain->load_state_dict(net->state_dict());
  dist::DistributedDataParallel<TwoLayers> ddp(net, pg, dist::DistributedDataParallelOptions().bucket_cap_mb(1e-6));
  EXPECT_EQ(ddp.buckets().size(), 4u);  // 1 byte: one parameter per bucket, last layer first
  EXPECT_EQ(ddp.buckets()[0].parameters, std::vector<std::string>{"fc2.bias"});
  EXPECT_EQ(ddp.state_dict().keys(), net->state_dict().keys());
  Tensor x = randn({5, 4});
  ddp(x).square().sum().backward();
  plain->forward(x).square().sum().backward();
  for (const auto& p : net->named_parameters())
    EXPECT_TRUE(p.value().grad().allclose(plain->named_parameters()[p.key()].grad())) << p.key();

  // no_sync: gradients still accumulate; the next synced backward keeps the sum.
  {
    auto guard = ddp.no_sync();
    ddp(x).square().sum().backward();
  }
  ddp(x).square().sum().backward();
  for (const auto& p : net->named_parameters())
    EXPECT_TRUE(p.value().grad().allclose(plain->named_parameters()[p.key()].grad() * 3)) << p.key();
}

// With one rank, bf16_compress rounds each gradient to bfloat16 once (divided by 1, nothing to sum),
// and the bucket's gradients travel as bfloat16 while its flags stay float32.
TEST(DistributedDDPLocal, BFloat16CompressionRoundsTheGradientsOnce) {
  auto pg = std::make_shared<dist::LocalProcessGroup>();
  manual_seed(1);
  auto net = std::make_shared<TwoLayers>();
  auto plain = std::make_shared<TwoLayers>();
  plain->load_state_dict(net->state_dict());
  auto options = dist::DistributedDataParallelOptions().comm_hook(dist::CommHook::kBF16Compress);
  dist::DistributedDataParallel<TwoLayers> ddp(net, pg, options);
  for (const auto& b : ddp.buckets()) {
    EXPECT_EQ(b.comm_dtype, kBFloat16);
    EXPECT_EQ(b.comm_bytes * 2, b.bytes);
  }
  Tensor x = randn({5, 4});
  const int64_t before = pg->all_reduced_bytes();
  ddp(x).square().sum().backward();
  int64_t expected = 0;
  for (const auto& b : ddp.buckets()) expected += b.comm_bytes + 4 * static_cast<int64_t>(b.parameters.size());
  EXPECT_EQ(pg->all_reduced_bytes() - before, expected);
  plain->forward(x).square().sum().backward();
  for (const auto& p : net->named_parameters()) {
    Tensor ref = plain->named_parameters()[p.key()].grad();
    EXPECT_EQ(p.value().grad().dtype(), kFloat32);
    EXPECT_TRUE(p.value().grad().equal(ref.to(kBFloat16).to(kFloat32))) << p.key();
  }
  std::ostringstream os;
  ddp.pretty_print(os);
  EXPECT_THAT(os.str(), HasSubstr(", comm_hook=bf16_compress)"));
}

TEST(DistributedDDPLocal, Float16CompressionRoundsTheGradientsOnce) {
  auto pg = std::make_shared<dist::LocalProcessGroup>();
  manual_seed(2);
  auto net = std::make_shared<TwoLayers>();
  auto plain = std::make_shared<TwoLayers>();
  plain->load_state_dict(net->state_dict());
  auto options = dist::DistributedDataParallelOptions().comm_hook(dist::CommHook::kFP16Compress);
  dist::DistributedDataParallel<TwoLayers> ddp(net, pg, options);
  for (const auto& b : ddp.buckets()) EXPECT_EQ(b.comm_dtype, kHalf);
  Tensor x = randn({5, 4});
  ddp(x).square().sum().backward();
  plain->forward(x).square().sum().backward();
  for (const auto& p : net->named_parameters())
    EXPECT_TRUE(p.value().grad().equal(plain->named_parameters()[p.key()].grad().to(kHalf).to(kFloat32))) << p.key();
}

TEST(DistributedDDPLocal, AnUnusedParameterIsAnErrorUnlessAllowed) {
  auto pg = std::make_shared<dist::LocalProcessGroup>();
  auto net = std::make_shared<TwoLayers>();
  dist::DistributedDataParallel<TwoLayers> ddp(net, pg);
  auto fc1_only = [&] { return net->fc1(ddp.forward(ones({1, 4})).detach().narrow(1, 0, 1).expand({1, 4})); };
  EXPECT_THAT(error_of([&] { fc1_only().sum().backward(); }),
              HasSubstr("fc2.weight on 0 of 1 ranks (not this one, rank 0)"));
  EXPECT_THAT(error_of([&] { fc1_only().sum().backward(); }), HasSubstr("find_unused_parameters(true)"));

  auto net2 = std::make_shared<TwoLayers>();
  dist::DistributedDataParallel<TwoLayers> allowed(net2, pg, dist::DistributedDataParallelOptions().find_unused_parameters(true));
  net2->fc1(allowed.forward(ones({1, 4})).detach().narrow(1, 0, 1).expand({1, 4})).sum().backward();
  EXPECT_TRUE(net2->fc1->weight.grad().defined());
  EXPECT_FALSE(net2->fc2->weight.grad().defined());  // used by no rank: untouched
}

TEST(DistributedEnv, ReadsTorchrunVariables) {
  auto o = dist::options_from_env({{"RANK", "1"}, {"WORLD_SIZE", "3"}, {"MASTER_ADDR", "127.0.0.1"},
                                   {"MASTER_PORT", "29500"}, {"TMPDIR", "/tmp/x"}, {"TORCHELASTIC_RUN_ID", "job7"}});
  EXPECT_EQ(o.rank(), 1);
  EXPECT_EQ(o.world_size(), 3);
  EXPECT_EQ(o.store(), "file:/tmp/x/cohort-rendezvous-29500");
  EXPECT_EQ(o.hostname(), "127.0.0.1");
  EXPECT_EQ(o.run_id(), "job7");
  auto s = dist::options_from_env({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"COHORT_STORE", "redis://h:6379"},
                                   {"GLOO_SOCKET_IFNAME", "eth0"}, {"COHORT_RUN_ID", "a"}});
  EXPECT_EQ(s.store(), "redis://h:6379");
  EXPECT_EQ(s.iface(), "eth0");
  EXPECT_EQ(s.run_id(), "a");
}

TEST(DistributedEnv, NamesTheMissingOrInvalidVariable) {
  auto err = [](std::map<std::string, std::string> env) { return error_of([&] { dist::options_from_env(env); }); };
  EXPECT_THAT(err({{"WORLD_SIZE", "2"}}), HasSubstr("the environment variable RANK is not set"));
  EXPECT_THAT(err({{"RANK", "0"}}), HasSubstr("the environment variable WORLD_SIZE is not set"));
  EXPECT_THAT(err({{"RANK", "0"}, {"WORLD_SIZE", "two"}}), HasSubstr("WORLD_SIZE=\"two\" is not an integer"));
  EXPECT_THAT(err({{"RANK", "2"}, {"WORLD_SIZE", "2"}}), HasSubstr("RANK=2 is not below WORLD_SIZE=2"));
  EXPECT_THAT(err({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "1"}}),
              HasSubstr("MASTER_ADDR is not set (needed when COHORT_STORE is not)"));
  EXPECT_THAT(err({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "localhost"}, {"MASTER_PORT", "99999"}}),
              HasSubstr("MASTER_PORT=\"99999\" is not an integer in [1, 65535]"));
  EXPECT_THAT(err({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "10.1.2.3"}, {"MASTER_PORT", "29500"}}),
              HasSubstr("MASTER_ADDR=10.1.2.3 is another host, and Gloo 0.5 has no TCP store"));
  // A world of one needs nothing else.
  EXPECT_EQ(dist::options_from_env({{"RANK", "0"}, {"WORLD_SIZE", "1"}}).world_size(), 1);
}

TEST(DistributedEnv, GlooRejectsABadStore) {
  EXPECT_THAT(error_of([] { dist::ProcessGroupGloo pg(dist::ProcessGroupOptions(0, 2)); }), HasSubstr("no store given"));
  EXPECT_THAT(error_of([] { dist::ProcessGroupGloo pg(dist::ProcessGroupOptions(0, 2).store("tcp://x:1")); }),
              HasSubstr("unknown store \"tcp://x:1\""));
  EXPECT_THAT(error_of([] { dist::ProcessGroupGloo pg(dist::ProcessGroupOptions(0, 2).store("redis://nohost")); }),
              HasSubstr("expected a store redis://host:port"));
}

// Note [Rendezvous] in gloo.cpp: one rank alone waits for the group's timeout, not Gloo's fixed 30 s, and
// names the ranks that never came. Rank 1 of 3 is the case Gloo bounded by 30 s (it reads rank 0's key
// with Store::get); rank 0 waits for the others' keys.
TEST(DistributedRendezvous, ARankAloneFailsAtTheTimeoutNamingTheMissingRanks) {
  for (int rank : {1, 0}) {
    char tmpl[] = "/tmp/cohort-rendezvous-test-XXXXXX";
    const std::string dir = ::mkdtemp(tmpl);
    const auto start = std::chrono::steady_clock::now();
    const std::string err = error_of([&] {
      dist::ProcessGroupGloo pg(dist::ProcessGroupOptions(rank, 3).store("file:" + dir).timeout(
          std::chrono::milliseconds(300)));
    });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_THAT(err, HasSubstr("rendezvous of rank " + std::to_string(rank) + " of 3 through file:" + dir));
    EXPECT_THAT(err, HasSubstr("failed within 300 ms: " + std::string(rank == 1 ? "ranks 0, 2" : "ranks 1, 2") +
                               " never arrived"));
    EXPECT_LT(seconds, 5) << err;
    EXPECT_GE(seconds, 0.3) << err;
    std::filesystem::remove_all(dir);
  }
}
