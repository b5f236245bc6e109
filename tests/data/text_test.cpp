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

}  // namespace
