// UX Limitations, "Randomness": vmap must be told whether random values differ per example.
// EXIT: 1
#include <funcgen/funcgen.h>

FUNCGEN("add_noise_error = vmap(add_noise)")
// y differs across the batch:
FUNCGEN("add_noise_different = vmap(add_noise, randomness='different')")
// y is the same for the whole batch:
FUNCGEN("add_noise_same = vmap(add_noise, randomness='same')")
fg::Tensor add_noise(const fg::Tensor& x) {
  fg::Tensor y = fg::randn({});
// CHECK: randomness.cpp:[[@LINE-1]]:18: error: random op 'fg::randn' under vmap with randomness='error'; say whether each example draws its own values (randomness='different') or the batch shares one draw (randomness='same') [funcgen-randomness]
// CHECK: randomness.cpp:[[@LINE-8]]:28: note: add randomness='different' for independent values per example
// CHECK: fix-it:"{{.*}}randomness.cpp":{{[{]}}[[@LINE-9]]:42-[[@LINE-9]]:42{{[}]}}:", randomness='different'"
// CHECK: randomness.cpp:[[@LINE-10]]:28: note: or randomness='same' for one draw shared by the batch
// CHECK: fix-it:"{{.*}}randomness.cpp":{{[{]}}[[@LINE-11]]:42-[[@LINE-11]]:42{{[}]}}:", randomness='same'"
  return x + y;
}
