// Trains the equilibrium classifier on three Gaussian blobs with per-example gradient clipping (as
// DP-SGD does: each example's gradient scaled to norm at most 1, then averaged), which needs the
// per-sample gradients vmap(grad(loss)) gives. Checks what funcgen generated first: grad(loss)
// against central differences in float64, and the mean of the per-sample gradients against
// grad(batch_loss) (two generated functions that must agree).
#include <cmath>
#include <cstdio>
#include <vector>

#include "model.funcgen.h"
#include "model.h"

namespace {

std::vector<fg::Tensor*> leaves(deq::Params& p) { return {&p.w_in, &p.b_in, &p.w_z, &p.w_out, &p.b_out}; }

// The largest difference between grad(loss) and central differences of loss, over every parameter.
double gradient_error(const deq::Params& at, const fg::Tensor& x, const fg::Tensor& target) {
  deq::Params g = deq::loss_grad(at, x, target);
  deq::Params p{at.w_in.clone(), at.b_in.clone(), at.w_z.clone(), at.w_out.clone(), at.b_out.clone()};
  double worst = 0;
  const std::vector<fg::Tensor*> ps = leaves(p), gs = leaves(g);
  for (size_t k = 0; k < ps.size(); ++k) {
    fg::Tensor flat = ps[k]->reshape({-1});  // a view of the clone: writes reach p
    const fg::Tensor expected = gs[k]->reshape({-1});
    for (int64_t i = 0; i < flat.numel(); ++i) {
      const double saved = flat[i].item<double>();
      flat[i].fill_(saved + 1e-6);
      const double up = deq::loss(p, x, target).item<double>();
      flat[i].fill_(saved - 1e-6);
      const double down = deq::loss(p, x, target).item<double>();
      flat[i].fill_(saved);
      worst = std::fmax(worst, std::fabs((up - down) / 2e-6 - expected[i].item<double>()));
    }
  }
  return worst;
}

}  // namespace

int main() {
  constexpr int64_t kFeatures = 4, kHidden = 16, kClasses = 3, kPerClass = 32;
  fg::manual_seed(0);
  const fg::Tensor centres = fg::randn({kClasses, kFeatures}) * 2.0;
  std::vector<fg::Tensor> xs, ys;
  for (int64_t c = 0; c < kClasses; ++c) {
    xs.push_back(centres[c] + fg::randn({kPerClass, kFeatures}) * 0.7);
    ys.push_back(fg::full({kPerClass}, c, fg::TensorOptions().dtype(fg::kLong)));
  }
  const fg::Tensor inputs = fg::cat(xs), targets = fg::cat(ys);

  // The derivatives funcgen generated, in float64, at one example of each class.
  const deq::Params p64 = deq::init(kFeatures, kHidden, kClasses, fg::kDouble);
  const fg::Tensor inputs64 = inputs.to(fg::kDouble);
  double error = 0;
  for (int64_t i = 0; i < inputs.size(0); i += kPerClass)
    error = std::fmax(error, gradient_error(p64, inputs64[i], targets[i]));
  deq::Params per_example = deq::per_sample_grads(p64, inputs64, targets);
  deq::Params batch = deq::batch_loss_grad(p64, inputs64, targets);
  bool mean_ok = true;
  for (size_t k = 0; k < leaves(per_example).size(); ++k)
    mean_ok &= fg::allclose(leaves(per_example)[k]->mean({0}), *leaves(batch)[k], 1e-8, 1e-10);
  std::printf("grad(loss) against central differences: largest difference %s\n", error < 1e-6 ? "below 1e-6" : "ABOVE 1e-6");
  std::printf("mean of vmap(grad(loss)) equals grad(batch_loss): %s\n", mean_ok ? "yes" : "no");

  // Training in float32: each example's gradient clipped to norm 1, the mean applied.
  deq::Params p = deq::init(kFeatures, kHidden, kClasses, fg::kFloat);
  const double first = deq::batch_loss(p, inputs, targets).item<double>();
  for (int step = 0; step < 200; ++step) {
    deq::Params g = deq::per_sample_grads(p, inputs, targets);
    const std::vector<fg::Tensor*> ps = leaves(p), gs = leaves(g);
    fg::Tensor squared = fg::zeros({inputs.size(0)});
    for (fg::Tensor* t : gs) squared = squared + t->pow(2).reshape({inputs.size(0), -1}).sum({1});
    const fg::Tensor scale = (1.0 / (squared.sqrt() + 1e-12)).clamp_max(1.0);  // per example
    for (size_t k = 0; k < ps.size(); ++k) {
      std::vector<int64_t> shape(static_cast<size_t>(gs[k]->dim()), 1);
      shape[0] = inputs.size(0);
      *ps[k] = *ps[k] - (*gs[k] * scale.reshape(shape)).mean({0}) * 0.5;
    }
  }
  const double last = deq::batch_loss(p, inputs, targets).item<double>();
  int64_t correct = 0;
  for (int64_t i = 0; i < inputs.size(0); ++i)
    correct += deq::forward(p, inputs[i]).argmax(-1).item<int64_t>() == targets[i].item<int64_t>();
  const bool learned = last < first && correct >= inputs.size(0) * 9 / 10;
  std::printf("loss before training %.3f, after 200 clipped steps %.3f; %lld of %lld examples classified right\n",
              first, last, static_cast<long long>(correct), static_cast<long long>(inputs.size(0)));
  return error < 1e-6 && mean_ok && learned ? 0 : 1;
}
