// Output targets of the atomic writer (Note [Output targets] in src/io/file_util.h): a symlink is
// followed and the file it names replaced; a device, a FIFO, a directory, a dangling symlink or a
// symlink loop is refused with what it is and left as it was, by every writer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <functional>

#include "io/io_test_util.h"
#include "support/error_of.h"

#include "cohort/io/file.h"
#include "cohort/io/image.h"
#include "cohort/io/npy.h"
#include "cohort/io/onnx.h"
#include "cohort/io/safetensors.h"
#include "cohort/io/serialize.h"
#include "cohort/nn/linear.h"
#include "cohort/ops/creation.h"

#include "io/file_util.h"

using namespace cohort;
using namespace cohort::testing;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

namespace {

class OutputTarget : public ScratchDir {
 protected:
  fs::path make_fifo(const std::string& name) {
    const fs::path p = path(name);
    EXPECT_EQ(::mkfifo(p.c_str(), 0600), 0);
    return p;
  }
  static bool is_fifo(const fs::path& p) { return fs::symlink_status(p).type() == fs::file_type::fifo; }
};

TEST_F(OutputTarget, DevNullIsRefusedAsACharacterDevice) {
  // Only checked, never written: a regression here must not be able to replace the machine's /dev/null.
  EXPECT_THAT(error_of([] { io::check_output_file("/dev/null", "cohort export: --onnx"); }),
              HasSubstr("cohort export: --onnx /dev/null is a character device, not a regular file; hint: a save "
                        "writes a temporary file and renames it over its target"));
}

TEST_F(OutputTarget, AnOwnCharacterDeviceSurvivesAWrite) {
  // A second node of the null device (major 1, minor 3), which only root may make.
  const fs::path dev = path("null");
  if (::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) GTEST_SKIP() << "cannot make a device node here";
  EXPECT_THAT(error_of([&] { io::write_file(dev, "bytes"); }),
              HasSubstr("write_file: " + dev.string() + " is a character device, not a regular file"));
  EXPECT_EQ(fs::symlink_status(dev).type(), fs::file_type::character);
  EXPECT_THAT(others("null"), IsEmpty());
}

TEST_F(OutputTarget, FifoIsRefusedAndStaysAFifo) {
  const fs::path fifo = make_fifo("pipe");
  EXPECT_THAT(error_of([&] { io::write_file(fifo, "bytes"); }),
              HasSubstr("write_file: " + fifo.string() + " is a FIFO, not a regular file"));
  EXPECT_TRUE(is_fifo(fifo));
  EXPECT_THAT(others("pipe"), IsEmpty());  // no temp file either
}

TEST_F(OutputTarget, DirectoryIsRefusedBeforeAnythingIsWritten) {
  fs::create_directories(path("out/inside"));
  EXPECT_THAT(error_of([&] { io::write_file(path("out"), "bytes"); }),
              HasSubstr("write_file: " + path("out").string() + " is a directory, not a regular file"));
  EXPECT_TRUE(fs::is_directory(path("out/inside")));
  EXPECT_THAT(others("out"), IsEmpty());
}

TEST_F(OutputTarget, SymlinkToAFileReplacesTheFileAndKeepsTheLink) {
  fs::create_directories(path("shared"));
  write_bytes(path("shared/model.bin"), "old");
  fs::create_symlink("shared/model.bin", path("link.bin"));  // relative, as `ln -s` makes them
  io::write_file(path("link.bin"), "new");
  EXPECT_TRUE(fs::is_symlink(path("link.bin")));
  EXPECT_EQ(fs::read_symlink(path("link.bin")), "shared/model.bin");
  EXPECT_EQ(read_bytes(path("shared/model.bin")), "new");
  EXPECT_EQ(std::distance(fs::directory_iterator(path("shared")), fs::directory_iterator()), 1);  // no temp file
}

TEST_F(OutputTarget, SymlinkToAFifoIsRefusedNamingBoth) {
  const fs::path fifo = make_fifo("pipe");
  fs::create_symlink(fifo, path("link"));
  EXPECT_THAT(error_of([&] { io::write_file(path("link"), "bytes"); }),
              HasSubstr(path("link").string() + " is a symbolic link to a FIFO, not a regular file"));
  EXPECT_TRUE(fs::is_symlink(path("link")));
  EXPECT_TRUE(is_fifo(fifo));
}

TEST_F(OutputTarget, DanglingSymlinkIsRefusedAndKept) {
  fs::create_symlink("nowhere.bin", path("link.bin"));
  EXPECT_THAT(error_of([&] { io::write_file(path("link.bin"), "bytes"); }),
              HasSubstr(path("link.bin").string() + " is a symbolic link to nowhere.bin, which does not exist"));
  EXPECT_TRUE(fs::is_symlink(path("link.bin")));
  EXPECT_FALSE(fs::exists(path("nowhere.bin")));
}

TEST_F(OutputTarget, SymlinkLoopIsRefusedAndKept) {
  fs::create_symlink("b", path("a"));
  fs::create_symlink("a", path("b"));
  EXPECT_THAT(error_of([&] { io::write_file(path("a"), "bytes"); }),
              HasSubstr(path("a").string() + " is a symbolic link loop, not a regular file"));
  EXPECT_TRUE(fs::is_symlink(path("a")));
  EXPECT_TRUE(fs::is_symlink(path("b")));
}

TEST_F(OutputTarget, EveryWriterRefusesAFifoNamingItsOperation) {
  const fs::path fifo = make_fifo("pipe");
  nn::Linear net(2, 3);
  const std::vector<std::pair<std::string, std::function<void()>>> writers = {
      {"save_safetensors", [&] { io::save_safetensors(fifo, {{"a", ones({2})}}); }},
      {"save_npy", [&] { io::save_npy(fifo, ones({2})); }},
      {"write_png", [&] { io::write_png(fifo.string(), zeros({3, 2, 2})); }},
      {"export_onnx", [&] { io::export_onnx(net, ones({1, 2}), fifo); }},
      {"save", [&] { cohort::save(ones({2}), fifo); }},
  };
  for (const auto& [op, write] : writers) {
    EXPECT_THAT(error_of(write), HasSubstr(op + ": " + fifo.string() + " is a FIFO, not a regular file")) << op;
    EXPECT_TRUE(is_fifo(fifo)) << op;
  }
  EXPECT_THAT(others("pipe"), IsEmpty());
}

TEST_F(OutputTarget, RenameFailureAfterTheCheckKeepsTheTargetAndRemovesTheTempFile) {
  // A directory appears between the check and the rename (another process): the rename fails.
  io::detail::AtomicWriter writer(path("w.bin"), "write_file");
  writer.write("abc", 3);
  fs::create_directories(path("w.bin/inside"));
  const std::string e = error_of([&] { writer.commit(); });
  EXPECT_THAT(e, HasSubstr("write_file: cannot write '" + path("w.bin").string() + "': rename of"));
  EXPECT_THAT(e, HasSubstr("the previous file, if any, is unchanged"));
  EXPECT_TRUE(fs::is_directory(path("w.bin/inside")));
  EXPECT_THAT(others("w.bin"), IsEmpty());
}

}  // namespace
