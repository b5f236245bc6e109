// Elementwise CPU kernels: copy/cast, fill, binary and unary math, clamp, where.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "ops/cpu/activation_loops.h"
#include "ops/cpu/kernels.h"
#include "ops/cpu/loops.h"
#include "ops/cpu/reduced.h"
#include "ops/cpu/vector_loops.h"
#include "ops/cpu/vector_math.h"
#include "ops/internal.h"

// Every op is a case of its switch, with no default: a new op without its kernel does not compile
// (-Werror=switch, Note [Op tables] in kernels.h).

namespace cohort::kernel {

namespace {

template <class T>
inline constexpr bool kVectorised = std::is_same_v<T, float> || std::is_same_v<T, double>;

template <class To, class From>
inline To cast(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else {
    return static_cast<To>(v);
  }
}

// Integer arithmetic wraps around as in PyTorch (signed overflow is undefined in C++, so go unsigned).
template <class T>
inline T wrap_add(T x, T y) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(x) + static_cast<U>(y));
  } else {
    return static_cast<T>(x + y);
  }
}
template <class T>
inline T wrap_mul(T x, T y) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(x) * static_cast<U>(y));
  } else {
    return static_cast<T>(x * y);
  }
}
template <class T>
inline T wrap_neg(T x) {
  return wrap_mul(x, static_cast<T>(-1));
}

template <class T>
inline T pow_value(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::pow(a, b);
  } else if constexpr (std::is_same_v<T, bool>) {
    return a || !b;
  } else {
    if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b % 2) ? -1 : 1) : 0);  // integer semantics
    T result = 1;
    T base = a;
    for (auto e = b; e > 0; e >>= 1) {
      if (e & 1) result = wrap_mul(result, base);
      base = wrap_mul(base, base);
    }
    return result;
  }
}

template <class T>
inline T max_value(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  }
  return a > b ? a : b;
}

template <class T>
inline T min_value(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  }
  return a < b ? a : b;
}

// Python's modulo: the result has the divisor's sign (PyTorch's remainder). An integer divisor of 0
// never reaches here (the op refuses it).
template <class T>
inline T remainder_value(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a && !b;
  } else {
    T r;
    if constexpr (std::is_floating_point_v<T>) r = std::fmod(a, b);
    else r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
}

template <class T>
void binary_typed(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, T alpha) {
  switch (op) {
    case BinaryOp::Add:
      if (alpha == T(1)) return binary_loop<T, T, T>(out, a, b, [](T x, T y) { return wrap_add(x, y); });
      return binary_loop<T, T, T>(out, a, b, [alpha](T x, T y) { return wrap_add(x, wrap_mul(alpha, y)); });
    case BinaryOp::Sub:
      if (alpha == T(1)) return binary_loop<T, T, T>(out, a, b, [](T x, T y) { return wrap_add(x, wrap_neg(y)); });
      return binary_loop<T, T, T>(out, a, b, [alpha](T x, T y) { return wrap_add(x, wrap_neg(wrap_mul(alpha, y))); });
    case BinaryOp::Mul: return binary_loop<T, T, T>(out, a, b, [](T x, T y) { return wrap_mul(x, y); });
    case BinaryOp::Div: return binary_loop<T, T, T>(out, a, b, [](T x, T y) { return static_cast<T>(x / y); });
    case BinaryOp::Pow: return binary_loop<T, T, T>(out, a, b, [](T x, T y) { return pow_value(x, y); });
    case BinaryOp::Maximum: return binary_loop<T, T, T>(out, a, b, [](T x, T y) { return max_value(x, y); });
    case BinaryOp::Minimum: return binary_loop<T, T, T>(out, a, b, [](T x, T y) { return min_value(x, y); });
    case BinaryOp::Eq: return binary_loop<bool, T, T>(out, a, b, [](T x, T y) { return x == y; });
    case BinaryOp::Ne: return binary_loop<bool, T, T>(out, a, b, [](T x, T y) { return x != y; });
    case BinaryOp::Lt: return binary_loop<bool, T, T>(out, a, b, [](T x, T y) { return x < y; });
    case BinaryOp::Le: return binary_loop<bool, T, T>(out, a, b, [](T x, T y) { return x <= y; });
    case BinaryOp::Gt: return binary_loop<bool, T, T>(out, a, b, [](T x, T y) { return x > y; });
    case BinaryOp::Ge: return binary_loop<bool, T, T>(out, a, b, [](T x, T y) { return x >= y; });
    case BinaryOp::And: return binary_loop<bool, T, T>(out, a, b, [](T x, T y) { return x != T(0) && y != T(0); });
    case BinaryOp::Or: return binary_loop<bool, T, T>(out, a, b, [](T x, T y) { return x != T(0) || y != T(0); });
    case BinaryOp::Remainder: return binary_loop<T, T, T>(out, a, b, [](T x, T y) { return remainder_value(x, y); });
    case BinaryOp::kCount: break;
  }
  COHORT_ASSERT(false && "BinaryOp::kCount is not an op");
}

template <class T>
inline T sign_value(T x) {
  if constexpr (std::is_same_v<T, bool>) {
    return x;
  } else if constexpr (std::is_unsigned_v<T>) {
    return x > 0 ? 1 : 0;
  } else {
    return static_cast<T>((T(0) < x) - (x < T(0)));
  }
}

// ReLU of float/double: contiguous runs go to the per-ISA loop (vector_loops.h).
template <class T>
void relu_loop(const Tensor& out, const Tensor& in) {
  ElementwiseLoop<2> loop(out.sizes(), {&out, &in});
  loop.run([&](std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
    if (s[0] == sizeof(T) && s[1] == sizeof(T)) return vec::relu(reinterpret_cast<T*>(p[0]), reinterpret_cast<const T*>(p[1]), n);
    for (int64_t i = 0; i < n; ++i) {
      const T x = *reinterpret_cast<const T*>(p[1] + i * s[1]);
      *reinterpret_cast<T*>(p[0] + i * s[0]) = x < T(0) ? T(0) : x;
    }
  });
}

// exp, sigmoid and tanh of float/double: float32 on the vectorisable functions of vector_math.h
// (Note [Own float exp]), contiguous runs in their per-ISA loops and strided ones element by
// element, which round alike; float64 on libm.
constexpr auto vec_exp = [](float* o, const float* x, int64_t n) { vec::exp(o, x, n); };
constexpr auto vec_sigmoid = [](float* o, const float* x, int64_t n) { vec::sigmoid(o, x, n); };
constexpr auto vec_tanh = [](float* o, const float* x, int64_t n) { vec::tanh(o, x, n); };

template <class T, class Scalar, class Contiguous>
void activation_loop(const Tensor& out, const Tensor& in, Scalar scalar, Contiguous contiguous) {
  if constexpr (!std::is_floating_point_v<T>) {
    COHORT_ASSERT(false && "a float-valued op on an integer tensor");
  } else {
    ElementwiseLoop<2> loop(out.sizes(), {&out, &in});
    loop.run([&](std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
      if constexpr (std::is_same_v<T, float>)
        if (s[0] == sizeof(T) && s[1] == sizeof(T))
          return contiguous(reinterpret_cast<T*>(p[0]), reinterpret_cast<const T*>(p[1]), n);
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<T*>(p[0] + i * s[0]) = scalar(*reinterpret_cast<const T*>(p[1] + i * s[1]));
    });
  }
}

// out[i] = c[i] ? a : b over a contiguous run, a and b each a pointer or one broadcast value.
template <class T, class A, class B>
void where_run(T* out, const bool* c, A a, B b, int64_t n) {
  if constexpr (kVectorised<T>) {
    vec::where(out, c, a, b, n);
  } else {
    auto at = [](auto v, int64_t i) {
      if constexpr (std::is_pointer_v<decltype(v)>) return v[i];
      else return v;
    };
    for (int64_t i = 0; i < n; ++i) out[i] = c[i] ? at(a, i) : at(b, i);
  }
}

// A float-valued op's loop: its op gives it floating inputs only (integers are converted first).
template <class T, class F>
void float_loop(const Tensor& out, const Tensor& in, F f) {
  if constexpr (std::is_floating_point_v<T>) unary_loop<T, T>(out, in, f);
  else COHORT_ASSERT(false && "a float-valued op on an integer tensor");
}

template <class T>
void unary_typed(UnaryOp op, const Tensor& out, const Tensor& in) {
  switch (op) {
    case UnaryOp::Neg: return unary_loop<T, T>(out, in, [](T x) { return wrap_neg(x); });
    case UnaryOp::Exp:
      return activation_loop<T>(out, in, []<class F>(F x) { return vmath::exp(x); }, vec_exp);
    case UnaryOp::Log: return float_loop<T>(out, in, []<class F>(F x) { return std::log(x); });
    case UnaryOp::Sqrt: return float_loop<T>(out, in, []<class F>(F x) { return std::sqrt(x); });
    case UnaryOp::Rsqrt: return float_loop<T>(out, in, []<class F>(F x) { return F(1) / std::sqrt(x); });
    case UnaryOp::Abs:
      if constexpr (std::is_unsigned_v<T> || std::is_same_v<T, bool>) return unary_loop<T, T>(out, in, [](T x) { return x; });
      else return unary_loop<T, T>(out, in, [](T x) { return x < 0 ? static_cast<T>(-x) : x; });
    case UnaryOp::Sign: return unary_loop<T, T>(out, in, [](T x) { return sign_value(x); });
    case UnaryOp::Relu:
      if constexpr (kVectorised<T>) return relu_loop<T>(out, in);
      else return unary_loop<T, T>(out, in, [](T x) { return x < T(0) ? T(0) : x; });
    case UnaryOp::Sigmoid:
      return activation_loop<T>(out, in, []<class F>(F x) { return vmath::sigmoid(x); }, vec_sigmoid);
    case UnaryOp::Tanh:
      return activation_loop<T>(out, in, []<class F>(F x) { return vmath::tanh(x); }, vec_tanh);
    case UnaryOp::Square: return unary_loop<T, T>(out, in, [](T x) { return static_cast<T>(x * x); });
    case UnaryOp::Reciprocal: return float_loop<T>(out, in, []<class F>(F x) { return F(1) / x; });
    case UnaryOp::Sin: return float_loop<T>(out, in, []<class F>(F x) { return std::sin(x); });
    case UnaryOp::Cos: return float_loop<T>(out, in, []<class F>(F x) { return std::cos(x); });
    case UnaryOp::Erf: return float_loop<T>(out, in, []<class F>(F x) { return std::erf(x); });
    case UnaryOp::Log1p: return float_loop<T>(out, in, []<class F>(F x) { return std::log1p(x); });
    case UnaryOp::LogicalNot: return unary_loop<bool, T>(out, in, [](T x) { return x == T(0); });
    case UnaryOp::IsNan:
      if constexpr (std::is_floating_point_v<T>) return unary_loop<bool, T>(out, in, [](T x) { return std::isnan(x); });
      else return unary_loop<bool, T>(out, in, [](T) { return false; });
    case UnaryOp::IsFinite:
      if constexpr (std::is_floating_point_v<T>) return unary_loop<bool, T>(out, in, [](T x) { return std::isfinite(x); });
      else return unary_loop<bool, T>(out, in, [](T) { return true; });
    case UnaryOp::kCount: break;
  }
  COHORT_ASSERT(false && "UnaryOp::kCount is not an op");
}

// Copies involving bfloat16 or float16. One dtype on both sides moves the 2-byte values; a
// conversion goes through float32, as PyTorch's does (a double or an integer becomes a float, which
// is then rounded to the narrow type).
void copy_narrow(const Tensor& dst, const Tensor& src) {
  const DType d = dst.dtype(), s = src.dtype();
  if (d == s) return unary_loop<uint16_t, uint16_t>(dst, src, [](uint16_t v) { return v; });
  const bool direct = dst.is_contiguous() && src.is_contiguous() && dst.sizes() == src.sizes();
  if (direct && (d == kFloat32 || s == kFloat32)) return convert_contiguous(dst.data_ptr(), d, src.data_ptr(), s, dst.numel());
  if (is_reduced_floating_point(s)) {
    Tensor narrow = src;
    if (!src.is_contiguous()) {
      narrow = detail::make_empty(src.sizes(), s, src.device());
      copy(narrow, src);
    }
    Tensor wide = float32_like(src);
    convert_contiguous(wide.data_ptr(), kFloat32, narrow.data_ptr(), s, wide.numel());
    return copy(dst, wide);
  }
  Tensor wide = float32_like(dst);
  copy(wide, src);
  if (dst.is_contiguous()) return convert_contiguous(dst.data_ptr(), d, wide.data_ptr(), kFloat32, dst.numel());
  Tensor narrow = detail::make_empty(dst.sizes(), d, dst.device());
  convert_contiguous(narrow.data_ptr(), d, wide.data_ptr(), kFloat32, narrow.numel());
  copy(dst, narrow);
}

}  // namespace

void copy(const Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  // Same dtype, both contiguous and no broadcast: one memcpy (split over threads when large).
  if (dst.dtype() == src.dtype() && dst.is_contiguous() && src.is_contiguous() && dst.sizes() == src.sizes()) {
    char* d = static_cast<char*>(dst.data_ptr());
    const char* s = static_cast<const char*>(src.data_ptr());
    int64_t bytes = static_cast<int64_t>(dst.nbytes());
    parallel_for(bytes, int64_t{1} << 20, [&](int64_t b, int64_t e) { std::memcpy(d + b, s + b, e - b); });
    return;
  }
  if (is_reduced_floating_point(dst.dtype()) || is_reduced_floating_point(src.dtype())) return copy_narrow(dst, src);
  dispatch(dst.dtype(), [&](auto out_tag) {
    using Out = decltype(out_tag);
    dispatch(src.dtype(), [&](auto in_tag) {
      using In = decltype(in_tag);
      unary_loop<Out, In>(dst, src, [](In v) { return cast<Out>(v); });
    });
  });
}

void fill(const Tensor& dst, const Scalar& value) {
  dispatch_all(dst.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T v = value.is_bool() ? static_cast<T>(value.to<bool>()) : value.to<T>();
    ElementwiseLoop<1> loop(dst.sizes(), {&dst});
    loop.run([&](std::array<char*, 1>& p, const std::array<int64_t, 1>& s, int64_t n) {
      if (s[0] == sizeof(T)) {
        T* o = reinterpret_cast<T*>(p[0]);
        for (int64_t i = 0; i < n; ++i) o[i] = v;
      } else {
        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p[0] + i * s[0]) = v;
      }
    });
  });
}

// The kernels below serve bfloat16 and float16 with their float32 loops (reduced.h): the inputs
// widened, the result rounded once into out.
//
// Note [Narrow elementwise blocks]
// The narrow elementwise ops of a bfloat16 CNN's training step (ReLU, its backward, the residual
// add and the gradient sums) on contiguous operands of one shape and dtype skip the whole-tensor
// float32 copies: blocks of kNarrowBlock elements are converted into float32 buffers on the stack,
// the float loop runs on them and the block is rounded back into out. Each element is computed
// alone, so the result is the widened path's bit for bit; the buffers stay in L1.
namespace {

constexpr int64_t kNarrowBlock = 1024;

// Runs f(out_block, {in_blocks}, m) over float32 blocks of the K narrow inputs when out and every
// input are contiguous, of out's sizes and of one narrow dtype; returns false (nothing done) otherwise.
template <size_t K, class F>
bool narrow_blocks(const Tensor& out, const std::array<const Tensor*, K>& ins, F&& f) {
  const DType dt = out.dtype();
  if (!is_reduced_floating_point(dt) || !out.is_contiguous()) return false;
  for (const Tensor* t : ins)
    if (t->dtype() != dt || !t->is_contiguous() || t->sizes() != out.sizes()) return false;
  auto* po = static_cast<uint16_t*>(out.data_ptr());
  std::array<const uint16_t*, K> pi;
  for (size_t k = 0; k < K; ++k) pi[k] = static_cast<const uint16_t*>(ins[k]->data_ptr());
  parallel_for(out.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
    alignas(64) float in_buf[K][kNarrowBlock];
    alignas(64) float out_buf[kNarrowBlock];
    std::array<const float*, K> blocks;
    for (size_t k = 0; k < K; ++k) blocks[k] = in_buf[k];
    for (int64_t b = begin; b < end; b += kNarrowBlock) {
      const int64_t m = std::min(kNarrowBlock, end - b);
      for (size_t k = 0; k < K; ++k) vec::narrow_to_float(in_buf[k], pi[k] + b, dt, m);
      f(out_buf, blocks, m);
      vec::float_to_narrow(po + b, out_buf, dt, m);
    }
  });
  return true;
}

}  // namespace

void binary(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  COHORT_ASSERT(a.dtype() == b.dtype());
  if (is_reduced_floating_point(a.dtype())) {
    // Note [Narrow elementwise blocks]: a + b, a * b (alpha 1 rounds to 1 in either narrow dtype).
    if ((op == BinaryOp::Add || op == BinaryOp::Mul) && alpha.to<double>() == 1.0) {
      const bool add = op == BinaryOp::Add;
      if (narrow_blocks<2>(out, {&a, &b}, [add](float* o, const std::array<const float*, 2>& x, int64_t m) {
            if (add)
              for (int64_t i = 0; i < m; ++i) o[i] = x[0][i] + x[1][i];
            else
              for (int64_t i = 0; i < m; ++i) o[i] = x[0][i] * x[1][i];
          }))
        return;
    }
    // Numbers are rounded to the narrow type first, as PyTorch 1.13 does on the CPU: a scalar
    // operand arrives as a narrow 0-d tensor, and alpha is rounded here.
    const Tensor wa = widen(a), wb = widen(b);
    const float narrow_alpha = a.dtype() == kBFloat16 ? static_cast<float>(BFloat16(alpha.to<float>()))
                                                      : static_cast<float>(Half(alpha.to<float>()));
    return into(out, [&](const Tensor& o) { binary(op, o, wa, wb, narrow_alpha); });
  }
  dispatch(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      // Arithmetic on bools acts on their 0/1 values as PyTorch does (add = or, mul = and).
      binary_typed<bool>(op, out, a, b, alpha.to<bool>());
    } else {
      binary_typed<T>(op, out, a, b, alpha.to<T>());
    }
  });
}

void unary(UnaryOp op, const Tensor& out, const Tensor& in) {
  if (is_reduced_floating_point(in.dtype())) {
    // Note [Narrow elementwise blocks]
    if (op == UnaryOp::Relu && narrow_blocks<1>(out, {&in}, [](float* o, const std::array<const float*, 1>& x,
                                                                 int64_t m) { vec::relu(o, x[0], m); }))
      return;
    const Tensor wide = widen(in);
    return into(out, [&](const Tensor& o) { unary(op, o, wide); });
  }
  dispatch(in.dtype(), [&](auto tag) { unary_typed<decltype(tag)>(op, out, in); });
}

void clamp(const Tensor& out, const Tensor& in, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  if (is_reduced_floating_point(in.dtype())) {
    const Tensor wide = widen(in);
    return into(out, [&](const Tensor& o) { clamp(o, wide, lo, hi); });
  }
  dispatch(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const bool has_lo = lo.has_value(), has_hi = hi.has_value();
    const T l = has_lo ? lo->to<T>() : T(0), h = has_hi ? hi->to<T>() : T(0);
    // Comparisons with NaN are false, so a NaN x stays NaN and a NaN bound changes nothing (the op
    // handles the bounds that make everything NaN); min(max(x, lo), hi): hi wins where lo > hi.
    unary_loop<T, T>(out, in, [=](T x) {
      x = has_lo && x < l ? l : x;
      return has_hi && x > h ? h : x;
    });
  });
}

void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  dispatch_all(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    ElementwiseLoop<4> loop(out.sizes(), {&out, &cond, &a, &b});
    loop.run([&](std::array<char*, 4>& p, const std::array<int64_t, 4>& s, int64_t n) {
      T* o = reinterpret_cast<T*>(p[0]);
      const bool* c = reinterpret_cast<const bool*>(p[1]);
      const T* x = reinterpret_cast<const T*>(p[2]);
      const T* y = reinterpret_cast<const T*>(p[3]);
      // Fast paths: out and cond contiguous; a and b contiguous or a broadcast value (autograd's
      // where(cond, g, 0) and masked_fill are the latter).
      const int64_t es = sizeof(T);
      if (s[0] == es && s[1] == 1) {
        if (s[2] == es && s[3] == es) return where_run(o, c, x, y, n);
        if (s[2] == 0 && s[3] == es) return where_run(o, c, *x, y, n);
        if (s[2] == es && s[3] == 0) return where_run(o, c, x, *y, n);
      }
      for (int64_t i = 0; i < n; ++i) {
        const T av = *reinterpret_cast<const T*>(p[2] + i * s[2]), bv = *reinterpret_cast<const T*>(p[3] + i * s[3]);
        *reinterpret_cast<T*>(p[0] + i * s[0]) = *reinterpret_cast<const bool*>(p[1] + i * s[1]) ? av : bv;
      }
    });
  });
}

void threshold_backward(const Tensor& out, const Tensor& grad, const Tensor& self, const Scalar& threshold) {
  if (is_reduced_floating_point(out.dtype())) {
    const float t = threshold.to<float>();  // Note [Narrow elementwise blocks]
    if (narrow_blocks<2>(out, {&grad, &self}, [t](float* o, const std::array<const float*, 2>& x, int64_t m) {
          vec::threshold_backward(o, x[0], x[1], t, m);
        }))
      return;
    const Tensor wg = widen(grad), ws = widen(self);
    return into(out, [&](const Tensor& o) { threshold_backward(o, wg, ws, threshold); });
  }
  dispatch_floating(out.dtype(), "threshold_backward", [&](auto tag) {
    using T = decltype(tag);
    const T t = threshold.to<T>();
    ElementwiseLoop<3> loop(out.sizes(), {&out, &grad, &self});
    loop.run([&](std::array<char*, 3>& p, const std::array<int64_t, 3>& s, int64_t n) {
      // Fast paths: all contiguous, or one broadcast gradient value (x.relu().sum()'s backward).
      T* o = reinterpret_cast<T*>(p[0]);
      const T* g = reinterpret_cast<const T*>(p[1]);
      const T* y = reinterpret_cast<const T*>(p[2]);
      if (s[0] == sizeof(T) && s[2] == sizeof(T)) {
        if (s[1] == sizeof(T)) return vec::threshold_backward(o, g, y, t, n);
        if (s[1] == 0) return vec::threshold_backward(o, *g, y, t, n);
      }
      for (int64_t i = 0; i < n; ++i) {
        // Both values read first: a select of two loaded values needs no branch (a branch on the
        // sign of an activation is a coin toss for the predictor).
        const T gv = *reinterpret_cast<const T*>(p[1] + i * s[1]), yv = *reinterpret_cast<const T*>(p[2] + i * s[2]);
        *reinterpret_cast<T*>(p[0] + i * s[0]) = yv <= t ? T(0) : gv;
      }
    });
  });
}

}  // namespace cohort::kernel
