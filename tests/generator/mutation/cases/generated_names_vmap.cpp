// Locals and parameters named like the names generated code used to introduce (batch0, result,
// x_in, t, pred, x_b, chunk, example): generated names cannot clash with them.
// EXPECT: accept
#include <funcgen/funcgen.h>

const double t = 0.25;  // a global that the body reads, next to the temporaries vmap binds

FUNCGEN("vnames = vmap(names)")
fg::Tensor names(const fg::Tensor& result, const fg::Tensor& result_in) {
  int batch0 = 2;
  const int64_t chunk = result.size(0), example = 1;
  fg::Tensor x_b = result.sin() * batch0 + result_in * t;
  fg::Tensor pred = x_b * static_cast<double>(chunk + example) + result.cos() * result_in;
  return pred;
}

// The same with chunk_size: the chunked wrapper has locals of its own.
FUNCGEN("vchunked = vmap(names2, chunk_size=3)")
fg::Tensor names2(const fg::Tensor& chunk, const fg::Tensor& part) { return names(chunk, part) + part; }
