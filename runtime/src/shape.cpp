// Shape and view ops. Views share storage with their base (make_view); the rest copy.
#include <algorithm>
#include <limits>
#include <numeric>

#include "device.h"
#include "internal.h"

namespace fg {
using namespace detail;

namespace {

// Resolves one -1 in a requested shape; throws when the element counts differ.
std::vector<int64_t> infer_shape(IntArrayRef shape, int64_t numel, IntArrayRef from, const char* op) {
  std::vector<int64_t> out = shape.vec();
  int64_t known = 1;
  std::optional<size_t> infer;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer) fail(op, "only one dimension can be inferred, got shape ", shape);
      infer = i;
    } else if (out[i] < 0) {
      fail(op, "invalid shape dimension ", out[i], " in ", shape);
    }
  }
  {
    std::vector<int64_t> given = out;  // the inferred dim counted as 1 (its size is at most numel)
    if (infer) given[*infer] = 1;
    if (numel_overflows(given)) fail(op, "storage size calculation overflowed with sizes=", shape);
    known = product(given);
  }
  if (infer) {
    if (known == 0 || numel % known != 0)
      fail(op, "shape ", shape, " is invalid for an input of ", numel, " elements (shape ", from, ")");
    out[*infer] = numel / known;
  } else if (known != numel) {
    fail(op, "shape ", shape, " is invalid for an input of ", numel, " elements (shape ", from, ")");
  }
  return out;
}

// Strides giving `newshape` over the same memory as (oldshape, oldstride), when one exists
// (PyTorch's computeStride).
std::optional<std::vector<int64_t>> compute_stride(IntArrayRef oldshape, IntArrayRef oldstride, IntArrayRef newshape) {
  if (oldshape.empty()) return std::vector<int64_t>(newshape.size(), 1);
  const int64_t numel = product(oldshape);
  if (numel == 0 && oldshape == newshape) return oldstride.vec();
  std::vector<int64_t> newstride(newshape.size());
  if (numel == 0) {
    for (int64_t k = static_cast<int64_t>(newshape.size()) - 1; k >= 0; --k)
      newstride[k] =
          k == static_cast<int64_t>(newshape.size()) - 1 ? 1 : std::max<int64_t>(newshape[k + 1], 1) * newstride[k + 1];
    return newstride;
  }
  int64_t view_d = static_cast<int64_t>(newshape.size()) - 1;
  int64_t chunk_base_stride = oldstride.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(oldshape.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= oldshape[tensor_d];
    if (tensor_d == 0 || (oldshape[tensor_d - 1] != 1 && oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || newshape[view_d] == 1)) {
        newstride[view_d] = view_numel * chunk_base_stride;
        view_numel *= newshape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = oldstride[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return newstride;
}

}  // namespace

Tensor view(const Tensor& self, IntArrayRef size) {
  check_defined(self, "view");
  const auto shape = infer_shape(size, self.numel(), self.sizes(), "view");
  auto strides = compute_stride(self.sizes(), self.strides(), shape);
  if (!strides)
    fail("view", "shape ", IntArrayRef(shape), " is not compatible with the sizes ", self.sizes(), " and strides ",
         self.strides(),
         " of the input (a dimension spans two non-contiguous"
         " ranges); use reshape instead");
  return make_view(self, shape, std::move(*strides), self.storage_offset());
}

Tensor reshape(const Tensor& self, IntArrayRef shape) {
  check_defined(self, "reshape");
  const auto resolved = infer_shape(shape, self.numel(), self.sizes(), "reshape");
  if (auto strides = compute_stride(self.sizes(), self.strides(), resolved))
    return make_view(self, resolved, std::move(*strides), self.storage_offset());
  return view(self.clone(), resolved);
}

Tensor flatten(const Tensor& self, int64_t start_dim, int64_t end_dim) {
  check_defined(self, "flatten");
  if (self.dim() == 0) return reshape(self, {1});
  const int64_t s = wrap_dim(start_dim, self.dim(), "flatten");
  const int64_t e = wrap_dim(end_dim, self.dim(), "flatten");
  if (s > e) fail("flatten", "start_dim ", start_dim, " comes after end_dim ", end_dim);
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().begin() + s);
  shape.push_back(product(IntArrayRef(self.sizes().data() + s, e - s + 1)));
  shape.insert(shape.end(), self.sizes().begin() + e + 1, self.sizes().end());
  return reshape(self, shape);
}

Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1) {
  check_defined(self, "transpose");
  const int64_t a = wrap_dim(dim0, self.dim(), "transpose");
  const int64_t b = wrap_dim(dim1, self.dim(), "transpose");
  auto sizes = self.sizes().vec();
  auto strides = self.strides().vec();
  if (self.dim() > 0) {
    std::swap(sizes[a], sizes[b]);
    std::swap(strides[a], strides[b]);
  }
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor t(const Tensor& self) {
  check_defined(self, "t");
  if (self.dim() > 2)
    fail("t", "expects a tensor with at most 2 dimensions, got shape ", self.sizes(),
         "; use transpose(dim0, dim1) instead");
  return self.dim() < 2 ? self : transpose(self, 0, 1);
}

Tensor permute(const Tensor& self, IntArrayRef dims) {
  check_defined(self, "permute");
  if (static_cast<int64_t>(dims.size()) != self.dim())
    fail("permute", "dims ", dims, " do not match the ", self.dim(), " dimensions of a tensor of shape ", self.sizes());
  std::vector<bool> seen(dims.size(), false);
  std::vector<int64_t> sizes(dims.size()), strides(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = wrap_dim(dims[i], self.dim(), "permute");
    if (seen[d]) fail("permute", "dims ", dims, " repeat dimension ", d);
    seen[d] = true;
    sizes[i] = self.size(d);
    strides[i] = self.stride(d);
  }
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor movedim(const Tensor& self, int64_t source, int64_t destination) {
  check_defined(self, "movedim");
  if (self.dim() == 0) return self;
  const int64_t s = wrap_dim(source, self.dim(), "movedim");
  const int64_t d = wrap_dim(destination, self.dim(), "movedim");
  std::vector<int64_t> order;
  for (int64_t i = 0; i < self.dim(); ++i)
    if (i != s) order.push_back(i);
  order.insert(order.begin() + d, s);
  return permute(self, order);
}

Tensor unsqueeze(const Tensor& self, int64_t dim) {
  check_defined(self, "unsqueeze");
  // The new dim may be one past the last: the valid range is that of a tensor one dim larger.
  const int64_t n = self.dim() + 1;
  if (dim < -n || dim >= n)
    fail("unsqueeze", "dimension ", dim, " is out of range for a tensor of ", self.dim(), " dimension",
         self.dim() == 1 ? "" : "s", " (expected to be in range [", -n, ", ", n - 1, "])");
  const int64_t d = dim < 0 ? dim + n : dim;
  auto sizes = self.sizes().vec();
  auto strides = self.strides().vec();
  const int64_t stride = d >= self.dim() ? 1 : sizes[d] * strides[d];
  sizes.insert(sizes.begin() + d, 1);
  strides.insert(strides.begin() + d, stride);
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor squeeze(const Tensor& self) {
  check_defined(self, "squeeze");
  std::vector<int64_t> sizes, strides;
  for (int64_t i = 0; i < self.dim(); ++i)
    if (self.size(i) != 1) {
      sizes.push_back(self.size(i));
      strides.push_back(self.stride(i));
    }
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor squeeze(const Tensor& self, int64_t dim) {
  check_defined(self, "squeeze");
  const int64_t d = wrap_dim(dim, self.dim(), "squeeze");
  if (self.dim() == 0 || self.size(d) != 1)
    return make_view(self, self.sizes().vec(), self.strides().vec(), self.storage_offset());
  auto sizes = self.sizes().vec();
  auto strides = self.strides().vec();
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor expand(const Tensor& self, IntArrayRef size) {
  check_defined(self, "expand");
  if (static_cast<int64_t>(size.size()) < self.dim())
    fail("expand", "the number of sizes provided (", size.size(),
         ") must be at least the number of"
         " dimensions of the tensor (",
         self.dim(), "); target sizes ", size, ", tensor sizes ", self.sizes());
  const size_t lead = size.size() - self.sizes().size();
  std::vector<int64_t> sizes(size.size()), strides(size.size());
  for (size_t i = 0; i < size.size(); ++i) {
    if (i < lead) {
      if (size[i] < 0) fail("expand", "the size -1 is not allowed in a new leading dimension; target sizes ", size);
      sizes[i] = size[i];
      strides[i] = 0;
      continue;
    }
    const int64_t have = self.size(i - lead);
    const int64_t want = size[i] == -1 ? have : size[i];
    if (have != want && have != 1)
      fail("expand", "the expanded size (", want, ") must match the existing size (", have,
           ") at non-singleton dimension ", i, "; target sizes ", size, ", tensor sizes ", self.sizes());
    sizes[i] = want;
    strides[i] = have == want ? self.stride(i - lead) : 0;
  }
  checked_numel(sizes, "expand");
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor select(const Tensor& self, int64_t dim, int64_t index) {
  check_defined(self, "select");
  if (self.dim() == 0) fail("select", "cannot select from a 0-d tensor");
  const int64_t d = wrap_dim(dim, self.dim(), "select");
  const int64_t n = self.size(d);
  if (index < -n || index >= n)
    fail("select", "index ", index, " is out of range for dimension ", d, " of size ", n, " (shape ", self.sizes(),
         ")");
  const int64_t i = index < 0 ? index + n : index;
  auto sizes = self.sizes().vec();
  auto strides = self.strides().vec();
  const int64_t offset = self.storage_offset() + i * strides[d];
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  return make_view(self, sizes, strides, offset);
}

Tensor slice(const Tensor& self, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  check_defined(self, "slice");
  if (self.dim() == 0) fail("slice", "cannot slice a 0-d tensor");
  const int64_t d = wrap_dim(dim, self.dim(), "slice");
  if (step <= 0) fail("slice", "step must be positive, got ", step);
  const int64_t n = self.size(d);
  // Python slice semantics: negative bounds count from the end, out-of-range bounds clamp.
  auto clampi = [n](int64_t v) { return std::min(std::max(v < 0 ? v + n : v, int64_t{0}), n); };
  const int64_t s = start ? clampi(*start) : 0;
  const int64_t e = std::max(end ? clampi(*end) : n, s);
  auto sizes = self.sizes().vec();
  auto strides = self.strides().vec();
  const int64_t offset = self.storage_offset() + s * strides[d];
  sizes[d] = e > s ? (e - s - 1) / step + 1 : 0;  // (e - s + step - 1 overflows for a huge step)
  if (sizes[d] > 1) strides[d] = checked_mul(strides[d], step, "slice");  // (a single element's is unused)
  return make_view(self, sizes, strides, offset);
}

Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  check_defined(self, "narrow");
  if (self.dim() == 0) fail("narrow", "cannot narrow a 0-d tensor");
  const int64_t d = wrap_dim(dim, self.dim(), "narrow");
  const int64_t n = self.size(d);
  if (start < -n || start > n) fail("narrow", "start ", start, " is out of range for dimension ", d, " of size ", n);
  const int64_t s = start < 0 ? start + n : start;
  if (length < 0 || length > n - s)
    fail("narrow", "start (", s, ") + length (", length, ") exceeds dimension ", d, " of size ", n, " (shape ",
         self.sizes(), ")");
  return slice(self, d, s, s + length, 1);
}

Tensor diagonal(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  check_defined(self, "diagonal");
  if (self.dim() < 2) fail("diagonal", "expected a tensor of at least 2 dimensions, got shape ", self.sizes());
  const int64_t a = wrap_dim(dim1, self.dim(), "diagonal");
  const int64_t b = wrap_dim(dim2, self.dim(), "diagonal");
  if (a == b) fail("diagonal", "dim1 and dim2 cannot be the same dimension (", a, ")");
  int64_t storage = self.storage_offset();
  int64_t len;
  if (offset >= 0) {
    len = std::max<int64_t>(std::min(self.size(a), self.size(b) - offset), 0);
    if (len > 0) storage += offset * self.stride(b);
  } else {
    len = std::max<int64_t>(std::min(self.size(a) + offset, self.size(b)), 0);
    if (len > 0) storage -= offset * self.stride(a);
  }
  std::vector<int64_t> sizes, strides;
  for (int64_t i = 0; i < self.dim(); ++i)
    if (i != a && i != b) {
      sizes.push_back(self.size(i));
      strides.push_back(self.stride(i));
    }
  sizes.push_back(len);
  strides.push_back(self.stride(a) + self.stride(b));
  return make_view(self, sizes, strides, storage);
}

Tensor diag_embed(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  check_defined(self, "diag_embed");
  if (self.dim() == 0) fail("diag_embed", "expected a tensor of at least 1 dimension, got a 0-d tensor");
  const int64_t nd = self.dim() + 1;
  const int64_t a = wrap_dim(dim1, nd, "diag_embed");
  const int64_t b = wrap_dim(dim2, nd, "diag_embed");
  if (a == b) fail("diag_embed", "dim1 and dim2 cannot be the same dimension (", a, ")");
  if (offset == std::numeric_limits<int64_t>::min()) fail("diag_embed", "offset ", offset, " is out of range");
  const int64_t n = checked_add(self.size(-1), std::abs(offset), "diag_embed");
  std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end() - 1);
  // Insert the two new dims in increasing order so each lands at its final index.
  const int64_t lo = std::min(a, b), hi = std::max(a, b);
  sizes.insert(sizes.begin() + lo, n);
  sizes.insert(sizes.begin() + hi, n);
  Tensor out = zeros(sizes, self.options(), "diag_embed");
  out.diagonal(offset, a, b).copy_(self);
  return out;
}

namespace {
ScalarType promoted(const std::vector<Tensor>& tensors) {
  ScalarType t = tensors[0].dtype();
  for (const Tensor& x : tensors) t = promoteTypes(t, x.dtype());
  return t;
}
}  // namespace

namespace {
// cat, its errors named `op` (stack's are its own).
Tensor cat_as(const std::vector<Tensor>& tensors, int64_t dim, const char* op) {
  if (tensors.empty()) fail(op, "expected a non-empty list of tensors");
  for (const Tensor& x : tensors) check_defined(x, op);
  // As torch, 1-D empty tensors are skipped (legacy behaviour that code relies on).
  std::vector<Tensor> parts;
  for (const Tensor& x : tensors)
    if (!(x.dim() == 1 && x.numel() == 0)) parts.push_back(x);
  if (parts.empty()) return empty({0}, TensorOptions(promoted(tensors)).device(tensors[0].device()));
  const Tensor& first = parts[0];
  std::vector<const Tensor*> operands;
  for (const Tensor& x : parts) operands.push_back(&x);
  const Device device = common_device(operands, op);
  if (first.dim() == 0) fail(op, "zero-dimensional tensor (at position 0) cannot be concatenated");
  const int64_t d = wrap_dim(dim, first.dim(), op);
  std::vector<int64_t> sizes = first.sizes().vec();
  sizes[d] = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Tensor& x = parts[i];
    bool ok = x.dim() == first.dim();
    for (int64_t k = 0; ok && k < x.dim(); ++k)
      if (k != d && x.size(k) != first.size(k)) ok = false;
    if (!ok)
      fail(op, "sizes of tensors must match except in dimension ", d, "; got ", first.sizes(), " at position 0 and ",
           x.sizes(), " at position ", i);
    sizes[d] = checked_add(sizes[d], x.size(d), op);
  }
  Tensor out = empty(sizes, TensorOptions(promoted(parts)).device(device), op);
  int64_t at = 0;
  for (const Tensor& x : parts) {
    out.narrow(d, at, x.size(d)).copy_(x);
    at += x.size(d);
  }
  return out;
}
}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) { return cat_as(tensors, dim, "cat"); }

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  if (tensors.empty()) fail("stack", "expected a non-empty list of tensors");
  const int64_t d = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  std::vector<Tensor> parts;
  for (size_t i = 0; i < tensors.size(); ++i) {
    check_defined(tensors[i], "stack");
    if (tensors[i].sizes() != tensors[0].sizes())
      fail("stack", "expected each tensor to be equal size, but got ", tensors[0].sizes(), " at entry 0 and ",
           tensors[i].sizes(), " at entry ", i);
    parts.push_back(tensors[i].unsqueeze(d));
  }
  return cat_as(parts, d, "stack");
}

std::vector<Tensor> unbind(const Tensor& self, int64_t dim) {
  check_defined(self, "unbind");
  if (self.dim() == 0) fail("unbind", "cannot unbind a 0-d tensor");
  const int64_t d = wrap_dim(dim, self.dim(), "unbind");
  std::vector<Tensor> out;
  for (int64_t i = 0; i < self.size(d); ++i) out.push_back(select(self, d, i));
  return out;
}

Tensor& cat_out(Tensor& out, const std::vector<Tensor>& tensors, int64_t dim) {
  return assign_out(out, cat(tensors, dim), "cat_out");
}
Tensor& stack_out(Tensor& out, const std::vector<Tensor>& tensors, int64_t dim) {
  return assign_out(out, stack(tensors, dim), "stack_out");
}

}  // namespace fg
