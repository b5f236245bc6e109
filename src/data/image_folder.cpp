// ImageFolder: the file list from a directory walk at construction, decoding in get().
#include "cohort/data/image_folder.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "cohort/core/error.h"
#include "cohort/ops/creation.h"

namespace cohort::data {

namespace fs = std::filesystem;

namespace {

// The identity of a directory (symbolic links followed), to notice a folder walked twice.
std::pair<uintmax_t, uintmax_t> identity_of(const fs::path& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return {0, 0};
  return {static_cast<uintmax_t>(st.st_dev), static_cast<uintmax_t>(st.st_ino)};
}

}  // namespace

// Note [Walking an image folder]
// Symbolic links are followed, as torchvision follows them, but a walk must end and say what it left
// out: a directory link that leads to a folder this class's walk has already entered (a loop such
// as cat/again -> .., or the same folder linked twice) is not entered again; a link to nothing is
// skipped; both are counted with the files that are not images, and named in skipped_summary().
void ImageFolder::walk(const fs::path& dir, std::vector<std::string>& files,
                       std::set<std::pair<uintmax_t, uintmax_t>>& entered) {
  auto note = [](int64_t& count, std::string& example, const fs::path& p) {
    if (count++ == 0) example = p.string();
  };
  std::vector<fs::path> pending{dir};
  entered.insert(identity_of(dir));
  while (!pending.empty()) {
    const fs::path here = pending.back();
    pending.pop_back();
    std::error_code ec;
    fs::directory_iterator it(here, ec), end;
    COHORT_CHECK(!ec, "ImageFolder: cannot read the folder ", escape_text(here.string()), ": ", ec.message());
    for (; it != end; it.increment(ec)) {
      COHORT_CHECK(!ec, "ImageFolder: cannot read the folder ", escape_text(here.string()), ": ", ec.message());
      const fs::path p = it->path();
      std::error_code status_ec;
      const fs::file_status st = it->status(status_ec);  // follows links
      if (status_ec || !fs::exists(st)) {
        note(skipped_.dangling_links, skipped_.dangling_example, p);  // to nothing, or to itself
        continue;
      }
      if (fs::is_directory(st)) {
        if (entered.insert(identity_of(p)).second) pending.push_back(p);
        else note(skipped_.repeated_dirs, skipped_.repeated_example, p);
      } else if (fs::is_regular_file(st) && io::is_image_file(p.string())) {
        files.push_back(p.string());
      } else {
        note(skipped_.other_files, skipped_.other_example, p);
      }
    }
  }
}

std::string ImageFolder::skipped_summary() const {
  std::vector<std::string> parts;
  auto part = [&](int64_t n, const char* one, const char* many, const std::string& example, const char* why) {
    if (n == 0) return;
    parts.push_back(std::to_string(n) + " " + (n == 1 ? one : many) + " (" + escape_text(example) +
                    (n > 1 ? ", ..." : "") + ")" + why);
  };
  part(skipped_.other_files, "file that is not a .jpg, .jpeg or .png", "files that are not .jpg, .jpeg or .png",
       skipped_.other_example, "");
  part(skipped_.dangling_links, "symbolic link to nothing", "symbolic links to nothing", skipped_.dangling_example, "");
  part(skipped_.repeated_dirs, "folder link that leads to a folder already read",
       "folder links that lead to folders already read", skipped_.repeated_example, ": a loop?");
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return out;
}

ImageFolder::ImageFolder(const std::string& root, Transform transform, io::ImageReadOptions options)
    : root_(root), transform_(std::move(transform)), options_(options) {
  std::error_code ec;
  COHORT_CHECK(fs::is_directory(root, ec), "ImageFolder: ", escape_text(root),
               " is not a directory; hint: the layout is root/<class>/<image>.jpg");
  fs::directory_iterator it(root, ec), end;
  COHORT_CHECK(!ec, "ImageFolder: cannot read the folder ", escape_text(root), ": ", ec.message());
  for (; it != end; it.increment(ec)) {
    COHORT_CHECK(!ec, "ImageFolder: cannot read the folder ", escape_text(root), ": ", ec.message());
    std::error_code status_ec;
    const fs::file_status st = it->status(status_ec);
    if (status_ec || !fs::exists(st)) note_dangling(it->path());
    else if (fs::is_directory(st)) classes_.push_back(it->path().filename().string());
  }
  std::sort(classes_.begin(), classes_.end());
  // A link back to the root or above it is a loop too (cat/up -> .. would read every class as cat).
  std::set<std::pair<uintmax_t, uintmax_t>> ancestors;
  for (fs::path p = fs::weakly_canonical(root, ec);; p = p.parent_path()) {
    ancestors.insert(identity_of(p));
    if (p == p.parent_path() || p.empty()) break;
  }
  COHORT_CHECK(!classes_.empty(), "ImageFolder: ", escape_text(root),
               " has no class folders; hint: the layout is root/<class>/<image>.jpg, one sub-folder per class");
  for (size_t c = 0; c < classes_.size(); ++c) {
    class_to_idx_[classes_[c]] = static_cast<int64_t>(c);
    std::vector<std::string> files;
    std::set<std::pair<uintmax_t, uintmax_t>> entered = ancestors;
    const Skipped before = skipped_;
    walk(fs::path(root) / classes_[c], files, entered);
    const int64_t skipped_here = skipped_.other_files - before.other_files +
                                 skipped_.dangling_links - before.dangling_links +
                                 skipped_.repeated_dirs - before.repeated_dirs;
    COHORT_CHECK(!files.empty(), "ImageFolder: ", escape_text(root), ": the class folder '", escape_text(classes_[c]),
                 "' holds no .jpg, .jpeg or .png file", skipped_here ? " (" : "",
                 skipped_here ? std::to_string(skipped_here) : "", skipped_here ? " other files skipped)" : "");
    std::sort(files.begin(), files.end());
    for (auto& f : files) samples_.emplace_back(std::move(f), static_cast<int64_t>(c));
  }
}

void ImageFolder::note_dangling(const fs::path& p) {
  if (skipped_.dangling_links++ == 0) skipped_.dangling_example = p.string();
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
