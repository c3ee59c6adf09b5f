// dropout in evaluation (train a constant false) draws nothing and is the identity: vmap takes it
// with randomness='error', as torch.func does. Training (true), or a train flag known only at run
// time, draws a mask: reported, the run-time flag with how to say evaluation.
// EXIT: 1
#include <funcgen/funcgen.h>

constexpr bool kTrain = false;

FUNCGEN("evaluating = vmap(eval_mode)")
FUNCGEN("evaluating_grads = vmap(grad(eval_mode))")
FUNCGEN("evaluating_hessian = hessian(eval_mode)")
fg::Tensor eval_mode(const fg::Tensor& x) {
  return (fg::dropout(x, 0.5, false) * fg::dropout(x.sin(), 0.2, /*train=*/kTrain) + fg::feature_dropout(x, 0.1, false)).sum();
}

FUNCGEN("training = vmap(train_mode)")
fg::Tensor train_mode(const fg::Tensor& x) { return fg::dropout(x, 0.5, true).sum(); }
// CHECK: dropout_randomness.cpp:[[@LINE-1]]:53: error: random op 'fg::dropout' under vmap with randomness='error'; say whether each example draws its own values (randomness='different') or the batch shares one draw (randomness='same') [funcgen-randomness]
// CHECK: dropout_randomness.cpp:[[@LINE-3]]:21: note: add randomness='different' for independent values per example
// CHECK: dropout_randomness.cpp:[[@LINE-4]]:21: note: or randomness='same' for one draw shared by the batch
// CHECK-NOT: note: in evaluation

FUNCGEN("flagged = vmap(flag_mode, in_dims=(0, None))")
fg::Tensor flag_mode(const fg::Tensor& x, bool train) { return fg::dropout(x, 0.5, train).sum(); }
// CHECK: dropout_randomness.cpp:[[@LINE-1]]:64: error: random op 'fg::dropout' under vmap with randomness='error'; say whether each example draws its own values (randomness='different') or the batch shares one draw (randomness='same') [funcgen-randomness]
// CHECK: dropout_randomness.cpp:[[@LINE-3]]:20: note: add randomness='different' for independent values per example
// CHECK: dropout_randomness.cpp:[[@LINE-4]]:20: note: or randomness='same' for one draw shared by the batch
// CHECK: dropout_randomness.cpp:[[@LINE-4]]:84: note: in evaluation, dropout is the identity and draws nothing: pass train as the constant false (or a constexpr bool) to say so
// CHECK: 2 errors generated.
