// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11) and the
// conversions of its bits to uniform and normal numbers, shared by the CPU and CUDA generators:
// every block of four 32-bit numbers is a pure function of (key, counter), so a tensor's values
// depend only on the generator state it was drawn at, not on the device, threading or chunking.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/host_device.h"

namespace fg::kernels {

struct PhiloxBlock {
  uint32_t v[4];
};

// The generator as Random123 defines it (its known-answer vectors are in tests/cuda).
FG_HD_INLINE PhiloxBlock philox4x32_10(PhiloxBlock ctr, uint32_t k0, uint32_t k1) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u, kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  uint32_t c0 = ctr.v[0], c1 = ctr.v[1], c2 = ctr.v[2], c3 = ctr.v[3];
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
  return PhiloxBlock{{c0, c1, c2, c3}};
}

// The runtime's stream: the 64-bit seed is the key, block `counter` the low half of the counter.
FG_HD_INLINE PhiloxBlock philox(uint64_t seed, uint64_t counter) {
  return philox4x32_10(PhiloxBlock{{static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32), 0u, 0u}},
                       static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// Uniform in [0, 1) with 24 (float) or 53 (double) random bits: exact in both types, so the
// uniform streams are bit-identical on every device.
FG_HD_INLINE float unit_float(uint32_t x) { return static_cast<float>(x >> 8) * (1.0f / 16777216.0f); }
FG_HD_INLINE double unit_double(uint32_t hi, uint32_t lo) {
  const uint64_t bits = (static_cast<uint64_t>(hi) << 21) ^ (lo >> 11);
  return static_cast<double>(bits & ((uint64_t{1} << 53) - 1)) * (1.0 / 9007199254740992.0);
}

enum class Dist : int { Uniform, Normal };

// Element pair `pair` of a draw of T (float or double) from block (base + pair): two values per
// block for both distributions, so float and double streams consume the same counters. Normal
// values come from Box-Muller in double; they agree across devices to the math library's last bit.
template <typename T>
FG_HD_INLINE void draw_pair(Dist dist, uint64_t seed, uint64_t base, uint64_t pair, T* r0, T* r1) {
  const PhiloxBlock b = philox(seed, base + pair);
  double u0, u1;
  if (sizeof(T) == sizeof(float)) {
    u0 = unit_float(b.v[0]);
    u1 = unit_float(b.v[1]);
  } else {
    u0 = unit_double(b.v[0], b.v[1]);
    u1 = unit_double(b.v[2], b.v[3]);
  }
  if (dist == Dist::Uniform) {
    // Both conversions are exact (24 or 53 bits), so the interval stays half-open.
    *r0 = static_cast<T>(u0);
    *r1 = static_cast<T>(u1);
    return;
  }
  // Box-Muller on (0, 1] to avoid log(0).
  const double radius = std::sqrt(-2.0 * std::log(1.0 - u0));
#if defined(__CUDA_ARCH__)
  // sincospi(2 u1) = the angle 2 pi u1 without a huge-argument reduction (no local memory).
  double s, c;
  sincospi(2.0 * u1, &s, &c);
  *r0 = static_cast<T>(radius * c);
  *r1 = static_cast<T>(radius * s);
#else
  const double theta = 6.283185307179586476925286766559 * u1;
  *r0 = static_cast<T>(radius * std::cos(theta));
  *r1 = static_cast<T>(radius * std::sin(theta));
#endif
}

}  // namespace fg::kernels
