// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11): every
// block of four 32-bit numbers is a pure function of (seed, counter), so a tensor's values depend
// only on the generator state when it was drawn, not on threading or chunking.
#include <cmath>
#include <cstring>

#include "funcgen/runtime/random.h"
#include "internal.h"

namespace fg {
using namespace detail;

namespace {

struct Block {
  uint32_t v[4];
};

Block philox(uint64_t seed, uint64_t counter) {
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  constexpr uint32_t kM0 = 0xD2511F53, kM1 = 0xCD9E8D57, kW0 = 0x9E3779B9, kW1 = 0xBB67AE85;
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(kM0) * c0;
    const uint64_t p1 = static_cast<uint64_t>(kM1) * c2;
    const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c0 = n0;
    c1 = static_cast<uint32_t>(p1);
    c2 = n2;
    c3 = static_cast<uint32_t>(p0);
    k0 += kW0;
    k1 += kW1;
  }
  return Block{{c0, c1, c2, c3}};
}

// Uniform in [0, 1) with 24 (float) or 53 (double) random bits.
float to_unit_float(uint32_t x) { return static_cast<float>(x >> 8) * (1.0f / 16777216.0f); }
double to_unit_double(uint32_t hi, uint32_t lo) {
  const uint64_t bits = (static_cast<uint64_t>(hi) << 21) ^ (lo >> 11);
  return static_cast<double>(bits & ((uint64_t{1} << 53) - 1)) * (1.0 / 9007199254740992.0);
}

enum class Dist { Uniform, Normal };

// Element i of the draw uses block (base + i / 2): two values per block for both dists, so float
// and double streams consume the same counters.
template <typename T>
void fill(Dist dist, T* out, int64_t n, uint64_t seed, uint64_t base) {
#pragma omp parallel for if (n >= (1 << 16)) schedule(static)
  for (int64_t pair = 0; pair < (n + 1) / 2; ++pair) {
    const Block b = philox(seed, base + static_cast<uint64_t>(pair));
    double u0, u1;
    if constexpr (std::is_same_v<T, float>) {
      u0 = to_unit_float(b.v[0]);
      u1 = to_unit_float(b.v[1]);
    } else {
      u0 = to_unit_double(b.v[0], b.v[1]);
      u1 = to_unit_double(b.v[2], b.v[3]);
    }
    T r0, r1;
    if (dist == Dist::Uniform) {
      r0 = static_cast<T>(u0);
      r1 = static_cast<T>(u1);
      // float rounding of a double just below 1 can give 1; keep the interval half-open
      if (r0 >= T(1)) r0 = std::nextafter(T(1), T(0));
      if (r1 >= T(1)) r1 = std::nextafter(T(1), T(0));
    } else {
      // Box-Muller on (0, 1] to avoid log(0).
      const double radius = std::sqrt(-2.0 * std::log(1.0 - u0));
      const double theta = 2.0 * M_PI * u1;
      r0 = static_cast<T>(radius * std::cos(theta));
      r1 = static_cast<T>(radius * std::sin(theta));
    }
    out[2 * pair] = r0;
    if (2 * pair + 1 < n) out[2 * pair + 1] = r1;
  }
}

Tensor draw(Dist dist, IntArrayRef size, Generator& gen, TensorOptions options, const char* op) {
  const ScalarType t = options.dtype();
  if (!isFloatingType(t)) fail(op, "expected a floating dtype, got ", t);
  Tensor out = empty(size, options);
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
  check_cpu(p, "bernoulli");
  if (!isFloatingType(p.dtype())) fail("bernoulli", "expected floating-point probabilities, got ", p.dtype());
  const Tensor pmin = p.numel() ? amin(p) : p, pmax = p.numel() ? amax(p) : p;
  if (p.numel() && (pmin.item<double>() < 0 || pmax.item<double>() > 1))
    fail("bernoulli", "probabilities must be in [0, 1], got values in [", pmin.item<double>(), ", ",
         pmax.item<double>(), "]");
  const Tensor u = rand(p.sizes(), TensorOptions(kDouble));
  return lt(u, p.to(kDouble)).to(p.dtype());
}

Tensor bernoulli(const Tensor& self, double p) {
  check_cpu(self, "bernoulli");
  if (!(p >= 0 && p <= 1)) fail("bernoulli", "p must be in [0, 1], got ", p);
  const Tensor u = rand(self.sizes(), TensorOptions(kDouble));
  return lt(u, p).to(self.dtype());  // the result has self's dtype, as torch.bernoulli(self, p)
}

namespace {
void check_dropout(const Tensor& input, double p) {
  check_cpu(input, "dropout");
  if (!(p >= 0 && p <= 1)) fail("dropout", "dropout probability has to be between 0 and 1, but got ", p);
}
}  // namespace

Tensor dropout_mask(const Tensor& input, double p, bool train) {
  check_dropout(input, p);
  if (!train || p == 0) return ones_like(input);
  if (p == 1) return zeros_like(input);
  return bernoulli(input, 1 - p) * (1.0 / (1.0 - p));
}

Tensor feature_dropout_mask(const Tensor& input, double p, bool train) {
  check_dropout(input, p);
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
  check_dropout(input, p);
  if (!train || p == 0) return input;  // (no mask to allocate in evaluation)
  return input * dropout_mask(input, p, train);
}

}  // namespace fg
