// A two-layer MLP classifier on synthetic data, written against the fg runtime exactly as it
// would be against libtorch (torch:: -> fg::). It trains with hand-written gradients for now;
// funcgen's generated grad replaces them once the generator lands.
#include <funcgen/funcgen.h>

#include <cstdio>
#include <tuple>

namespace {

struct Mlp {
  fg::Tensor w1, b1, w2, b2;
};

fg::Tensor forward(const Mlp& m, const fg::Tensor& x) {
  return fg::linear(fg::relu(fg::linear(x, m.w1, m.b1)), m.w2, m.b2);
}

// One step of gradient descent on the mean cross-entropy; returns the loss before the step.
double train_step(Mlp& m, const fg::Tensor& x, const fg::Tensor& y, double lr) {
  const int64_t n = x.size(0);
  const fg::Tensor h_pre = fg::linear(x, m.w1, m.b1);
  const fg::Tensor h = fg::relu(h_pre);
  const fg::Tensor logits = fg::linear(h, m.w2, m.b2);
  const double loss = fg::cross_entropy(logits, y).item<double>();
  // d loss / d logits = (softmax - onehot) / n
  fg::Tensor dlogits = fg::softmax(logits, 1);
  const fg::Tensor onehot = fg::zeros_like(dlogits).scatter_add(1, y.unsqueeze(1), fg::ones({n, 1}));
  dlogits = (dlogits - onehot) / static_cast<double>(n);
  const fg::Tensor dw2 = dlogits.t().mm(h), db2 = dlogits.sum(0);
  const fg::Tensor dh = dlogits.mm(m.w2) * h_pre.gt(0).to(fg::kFloat);
  const fg::Tensor dw1 = dh.t().mm(x), db1 = dh.sum(0);
  m.w1.sub_(dw1 * lr);
  m.b1.sub_(db1 * lr);
  m.w2.sub_(dw2 * lr);
  m.b2.sub_(db2 * lr);
  return loss;
}

}  // namespace

int main() {
  fg::manual_seed(0);
  const int64_t n = 512, features = 16, hidden = 64, classes = 4;
  // Labels are the argmax of a fixed random projection: learnable, not trivially.
  const fg::Tensor x = fg::randn({n, features});
  const fg::Tensor y = fg::argmax(x.mm(fg::randn({features, classes})), 1);

  Mlp m{fg::randn({hidden, features}) * (1.0 / 4.0), fg::zeros({hidden}),
        fg::randn({classes, hidden}) * (1.0 / 8.0), fg::zeros({classes})};

  std::printf("fg runtime sample: MLP classifier, %lld examples, kernels on %s\n",
              static_cast<long long>(n), fg::cpu::current_isa().c_str());
  for (int step = 0; step <= 200; ++step) {
    const double loss = train_step(m, x, y, 0.5);
    if (step % 50 == 0) {
      const double accuracy = fg::argmax(forward(m, x), 1).eq(y).to(fg::kFloat).mean().item<double>();
      std::printf("step %3d  loss %.4f  accuracy %.3f\n", step, loss, accuracy);
    }
  }
  return 0;
}
