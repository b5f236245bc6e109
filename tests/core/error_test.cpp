// escape_text: what a message quotes from a file can no longer drive the terminal that prints it.
#include <gtest/gtest.h>

#include <string>

#include "cohort/core/array_ref.h"
#include "cohort/core/error.h"

namespace cohort {
namespace {

TEST(EscapeText, ControlCharactersAndBadUtf8BecomeEscapesAndTextStays) {
  EXPECT_EQ(escape_text("conv1.weight"), "conv1.weight");
  EXPECT_EQ(escape_text("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(escape_text("tab\there\nnext\r"), "tab\\there\\nnext\\r");
  EXPECT_EQ(escape_text(std::string("nul\0del\x7f", 8)), "nul\\x00del\\x7f");
  EXPECT_EQ(escape_text("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80");  // UTF-8
  EXPECT_EQ(escape_text("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(escape_text("\xc3"), "\\xc3");                  // cut short
  EXPECT_EQ(escape_text("\xc0\xaf"), "\\xc0\\xaf");         // overlong '/'
  EXPECT_EQ(escape_text("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(escape_text("\xc2\x9b"), "\xc2\x9b");            // U+009B is valid UTF-8 (terminals that honour C1 in UTF-8 are rare)
  EXPECT_EQ(escape_text("line 1\nline 2\x1b", /*keep_newlines=*/true), "line 1\nline 2\\x1b");
  // Escaping twice changes nothing, so a message may be escaped again as a whole.
  EXPECT_EQ(escape_text(escape_text("a\x1b\xff")), escape_text("a\x1b\xff"));
}

// libtorch programs catch c10::Error and print msg() or what_without_backtrace().
TEST(Error, LibtorchSpellingsOfTheMessage) {
  const Error e("conv2d: expected 4 dims, got 3");
  EXPECT_EQ(e.msg(), "conv2d: expected 4 dims, got 3");
  EXPECT_STREQ(e.what_without_backtrace(), e.what());
}

TEST(ArrayRef, SliceAndAtAreViewsOrIndexErrors) {
  const std::vector<int64_t> v{4, 3, 2, 1};
  const IntArrayRef a(v);
  EXPECT_EQ(a.slice(1).vec(), (std::vector<int64_t>{3, 2, 1}));
  EXPECT_EQ(a.slice(1, 2).vec(), (std::vector<int64_t>{3, 2}));  // drop 1, keep 2
  EXPECT_EQ(a.slice(1, 2).data(), v.data() + 1);
  EXPECT_TRUE(a.slice(4).empty());
  EXPECT_TRUE(a.slice(0, 2).equals(IntArrayRef({4, 3})));
  EXPECT_EQ(a.at(3), 1);
  try {
    (void)a.slice(3, 2);
    ADD_FAILURE() << "slice(3, 2) did not throw";
  } catch (const IndexError& e) {
    EXPECT_STREQ(e.what(), "ArrayRef::slice: expected n + m <= size (drop n elements, keep m), got n = 3, m = 2, size = 4");
  }
  try {
    (void)a.at(4);
    ADD_FAILURE() << "at(4) did not throw";
  } catch (const IndexError& e) {
    EXPECT_STREQ(e.what(), "ArrayRef::at: index 4 is out of range for an array of size 4");
  }
}

}  // namespace
}  // namespace cohort
