// Model ensembling: run several MLPs of the same architecture at once by vmapping over their
// stacked weights, as in torch.func's tutorial; checked against a loop over the models.
#include <iostream>
#include <vector>

#include "model.funcgen.h"
#include "model.h"

int main() {
  constexpr int64_t kModels = 10, kBatch = 64, kIn = 784, kHidden = 128, kClasses = 10;
  fg::manual_seed(0);
  const fg::Tensor w1 = fg::randn({kModels, kHidden, kIn}) * 0.03, b1 = fg::zeros({kModels, kHidden});
  const fg::Tensor w2 = fg::randn({kModels, kClasses, kHidden}) * 0.09, b2 = fg::zeros({kModels, kClasses});
  const fg::Tensor minibatch = fg::randn({kBatch, kIn});
  const fg::Tensor minibatches = fg::randn({kModels, kBatch, kIn});

  const fg::Tensor same = ensemble::predict_same_minibatch(w1, b1, w2, b2, minibatch);
  const fg::Tensor own = ensemble::predict_own_minibatch(w1, b1, w2, b2, minibatches);

  std::vector<fg::Tensor> same_loop, own_loop;
  for (int64_t m = 0; m < kModels; ++m) {
    same_loop.push_back(ensemble::predict(w1[m], b1[m], w2[m], b2[m], minibatch));
    own_loop.push_back(ensemble::predict(w1[m], b1[m], w2[m], b2[m], minibatches[m]));
  }
  const bool same_ok = fg::allclose(same, fg::stack(same_loop), 1e-4, 1e-5);
  const bool own_ok = fg::allclose(own, fg::stack(own_loop), 1e-4, 1e-5);

  std::cout << kModels << " models; logits " << same.sizes() << " on one minibatch, " << own.sizes()
            << " on their own minibatches\n";
  std::cout << "class each model predicts for example 0:";
  const fg::Tensor classes = same.select(1, 0).argmax(-1);
  for (int64_t m = 0; m < kModels; ++m) std::cout << ' ' << classes[m].item<int64_t>();
  std::cout << "\nvmap equals the loop over the models: " << (same_ok ? "yes" : "no") << ", " << (own_ok ? "yes" : "no")
            << "\n";
  return same_ok && own_ok ? 0 : 1;
}
