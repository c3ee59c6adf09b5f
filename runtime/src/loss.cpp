// Losses, with torch's reductions ('none', 'mean', 'sum').
#include "funcgen/runtime/ad.h"
#include "device.h"
#include "internal.h"

namespace fg {
using namespace detail;

namespace {
Tensor reduce_loss(const Tensor& losses, Reduction reduction) {
  switch (reduction) {
    case Reduction::None:
      return losses;
    case Reduction::Sum:
      return losses.sum();
    case Reduction::Mean:
      return losses.mean();
  }
  return losses;
}
}  // namespace

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  check_defined(input, "mse_loss");
  check_defined(target, "mse_loss", "target");
  infer_size(input.sizes(), target.sizes(), "mse_loss");
  const Tensor diff = input - target;
  return reduce_loss(diff * diff, reduction);
}

namespace {
// nll_loss of [M, C] log-probabilities on a device, from the device's ops: the picked entries by
// gather, the class weights by index_select, ignored targets masked to a weight and loss of 0.
Tensor nll_loss_on_device(const Tensor& rows, const Tensor& target, const Tensor& weight, Reduction reduction,
                          int64_t ignore_index, const char* op) {
  const int64_t C = rows.size(1);
  const Tensor t = target.to(rows.device()).reshape({-1});
  const Tensor keep = t.ne(ignore_index);
  const Tensor safe = where(keep, t, int64_t{0});
  if (const auto bad = device_first_out_of_range(t, C, keep))
    fail(op, "target ", *bad, " is out of bounds for ", C, " classes");
  const Tensor picked = gather(rows, 1, safe.unsqueeze(1)).squeeze(1);
  const Tensor w = where(keep, weight.defined() ? weight.to(rows.device()).index_select(0, safe) : ones_like(picked),
                         zeros({}, rows.options()));
  const Tensor losses = where(keep, -(w * picked), zeros({}, rows.options()));
  switch (reduction) {
    case Reduction::None:
      return losses.view(target.sizes());
    case Reduction::Sum:
      return losses.sum();
    case Reduction::Mean:
      return losses.sum() / w.sum();  // 0/0 = nan, as torch
  }
  return losses;
}

// nll_loss, its errors named `op` (cross_entropy's are its own).
Tensor nll_loss_as(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight, Reduction reduction,
                   int64_t ignore_index, const char* op) {
  check_defined(input, op);
  check_defined(target, op, "target");
  const Device device = common_device({&input, &target, weight ? &*weight : &input}, op);
  if (!isFloatingType(input.dtype())) fail(op, "expected a floating-point input, got ", input.dtype());
  if (target.dtype() != kLong) fail(op, "expected an int64 target of class indices, got ", target.dtype());
  if (input.dim() < 1) fail(op, "expected an input of at least 1 dimension, got a 0-d tensor");
  // Bring the class dim last: [C] -> [1, C]; [N, C, d...] -> [N * d..., C].
  const bool batched = input.dim() >= 2;
  const int64_t C = batched ? input.size(1) : input.size(0);
  std::vector<int64_t> expected_target;
  if (batched) {
    expected_target.push_back(input.size(0));
    for (int64_t i = 2; i < input.dim(); ++i) expected_target.push_back(input.size(i));
  }
  if (target.sizes() != IntArrayRef(expected_target))
    fail(op, "expected a target of shape ", IntArrayRef(expected_target), " for an input of shape ",
         input.sizes(), ", got ", target.sizes());
  if (weight) {
    check_defined(*weight, op, "weight");
    if (weight->dim() != 1 || weight->size(0) != C)
      fail(op, "expected a weight of shape [", C, "], got ", weight->sizes());
  }
  const Tensor rows = (batched ? input.movedim(1, -1) : input).reshape({-1, C}).contiguous();
  if (!device.is_cpu())
    return nll_loss_on_device(rows, target, weight ? weight->to(input.dtype()) : Tensor(), reduction, ignore_index, op);
  const Tensor t = target.reshape({-1}).contiguous();
  const Tensor w = weight ? weight->to(input.dtype()).contiguous() : Tensor();
  Tensor losses = empty({t.numel()}, input.options());
  double total = 0, weight_sum = 0;
  dispatch_floating(input.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(rows.data_ptr());
    const int64_t* tp = t.data_ptr<int64_t>();
    const T* wp = weight ? static_cast<const T*>(w.data_ptr()) : nullptr;
    T* lp = static_cast<T*>(losses.data_ptr());
    for (int64_t i = 0; i < t.numel(); ++i) {
      const int64_t c = tp[i];
      if (c == ignore_index) {
        lp[i] = T(0);
        continue;
      }
      if (c < 0 || c >= C) fail(op, "target ", c, " is out of bounds for ", C, " classes");
      const T wi = wp ? wp[c] : T(1);
      lp[i] = -wi * x[i * C + c];
      total += static_cast<double>(lp[i]);
      weight_sum += static_cast<double>(wi);
    }
  });
  switch (reduction) {
    case Reduction::None:
      return losses.view(target.sizes());
    case Reduction::Sum:
      return full({}, total, input.options());
    case Reduction::Mean:
      return full({}, total / weight_sum, input.options());  // 0/0 = nan, as torch
  }
  return losses;
}
}  // namespace

Tensor nll_loss(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight, Reduction reduction,
                int64_t ignore_index) {
  return nll_loss_as(input, target, weight, reduction, ignore_index, "nll_loss");
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                     Reduction reduction, int64_t ignore_index) {
  check_defined(input, "cross_entropy");
  if (input.dim() < 1) fail("cross_entropy", "expected an input of at least 1 dimension, got a 0-d tensor");
  const int64_t class_dim = input.dim() == 1 ? 0 : 1;
  return nll_loss_as(log_softmax(input, class_dim), target, weight, reduction, ignore_index, "cross_entropy");
}

}  // namespace fg

namespace fg {
namespace {
void check_loss_operands(const Tensor& input, const Tensor& target, const char* op) {
  detail::check_defined(input, op);
  detail::check_defined(target, op, "target");
  if (!isFloatingType(input.dtype()) || !isFloatingType(target.dtype()))
    fail(op, "expected floating-point input and target, got ", input.dtype(), " and ", target.dtype());
  ad::check_sizes(op, "a target", target.sizes(), input.sizes());
}
}  // namespace

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                                        const std::optional<Tensor>& pos_weight, Reduction reduction) {
  const char* op = "binary_cross_entropy_with_logits";
  check_loss_operands(input, target, op);
  // -log sigmoid(x) = log(1 + e^-x), stably; (1 - t) x + that is the loss of one logit.
  const Tensor log_p = input.log_sigmoid();
  Tensor loss = pos_weight && pos_weight->defined() ? (1 - target) * input - (*pos_weight * target - target + 1) * log_p
                                                    : (1 - target) * input - log_p;
  if (weight && weight->defined()) loss = loss * *weight;
  if (loss.sizes() != input.sizes())
    fail(op, "expected weight and pos_weight to broadcast to the input's shape ", input.sizes(), ", got ",
         loss.sizes());
  return reduce_loss(loss, reduction);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, double beta) {
  check_loss_operands(input, target, "smooth_l1_loss");
  ad::check_at_least("smooth_l1_loss", "beta", beta, 0, false);
  const Tensor diff = input - target, a = diff.abs();
  return reduce_loss(where(a < beta, diff * diff * (0.5 / ad::positive_or_one(beta)), a - 0.5 * beta), reduction);
}

Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction, double delta) {
  check_loss_operands(input, target, "huber_loss");
  ad::check_at_least("huber_loss", "delta", delta, 0, true);
  const Tensor diff = input - target, a = diff.abs();
  return reduce_loss(where(a < delta, diff * diff * 0.5, (a - 0.5 * delta) * delta), reduction);
}
}  // namespace fg
