// SGD: PyTorch 1.13's _single_tensor_sgd, as one fused loop per parameter (Note [Fused SGD step])
// or, for the layouts that loop does not take, composed of in-place tensor ops.
#include "cohort/optim/sgd.h"

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "ops/cpu/loops.h"

namespace cohort::optim {

namespace {

// Note [Fused SGD step]
// Composed of tensor ops, one SGD step with momentum is three passes over each parameter (buf *= m,
// buf += (1 - dampening) g, p -= lr buf), each with its own dispatch and scalar-tensor allocation:
// 7% of a blitz CNN step at batch 4. The fused loop reads each element once and does, in the same
// order and the same precision, the arithmetic those ops do (a + alpha * b with alpha in the
// parameter's dtype), so the results are bitwise the ones of the composed ops. It takes contiguous
// float32/float64 parameters with a gradient of the same dtype, device and layout; anything else
// (non-contiguous parameters or gradients, mixed dtypes) takes the composed path.
struct StepParams {
  double lr, momentum, dampening, weight_decay;
  bool nesterov;
  bool first;  // the momentum buffer is new: it starts as the gradient (after weight decay)
};

bool fusable(const Tensor& p, const Tensor& grad, const Tensor* buf) {
  auto same = [&](const Tensor& t) {
    return t.dtype() == p.dtype() && t.device() == p.device() && t.is_contiguous() && t.sizes() == p.sizes();
  };
  return (p.dtype() == kFloat32 || p.dtype() == kFloat64) && p.is_contiguous() && same(grad) &&
         (!buf || same(*buf));
}

// One variant per combination of options, so that the inner loop has no branch and vectorises:
// in a long run momentum buffers of parameters whose gradient stays 0 decay through the denormal
// numbers, and each instruction that makes one costs a microcode assist (scalar code was 2x slower
// than the composed ops, SSE 4 lanes at once no faster). An AVX2 clone (8 lanes) is picked at run
// time where the CPU has it; AVX2 without FMA, so a * b + c still rounds twice, as the ops do.
// GCC only: clang 14 has no target_clones on templates. Not under the sanitizers (COHORT_NO_ISA_CLONES,
// Note [Kernel ISA dispatch] in src/ops/cpu/isa.h).
#if defined(__x86_64__) && defined(__ELF__) && defined(__GNUC__) && !defined(__clang__) && !defined(COHORT_NO_ISA_CLONES)
#define COHORT_SGD_CLONES __attribute__((target_clones("default", "avx2")))
#else
#define COHORT_SGD_CLONES
#endif

template <class T, bool kDecay, bool kMomentum, bool kFirst, bool kNesterov>
COHORT_SGD_CLONES void fused_range(T* __restrict p, const T* __restrict grad, T* __restrict buf, int64_t begin, int64_t end,
                 const StepParams& o) {
  const T wd = static_cast<T>(o.weight_decay), m = static_cast<T>(o.momentum);
  const T keep = static_cast<T>(1 - o.dampening), step = static_cast<T>(-o.lr);
  for (int64_t i = begin; i < end; ++i) {
    T d = grad[i];
    if constexpr (kDecay) d = d + wd * p[i];
    if constexpr (kMomentum) {
      const T b = kFirst ? d : buf[i] * m + keep * d;
      buf[i] = b;
      d = kNesterov ? d + m * b : b;
    }
    p[i] = p[i] + step * d;
  }
}

template <class T, bool kDecay, bool kMomentum, bool kFirst>
void fused_step(T* p, const T* grad, T* buf, int64_t n, const StepParams& o) {
  kernel::parallel_for(n, kernel::kParallelGrain, [&](int64_t begin, int64_t end) {
    if (o.nesterov)
      fused_range<T, kDecay, kMomentum, kFirst, true>(p, grad, buf, begin, end, o);
    else
      fused_range<T, kDecay, kMomentum, kFirst, false>(p, grad, buf, begin, end, o);
  });
}

template <class T>
void fused_step(T* p, const T* grad, T* buf, int64_t n, const StepParams& o) {
  const bool decay = o.weight_decay != 0;
  if (!buf) return decay ? fused_step<T, true, false, false>(p, grad, buf, n, o)
                         : fused_step<T, false, false, false>(p, grad, buf, n, o);
  if (o.first) return decay ? fused_step<T, true, true, true>(p, grad, buf, n, o)
                            : fused_step<T, false, true, true>(p, grad, buf, n, o);
  return decay ? fused_step<T, true, true, false>(p, grad, buf, n, o) : fused_step<T, false, true, false>(p, grad, buf, n, o);
}

void run_fused(const Tensor& p, const Tensor& grad, const Tensor& buf, const StepParams& o) {
  const int64_t n = p.numel();
  if (p.dtype() == kFloat32)
    fused_step(p.data_ptr<float>(), grad.data_ptr<float>(), buf.defined() ? buf.data_ptr<float>() : nullptr, n, o);
  else
    fused_step(p.data_ptr<double>(), grad.data_ptr<double>(), buf.defined() ? buf.data_ptr<double>() : nullptr, n, o);
  p.unsafe_impl()->storage()->bump_version();
  if (buf.defined()) buf.unsafe_impl()->storage()->bump_version();
}

// One parameter's step as a fused loop, when it qualifies; false leaves everything untouched.
// buffers: the parameter's optimizer state when momentum is on, else null.
bool step_fused(const Tensor& p, const SGDOptions& o, std::map<std::string, Tensor>* buffers) {
  const Tensor& grad = p.grad();
  Tensor buf;
  bool first = false;
  if (buffers) {
    auto it = buffers->find("momentum_buffer");
    first = it == buffers->end();
    if (!fusable(p, grad, first ? nullptr : &it->second)) return false;
    buf = first ? ((*buffers)["momentum_buffer"] = empty(p.sizes(), p.options())) : it->second;
  } else if (!fusable(p, grad, nullptr)) {
    return false;
  }
  run_fused(p, grad, buf, {o.lr(), o.momentum(), o.dampening(), o.weight_decay(), o.nesterov(), first});
  return true;
}

}  // namespace

std::map<std::string, double> SGDOptions::to_scalars() const {
  return {{"lr", lr_}, {"momentum", momentum_}, {"dampening", dampening_},
          {"weight_decay", weight_decay_}, {"nesterov", nesterov_ ? 1.0 : 0.0}};
}

void SGDOptions::from_scalars(const std::map<std::string, double>& v) {
  lr_ = v.at("lr");
  momentum_ = v.at("momentum");
  dampening_ = v.at("dampening");
  weight_decay_ = v.at("weight_decay");
  nesterov_ = v.at("nesterov") != 0;
}

void SGDOptions::validate(const std::string& optimizer) const {
  COHORT_CHECK(lr_ >= 0, optimizer, ": learning rate must be non-negative, got ", lr_);
  COHORT_CHECK(momentum_ >= 0, optimizer, ": momentum must be non-negative, got ", momentum_);
  COHORT_CHECK(weight_decay_ >= 0, optimizer, ": weight_decay must be non-negative, got ", weight_decay_);
  COHORT_CHECK(!nesterov_ || (momentum_ > 0 && dampening_ == 0), optimizer,
               ": Nesterov momentum requires a momentum and zero dampening, got momentum=", momentum_,
               " dampening=", dampening_);
}

SGD::SGD(std::vector<Tensor> params, SGDOptions defaults)
    : SGD(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}

SGD::SGD(std::vector<OptimizerParamGroup> param_groups, SGDOptions defaults)
    : Optimizer("SGD", std::move(param_groups), std::make_unique<SGDOptions>(defaults)) {}

Tensor SGD::step(LossClosure closure) {
  Tensor loss = call_closure(closure);
  NoGradGuard no_grad;
  for (auto& group : param_groups()) {
    const auto& o = static_cast<const SGDOptions&>(group.options());
    for (const Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      if (step_fused(p, o, o.momentum() != 0 ? &state_of(p).tensors : nullptr)) continue;
      Tensor d_p = p.grad();
      if (o.weight_decay() != 0) d_p = d_p.add(p, o.weight_decay());
      if (o.momentum() != 0) {
        auto& buffers = state_of(p).tensors;
        auto it = buffers.find("momentum_buffer");
        Tensor buf;
        if (it == buffers.end()) {
          buf = buffers["momentum_buffer"] = d_p.detach().clone();
        } else {
          buf = it->second;
          buf.mul_(o.momentum()).add_(d_p, 1 - o.dampening());
        }
        d_p = o.nesterov() ? d_p.add(buf, o.momentum()) : buf;
      }
      p.add_(d_p, -o.lr());
    }
  }
  return loss;
}

}  // namespace cohort::optim
