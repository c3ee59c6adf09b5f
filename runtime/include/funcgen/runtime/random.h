// Random tensors from a counter-based Philox4x32-10 generator: a (seed, offset) pair fixes every
// value, so streams are reproducible and any slice of a stream can be computed independently.
#pragma once

#include <cstdint>
#include <mutex>

#include "funcgen/runtime/tensor.h"

namespace fg {

class Generator {
 public:
  explicit Generator(uint64_t seed = 67280421310721ULL) : seed_(seed) {}
  void manual_seed(uint64_t seed);
  uint64_t seed() const { return seed_; }
  uint64_t offset() const { return offset_; }
  // Reserves `n` Philox blocks (4 x 32 random bits each) and returns the first block's index.
  uint64_t reserve_blocks(uint64_t n);
  std::mutex& mutex() { return mutex_; }

 private:
  uint64_t seed_;
  uint64_t offset_ = 0;
  std::mutex mutex_;
};

// The process-wide generator that calls without an explicit one draw from.
Generator& default_generator();
void manual_seed(uint64_t seed);

Tensor rand(IntArrayRef size, TensorOptions options = {});
Tensor rand(IntArrayRef size, Generator& generator, TensorOptions options = {});
Tensor randn(IntArrayRef size, TensorOptions options = {});
Tensor randn(IntArrayRef size, Generator& generator, TensorOptions options = {});
Tensor rand_like(const Tensor& self);
Tensor randn_like(const Tensor& self);
// Each element is 1 with probability p[i] (p in [0, 1]), else 0; the result has p's dtype.
Tensor bernoulli(const Tensor& p);
Tensor bernoulli(const Tensor& self, double p);
// In training, zeroes each element with probability p and scales the rest by 1 / (1 - p).
Tensor dropout(const Tensor& input, double p, bool train);
// dropout's scaled mask (0 or 1 / (1 - p) per element, ones when !train): dropout(x, p, train) is
// x * dropout_mask(x, p, train) for the same generator state. Differentiated code keeps it.
Tensor dropout_mask(const Tensor& input, double p, bool train);
// Dropout of whole channels (torch's feature_dropout, F.dropout1d/2d/3d): input [N, C, *] (or
// [C, *]); each channel is zeroed with probability p or scaled by 1 / (1 - p). Its mask has size 1
// over the * dims; feature_dropout(x, p, train) is x * feature_dropout_mask(x, p, train).
Tensor feature_dropout(const Tensor& input, double p, bool train);
Tensor feature_dropout_mask(const Tensor& input, double p, bool train);

}  // namespace fg
