// read_image against PIL: every file in tests/fixtures/images (generate_images.py) decoded in each mode
// equals PIL's pixels within +-1; DCT-domain downscaling equals PIL's draft; bad files are errors that
// name the file and the fault, with the file's bytes escaped.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include <zlib.h>

#include "io/io_test_util.h"
#include "support/error_of.h"

#include "cohort/io/image_decode.h"
#include "cohort/io/npy.h"
#include "support/paths.h"

using namespace cohort;
using namespace cohort::testing;
using ::testing::HasSubstr;

namespace {

const std::string kDir = cohort::testing::fixtures_dir() + "/images/";

// Largest |a - b| over all pixels; -1 when the shapes differ.
int max_diff(const Tensor& got, const Tensor& want) {
  if (got.sizes() != want.sizes()) return -1;
  const uint8_t* a = got.contiguous().data_ptr<uint8_t>();
  const uint8_t* b = want.contiguous().data_ptr<uint8_t>();
  int worst = 0;
  for (int64_t i = 0; i < got.numel(); ++i) worst = std::max(worst, std::abs(int{a[i]} - int{b[i]}));
  return worst;
}

std::vector<uint8_t> bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct Case {
  const char* file;
  const char* ref;  // reference prefix
};

const Case kCases[] = {
    {"rgb420.jpg", "rgb420"},   {"rgb444.jpg", "rgb444"},   {"progressive.jpg", "progressive"},
    {"gray.jpg", "gray"},       {"cmyk.jpg", "cmyk"},       {"exif1.jpg", "exif1"},
    {"exif2.jpg", "exif2"},     {"exif3.jpg", "exif3"},     {"exif4.jpg", "exif4"},
    {"exif5.jpg", "exif5"},     {"exif6.jpg", "exif6"},     {"exif7.jpg", "exif7"},
    {"exif8.jpg", "exif8"},     {"rgb.png", "rgb_png"},     {"gray.png", "gray_png"},
    {"gray_alpha.png", "gray_alpha_png"}, {"rgba.png", "rgba_png"}, {"palette.png", "palette_png"},
    {"palette_trns.png", "palette_trns_png"}, {"gray16.png", "gray16_png"}, {"rgb16.png", "rgb16_png"},
};

TEST(ReadImage, MatchesPilWithinOneInEveryMode) {
  const std::pair<io::ImageMode, const char*> modes[] = {
      {io::ImageMode::kRGB, "rgb"}, {io::ImageMode::kGray, "gray"}, {io::ImageMode::kUnchanged, "unchanged"}};
  for (const Case& c : kCases)
    for (const auto& [mode, suffix] : modes) {
      Tensor got = io::read_image(kDir + c.file, io::ImageReadOptions().mode(mode));
      Tensor want = io::load_npy(kDir + c.ref + "." + suffix + ".npy");
      EXPECT_EQ(got.dtype(), kUInt8);
      EXPECT_TRUE(got.is_contiguous());
      const int d = max_diff(got, want);
      EXPECT_TRUE(d >= 0 && d <= 1) << c.file << " as " << suffix << ": got " << got.sizes() << ", PIL "
                                    << want.sizes() << ", max difference " << d;
    }
}

TEST(ReadImage, ExifOrientationCanBeIgnored) {
  Tensor raw = io::read_image(kDir + "exif6.jpg", io::ImageReadOptions().apply_exif_orientation(false));
  EXPECT_EQ(raw.sizes(), (Shape{12, 20, 3}));
  EXPECT_EQ(max_diff(raw, io::read_image(kDir + "exif1.jpg")), 0);
  EXPECT_EQ(io::read_image(kDir + "exif6.jpg").sizes(), (Shape{20, 12, 3}));
}

TEST(ReadImage, MinSizeUsesDctScalingAsPilDraft) {
  for (int min_size : {10, 20, 40}) {
    Tensor got = io::read_image(kDir + "big.jpg", io::ImageReadOptions().min_size(min_size));
    Tensor want = io::load_npy(kDir + "big.min" + std::to_string(min_size) + ".npy");
    const int d = max_diff(got, want);
    EXPECT_TRUE(d >= 0 && d <= 1) << "min_size " << min_size << ": got " << got.sizes() << ", PIL " << want.sizes()
                                  << ", max difference " << d;
    EXPECT_GE(std::min(got.size(0), got.size(1)), min_size);
  }
  EXPECT_EQ(io::read_image(kDir + "big.jpg", io::ImageReadOptions().min_size(100)).sizes(), (Shape{88, 120, 3}));
  // PNGs ignore min_size.
  EXPECT_EQ(io::read_image(kDir + "rgb.png", io::ImageReadOptions().min_size(2)).sizes(), (Shape{12, 20, 3}));
}

TEST(ReadImage, DecodesFromMemory) {
  const auto jpg = bytes_of(kDir + "rgb420.jpg");
  EXPECT_EQ(max_diff(io::decode_image(jpg.data(), jpg.size()), io::read_image(kDir + "rgb420.jpg")), 0);
  const auto png = bytes_of(kDir + "rgba.png");
  EXPECT_EQ(max_diff(io::decode_image(png.data(), png.size(), io::ImageReadOptions().mode(io::ImageMode::kUnchanged)),
                     io::load_npy(kDir + "rgba_png.unchanged.npy")),
            0);
}

class ReadImageErrors : public ScratchDir {
 protected:
  std::string write(const std::string& name, const std::vector<uint8_t>& bytes) {
    const std::string p = path(name).string();
    std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return p;
  }
};

TEST_F(ReadImageErrors, NameTheFileAndTheFault) {
  EXPECT_THAT(error_of([&] { io::read_image(path("none.jpg").string()); }),
              HasSubstr("read_image: " + path("none.jpg").string()));
  const std::string text = write("text.jpg", {'h', 'i', 0x1b, '[', '2', 'J'});
  EXPECT_THAT(error_of([&] { io::read_image(text); }),
              HasSubstr("read_image: " + text + ": not a JPEG or PNG file (first bytes 68 69 1b 5b 32 4a)"));
  EXPECT_THAT(error_of([&] { io::read_image(write("empty.png", {})); }), HasSubstr("an empty file"));

  auto jpg = bytes_of(kDir + "rgb420.jpg");
  jpg.resize(jpg.size() / 2);
  const std::string cut = write("cut.jpg", jpg);
  EXPECT_THAT(error_of([&] { io::read_image(cut); }), HasSubstr("read_image: " + cut + ": not a readable JPEG file"));

  auto png = bytes_of(kDir + "rgb.png");
  png.resize(png.size() - 30);
  const std::string cut_png = write("cut.png", png);
  EXPECT_THAT(error_of([&] { io::read_image(cut_png); }),
              HasSubstr("read_image: " + cut_png + ": not a readable PNG file"));

  EXPECT_THAT(error_of([&] { io::read_image(kDir + "big.jpg", io::ImageReadOptions().max_pixels(1000)); }),
              HasSubstr("the JPEG declares a 120x88 image, more than max_pixels (1000)"));
  EXPECT_THAT(error_of([&] { io::read_image(kDir + "rgb.png", io::ImageReadOptions().max_pixels(100)); }),
              HasSubstr("the PNG declares a 20x12 image, more than max_pixels (100)"));
  const auto bad = bytes_of(kDir + "rgb.png");
  EXPECT_THAT(error_of([&] { io::decode_image(bad.data(), 20, {}, "upload\x1b"); }),
              HasSubstr("decode_image: upload\\x1b: not a readable PNG file"));
}

// A PNG's signature and IHDR chunk declaring width x height (8-bit RGB), and nothing after it: the
// header of a decompression bomb (Note [Decompression bombs]).
std::vector<uint8_t> png_header(uint32_t width, uint32_t height) {
  std::vector<uint8_t> b{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};
  for (uint32_t v : {width, height})
    for (int shift = 24; shift >= 0; shift -= 8) b.push_back(static_cast<uint8_t>(v >> shift));
  for (uint8_t v : {8, 2, 0, 0, 0}) b.push_back(v);
  const uLong crc = crc32(0, b.data() + 12, 17);
  for (int shift = 24; shift >= 0; shift -= 8) b.push_back(static_cast<uint8_t>(crc >> shift));
  return b;
}

TEST(ImageDecode, DecompressionBombsAreRefusedNamingTheirSize) {
  // 16000 x 16000 is 256 million pixels: above Pillow's 178,956,970, refused before decoding.
  const auto bomb = png_header(16000, 16000);
  EXPECT_THAT(error_of([&] { io::decode_image(bomb.data(), bomb.size(), {}, "bomb.png"); }),
              HasSubstr("bomb.png: the PNG declares a 16000x16000 image, more than max_pixels (178956970): 256000000 "
                        "pixels, as a decompression bomb would declare"));
  // The largest sides a PNG can declare multiply past int64 (fuzz_png found it): still a refusal.
  const auto widest = png_header(0xffffffffu, 0xffffffffu);
  EXPECT_THAT(error_of([&] { io::decode_image(widest.data(), widest.size(), {}, "w.png"); }),
              HasSubstr("the PNG declares a 4294967295x4294967295 image, more than max_pixels"));
  // max_pixels raises the limit: the same header then fails later, for its missing data.
  EXPECT_THAT(error_of([&] {
                io::decode_image(bomb.data(), bomb.size(), io::ImageReadOptions().max_pixels(int64_t{1} << 30), "b");
              }),
              HasSubstr("not a readable PNG file"));
}

TEST(ImageDecode, ImagesAboveHalfTheLimitWarn) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: the warning is once per process
  // 10000 x 10000: above Pillow's warning threshold (89,478,485 pixels), below its limit.
  const auto big = png_header(10000, 10000);
  EXPECT_EXIT(
      {
        for (int i = 0; i < 2; ++i) {
          try {
            io::decode_image(big.data(), big.size(), {}, "big.png");
          } catch (const std::exception&) {  // no image data follows the header
          }
        }
        std::exit(0);
      },
      ::testing::ExitedWithCode(0),
      "big.png: the PNG declares a 10000x10000 image \\(100 megapixels\\), more than half of max_pixels");
}

// Inputs fuzz_png found: decoding them is an image or a cohort::Error (and, under the sanitizers,
// no undefined behaviour).
TEST(ReadImage, FuzzFindingsDecodeOrThrow) {
  // An empty IDAT chunk before the data: stb_image would memcpy from a null pointer.
  const std::vector<uint8_t> empty_idat = {
      0x47, 0x89, 0x50, 0x4e, 0x47, 0xd,  0xa,  0x1a, 0xa,  0x0,  0x0,  0x0,  0xd,  0x49, 0x48, 0x44, 0x52, 0x0,
      0x0,  0x0,  0x14, 0x0,  0x0,  0x0,  0xc,  0x4,  0x6,  0x0,  0x0,  0x0,  0x90, 0x22, 0x80, 0xc8, 0x0,  0x0,
      0x0,  0x30, 0x50, 0x4c, 0x54, 0x45, 0xe3, 0xe9, 0xaa, 0xd7, 0x0,  0x1a, 0xa,  0x0,  0x0,  0x0,  0xd,  0x49,
      0xc3, 0x44, 0x8e, 0xd,  0x49, 0x89, 0x50, 0x10, 0x0,  0x0,  0x0,  0x0,  0x0,  0xd,  0xd,  0x49, 0x44, 0x41,
      0x54, 0x53, 0x47, 0xd,  0xa,  0x89, 0xf8, 0x35, 0x54, 0x45, 0x8e, 0x8e, 0x8e, 0x8e, 0xd,  0x49, 0x89, 0x50,
      0xff, 0x1,  0x0,  0x0,  0x0,  0x0,  0x0,  0x0,  0x49, 0x44, 0x41, 0x54, 0x53, 0x47, 0xd,  0xa,  0x89, 0xf8,
      0x55, 0xe9, 0xaa, 0x0};
  // The same at the end of a file cut inside the chunk's CRC.
  const std::vector<uint8_t> cut_empty_idat = {
      0x47, 0x89, 0x50, 0x4e, 0x47, 0xd, 0xa, 0x1a, 0xa, 0x0, 0x0, 0x0, 0xd, 0x49, 0x48, 0x44, 0x52, 0x0,  0x0,  0x0,
      0x14, 0x0,  0x0,  0x0,  0xff, 0x1, 0x0, 0x0,  0x0, 0x0, 0x9, 0x0, 0x0, 0x0,  0x0,  0x0,  0x0,  0x0,  0x49, 0x44,
      0x41, 0x54, 0xff, 0xfe, 0xff};
  // fuzz_png's first byte chose the mode; the file is the rest.
  for (const auto* input : {&empty_idat, &cut_empty_idat})
    for (auto mode : {io::ImageMode::kRGB, io::ImageMode::kGray, io::ImageMode::kUnchanged}) {
      try {
        io::decode_image(input->data() + 1, input->size() - 1, io::ImageReadOptions().mode(mode));
      } catch (const Error&) {
      }
    }
  // A valid file with an empty IDAT chunk inserted before its data decodes as before.
  auto png = bytes_of(kDir + "rgb.png");
  const size_t idat = std::search(png.begin(), png.end(), std::begin("IDAT"), std::end("IDAT") - 1) - png.begin() - 4;
  const uint8_t empty_chunk[12] = {0, 0, 0, 0, 'I', 'D', 'A', 'T', 0x35, 0xaf, 0x06, 0x1e};
  png.insert(png.begin() + static_cast<std::ptrdiff_t>(idat), empty_chunk, empty_chunk + 12);
  EXPECT_EQ(max_diff(io::decode_image(png.data(), png.size()), io::read_image(kDir + "rgb.png")), 0);
}

// stb_image reserves an IDAT chunk's declared length before reading it: a short file declaring a 2 GB
// chunk is refused before any allocation, naming the chunk's position and the bytes left.
TEST(ReadImage, PngChunkLongerThanTheFileIsRefusedBeforeDecoding) {
  auto png = bytes_of(kDir + "rgb.png");
  const size_t idat = std::search(png.begin(), png.end(), std::begin("IDAT"), std::end("IDAT") - 1) - png.begin() - 4;
  png[idat] = 0x7f, png[idat + 1] = 0xff, png[idat + 2] = 0, png[idat + 3] = 0;
  EXPECT_THAT(error_of([&] { io::decode_image(png.data(), png.size(), {}, "huge"); }),
              HasSubstr("decode_image: huge: not a readable PNG file (a chunk at byte " + std::to_string(idat) +
                        " declares 2147418112 bytes of data, but only " + std::to_string(png.size() - idat - 8) +
                        " remain)"));
}

// A gray 8-bit PNG of width x height whose IDAT holds `raw` (the filter bytes and rows) deflated.
std::vector<uint8_t> gray_png(uint32_t width, uint32_t height, const std::vector<uint8_t>& raw) {
  std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  auto put32 = [&](uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) png.push_back(static_cast<uint8_t>(v >> shift));
  };
  auto chunk = [&](const char* type, const std::vector<uint8_t>& body) {
    put32(static_cast<uint32_t>(body.size()));
    const size_t start = png.size();
    png.insert(png.end(), type, type + 4);
    png.insert(png.end(), body.begin(), body.end());
    put32(static_cast<uint32_t>(crc32(0, png.data() + start, static_cast<uInt>(png.size() - start))));
  };
  std::vector<uint8_t> ihdr;
  for (uint32_t v : {width, height})
    for (int shift = 24; shift >= 0; shift -= 8) ihdr.push_back(static_cast<uint8_t>(v >> shift));
  ihdr.insert(ihdr.end(), {8, 0, 0, 0, 0});  // depth 8, gray, deflate, no filter method, no interlace
  uLongf packed_size = compressBound(static_cast<uLong>(raw.size()));
  std::vector<uint8_t> packed(packed_size);
  EXPECT_EQ(compress2(packed.data(), &packed_size, raw.data(), static_cast<uLong>(raw.size()), 9), Z_OK);
  packed.resize(packed_size);
  chunk("IHDR", ihdr);
  chunk("IDAT", packed);
  chunk("IEND", {});
  return png;
}

// A few kilobytes of IDAT can inflate to gigabytes; the decoder stops at what the declared image needs.
TEST(ReadImage, PngWhoseDataInflatesFarBeyondItsImageIsRefused) {
  std::vector<uint8_t> rows;
  for (int row = 0; row < 4; ++row) rows.insert(rows.end(), {0, 7, 7, 7, 7});  // filter "none", four pixels
  const auto fine = gray_png(4, 4, rows);
  const Tensor image = io::decode_image(fine.data(), fine.size(), io::ImageReadOptions().mode(io::ImageMode::kGray));
  EXPECT_EQ(image.sizes(), (std::vector<int64_t>{4, 4, 1}));
  EXPECT_EQ(image.data_ptr<uint8_t>()[15], 7);

  const auto bomb = gray_png(4, 4, std::vector<uint8_t>(size_t{64} << 20, 0));
  ASSERT_LT(bomb.size(), 100000u);
  EXPECT_THAT(error_of([&] { io::decode_image(bomb.data(), bomb.size(), {}, "bomb.png"); }),
              HasSubstr("decode_image: bomb.png: not a readable PNG file (its compressed data inflates to more "
                        "than a 4x4 image needs)"));
}

TEST(ReadImage, KnowsImageExtensions) {
  EXPECT_TRUE(io::is_image_file("a/b.JPG"));
  EXPECT_TRUE(io::is_image_file("x.jpeg"));
  EXPECT_TRUE(io::is_image_file("x.png"));
  EXPECT_FALSE(io::is_image_file("x.gif"));
  EXPECT_FALSE(io::is_image_file("jpg"));
}

}  // namespace
