// The SIMD kernels of the CPU runtime. Each is compiled for every ISA that Google Highway targets
// on x86-64 (AVX-512, AVX2, SSE4, and portable scalar code) and dispatched at run time to the best
// one the CPU supports (see cpu_features.h for forcing a level). All take contiguous arrays.
#pragma once

#include <cstdint>

#include "kernels/elementwise_ops.h"

namespace fg::cpu {

// The op kinds are shared with the CUDA kernels (kernels/elementwise_ops.h).
using kernels::BinaryKind;
using kernels::ReduceKind;
using kernels::UnaryKind;

void unary(UnaryKind kind, const float* x, float* out, int64_t n);
void unary(UnaryKind kind, const double* x, double* out, int64_t n);
// out[i] = a[i * sa] (op) b[i * sb], with sa and sb each 0 (broadcast) or 1.
void binary(BinaryKind kind, const float* a, int64_t sa, const float* b, int64_t sb, float* out, int64_t n);
void binary(BinaryKind kind, const double* a, int64_t sa, const double* b, int64_t sb, double* out, int64_t n);
// out[i] = min(max(x[i], lo), hi), NaN kept.
void clamp(const float* x, float lo, float hi, float* out, int64_t n);
void clamp(const double* x, double lo, double hi, double* out, int64_t n);
// Sum (pairwise over blocks, for accuracy), max or min (NaN-propagating) of x[0..n).
float reduce(ReduceKind kind, const float* x, int64_t n);
double reduce(ReduceKind kind, const double* x, int64_t n);
// Softmax (or log-softmax) of each of `rows` contiguous rows of length n.
void softmax_rows(const float* x, float* out, int64_t rows, int64_t n, bool log);
void softmax_rows(const double* x, double* out, int64_t rows, int64_t n, bool log);

}  // namespace fg::cpu
