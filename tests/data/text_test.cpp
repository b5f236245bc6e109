// Text corpora (a file, or a directory's text files without fortune's index files and symlinks),
// character vocabularies and next-character windows.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "io/io_test_util.h"
#include "support/error_of.h"

#include "cohort/data/text.h"
#include "cohort/ops/creation.h"

using namespace cohort;
using namespace cohort::testing;
using ::testing::HasSubstr;

namespace {

class TextCorpus : public ScratchDir {};

TEST_F(TextCorpus, ADirectoryIsItsTextFilesInNameOrder) {
  write_bytes(path("b"), "second\n");
  write_bytes(path("a"), "first\n");
  write_bytes(path("a.dat"), std::string("\0\0\0\2index", 10));
  write_bytes(path(".hidden"), "no\n");
  fs::create_symlink(path("a"), path("a.u8"));
  EXPECT_EQ(data::read_text_corpus(dir_), "first\nsecond\n");
  EXPECT_EQ(data::read_text_corpus(path("b")), "second\n");
  write_bytes(path("empty"), "");
  EXPECT_THAT(error_of([&] { data::read_text_corpus(path("empty")); }), HasSubstr("no text (the files are empty)"));
  EXPECT_THAT(error_of([&] { data::read_text_corpus(path("missing")); }), HasSubstr("missing"));
}

TEST(CharVocab, SortedBytesEncodeAndDecode) {
  data::CharVocab vocab(std::string_view("hello, world"));
  EXPECT_EQ(vocab.characters(), (std::vector<std::string>{" ", ",", "d", "e", "h", "l", "o", "r", "w"}));
  Tensor ids = vocab.encode("world");
  EXPECT_TRUE(ids.equal(tensor(std::vector<int64_t>{8, 6, 7, 5, 2})));
  EXPECT_EQ(vocab.decode(ids.view({1, 5})), "world");
  EXPECT_EQ(data::CharVocab(vocab.characters()).encode("hello").sizes().vec(), (std::vector<int64_t>{5}));
  EXPECT_THAT(error_of([&] { vocab.encode("wx"); }),
              HasSubstr("CharVocab::encode: 'x' (position 1) is not one of the 9 characters of the vocabulary"));
  EXPECT_THAT(error_of([&] { vocab.encode("\x1b"); }), HasSubstr("'\\x1b'"));
  EXPECT_THAT(error_of([&] { vocab.decode(tensor(std::vector<int64_t>{9})); }), HasSubstr("index 9 is out of range"));
  EXPECT_THAT(error_of([] { data::CharVocab(std::string_view("")); }), HasSubstr("the text is empty"));
  EXPECT_THAT(error_of([] { data::CharVocab(std::vector<std::string>{"a", "a"}); }), HasSubstr("'a' appears twice"));
}

TEST(CharSequences, WindowsPredictTheNextCharacter) {
  const std::string text = "abcdefghij";  // 10 characters: windows of 3 start at 0, 3, 6
  data::CharVocab vocab(text);
  data::CharSequences windows(text, vocab, 3);
  EXPECT_EQ(windows.size(), 3);
  data::Example<> e = windows.get(1);
  EXPECT_EQ(vocab.decode(e.data), "def");
  EXPECT_EQ(vocab.decode(e.target), "efg");
  EXPECT_EQ(vocab.decode(windows.get(2).target), "hij");
  EXPECT_EQ(windows.classes().size(), 10u);
  EXPECT_THAT(error_of([&] { windows.get(3); }), HasSubstr("index 3 is out of range for 3 windows"));
  EXPECT_THAT(error_of([&] { data::CharSequences("abc", vocab, 3); }),
              HasSubstr("a window needs seq_len + 1 = 4 characters, the text has 3"));
}

TEST(CharStreams, BatchesOfStreamsContinueRowByRow) {
  // 23 characters, 3 streams of (23 - 1) / 3 = 7 characters plus the next: "abcdefgh", "hijklmno",
  // "opqrstuv" ('w' is left out); windows of 3: two per stream.
  const std::string text = "abcdefghijklmnopqrstuvw";
  data::CharVocab vocab(text);
  data::CharStreams streams(text, vocab, 3, 3);
  EXPECT_EQ(streams.size(), 6);
  EXPECT_EQ(streams.streams(), 3);
  // Batch 0 (examples 0-2): window 0 of each stream; batch 1: window 1, continuing row by row.
  const std::vector<std::string> data = {"abc", "hij", "opq", "def", "klm", "rst"};
  for (int64_t k = 0; k < 6; ++k) {
    data::Example<> e = streams.get(k);
    EXPECT_EQ(vocab.decode(e.data), data[static_cast<size_t>(k)]) << k;
    EXPECT_EQ(vocab.decode(e.target), data[static_cast<size_t>(k)].substr(1) +
                                          text[text.find(data[static_cast<size_t>(k)]) + 3])
        << k;
  }
  EXPECT_THAT(error_of([&] { streams.get(6); }), HasSubstr("index 6 is out of range for 6 windows"));
  EXPECT_THAT(error_of([&] { data::CharStreams(text, vocab, 8, 3); }),
              HasSubstr("3 streams of a text of 23 characters have 8 characters each, fewer than one window of "
                        "seq_len + 1 = 9"));
  EXPECT_THAT(error_of([&] { data::CharStreams(text, vocab, 3, 0); }), HasSubstr("streams must be at least 1, got 0"));
}

}  // namespace
