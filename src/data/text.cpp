// Text corpora, character vocabularies and next-character windows (see cohort/data/text.h).
#include "cohort/data/text.h"

#include <algorithm>

#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "data/file_reader.h"

namespace cohort::data {

namespace fs = std::filesystem;

std::string read_text_corpus(const fs::path& path) {
  std::error_code ec;
  std::vector<fs::path> files;
  if (fs::is_directory(path, ec)) {
    for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) {
      const std::string name = e.path().filename().string();
      if (e.is_symlink(ec) || !e.is_regular_file(ec) || name.starts_with(".") || name.ends_with(".dat")) continue;
      files.push_back(e.path());
    }
    COHORT_CHECK(!ec, "read_text_corpus: ", escape_text(path.string()), ": ", ec.message());
    std::sort(files.begin(), files.end());
    COHORT_CHECK(!files.empty(), "read_text_corpus: ", escape_text(path.string()), ": the directory holds no text files");
  } else {
    files.push_back(path);
  }
  std::string text;
  for (const fs::path& file : files) {
    const std::vector<uint8_t> bytes = detail::read_file(file.string(), "read_text_corpus");
    text.append(bytes.begin(), bytes.end());
  }
  COHORT_CHECK(!text.empty(), "read_text_corpus: ", escape_text(path.string()), ": no text (the files are empty)");
  return text;
}

CharVocab::CharVocab(std::string_view text) {
  COHORT_CHECK(!text.empty(), "CharVocab: the text is empty");
  std::array<bool, 256> seen{};
  for (char c : text) seen[static_cast<unsigned char>(c)] = true;
  index_.fill(-1);
  for (int b = 0; b < 256; ++b)
    if (seen[b]) {
      index_[b] = static_cast<int16_t>(chars_.size());
      chars_.push_back(static_cast<unsigned char>(b));
    }
}

CharVocab::CharVocab(std::vector<std::string> characters) {
  index_.fill(-1);
  for (const std::string& c : characters) {
    COHORT_CHECK(c.size() == 1, "CharVocab: each character is one byte, got '", escape_text(c), "'");
    const auto b = static_cast<unsigned char>(c[0]);
    COHORT_CHECK(index_[b] < 0, "CharVocab: '", escape_text(c), "' appears twice");
    index_[b] = static_cast<int16_t>(chars_.size());
    chars_.push_back(b);
  }
  COHORT_CHECK(!chars_.empty(), "CharVocab: no characters");
}

Tensor CharVocab::encode(std::string_view text) const {
  Tensor ids = empty({static_cast<int64_t>(text.size())}, kInt64);
  int64_t* out = ids.data_ptr<int64_t>();
  for (size_t i = 0; i < text.size(); ++i) {
    const int16_t k = index_[static_cast<unsigned char>(text[i])];
    COHORT_CHECK(k >= 0, "CharVocab::encode: '", escape_text(std::string(1, text[i])), "' (position ", i,
                 ") is not one of the ", chars_.size(), " characters of the vocabulary");
    out[i] = k;
  }
  return ids;
}

std::string CharVocab::decode(const Tensor& ids) const {
  Tensor flat = ids.reshape({-1}).to(kInt64).contiguous();
  std::string text;
  const int64_t* p = flat.data_ptr<int64_t>();
  for (int64_t i = 0; i < flat.numel(); ++i) {
    COHORT_CHECK(p[i] >= 0 && p[i] < size(), "CharVocab::decode: index ", p[i], " is out of range for ", size(),
                 " characters");
    text += static_cast<char>(chars_[static_cast<size_t>(p[i])]);
  }
  return text;
}

std::vector<std::string> CharVocab::characters() const {
  std::vector<std::string> out;
  for (unsigned char c : chars_) out.emplace_back(1, static_cast<char>(c));
  return out;
}

CharSequences::CharSequences(std::string_view text, const CharVocab& vocab, int64_t seq_len)
    : ids_(vocab.encode(text)), seq_len_(seq_len), classes_(vocab.characters()) {
  COHORT_CHECK(seq_len >= 1, "CharSequences: seq_len must be at least 1, got ", seq_len);
  COHORT_CHECK(ids_.numel() > seq_len, "CharSequences: a window needs seq_len + 1 = ", seq_len + 1,
               " characters, the text has ", ids_.numel());
}

Example<> CharSequences::get(int64_t index) const {
  COHORT_CHECK_AS(IndexError, index >= 0 && index < size(), "CharSequences::get: index ", index,
                  " is out of range for ", size(), " windows");
  return {ids_.narrow(0, index * seq_len_, seq_len_), ids_.narrow(0, index * seq_len_ + 1, seq_len_)};
}

CharStreams::CharStreams(std::string_view text, const CharVocab& vocab, int64_t seq_len, int64_t streams)
    : ids_(vocab.encode(text)), seq_len_(seq_len), streams_(streams), classes_(vocab.characters()) {
  COHORT_CHECK(seq_len >= 1, "CharStreams: seq_len must be at least 1, got ", seq_len);
  COHORT_CHECK(streams >= 1, "CharStreams: streams must be at least 1, got ", streams);
  COHORT_CHECK(ids_.numel() > seq_len, "CharStreams: a window needs seq_len + 1 = ", seq_len + 1,
               " characters, the text has ", ids_.numel());
  stream_len_ = (ids_.numel() - 1) / streams;
  windows_ = stream_len_ / seq_len;
  COHORT_CHECK(windows_ >= 1, "CharStreams: ", streams, " streams of a text of ", ids_.numel(), " characters have ",
               stream_len_ + 1, " characters each, fewer than one window of seq_len + 1 = ", seq_len + 1,
               "; hint: a shorter --seq-len or a smaller --batch-size");
}

Example<> CharStreams::get(int64_t index) const {
  COHORT_CHECK_AS(IndexError, index >= 0 && index < size(), "CharStreams::get: index ", index,
                  " is out of range for ", size(), " windows");
  const int64_t start = (index % streams_) * stream_len_ + (index / streams_) * seq_len_;
  return {ids_.narrow(0, start, seq_len_), ids_.narrow(0, start + 1, seq_len_)};
}

}  // namespace cohort::data
