// ImageFolder: the file list from a directory walk at construction, decoding in get().
#include "cohort/data/image_folder.h"

#include <algorithm>
#include <filesystem>

#include "cohort/core/error.h"
#include "cohort/ops/creation.h"

namespace cohort::data {

namespace fs = std::filesystem;

ImageFolder::ImageFolder(const std::string& root, Transform transform, io::ImageReadOptions options)
    : root_(root), transform_(std::move(transform)), options_(options) {
  std::error_code ec;
  COHORT_CHECK(fs::is_directory(root, ec), "ImageFolder: ", escape_text(root),
               " is not a directory; hint: the layout is root/<class>/<image>.jpg");
  for (const auto& entry : fs::directory_iterator(root, fs::directory_options::follow_directory_symlink))
    if (entry.is_directory()) classes_.push_back(entry.path().filename().string());
  std::sort(classes_.begin(), classes_.end());
  COHORT_CHECK(!classes_.empty(), "ImageFolder: ", escape_text(root),
               " has no class folders; hint: the layout is root/<class>/<image>.jpg, one sub-folder per class");
  for (size_t c = 0; c < classes_.size(); ++c) {
    class_to_idx_[classes_[c]] = static_cast<int64_t>(c);
    std::vector<std::string> files;
    int64_t skipped = 0;
    const fs::path dir = fs::path(root) / classes_[c];
    for (const auto& entry : fs::recursive_directory_iterator(dir, fs::directory_options::follow_directory_symlink)) {
      if (!entry.is_regular_file()) continue;
      if (io::is_image_file(entry.path().string())) files.push_back(entry.path().string());
      else ++skipped;
    }
    COHORT_CHECK(!files.empty(), "ImageFolder: ", escape_text(root), ": the class folder '", escape_text(classes_[c]),
                 "' holds no .jpg, .jpeg or .png file", skipped ? " (" : "", skipped ? std::to_string(skipped) : "",
                 skipped ? " other files skipped)" : "");
    std::sort(files.begin(), files.end());
    for (auto& f : files) samples_.emplace_back(std::move(f), static_cast<int64_t>(c));
  }
}

Example<> ImageFolder::get(int64_t index) const {
  COHORT_CHECK_AS(IndexError, index >= 0 && index < size(), "ImageFolder: index ", index, " is out of range for ",
                  size(), " images in ", escape_text(root_));
  const auto& [path, target] = samples_[index];
  Tensor image = io::read_image(path, options_);
  if (transform_) {
    Generator gen(default_generator().next_u64());
    image = transform_(image, gen);
  }
  return {image, scalar_tensor(target, TensorOptions(kInt64))};
}

std::vector<int64_t> ImageFolder::targets() const {
  std::vector<int64_t> out;
  out.reserve(samples_.size());
  for (const auto& s : samples_) out.push_back(s.second);
  return out;
}

}  // namespace cohort::data
