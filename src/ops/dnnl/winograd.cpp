// Winograd F(4x4, 3x3) float32 convolution on oneDNN's sgemm (Note [Own Winograd]).
#include "ops/dnnl/winograd.h"

#include <dnnl.h>
#include <omp.h>

#include <algorithm>
#include <vector>

#include "ops/cpu/isa.h"
#include "ops/cpu/loops.h"
#include "ops/internal.h"

namespace cohort::kernel::winograd {

// Note [Own Winograd]
// oneDNN 2.6 has Winograd kernels for AVX-512 only; on AVX2 its direct kernel already runs at about
// 85% of the FMA peak, so a convolution cannot get much faster without doing fewer multiplications.
// Winograd F(4x4, 3x3) (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks", 2016)
// computes a 4x4 output tile from a 6x6 input tile with 36 multiplications per (input, output)
// channel pair instead of 144: each tile d becomes V = B^T d B, each 3x3 kernel g becomes
// U = G g G^T, and the output tile is A^T [sum_c U_c (.) V_c] A. Summing over channels point by point
// is 36 independent matrix products, one per point xi of the 6x6 grid: M_xi = U_xi . V_xi, with
// U_xi [out channels x in channels] and V_xi [in channels x tiles]; oneDNN's sgemm does those.
// The tiles are taken in blocks small enough that a block's V and M stay in the L2 cache between
// the input transform, the products and the output transform. Blocks are split over the OpenMP
// team; each product runs on its block's thread.
// The two backward passes are the same machinery: the gradient w.r.t. the input is the forward
// convolution of dout with the kernels rotated by 180 degrees and their channels swapped (the
// padding becomes 2 - pad); the gradient w.r.t. the weights is dU_xi = sum over tiles of
// (A dY A^T)_xi V_xi^T (the forward's chain rule, tile by tile), then dW = G^T dU G.
// Rounding: the transforms multiply by up to 8 and divide by 24, so the error grows to about 1e-6
// of the output's scale with 64 channels, 10x direct convolution's (conv_test checks both against
// float64); ConvAlgorithm::Direct is there for who needs the last bits.

namespace {

constexpr int64_t kPoints = 36;  // of the 6x6 transformed tile

// The transforms, each applied to n tiles at once: arrays over tiles j < n, so that the loops
// vectorise. B^T takes 6 values to 6, A^T 6 to 4, A 4 to 6.
COHORT_ALWAYS_INLINE void apply_bt(const float* __restrict d0, const float* __restrict d1,
                                   const float* __restrict d2, const float* __restrict d3,
                                   const float* __restrict d4, const float* __restrict d5, float* __restrict o0,
                                   float* __restrict o1, float* __restrict o2, float* __restrict o3,
                                   float* __restrict o4, float* __restrict o5, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    const float a0 = d0[j], a1 = d1[j], a2 = d2[j], a3 = d3[j], a4 = d4[j], a5 = d5[j];
    o0[j] = 4.f * a0 - 5.f * a2 + a4;
    o1[j] = (a3 + a4) - 4.f * (a1 + a2);
    o2[j] = (a4 - a3) + 4.f * (a1 - a2);
    o3[j] = (a4 - a2) + 2.f * (a3 - a1);
    o4[j] = (a4 - a2) - 2.f * (a3 - a1);
    o5[j] = 4.f * a1 - 5.f * a3 + a5;
  }
}

COHORT_ALWAYS_INLINE void apply_at(const float* __restrict m0, const float* __restrict m1,
                                   const float* __restrict m2, const float* __restrict m3,
                                   const float* __restrict m4, const float* __restrict m5, float* __restrict y0,
                                   float* __restrict y1, float* __restrict y2, float* __restrict y3, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    const float s12 = m1[j] + m2[j], d12 = m1[j] - m2[j], s34 = m3[j] + m4[j], d34 = m3[j] - m4[j];
    y0[j] = m0[j] + s12 + s34;
    y1[j] = d12 + 2.f * d34;
    y2[j] = s12 + 4.f * s34;
    y3[j] = d12 + 8.f * d34 + m5[j];
  }
}

COHORT_ALWAYS_INLINE void apply_a(const float* __restrict y0, const float* __restrict y1,
                                  const float* __restrict y2, const float* __restrict y3, float* __restrict x0,
                                  float* __restrict x1, float* __restrict x2, float* __restrict x3,
                                  float* __restrict x4, float* __restrict x5, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    const float even = y0[j] + y2[j], odd = y1[j] + y3[j];
    const float even4 = y0[j] + 4.f * y2[j], odd8 = 2.f * y1[j] + 8.f * y3[j];
    x0[j] = y0[j];
    x1[j] = even + odd;
    x2[j] = even - odd;
    x3[j] = even4 + odd8;
    x4[j] = even4 - odd8;
    x5[j] = y3[j];
  }
}

// Copies columns [x0, x0 + len) of row y of an H x W plane into `row`, zeros outside the plane.
COHORT_ALWAYS_INLINE void padded_row(const float* plane, int64_t H, int64_t W, int64_t y, int64_t x0, int64_t len,
                                     float* row) {
  if (y < 0 || y >= H) {
    std::fill(row, row + len, 0.f);
    return;
  }
  const int64_t lo = std::clamp<int64_t>(-x0, 0, len), hi = std::clamp<int64_t>(W - x0, 0, len);
  const float* src = plane + y * W + x0;
  std::fill(row, row + lo, 0.f);
  std::copy(src + lo, src + hi, row + lo);
  std::fill(row + hi, row + len, 0.f);
}

// Splits a row into its 4 phases: phase s holds row[4j + s], so that the windows of n tiles
// (4 apart, 6 wide) are the arrays phase0..3 and phase0, phase1 shifted by one tile.
COHORT_ALWAYS_INLINE void split_phases(const float* __restrict row, int64_t tiles, float* __restrict phases) {
  for (int64_t j = 0; j < tiles; ++j)
    for (int64_t s = 0; s < 4; ++s) phases[s * tiles + j] = row[4 * j + s];
}

// Scratch floats a thread needs for the per-row work of n tiles (the largest of the three below).
int64_t row_scratch(int64_t n) { return 64 * n + 16; }

// V = B^T d B for the n tiles of one H x W plane whose windows start at (y0, x0), 4 columns apart;
// point xi of tile j goes to v[xi * xi_stride + j]. First down the columns (B^T combines the
// window's 6 rows): contiguous rows straight from the plane, one long vector loop, zeros where the
// windows hang over its edges; then along each of the 6 resulting rows, split into its 4 phases.
COHORT_ISA_CLONES void input_tiles(const float* plane, int64_t H, int64_t W, int64_t y0, int64_t x0, int64_t n,
                                   float* v, int64_t xi_stride, float* scratch) {
  const int64_t m = n + 1;  // phases cover one more tile: windows reach 2 columns into the next
  const int64_t len = 4 * m;
  float* t = scratch;            // [6][len]: B^T applied down the columns
  float* ph = t + 6 * len;       // [4][m]
  float* zeros = ph + 4 * m;     // [len]
  const int64_t lo = std::clamp<int64_t>(-x0, 0, len), hi = std::clamp<int64_t>(W - x0, 0, len);
  std::fill(zeros, zeros + len, 0.f);
  const float* rows[6];
  for (int64_t r = 0; r < 6; ++r) {
    const int64_t y = y0 + r;
    rows[r] = (y < 0 || y >= H) ? zeros : plane + y * W + x0;  // valid at [lo, hi)
  }
  for (int64_t k = 0; k < 6; ++k) {
    std::fill(t + k * len, t + k * len + lo, 0.f);
    std::fill(t + k * len + hi, t + (k + 1) * len, 0.f);
  }
  apply_bt(rows[0] + lo, rows[1] + lo, rows[2] + lo, rows[3] + lo, rows[4] + lo, rows[5] + lo, t + lo, t + len + lo,
           t + 2 * len + lo, t + 3 * len + lo, t + 4 * len + lo, t + 5 * len + lo, hi - lo);
  for (int64_t k = 0; k < 6; ++k) {
    split_phases(t + k * len, m, ph);
    float* vk = v + 6 * k * xi_stride;
    apply_bt(ph, ph + m, ph + 2 * m, ph + 3 * m, ph + 1, ph + m + 1, vk, vk + xi_stride, vk + 2 * xi_stride,
             vk + 3 * xi_stride, vk + 4 * xi_stride, vk + 5 * xi_stride, n);
  }
}

// The output tiles A^T M A of n tiles (point xi of tile j at m[xi * xi_stride + j]) plus bias,
// written to the P x Q plane from (y0, x0) on, clipped at its edges.
COHORT_ISA_CLONES void output_tiles(const float* m, int64_t xi_stride, int64_t n, float bias, float* plane, int64_t P,
                                    int64_t Q, int64_t y0, int64_t x0, float* scratch) {
  float* s = scratch;   // [6 rows k][4 columns i][n]
  float* z = s + 24 * n;  // [4 rows][4 columns][n]
  for (int64_t k = 0; k < 6; ++k) {
    const float* mk = m + 6 * k * xi_stride;
    float* sk = s + 4 * k * n;
    apply_at(mk, mk + xi_stride, mk + 2 * xi_stride, mk + 3 * xi_stride, mk + 4 * xi_stride, mk + 5 * xi_stride, sk,
             sk + n, sk + 2 * n, sk + 3 * n, n);
  }
  for (int64_t i = 0; i < 4; ++i) {
    const float* si = s + i * n;
    const int64_t k = 4 * n;
    apply_at(si, si + k, si + 2 * k, si + 3 * k, si + 4 * k, si + 5 * k, z + i * n, z + (4 + i) * n, z + (8 + i) * n,
             z + (12 + i) * n, n);
  }
  const int64_t width = std::min(4 * n, Q - x0);
  for (int64_t r = 0; r < 4 && y0 + r < P; ++r) {
    float* dst = plane + (y0 + r) * Q + x0;
    const float* zr = z + 4 * r * n;
    const int64_t full = width / 4;
    for (int64_t j = 0; j < full; ++j)
      for (int64_t i = 0; i < 4; ++i) dst[4 * j + i] = zr[i * n + j] + bias;
    for (int64_t x = 4 * full; x < width; ++x) dst[x] = zr[(x % 4) * n + x / 4] + bias;
  }
}

// A dY A^T for the n 4x4 tiles of a P x Q gradient plane from (y0, x0) on (zeros beyond its edges),
// laid out as input_tiles' output.
COHORT_ISA_CLONES void grad_output_tiles(const float* plane, int64_t P, int64_t Q, int64_t y0, int64_t x0, int64_t n,
                                         float* v, int64_t xi_stride, float* scratch) {
  float* row = scratch;     // 4 n
  float* ph = row + 4 * n;  // 4 n
  float* u = ph + 4 * n;    // [4 rows][6 points][n]
  for (int64_t r = 0; r < 4; ++r) {
    padded_row(plane, P, Q, y0 + r, x0, 4 * n, row);
    split_phases(row, n, ph);
    float* ur = u + r * 6 * n;
    apply_a(ph, ph + n, ph + 2 * n, ph + 3 * n, ur, ur + n, ur + 2 * n, ur + 3 * n, ur + 4 * n, ur + 5 * n, n);
  }
  for (int64_t l = 0; l < 6; ++l) {
    const float* ul = u + l * n;
    float* vl = v + l * xi_stride;
    const int64_t s = 6 * n, k = 6 * xi_stride;
    apply_a(ul, ul + s, ul + 2 * s, ul + 3 * s, vl, vl + k, vl + 2 * k, vl + 3 * k, vl + 4 * k, vl + 5 * k, n);
  }
}

// G (6 values from 3) and G^T (3 from 6) over arrays of n kernels. Multiplications by the
// reciprocals: a division would stay a division (no -ffast-math here).
COHORT_ALWAYS_INLINE void apply_g(const float* __restrict g0, const float* __restrict g1, const float* __restrict g2,
                                  float* __restrict u0, float* __restrict u1, float* __restrict u2,
                                  float* __restrict u3, float* __restrict u4, float* __restrict u5, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    const float outer = g0[k] + g2[k], quarter = g0[k] * (1.f / 24) + g2[k] * (1.f / 6);
    u0[k] = g0[k] * 0.25f;
    u1[k] = (outer + g1[k]) * (-1.f / 6);
    u2[k] = (outer - g1[k]) * (-1.f / 6);
    u3[k] = quarter + g1[k] * (1.f / 12);
    u4[k] = quarter - g1[k] * (1.f / 12);
    u5[k] = g2[k];
  }
}

COHORT_ALWAYS_INLINE void apply_gt(const float* __restrict x0, const float* __restrict x1,
                                   const float* __restrict x2, const float* __restrict x3,
                                   const float* __restrict x4, const float* __restrict x5, float* __restrict y0,
                                   float* __restrict y1, float* __restrict y2, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    const float s12 = x1[k] + x2[k], s34 = x3[k] + x4[k];
    y0[k] = x0[k] * 0.25f - s12 * (1.f / 6) + s34 * (1.f / 24);
    y1[k] = (x2[k] - x1[k]) * (1.f / 6) + (x3[k] - x4[k]) * (1.f / 12);
    y2[k] = (s34 - s12) * (1.f / 6) + x5[k];
  }
}

// Kernels are transformed in chunks that stay in the L1 cache, and split over threads from
// kKernelGrain kernels a thread (about 100 flops each).
constexpr int64_t kKernelChunk = 128;
constexpr int64_t kKernelGrain = 4096;

// U = G g G^T for a rows x cols grid of kernels: kernel (r, c) is read from
// g + ((r / group_rows) * group_stride + (r % group_rows) * g_row + c * g_col) * 9 (turned by 180
// degrees when `rotate`: the backward data pass's kernels), and point xi of its transform written to
// u[xi * rows * cols + r * cols + c], so that each point's kernels form a rows x cols matrix.
struct KernelLayout {
  int64_t rows, cols;
  int64_t g_row, g_col;
  int64_t group_rows, group_stride;
};

// Kernels [begin, end) of the layout.
COHORT_ISA_CLONES void transform_kernels(const float* g, const KernelLayout& layout, bool rotate, float* u,
                                         int64_t begin, int64_t end) {
  const int64_t count = layout.rows * layout.cols;
  float w[9][kKernelChunk], t[6][3][kKernelChunk];
  for (int64_t k0 = begin; k0 < end; k0 += kKernelChunk) {
    const int64_t n = std::min(kKernelChunk, end - k0);
    for (int64_t k = 0; k < n; ++k) {
      const int64_t r = (k0 + k) / layout.cols, c = (k0 + k) % layout.cols;
      const int64_t group = r / layout.group_rows, row = r % layout.group_rows;
      const float* kernel = g + (group * layout.group_stride + row * layout.g_row + c * layout.g_col) * 9;
      for (int64_t i = 0; i < 9; ++i) w[i][k] = kernel[rotate ? 8 - i : i];
    }
    for (int64_t b = 0; b < 3; ++b)  // G g: down each column of g
      apply_g(w[b], w[3 + b], w[6 + b], t[0][b], t[1][b], t[2][b], t[3][b], t[4][b], t[5][b], n);
    for (int64_t a = 0; a < 6; ++a) {  // (G g) G^T: along each row
      float* ua = u + 6 * a * count + k0;
      apply_g(t[a][0], t[a][1], t[a][2], ua, ua + count, ua + 2 * count, ua + 3 * count, ua + 4 * count,
              ua + 5 * count, n);
    }
  }
}

// dW = G^T dU G for kernels [begin, end) of count: point xi of kernel k at du[xi * count + k],
// kernel k to dw + 9 k.
COHORT_ISA_CLONES void untransform_kernels(const float* du, int64_t count, float* dw, int64_t begin, int64_t end) {
  float t[6][3][kKernelChunk], y[3][3][kKernelChunk];
  for (int64_t k0 = begin; k0 < end; k0 += kKernelChunk) {
    const int64_t n = std::min(kKernelChunk, end - k0);
    for (int64_t a = 0; a < 6; ++a) {  // along each row of the 6x6
      const float* x = du + 6 * a * count + k0;
      apply_gt(x, x + count, x + 2 * count, x + 3 * count, x + 4 * count, x + 5 * count, t[a][0], t[a][1], t[a][2],
               n);
    }
    for (int64_t b = 0; b < 3; ++b)  // down each column
      apply_gt(t[0][b], t[1][b], t[2][b], t[3][b], t[4][b], t[5][b], y[0][b], y[1][b], y[2][b], n);
    for (int64_t k = 0; k < n; ++k)
      for (int64_t i = 0; i < 9; ++i) dw[9 * (k0 + k) + i] = y[i / 3][i % 3][k];
  }
}

// Where the tiles of a pass read and write. The pass computes, for every written plane o,
// out[y][x] = sum over read planes c and i, j < 3 of read[c][y + top + i][x + left + j] * K[o][c][i][j]
// (the tiles cover the written planes, the read planes are only read).
// With groups, written plane o of group o / (O / G) reads only that group's C / G planes.
struct Geometry {
  int64_t N;
  int64_t C, H, W;  // read planes per image and their size
  int64_t O, P, Q;  // written (or, for the weights' gradient, gradient) planes and their size
  int64_t top, left;
  int64_t G, Cg, Og;  // groups, read and written planes per group
  int64_t tiles_h, tiles_w, tiles;
  Geometry(int64_t N_, int64_t C_, int64_t H_, int64_t W_, int64_t O_, int64_t P_, int64_t Q_, int64_t top_,
           int64_t left_, int64_t groups)
      : N(N_), C(C_), H(H_), W(W_), O(O_), P(P_), Q(Q_), top(top_), left(left_), G(groups) {
    Cg = C / G;
    Og = O / G;
    tiles_h = (P + 3) / 4;
    tiles_w = (Q + 3) / 4;
    tiles = N * tiles_h * tiles_w;
  }
};

// Calls f(n, tile_row, first_tile_column, count, offset) for the runs of tiles [t0, t1) that share
// an image and a tile row (tiles are numbered image by image, row by row); offset is t - t0.
template <class F>
void for_each_run(const Geometry& g, int64_t t0, int64_t t1, F&& f) {
  for (int64_t t = t0; t < t1;) {
    const int64_t row = t / g.tiles_w, column = t % g.tiles_w;
    const int64_t count = std::min(g.tiles_w - column, t1 - t);
    f(row / g.tiles_h, row % g.tiles_h, column, count, t - t0);
    t += count;
  }
}

// Calls f(plane, n, tile_row, first_tile_column, count, offset, scratch) for every plane < planes
// and every run of the tiles [t0, t1), plane by plane: the reads and writes then run down each
// plane (run by run and channel by channel, they jumped between 64 planes and stalled on memory).
// In a block of the whole team's (see block_tiles), the planes are split over the threads.
template <class F>
void for_each_plane(const Geometry& g, int64_t planes, int64_t t0, int64_t t1, F&& f) {
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / (kPoints * (t1 - t0)));
  parallel_for(planes, grain, [&](int64_t p0, int64_t p1) {
    std::vector<float> scratch(row_scratch(g.tiles_w));
    for (int64_t p = p0; p < p1; ++p)
      for_each_run(g, t0, t1, [&](int64_t n, int64_t th, int64_t tw, int64_t count, int64_t offset) {
        f(p, n, th, tw, count, offset, scratch.data());
      });
  });
}

// V for the tiles [t0, t1) of a block ([36][C][tb]).
void transform_input(const Geometry& g, const float* in, int64_t t0, int64_t t1, float* v, int64_t tb) {
  for_each_plane(g, g.C, t0, t1,
                 [&](int64_t c, int64_t n, int64_t th, int64_t tw, int64_t count, int64_t offset, float* scratch) {
                   input_tiles(in + (n * g.C + c) * g.H * g.W, g.H, g.W, 4 * th + g.top, 4 * tw + g.left, count,
                               v + c * tb + offset, g.C * tb, scratch);
                 });
}

// Tiles per block. Each block reads all of U (36 x C x O floats) and its own V and M (36 x (C + O)
// floats a tile): a block holds about 1 MiB of V and M (the L2 cache of a core here), or, with many
// channels, as many tiles as make the reads of U no more than those of V and M (else the products
// stall on memory: 512 channels at 16 tiles a block ran 2x slower than at 64). The blocks are then
// evened out over the threads, every thread getting at least one (with few tiles, as ResNet's 4x4
// maps at batch 32, 2 blocks of 16 on 2 threads ran faster than one of 32 whose products and
// transforms were split over the threads).
int64_t block_tiles(const Geometry& g, int threads) {
  constexpr int64_t kBlockBytes = 1 << 20;
  const int64_t cached = kBlockBytes / (kPoints * static_cast<int64_t>(sizeof(float)) * (g.C + g.O));
  const int64_t balanced = g.C * g.Og / (g.C + g.O);  // U holds O x C / G floats a point
  const int64_t tiles = std::clamp<int64_t>(std::max(cached, balanced) / 8 * 8, 16, 256);
  const int64_t per_thread = (g.tiles + threads - 1) / threads;
  const int64_t blocks_per_thread = (per_thread + tiles - 1) / tiles;
  return (per_thread + blocks_per_thread - 1) / blocks_per_thread;
}

// Runs body(thread, first_block, end_block) over the blocks, split in contiguous ranges over a team
// of `threads` OpenMP threads (as many as blocks at most). The caller asks usable_threads() once and
// passes it: its buffers are sized for that team, and the answer may change between two calls.
// Returns the number of threads that ran.
template <class F>
int64_t split_blocks(int64_t blocks, int threads, F&& body) {
  const int team = static_cast<int>(std::min<int64_t>(threads, blocks));
  int64_t ran = 1;
#pragma omp parallel num_threads(team) if (team > 1)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    if (t == 0) ran = nt;
    body(t, blocks * t / nt, blocks * (t + 1) / nt);
  }
  return ran;
}

void sgemm(char ta, char tb, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B, int64_t ldb,
           float beta, float* C, int64_t ldc) {
  const dnnl_status_t status = dnnl_sgemm(ta, tb, M, N, K, 1.f, A, lda, B, ldb, beta, C, ldc);
  COHORT_ASSERT(status == dnnl_success);
}

// out (N x O planes) from the read planes and the transformed kernels u ([36][O][C / G]).
void convolve(const Geometry& g, const float* in, const float* u, const float* bias, float* out, Device device) {
  const int threads = usable_threads();
  const int64_t tb = block_tiles(g, threads);
  const int64_t blocks = (g.tiles + tb - 1) / tb;
  const int64_t per_thread = kPoints * (g.C + g.O) * tb;
  const int64_t team = std::min<int64_t>(threads, blocks);
  Tensor buffer = detail::make_empty({team * per_thread}, kFloat32, device);
  float* base = buffer.data_ptr<float>();
  split_blocks(blocks, threads, [&](int t, int64_t b0, int64_t b1) {
    float* v = base + t * per_thread;
    float* m = v + kPoints * g.C * tb;
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t t0 = b * tb, t1 = std::min(g.tiles, t0 + tb);
      transform_input(g, in, t0, t1, v, tb);
      for (int64_t xi = 0; xi < kPoints; ++xi)
        for (int64_t group = 0; group < g.G; ++group)
          sgemm('N', 'N', g.Og, t1 - t0, g.Cg, u + (xi * g.O + group * g.Og) * g.Cg, g.Cg,
                v + (xi * g.C + group * g.Cg) * tb, tb, 0.f, m + (xi * g.O + group * g.Og) * tb, tb);
      for_each_plane(g, g.O, t0, t1,
                     [&](int64_t o, int64_t n, int64_t th, int64_t tw, int64_t count, int64_t offset, float* scratch) {
                       output_tiles(m + o * tb + offset, g.O * tb, count, bias ? bias[o] : 0.f,
                                    out + (n * g.O + o) * g.P * g.Q, g.P, g.Q, 4 * th, 4 * tw, scratch);
                     });
    }
  });
}

Tensor transformed_kernels(const Tensor& weight, int64_t groups, bool for_data) {
  const int64_t O = weight.size(0), Cg = weight.size(1), Og = O / groups;
  Tensor u = detail::make_empty({kPoints, O * Cg}, kFloat32, weight.device());
  // Forward: [36][O][C / G] from weight[o][c]. Backward data: [36][C][O / G] from weight[o][c]
  // rotated, where row c of group c / (C / G) reads the kernels of that group's outputs.
  const KernelLayout layout = for_data ? KernelLayout{Cg * groups, Og, 1, Cg, Cg, Og * Cg}
                                       : KernelLayout{O, Cg, Cg, 1, O, 0};
  parallel_for(O * Cg, kKernelGrain, [&](int64_t begin, int64_t end) {
    transform_kernels(weight.data_ptr<float>(), layout, for_data, u.data_ptr<float>(), begin, end);
  });
  return u;
}

}  // namespace

bool fits(const Tensor& weight, const Conv2dParams& p) {
  return weight.dim() == 4 && weight.size(2) == 3 && weight.size(3) == 3 && p.stride[0] == 1 && p.stride[1] == 1 &&
         p.dilation[0] == 1 && p.dilation[1] == 1;
}

int64_t tile_count(int64_t N, int64_t P, int64_t Q) { return N * ((P + 3) / 4) * ((Q + 3) / 4); }

void forward(const Tensor& out, const Tensor& in, const Tensor& weight, const Tensor& bias, const Conv2dParams& p) {
  const Geometry g(in.size(0), in.size(1), in.size(2), in.size(3), out.size(1), out.size(2), out.size(3), -p.pad_lo[0],
                   -p.pad_lo[1], p.groups);
  const Tensor u = transformed_kernels(weight, p.groups, false);
  convolve(g, in.data_ptr<float>(), u.data_ptr<float>(), bias.defined() ? bias.data_ptr<float>() : nullptr,
           out.data_ptr<float>(), out.device());
}

void backward_data(const Tensor& din, const Tensor& dout, const Tensor& weight, const Conv2dParams& p) {
  // din[y][x] = sum dout[y + pad - 2 + i][x + pad - 2 + j] * rotated kernel[i][j] (Note [Own Winograd]).
  const Geometry g(dout.size(0), dout.size(1), dout.size(2), dout.size(3), din.size(1), din.size(2), din.size(3),
                   p.pad_lo[0] - 2, p.pad_lo[1] - 2, p.groups);
  const Tensor u = transformed_kernels(weight, p.groups, true);
  convolve(g, dout.data_ptr<float>(), u.data_ptr<float>(), nullptr, din.data_ptr<float>(), din.device());
}

void backward_weights(const Tensor& dweight, const Tensor& dbias, const Tensor& in, const Tensor& dout,
                      const Conv2dParams& p) {
  const Geometry g(in.size(0), in.size(1), in.size(2), in.size(3), dout.size(1), dout.size(2), dout.size(3),
                   -p.pad_lo[0], -p.pad_lo[1], p.groups);
  const int threads = usable_threads();
  const int64_t tb = block_tiles(g, threads);
  const int64_t blocks = (g.tiles + tb - 1) / tb;
  const int64_t sums = kPoints * g.O * g.Cg;  // one thread's dU
  const int64_t per_thread = sums + kPoints * (g.C + g.O) * tb;
  const int64_t team = std::min<int64_t>(threads, blocks);
  Tensor buffer = detail::make_empty({team * per_thread}, kFloat32, dweight.device());
  float* base = buffer.data_ptr<float>();
  const float *x = in.data_ptr<float>(), *dy = dout.data_ptr<float>();
  const int64_t ran = split_blocks(blocks, threads, [&](int t, int64_t b0, int64_t b1) {
    float* du = base + t * per_thread;
    float* v = du + sums;
    float* m = v + kPoints * g.C * tb;
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t t0 = b * tb, t1 = std::min(g.tiles, t0 + tb);
      transform_input(g, x, t0, t1, v, tb);
      for_each_plane(g, g.O, t0, t1,
                     [&](int64_t o, int64_t n, int64_t th, int64_t tw, int64_t count, int64_t offset, float* scratch) {
                       grad_output_tiles(dy + (n * g.O + o) * g.P * g.Q, g.P, g.Q, 4 * th, 4 * tw, count,
                                         m + o * tb + offset, g.O * tb, scratch);
                     });
      for (int64_t xi = 0; xi < kPoints; ++xi)
        for (int64_t group = 0; group < g.G; ++group)
          sgemm('N', 'T', g.Og, g.Cg, t1 - t0, m + (xi * g.O + group * g.Og) * tb, tb,
                v + (xi * g.C + group * g.Cg) * tb, tb, b == b0 ? 0.f : 1.f, du + (xi * g.O + group * g.Og) * g.Cg,
                g.Cg);
    }
  });
  // The threads' sums, added in thread order (the result depends on the team size, not on timing).
  parallel_for(sums, kParallelGrain, [&](int64_t begin, int64_t end) {
    for (int64_t t = 1; t < ran; ++t) {
      const float* part = base + t * per_thread;
      for (int64_t i = begin; i < end; ++i) base[i] += part[i];
    }
  });
  parallel_for(g.O * g.Cg, kKernelGrain, [&](int64_t begin, int64_t end) {
    untransform_kernels(base, g.O * g.Cg, dweight.data_ptr<float>(), begin, end);
  });
  if (dbias.defined()) {
    float* db = dbias.data_ptr<float>();
    const int64_t plane = g.P * g.Q;
    for (int64_t o = 0; o < g.O; ++o) {
      double sum = 0;
      for (int64_t n = 0; n < g.N; ++n) {
        const float* src = dy + (n * g.O + o) * plane;
        float s = 0;
        for (int64_t i = 0; i < plane; ++i) s += src[i];
        sum += s;
      }
      db[o] = static_cast<float>(sum);
    }
  }
}

}  // namespace cohort::kernel::winograd
