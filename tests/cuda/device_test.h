// The fixture and comparison of the tests that run ops on kCUDA tensors against the CPU: built
// with FG_TEST_HOST_RUN, kCUDA runs on the host-run backend (tier 1); without, on the real one,
// skipping with the CUDA error where no GPU can be used (tier 2).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "funcgen/funcgen.h"
#if defined(FG_TEST_HOST_RUN)
#include "host_run_backend.h"
#endif

namespace fg::testing {

using fg::Tensor;

class Cuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fg::cuda::is_available()) GTEST_SKIP() << "no usable CUDA device: " << fg::cuda::unavailable_reason();
  }
#if defined(FG_TEST_HOST_RUN)
  fg::testing::HostRunDevice device_;
#endif
};

// The message of the fg::Error `f` throws ("" when it throws none).
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const fg::Error& e) {
    return e.what();
  }
  return "";
}

// device_result (on cuda) equals cpu_result to |d - c| <= atol + rtol |c|, NaN and infinities
// where they are; shape, dtype and device checked first.
inline void expect_close(const Tensor& device_result, const Tensor& cpu_result, double rtol = 0, double atol = 0) {
  ASSERT_TRUE(device_result.is_cuda()) << device_result.device();
  ASSERT_EQ(device_result.sizes(), cpu_result.sizes());
  ASSERT_EQ(device_result.dtype(), cpu_result.dtype());
  const Tensor d = device_result.cpu().to(fg::kDouble).contiguous(), c = cpu_result.to(fg::kDouble).contiguous();
  const double* pd = d.data_ptr<double>();
  const double* pc = c.data_ptr<double>();
  int reported = 0;
  for (int64_t i = 0; i < d.numel() && reported < 5; ++i) {
    const bool same = (std::isnan(pd[i]) && std::isnan(pc[i])) || pd[i] == pc[i] ||
                      std::abs(pd[i] - pc[i]) <= atol + rtol * std::abs(pc[i]);
    if (!same) {
      ++reported;
      ADD_FAILURE() << "element " << i << ": cuda " << pd[i] << ", cpu " << pc[i];
    }
  }
}

inline Tensor cuda(const Tensor& t) { return t.to(fg::kCUDA); }

}  // namespace fg::testing
