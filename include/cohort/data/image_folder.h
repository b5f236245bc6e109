// torchvision's ImageFolder: a directory of class sub-folders holding JPEG and PNG files.
//
//   root/cat/001.jpg, root/cat/x/002.png, root/dog/003.jpeg ...
//   data::ImageFolder train("root", T::Compose({T::RandomResizedCrop(64), T::RandomHorizontalFlip(), T::ToTensor()}));
//   train.classes();        // {"cat", "dog"} (sorted)
//   train.get(2).target;    // int64 0-d: 1 ("dog")
//   data::DataLoader loader(train, data::DataLoaderOptions().batch_size(32).shuffle(true).num_workers(2));
//
// Classes are the sub-directories of root, sorted by name (byte order, as Python's sorted); a class's
// images are the files under its folder, at any depth (symbolic links followed), whose extension is
// .jpg, .jpeg or .png in any letter case, sorted by path; other files, symbolic links to nothing and
// folder links that loop back are skipped, and counted in skipped(). The file list is read
// once, at construction; the images are decoded in get() (so in the DataLoader's worker threads), with
// io::read_image and the given ImageReadOptions (RGB by default, as torchvision's default loader).
// get(i).data is the decoded image, uint8 [H, W, C] of the file's own size, after `transform` when one is
// given; a DataLoader batches only equal shapes, so give a transform that resizes or crops (Resize +
// CenterCrop, RandomResizedCrop) when the images differ in size.
// Random transforms: the transform given here draws from a generator seeded from the calling thread's
// default generator, which the DataLoader seeds per batch, so the batches are the same for any number of
// workers; the same transform given to DataLoaderOptions().transform(...) draws from the loader's
// per-sample generator instead (then get() returns the decoded image and the loader transforms it).
// Throws at construction, naming root, when root is not a directory, has no class folders, or a class
// folder holds no image; get() throws the decoder's error (naming the file) for an unreadable image and
// IndexError outside [0, size()).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cohort/data/dataset.h"
#include "cohort/io/image_decode.h"

namespace cohort::data {

class ImageFolder : public IndexedDataset {
 public:
  explicit ImageFolder(const std::string& root, Transform transform = {},
                       io::ImageReadOptions options = io::ImageReadOptions());

  int64_t size() const override { return static_cast<int64_t>(samples_.size()); }
  Example<> get(int64_t index) const override;
  std::vector<std::string> classes() const override { return classes_; }
  const std::map<std::string, int64_t>& class_to_idx() const { return class_to_idx_; }
  // (path, class index) per example, in order, as torchvision's samples / imgs.
  const std::vector<std::pair<std::string, int64_t>>& samples() const { return samples_; }
  // The class index of every example.
  std::vector<int64_t> targets() const;
  const std::string& root() const { return root_; }

  // What the walk left out (Note [Walking an image folder] in image_folder.cpp), with the first path
  // of each kind.
  struct Skipped {
    int64_t other_files = 0;     // not .jpg/.jpeg/.png, or not regular files
    int64_t dangling_links = 0;  // symbolic links to nothing (or to themselves)
    int64_t repeated_dirs = 0;   // folder links to a folder already walked: loops
    std::string other_example, dangling_example, repeated_example;
  };
  const Skipped& skipped() const { return skipped_; }
  // "2 files that are not .jpg, .jpeg or .png (root/cat/notes.txt, ...) and 1 symbolic link to
  // nothing (root/dog/x.jpg)"; empty when nothing was skipped.
  std::string skipped_summary() const;

 private:
  void walk(const std::filesystem::path& dir, std::vector<std::string>& files,
            std::set<std::pair<uintmax_t, uintmax_t>>& entered);
  void note_dangling(const std::filesystem::path& p);

  std::string root_;
  Transform transform_;
  io::ImageReadOptions options_;
  std::vector<std::string> classes_;
  std::map<std::string, int64_t> class_to_idx_;
  std::vector<std::pair<std::string, int64_t>> samples_;
  Skipped skipped_;
};

}  // namespace cohort::data
