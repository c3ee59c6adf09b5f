// Random tensors: the Philox4x32-10 stream of kernels/philox.h, which the CUDA backend shares.
#include <cmath>
#include <cstring>

#include "funcgen/runtime/random.h"
#include "device.h"
#include "internal.h"
#include "kernels/philox.h"

namespace fg {
using namespace detail;

namespace {

using kernels::Dist;

// Element pair i of the draw uses block (base + i): see kernels/philox.h.
template <typename T>
void fill(Dist dist, T* out, int64_t n, uint64_t seed, uint64_t base) {
#pragma omp parallel for if (n >= (1 << 16)) schedule(static)
  for (int64_t pair = 0; pair < (n + 1) / 2; ++pair) {
    T r0, r1;
    kernels::draw_pair<T>(dist, seed, base, static_cast<uint64_t>(pair), &r0, &r1);
    out[2 * pair] = r0;
    if (2 * pair + 1 < n) out[2 * pair + 1] = r1;
  }
}

Tensor draw(Dist dist, IntArrayRef size, Generator& gen, TensorOptions options, const char* op) {
  const ScalarType t = options.dtype();
  if (!isFloatingType(t)) fail(op, "expected a floating dtype, got ", t);
  checked_nbytes(size, t, op);  // on every device
  // The same counters on every device: the same seed gives the same numbers on the GPU.
  if (!options.device().is_cpu()) return device_random(dist, size, options, gen);
  Tensor out = empty(size, options, op);
  const int64_t n = out.numel();
  uint64_t seed, base;
  {
    std::lock_guard<std::mutex> lock(gen.mutex());
    seed = gen.seed();
    base = gen.reserve_blocks(static_cast<uint64_t>((n + 1) / 2));
  }
  dispatch_floating(t, op, [&](auto tag) {
    using T = decltype(tag);
    fill<T>(dist, static_cast<T*>(out.data_ptr()), n, seed, base);
  });
  return out;
}

}  // namespace

void Generator::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mutex_);
  seed_ = seed;
  offset_ = 0;
}

uint64_t Generator::reserve_blocks(uint64_t n) {
  const uint64_t first = offset_;
  offset_ += n;
  return first;
}

Generator& default_generator() {
  static Generator gen;
  return gen;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

Tensor rand(IntArrayRef size, TensorOptions options) { return rand(size, default_generator(), options); }
Tensor rand(IntArrayRef size, Generator& g, TensorOptions options) {
  return draw(Dist::Uniform, size, g, options, "rand");
}
Tensor randn(IntArrayRef size, TensorOptions options) { return randn(size, default_generator(), options); }
Tensor randn(IntArrayRef size, Generator& g, TensorOptions options) {
  return draw(Dist::Normal, size, g, options, "randn");
}
Tensor rand_like(const Tensor& self) {
  check_defined(self, "rand_like");
  return rand(self.sizes(), self.options());
}
Tensor randn_like(const Tensor& self) {
  check_defined(self, "randn_like");
  return randn(self.sizes(), self.options());
}

Tensor bernoulli(const Tensor& p) {
  check_defined(p, "bernoulli");
  if (!isFloatingType(p.dtype())) fail("bernoulli", "expected floating-point probabilities, got ", p.dtype());
  const Tensor pmin = p.numel() ? amin(p) : p, pmax = p.numel() ? amax(p) : p;
  if (p.numel() && (pmin.item<double>() < 0 || pmax.item<double>() > 1))
    fail("bernoulli", "probabilities must be in [0, 1], got values in [", pmin.item<double>(), ", ",
         pmax.item<double>(), "]");
  // The same draws on every device (one Philox stream), so a seed gives the same mask anywhere.
  const Tensor u = rand(p.sizes(), TensorOptions(kDouble).device(p.device()));
  return lt(u, p.to(kDouble)).to(p.dtype());
}

Tensor bernoulli(const Tensor& self, double p) {
  check_defined(self, "bernoulli");
  if (!(p >= 0 && p <= 1)) fail("bernoulli", "p must be in [0, 1], got ", p);
  const Tensor u = rand(self.sizes(), TensorOptions(kDouble).device(self.device()));
  return lt(u, p).to(self.dtype());  // the result has self's dtype, as torch.bernoulli(self, p)
}

namespace {
void check_dropout(const Tensor& input, double p, bool train, const char* op) {
  check_defined(input, op);
  if (!(p >= 0 && p <= 1)) fail(op, "dropout probability has to be between 0 and 1, but got ", p);
  // As torch: in training the kept elements are scaled by 1 / (1 - p), which only a floating
  // tensor holds (evaluation, p = 0 and p = 1 scale nothing).
  if (train && p > 0 && p < 1 && !input.is_floating_point())
    fail(op, "expected a floating-point input (the kept elements are scaled by 1 / (1 - p)), got ", input.dtype());
}
}  // namespace

Tensor dropout_mask(const Tensor& input, double p, bool train) {
  check_dropout(input, p, train, "dropout");
  if (!train || p == 0) return ones_like(input);
  if (p == 1) return zeros_like(input);
  return bernoulli(input, 1 - p) * (1.0 / (1.0 - p));
}

Tensor feature_dropout_mask(const Tensor& input, double p, bool train) {
  check_dropout(input, p, train, "feature_dropout");
  if (input.dim() < 2) fail("feature_dropout", "expected an input of shape [N, C, *] or [C, *], got ", input.sizes());
  // [N, C, *] keeps N and C; an unbatched [C, *] (torch: 2-D for dropout1d) keeps C only.
  std::vector<int64_t> shape(input.sizes().begin(), input.sizes().end());
  const size_t kept = input.dim() == 2 ? 1 : 2;
  for (size_t d = kept; d < shape.size(); ++d) shape[d] = 1;
  return dropout_mask(empty(shape, input.options()), p, train);
}

Tensor feature_dropout(const Tensor& input, double p, bool train) {
  return input * feature_dropout_mask(input, p, train);
}

Tensor dropout(const Tensor& input, double p, bool train) {
  check_dropout(input, p, train, "dropout");
  if (!train || p == 0) return input;  // (no mask to allocate in evaluation)
  return input * dropout_mask(input, p, train);
}

}  // namespace fg
