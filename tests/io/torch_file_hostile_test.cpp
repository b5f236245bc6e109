// .pt files crafted to cost memory and time: each is written byte by byte here and read in a child
// process whose address space may grow by a small multiple of the file's size, so a reader that
// allocates before it refuses dies instead of passing (Note [Unpickling in bounded memory] in
// src/io/unpickle.cpp, the inflation cap of Note [PyTorch's zip layout] in src/io/zip.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>

#include "io/io_test_util.h"
#include "io/pickle.h"
#include "io/zip.h"
#include "support/error_of.h"

#include "cohort/core/storage.h"
#include "cohort/io/torch_file.h"
#include "support/paths.h"

using namespace cohort;
using namespace cohort::testing;
using ::testing::HasSubstr;
using namespace std::string_literals;  // "h\x00"s: pickles hold zero bytes

namespace {

void le(std::string& out, uint64_t value, int nbytes) {
  for (int i = 0; i < nbytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

// A record of a zip archive: `unit` repeated `times` times, stored or deflated (as a tool that
// re-zips an archive writes it; torch.save never does).
struct Record {
  std::string name;
  std::string unit;
  uint64_t times = 1;
  bool deflate = false;
};

// Raw deflate (zip's method 8) and CRC-32 of `unit` repeated, streamed: the inflated size can be far
// larger than what this test holds in memory.
std::pair<std::string, uint32_t> deflate_repeated(const std::string& unit, uint64_t times) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
  const uint64_t per_chunk = std::max<uint64_t>(1, std::min<uint64_t>(times, (1 << 20) / unit.size()));
  std::string chunk;
  for (uint64_t i = 0; i < per_chunk; ++i) chunk += unit;
  std::string out;
  uLong crc = crc32(0, nullptr, 0);
  char buffer[1 << 16];
  for (uint64_t done = 0; done < times; done += per_chunk) {
    const size_t n = static_cast<size_t>(std::min(per_chunk, times - done) * unit.size());
    crc = crc32_z(crc, reinterpret_cast<const Bytef*>(chunk.data()), n);
    zs.next_in = reinterpret_cast<Bytef*>(chunk.data());
    zs.avail_in = static_cast<uInt>(n);
    const int flush = done + per_chunk >= times ? Z_FINISH : Z_NO_FLUSH;
    int rc;
    do {
      zs.next_out = reinterpret_cast<Bytef*>(buffer);
      zs.avail_out = sizeof buffer;
      rc = deflate(&zs, flush);
      out.append(buffer, sizeof buffer - zs.avail_out);
    } while (zs.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
  }
  deflateEnd(&zs);
  return {out, static_cast<uint32_t>(crc)};
}

// A zip archive of these records (local headers, data, central directory, end record; no zip64).
std::string zip_of(const std::vector<Record>& records) {
  std::string out, directory;
  for (const Record& r : records) {
    std::string data;
    uint32_t crc;
    if (r.deflate) {
      std::tie(data, crc) = deflate_repeated(r.unit, r.times);
    } else {
      for (uint64_t i = 0; i < r.times; ++i) data += r.unit;
      crc = static_cast<uint32_t>(crc32_z(crc32(0, nullptr, 0), reinterpret_cast<const Bytef*>(data.data()), data.size()));
    }
    const uint64_t size = r.unit.size() * r.times;
    const uint64_t offset = out.size();
    auto common = [&](std::string& h) {
      le(h, 20, 2);                   // version needed
      le(h, 0, 2);                    // flags
      le(h, r.deflate ? 8 : 0, 2);    // method
      le(h, 0, 2);                    // time
      le(h, (1 << 5) | 1, 2);         // date: 1980-01-01
      le(h, crc, 4);
      le(h, data.size(), 4);
      le(h, size, 4);
      le(h, r.name.size(), 2);
      le(h, 0, 2);                    // extra field
    };
    le(out, 0x04034b50, 4);
    common(out);
    out += r.name;
    out += data;
    le(directory, 0x02014b50, 4);
    le(directory, 20, 2);  // made by
    common(directory);
    le(directory, 0, 2);  // comment
    le(directory, 0, 2);  // disk
    le(directory, 0, 2);  // internal attributes
    le(directory, 0, 4);  // external attributes
    le(directory, offset, 4);
    directory += r.name;
  }
  const uint64_t directory_at = out.size();
  out += directory;
  le(out, 0x06054b50, 4);
  le(out, 0, 2);
  le(out, 0, 2);
  le(out, records.size(), 2);
  le(out, records.size(), 2);
  le(out, directory.size(), 4);
  le(out, directory_at, 4);
  le(out, 0, 2);
  return out;
}

std::string u32(uint64_t v) {
  std::string s;
  le(s, v, 4);
  return s;
}

// An archive "archive/" holding `pkl` (stored) and a version record.
std::string stored_archive(const std::string& pkl) {
  return zip_of({{"archive/data.pkl", pkl}, {"archive/version", "3\n"}});
}

class TorchFileHostile : public ScratchDir {
 protected:
  // read_torch_file of `bytes` in a child process whose address space may grow by `factor` times the
  // file's size plus 32 MiB (the unpickler's budget is 128 times the file and 16 MiB; libzip and the
  // file's bytes take some more): the error's message,
  // "<no error>", or what ended the child.
  std::string read_limited(const std::string& bytes, uint64_t factor = 160) {
    const fs::path file = path("crafted.pt");
    write_bytes(file, bytes);
    int fds[2];
    if (::pipe(fds) != 0) return "<pipe failed>";
    const pid_t pid = ::fork();
    if (pid < 0) return "<fork failed>";
    if (pid == 0) {
      ::close(fds[0]);
      long pages = 0;
      std::FILE* statm = std::fopen("/proc/self/statm", "r");
      if (!statm || std::fscanf(statm, "%ld", &pages) != 1) ::_exit(4);
      std::fclose(statm);
      const rlim_t limit = static_cast<rlim_t>(pages) * ::sysconf(_SC_PAGESIZE) + factor * bytes.size() + (32 << 20);
      const rlimit r{limit, limit};
      if (::setrlimit(RLIMIT_AS, &r) != 0) ::_exit(4);
      std::string message;
      try {
        io::read_torch_file(file);
        message = "<no error>";
      } catch (const Error& e) {
        message = e.what();
      } catch (const std::exception& e) {
        message = std::string("<not a cohort::Error: ") + e.what() + ">";
      }
      const char* p = message.data();
      for (size_t left = message.size(); left > 0;) {
        const ssize_t n = ::write(fds[1], p, left);
        if (n <= 0) ::_exit(5);
        p += n;
        left -= static_cast<size_t>(n);
      }
      ::_exit(0);
    }
    ::close(fds[1]);
    std::string message;
    char buffer[4096];
    for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) message.append(buffer, static_cast<size_t>(n));
    ::close(fds[0]);
    int status = 0;
    if (::waitpid(pid, &status, 0) != pid) return "<waitpid failed>";
    if (WIFSIGNALED(status)) return "<the child died of signal " + std::to_string(WTERMSIG(status)) + ">";
    if (WEXITSTATUS(status) != 0) return "<the child exited " + std::to_string(WEXITSTATUS(status)) + ">";
    return message;
  }
  void SetUp() override {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    GTEST_SKIP() << "the sanitizers reserve address space, so it cannot be limited";
#endif
    ScratchDir::SetUp();
  }
};

TEST_F(TorchFileHostile, DeflatedStorageThatInflatesPastTheCapIsRefusedBeforeAllocation) {
  // 256 MiB of zeros deflate to about 256 KB: a FloatStorage of 64 Mi elements.
  const uint64_t numel = uint64_t{64} << 20;
  std::string pkl = "\x80\x02" "ctorch._utils\n_rebuild_tensor_v2\n((X"s + u32(7) + "storage" + "ctorch\nFloatStorage\n" +
                    "X" + u32(1) + "0" + "X" + u32(3) + "cpu" + "J" + u32(numel) + "tQK\x00J"s + u32(numel) +
                    "\x85K\x01\x85\x89" "ccollections\nOrderedDict\n)RtR.";
  const std::string bytes = zip_of({{"archive/data.pkl", pkl},
                                    {"archive/data/0", std::string(4096, '\0'), numel * 4 / 4096, true},
                                    {"archive/version", "3\n"}});
  ASSERT_LT(bytes.size(), size_t{1} << 20);
  const std::string e = read_limited(bytes, 4);
  EXPECT_THAT(e, HasSubstr("record 'archive/data/0' inflates to 268435456 bytes from"));
  EXPECT_THAT(e, HasSubstr("more than 16 times the " + std::to_string(bytes.size()) + "-byte archive; torch.save never "
                           "compresses records"));
}

TEST_F(TorchFileHostile, DeflatedPickleThatInflatesPastTheCapIsRefused) {
  // 64 MiB of NONE opcodes, deflated to about 64 KB.
  const std::string bytes = zip_of({{"archive/data.pkl", "N", uint64_t{64} << 20, true}, {"archive/version", "3\n"}});
  EXPECT_THAT(read_limited(bytes, 4), HasSubstr("record 'archive/data.pkl' inflates to 67108864 bytes from"));
}

TEST_F(TorchFileHostile, LongStringFetchedFromTheMemoWithoutEndIsRefused) {
  // A list of a 100 KB str and 100000 references to it: 10 GB once each is copied into the result.
  std::string pkl = "\x80\x02(X" + u32(100000) + std::string(100000, 's') + "q\x00"s;
  for (int i = 0; i < 100000; ++i) pkl += "h\x00"s;
  pkl += "l.";
  const std::string e = read_limited(stored_archive(pkl));
  EXPECT_THAT(e, HasSubstr("data.pkl: reading the pickle takes more than"));
  EXPECT_THAT(e, HasSubstr("repeats or shares values without end (a crafted file?)"));
}

TEST_F(TorchFileHostile, ListsSharedWithinListsAreRefused) {
  // A list of 10000 Nones, inside a list that holds it 10000 times more: 10^8 values once converted.
  std::string pkl = "\x80\x02((" + std::string(10000, 'N') + "lq\x00"s;
  for (int i = 0; i < 10000; ++i) pkl += "h\x00"s;
  pkl += "l.";
  EXPECT_THAT(read_limited(stored_archive(pkl)), HasSubstr("data.pkl: reading the pickle takes more than"));
}

TEST_F(TorchFileHostile, MarkFloodIsRefusedAtTheDepthCap) {
  EXPECT_THAT(read_limited(stored_archive("\x80\x02" + std::string(1 << 20, '(') + ".")),
              HasSubstr("data.pkl: MARKs are nested more than 1000 deep"));
}

TEST_F(TorchFileHostile, ListsNestedByAppendAreRefusedAsTheyArePushed) {
  // 500000 empty lists, each appended into the one below: refused at depth 1000, not after building all.
  std::string pkl = "\x80\x02" + std::string(500000, ']') + std::string(499999, 'a') + ".";
  const std::string e = read_limited(stored_archive(pkl));
  EXPECT_THAT(e, HasSubstr("data.pkl: values are nested more than 1000 deep"));
  EXPECT_THAT(e, HasSubstr("(at byte 501002)"));  // the 1001st APPEND, right after the 2 + 500000 bytes before
}

TEST_F(TorchFileHostile, DictKeyedByOneLongStringOverAndOverReadsAsOneEntry) {
  // The key is compared where it is, not copied per use: 100000 uses of a 100 KB key cost nothing
  // more than the entry they update.
  std::string pkl = "\x80\x02}(X" + u32(100000) + std::string(100000, 'k') + "q\x00K\x01"s;
  for (int i = 0; i < 100000; ++i) pkl += "h\x00K\x01"s;
  pkl += "u.";
  EXPECT_EQ(read_limited(stored_archive(pkl)), "<no error>");
}

TEST_F(TorchFileHostile, OversizedVersionRecordIsRefused) {
  const std::string bytes = zip_of({{"archive/data.pkl", "\x80\x02K\x01."}, {"archive/version", "3", 1000}});
  EXPECT_THAT(read_limited(bytes), HasSubstr("record 'archive/version' has 1000 bytes; PyTorch writes a few"));
}

TEST_F(TorchFileHostile, ReZippedArchiveWithinTheCapLoads) {
  // PyTorch's conv_net.pt with every record deflated, as a zip tool would write it: still read.
  io::detail::ZipReader zip(fs::path(cohort::testing::fixtures_dir()) / "torch" / "conv_net.pt", "test");
  std::vector<Record> records;
  for (const auto& name : zip.names()) records.push_back({name, zip.read(name), 1, true});
  EXPECT_EQ(read_limited(zip_of(records)), "<no error>");
}

// PyTorch's own files, from torch.save and libtorch's torch::save, need a small share of the
// unpickler's budget: the caps leave real files far from the line.
TEST_F(TorchFileHostile, RealFilesUseASmallShareOfTheBudget) {
  const fs::path dir = fs::path(cohort::testing::fixtures_dir()) / "torch";
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".pt" || entry.path().filename() == "pickled_module.pt") continue;
    io::detail::ZipReader zip(entry.path(), "test");
    std::string pkl_name;
    bool torchscript = false;
    for (const auto& name : zip.names()) {
      if (name.size() > 9 && name.compare(name.size() - 9, 9, "/data.pkl") == 0) pkl_name = name;
      torchscript = torchscript || name.find("/code/") != std::string::npos || name.find("constants.pkl") != std::string::npos;
    }
    ASSERT_FALSE(pkl_name.empty()) << entry.path();
    const std::string pkl = zip.read(pkl_name);
    uint64_t charged = 0;
    io::detail::UnpickleContext context;
    context.torchscript = torchscript;
    context.charged = &charged;
    context.load_storage = [](io::detail::StorageRecord& r) {
      size_t file_size = 0;
      std::string why;
      ASSERT_TRUE(io::detail::parse_storage_type(r.type, file_size, r.dtype, why)) << why;
      r.storage = std::make_shared<StorageImpl>(static_cast<size_t>(r.numel) * element_size(r.dtype), Device());
    };
    context.fail = [&](const std::string& what) { throw Error(entry.path().string() + ": " + what); };
    io::detail::unpickle(pkl, context);
    // Half the budget's per-byte part (128 bytes per byte of pickle).
    EXPECT_LT(charged, 64 * pkl.size()) << entry.path() << ": " << charged << " bytes charged for " << pkl.size();
    ++files;
  }
  EXPECT_GE(files, 10);
}

}  // namespace
