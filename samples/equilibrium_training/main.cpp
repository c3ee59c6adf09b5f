// Trains the equilibrium classifier on three Gaussian blobs with SGD on the mean of the per-sample
// gradients, and checks what funcgen generated: the gradient against central differences (in
// float64), and the mean of the per-sample gradients against the gradient of the batch loss.
#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>

#include "model.funcgen.h"
#include "model.h"

namespace {

std::vector<fg::Tensor*> leaves(deq::Params& p) { return {&p.w_in, &p.b_in, &p.w_z, &p.w_out, &p.b_out}; }

// The largest difference between grad(loss) and central differences of loss, over every parameter.
double gradient_error(deq::Params p, const fg::Tensor& x, const fg::Tensor& target) {
  const deq::Params g = deq::loss_grad(p, x, target);
  deq::Params gc = g;
  double worst = 0;
  const std::vector<fg::Tensor*> ps = leaves(p), gs = leaves(gc);
  for (size_t k = 0; k < ps.size(); ++k) {
    fg::Tensor flat = ps[k]->reshape({-1});  // a view: writes reach the parameter
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
  // Three blobs around different centres.
  const fg::Tensor centres = fg::randn({kClasses, kFeatures}) * 2.0;
  std::vector<fg::Tensor> xs, ys;
  for (int64_t c = 0; c < kClasses; ++c) {
    xs.push_back(centres[c] + fg::randn({kPerClass, kFeatures}) * 0.7);
    ys.push_back(fg::full({kPerClass}, c, fg::TensorOptions().dtype(fg::kLong)));
  }
  const fg::Tensor inputs = fg::cat(xs), targets = fg::cat(ys);

  // The derivatives funcgen generated, checked in float64 first.
  deq::Params p64 = deq::init(kFeatures, kHidden, kClasses, fg::kDouble);
  const double error = gradient_error(p64, inputs[0].to(fg::kDouble), targets[0]);
  const deq::Params per_example = deq::per_sample_grads(p64, inputs.to(fg::kDouble), targets);
  const deq::Params batch = deq::batch_loss_grad(p64, inputs.to(fg::kDouble), targets);
  deq::Params pe = per_example, bg = batch;
  bool mean_ok = true;
  for (size_t k = 0; k < leaves(pe).size(); ++k)
    mean_ok &= fg::allclose(leaves(pe)[k]->mean({0}), *leaves(bg)[k], 1e-8, 1e-10);
  std::printf("grad(loss) against central differences: largest difference %s\n", error < 1e-6 ? "below 1e-6" : "ABOVE 1e-6");
  std::printf("mean of vmap(grad(loss)) equals grad(batch_loss): %s\n", mean_ok ? "yes" : "no");

  // Training in float32 with SGD on the mean per-sample gradient.
  deq::Params p = deq::init(kFeatures, kHidden, kClasses, fg::kFloat);
  const double first = deq::batch_loss(p, inputs, targets).item<double>();
  for (int step = 0; step < 200; ++step) {
    deq::Params g = deq::per_sample_grads(p, inputs, targets);
    const std::vector<fg::Tensor*> ps = leaves(p), gs = leaves(g);
    for (size_t k = 0; k < ps.size(); ++k) *ps[k] = *ps[k] - gs[k]->mean({0}) * 0.2;
  }
  const double last = deq::batch_loss(p, inputs, targets).item<double>();
  int64_t correct = 0;
  for (int64_t i = 0; i < inputs.size(0); ++i)
    correct += deq::forward(p, inputs[i]).argmax(-1).item<int64_t>() == targets[i].item<int64_t>();
  std::printf("loss before training %.3f, after 200 steps %.3f (%s); %lld of %lld examples classified right\n", first,
              last, last < first ? "lower" : "NOT lower", static_cast<long long>(correct),
              static_cast<long long>(inputs.size(0)));
  return error < 1e-6 && mean_ok && last < first ? 0 : 1;
}
