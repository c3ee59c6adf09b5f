// What the functions funcgen generates for structured parameters (std::vector and std::map of
// tensors, read element by element) check before they take the structures apart.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "funcgen/runtime/error.h"
#include "funcgen/runtime/tensor.h"

namespace fg::detail {

// The generated function reads elements 0..n-1 of `v`: a vector of another size is an error, as
// its other elements would get no gradient.
inline void expect_elements(const std::vector<Tensor>& v, size_t n, const char* function, const char* argument) {
  if (v.size() == n) return;
  throw Error(std::string(function) + ": '" + argument + "' has " + std::to_string(v.size()) + " tensors, but '" +
              function + "' was generated for a function that reads " + std::to_string(n) +
              " of them (elements 0.." + std::to_string(n == 0 ? 0 : n - 1) + "); pass exactly those");
}

// The generated function reads exactly `keys` of `m`.
inline void expect_keys(const std::map<std::string, Tensor>& m, const std::vector<const char*>& keys,
                        const char* function, const char* argument) {
  bool same = m.size() == keys.size();
  for (const char* k : keys) same = same && m.count(k) != 0;
  if (same) return;
  std::string want, have;
  for (const char* k : keys) want += std::string(want.empty() ? "" : ", ") + "'" + k + "'";
  for (const auto& kv : m) have += std::string(have.empty() ? "" : ", ") + "'" + kv.first + "'";
  throw Error(std::string(function) + ": '" + argument + "' has the keys {" + have + "}, but '" + function +
              "' was generated for a function that reads the keys {" + want + "}; pass a map with exactly those");
}

}  // namespace fg::detail
