// data::read_idx on a gzipped IDX file ("....gz"): the inflater (truncation, corrupt data, trailing
// bytes, several members, a lying ISIZE trailer) and the IDX parser behind it. The first byte picks
// what the rest is:
//   0: the .gz file itself, byte for byte (corrupt and truncated streams);
//   1: the IDX bytes, gzipped here (the parser behind a valid stream);
//   2: the IDX bytes split in two, each half gzipped, members back to back (cat a.gz b.gz).
#include <zlib.h>

#include <vector>

#include "cohort/core/error.h"
#include "cohort/data/mnist.h"
#include "fuzz_util.h"

namespace {

void gzip(const uint8_t* data, size_t size, std::vector<uint8_t>& out) {
  z_stream z{};
  if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
  const size_t start = out.size();
  out.resize(start + deflateBound(&z, size) + 32);
  z.next_in = const_cast<Bytef*>(data);
  z.avail_in = static_cast<uInt>(size);
  z.next_out = out.data() + start;
  z.avail_out = static_cast<uInt>(out.size() - start);
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) std::abort();
  out.resize(start + z.total_out);
  deflateEnd(&z);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t mode = data[0] % 3;
  ++data, --size;
  std::vector<uint8_t> file;
  if (mode == 0) {
    file.assign(data, data + size);
  } else if (mode == 1) {
    gzip(data, size, file);
  } else {
    gzip(data, size / 2, file);
    gzip(data + size / 2, size - size / 2, file);
  }
  const auto path = cohort::fuzz::write_input("input-idx3-ubyte.gz", file.data(), file.size());
  try {
    cohort::Tensor t = cohort::data::read_idx(path.string());
    // A valid stream must give back exactly the bytes that were compressed.
    if (mode != 0 && static_cast<size_t>(4 + 4 * t.dim() + t.numel()) != size) std::abort();
  } catch (const cohort::Error&) {
    if (mode != 0 && size >= 4 + 4 && data[0] == 0 && data[1] == 0 && data[2] == 8 && data[3] == 1 &&
        size == 8 + (size_t{data[4]} << 24 | size_t{data[5]} << 16 | size_t{data[6]} << 8 | data[7]))
      std::abort();  // a well-formed 1-d IDX behind a valid stream was refused
  }
  return 0;
}
