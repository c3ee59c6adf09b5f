// The functions tests/generator/ad differentiates (defined in ad_functions.cpp, whose specs
// funcgen turns into grad and grad_and_value functions).
#pragma once

#include <funcgen/funcgen.h>

namespace adtest {
fg::Tensor sin_exp(const fg::Tensor& x);
fg::Tensor broadcast_arith(const fg::Tensor& x, const fg::Tensor& y);
fg::Tensor mlp_loss(const fg::Tensor& w, const fg::Tensor& b, const fg::Tensor& x, const fg::Tensor& y);
fg::Tensor batched_matvec(const fg::Tensor& a, const fg::Tensor& v);
fg::Tensor vec_mat(const fg::Tensor& v, const fg::Tensor& m);
fg::Tensor classifier(const fg::Tensor& x, const fg::Tensor& w);
fg::Tensor reductions(const fg::Tensor& x);
fg::Tensor scalar_left(const fg::Tensor& x);
fg::Tensor shapes(const fg::Tensor& x, const fg::Tensor& y);
fg::Tensor reassigned(const fg::Tensor& x, double s);
fg::Tensor row_sums(const fg::Tensor& x);
fg::Tensor linalg(const fg::Tensor& a, const fg::Tensor& b, const fg::Tensor& v);
fg::Tensor extremes(const fg::Tensor& x);
fg::Tensor pair_extremes(const fg::Tensor& x, const fg::Tensor& y);
fg::Tensor norms_at_zero(const fg::Tensor& x);
fg::Tensor norm_p(const fg::Tensor& x, double p);
fg::Tensor top_rows(const fg::Tensor& x);
fg::Tensor base_write(const fg::Tensor& x);
fg::Tensor view_write(const fg::Tensor& x);
fg::Tensor fill_rows(const fg::Tensor& x, int n);
fg::Tensor temporary_view_write(const fg::Tensor& x);
fg::Tensor aliased(const fg::Tensor& x);
fg::Tensor view_of_view(const fg::Tensor& x);
fg::Tensor pushed_powers(const fg::Tensor& x, int k);
fg::Tensor dropout_loss(const fg::Tensor& x, const fg::Tensor& w);
fg::Tensor channel_dropout_loss(const fg::Tensor& x, const fg::Tensor& w);
}  // namespace adtest
