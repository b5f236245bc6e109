// Text for character-level language models: a corpus read from a file or a directory, its
// characters (bytes) as a vocabulary, and fixed-length windows that predict the next character.
//
//   std::string text = data::read_text_corpus("/usr/share/games/fortunes");   // Debian's fortunes
//   data::CharVocab vocab(text);                       // its distinct bytes, sorted
//   data::CharSequences windows(text, vocab, 64);      // data ids [64], target the next 64 ids
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "cohort/core/tensor.h"
#include "cohort/data/dataset.h"

namespace cohort::data {

// The bytes of a text file, or of every regular file in a directory (sorted by name; symlinks,
// hidden files and fortune's index files "*.dat" skipped), concatenated. Throws cohort::Error
// naming the path when it cannot be read or holds no text.
std::string read_text_corpus(const std::filesystem::path& path);

// The distinct bytes of a text, sorted; a character's index is its rank.
class CharVocab {
 public:
  // Throws cohort::Error for an empty text.
  explicit CharVocab(std::string_view text);
  // The characters in index order (as the bytes they are).
  explicit CharVocab(std::vector<std::string> characters);
  int64_t size() const { return static_cast<int64_t>(chars_.size()); }
  // int64 [text.size()] of indices. Throws cohort::Error naming the first character (escaped) that
  // is not in the vocabulary.
  Tensor encode(std::string_view text) const;
  // The characters of int64 indices (any shape, read in order). Throws for an index out of range.
  std::string decode(const Tensor& ids) const;
  // One string per index: the character itself (a byte; the class names of a language model).
  std::vector<std::string> characters() const;

 private:
  std::vector<unsigned char> chars_;
  std::array<int16_t, 256> index_{};  // byte -> index, -1 when absent
};

// Non-overlapping windows of seq_len + 1 characters: window i starts at i * seq_len; its data are
// the first seq_len ids, its target the last seq_len (each position's next character). int64 [seq_len]
// both. Throws cohort::Error when seq_len < 1 or the text is shorter than seq_len + 1.
class CharSequences : public IndexedDataset {
 public:
  CharSequences(std::string_view text, const CharVocab& vocab, int64_t seq_len);
  int64_t size() const override { return (ids_.numel() - 1) / seq_len_; }
  Example<> get(int64_t index) const override;
  std::vector<std::string> classes() const override { return classes_; }
  const Tensor& ids() const { return ids_; }

 private:
  Tensor ids_;
  int64_t seq_len_;
  std::vector<std::string> classes_;
};

// The text as `streams` contiguous streams, each cut into windows of seq_len + 1 characters (the
// batching of truncated backpropagation through time, as PyTorch's word_language_model): stream s
// is the characters [s * L, (s + 1) * L] with L = (n - 1) / streams (the last few characters of the
// text are left out), its window w starts at s * L + w * seq_len, and example k is window
// k / streams of stream k % streams. Read in order in batches of `streams`, batch b holds window b
// of every stream, and row i of each batch continues row i of the batch before: a recurrent model
// carries its state from one batch to the next. Throws cohort::Error when seq_len < 1, streams < 1,
// or a stream is shorter than one window.
class CharStreams : public IndexedDataset {
 public:
  CharStreams(std::string_view text, const CharVocab& vocab, int64_t seq_len, int64_t streams);
  int64_t size() const override { return windows_ * streams_; }
  Example<> get(int64_t index) const override;
  std::vector<std::string> classes() const override { return classes_; }
  int64_t streams() const { return streams_; }

 private:
  Tensor ids_;
  int64_t seq_len_, streams_, stream_len_ = 0, windows_ = 0;
  std::vector<std::string> classes_;
};

}  // namespace cohort::data
