// The inputs make_golden.py gave torch.func and the results it stored (tests/golden), for the tests
// that compare funcgen's generated code with them.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <funcgen/funcgen.h>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace golden_cases {

using nlohmann::json;

// x[i] = sin(0.37 * (i + 1) + seed) * 0.8 over the flattened shape, as make_golden.py's input().
inline fg::Tensor input(std::vector<int64_t> shape, int seed) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> data;
  for (int64_t i = 0; i < n; ++i) data.push_back(std::sin(0.37 * static_cast<double>(i + 1) + seed) * 0.8);
  return fg::tensor(data, fg::kDouble).reshape(shape);
}

inline const json& cases() {
  static const json j = [] {
    std::ifstream in(FUNCGEN_GOLDEN_JSON);
    if (!in) throw std::runtime_error("cannot read " + std::string(FUNCGEN_GOLDEN_JSON));
    return json::parse(in);
  }();
  return j.at("cases");
}

inline fg::Tensor expected(const std::string& name, size_t k) {
  const json& o = cases().at(name).at("outputs").at(k);
  std::vector<double> data = o.at("data").get<std::vector<double>>();
  std::vector<int64_t> shape = o.at("shape").get<std::vector<int64_t>>();
  return fg::tensor(data, fg::kDouble).reshape(shape);
}

inline void expect_golden(const std::string& name, size_t k, const fg::Tensor& actual, double tol = 1e-10) {
  SCOPED_TRACE(name + " output " + std::to_string(k));
  const fg::Tensor want = expected(name, k);
  ASSERT_EQ(actual.sizes(), want.sizes());
  ASSERT_EQ(actual.dtype(), fg::kDouble);
  EXPECT_TRUE(fg::allclose(actual, want, tol, tol)) << "funcgen:\n" << actual << "\ntorch.func:\n" << want;
}

// The model-ensembling case's parameters: three models' w1, b1, w2, b2, each stacked (8 -> 16 -> 4).
inline std::vector<fg::Tensor> stacked_ensemble() {
  std::vector<fg::Tensor> stacked;
  const std::vector<std::vector<int64_t>> shapes = {{16, 8}, {16}, {4, 16}, {4}};
  for (int k = 0; k < 4; ++k) {
    std::vector<fg::Tensor> models;
    for (int i = 0; i < 3; ++i) models.push_back(input(shapes[static_cast<size_t>(k)], 10 * (i + 1) + k));
    stacked.push_back(fg::stack(models));
  }
  return stacked;
}

}  // namespace golden_cases
