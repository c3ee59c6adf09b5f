// Indexing ops (index_select, gather, scatter_add) and the ops whose output shape depends on
// values (nonzero, masked_select, unique).
#include <algorithm>
#include <cmath>

#include "device.h"
#include "internal.h"

namespace fg {
using namespace detail;

namespace {

void check_index_tensor(const Tensor& index, const char* op) {
  check_defined(index, op, "index");
  if (index.dtype() != kLong) fail(op, "expected an int64 index tensor, got ", index.dtype());
}

// As torch, index tensors are not wrapped like Python subscripts: negative entries are errors.
int64_t checked_index(int64_t i, int64_t size, int64_t dim, const char* op) {
  if (i < 0 || i >= size) fail(op, "index ", i, " is out of bounds for dimension ", dim, " with size ", size);
  return i;
}

// The device of an indexing op: self's, which the other operands must share (a 0-d CPU index or
// source goes with any device, as a wrapped number; self never does, since the op writes it or
// takes its device for the result).
Device indexed_device(const Tensor& self, std::initializer_list<const Tensor*> others, const char* op) {
  std::vector<const Tensor*> all{&self};
  all.insert(all.end(), others.begin(), others.end());
  const Device device = common_device(all, op);
  if (self.device() != device)
    fail(op, "expected all tensors to be on the same device, but found tensors on ", device, " and ", self.device());
  return device;
}

// Visits every multi-index of `shape` in row-major order.
template <typename F>
void for_each_index(IntArrayRef shape, F&& f) {
  const int64_t n = product(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    f(idx);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

int64_t offset_of(const Tensor& t, const std::vector<int64_t>& idx) {
  int64_t off = 0;
  for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * t.stride(static_cast<int64_t>(d));
  return off;
}

}  // namespace

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  check_defined(self, "index_select");
  check_index_tensor(index, "index_select");
  const Device device = indexed_device(self, {&index}, "index_select");
  if (index.dim() > 1) fail("index_select", "index must be 0-d or 1-d, got shape ", index.sizes());
  const int64_t d = wrap_dim(dim, self.dim(), "index_select");
  const int64_t size = self.dim() == 0 ? 1 : self.size(d);
  std::vector<int64_t> shape = self.sizes().vec();
  if (self.dim() > 0) shape[d] = index.numel();
  Tensor out = empty(shape, self.options(), "index_select");
  if (!device.is_cpu()) {
    const Tensor idx = index.to(device).reshape({-1});
    device_check_index(idx, size, d, "index_select");
    if (self.dim() == 0) {
      if (idx.numel() > 0) out.copy_(self);
      return out;
    }
    // The index along d, broadcast over self's other dims: a gather.
    std::vector<int64_t> along(shape.size(), 1);
    along[d] = -1;
    device_gather(out, self, d, idx.reshape(along).expand(shape), "index_select");
    return out;
  }
  const Tensor idx = index.reshape({-1}).contiguous();
  const int64_t* ip = idx.data_ptr<int64_t>();
  for (int64_t k = 0; k < idx.numel(); ++k) {
    const int64_t i = checked_index(ip[k], size, d, "index_select");
    if (self.dim() == 0) {
      out.copy_(self);
    } else {
      copy_strided(out.select(d, k), self.select(d, i));
    }
  }
  return out;
}

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index) {
  check_defined(self, "gather");
  check_index_tensor(index, "gather");
  const Device device = indexed_device(self, {&index}, "gather");
  const int64_t d = wrap_dim(dim, self.dim(), "gather");
  if (index.dim() != self.dim())
    fail("gather", "index ", index.sizes(), " and input ", self.sizes(), " must have the same number of dimensions");
  for (int64_t k = 0; k < self.dim(); ++k)
    if (k != d && index.size(k) > self.size(k))
      fail("gather", "index ", index.sizes(), " is larger than input ", self.sizes(), " in dimension ", k);
  Tensor out = empty(index.sizes(), self.options());
  if (!device.is_cpu()) {
    device_check_index(index.to(device), self.dim() == 0 ? 1 : self.size(d), d, "gather");
    device_gather(out, self, d, index.to(device), "gather");
    return out;
  }
  const int64_t size = self.dim() == 0 ? 1 : self.size(d);
  dispatch_all(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = static_cast<const T*>(self.data_ptr());
    T* dst = static_cast<T*>(out.data_ptr());
    const int64_t* ip = static_cast<const int64_t*>(index.data_ptr());
    int64_t k = 0;
    for_each_index(index.sizes(), [&](std::vector<int64_t>& at) {
      const int64_t i = checked_index(ip[offset_of(index, at)], size, d, "gather");
      std::vector<int64_t> from = at;
      if (!from.empty()) from[d] = i;
      dst[k++] = src[offset_of(self, from)];
    });
  });
  return out;
}

namespace {
// self[index[i][j]][j] += src[i][j] (for dim 0), in place; errors are named `op`.
void scatter_add_into(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const char* op) {
  check_defined(self, op);
  check_defined(src, op, "src");
  check_index_tensor(index, op);
  const Device device = indexed_device(self, {&index, &src}, op);
  check_no_internal_overlap(self, op);
  const int64_t d = wrap_dim(dim, self.dim(), op);
  if (src.dtype() != self.dtype()) fail(op, "expected src of dtype ", self.dtype(), ", got ", src.dtype());
  if (index.dim() != self.dim() || src.dim() != self.dim())
    fail(op, "index ", index.sizes(), ", src ", src.sizes(), " and self ", self.sizes(),
         " must have the same number of dimensions");
  for (int64_t k = 0; k < self.dim(); ++k) {
    if (index.size(k) > src.size(k))
      fail(op, "index ", index.sizes(), " is larger than src ", src.sizes(), " in dimension ", k);
    if (k != d && index.size(k) > self.size(k))
      fail(op, "index ", index.sizes(), " is larger than self ", self.sizes(), " in dimension ", k);
  }
  const int64_t size_d = self.dim() == 0 ? 1 : self.size(d);
  const Tensor source = shares_storage(self, src) ? src.clone() : src;
  if (!device.is_cpu()) {
    device_check_index(index.to(device), size_d, d, op);
    return device_scatter_add(self, d, index.to(device), source.to(device), op);
  }
  dispatch_all(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* dst = static_cast<T*>(self.data_ptr());
    const T* sp = static_cast<const T*>(source.data_ptr());
    const int64_t* ip = static_cast<const int64_t*>(index.data_ptr());
    for_each_index(index.sizes(), [&](std::vector<int64_t>& at) {
      const int64_t i = checked_index(ip[offset_of(index, at)], size_d, d, op);
      std::vector<int64_t> to = at;
      if (!to.empty()) to[d] = i;
      T& slot = dst[offset_of(self, to)];
      slot = static_cast<T>(slot + sp[offset_of(source, at)]);
    });
  });
}
}  // namespace

Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  check_defined(self, "scatter_add");
  Tensor out = self.clone();
  scatter_add_into(out, dim, index, src, "scatter_add");
  return out;
}

const Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) const {
  scatter_add_into(*this, dim, index, src, "scatter_add_");
  return *this;
}

Tensor& index_select_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index) {
  return assign_out(out, index_select(self, dim, index), "index_select_out");
}
Tensor& gather_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index) {
  return assign_out(out, gather(self, dim, index), "gather_out");
}

// The ops whose output size depends on the values wait for them on any device (torch's CUDA
// nonzero and masked_select synchronize for the count too); on other devices they compute on the
// CPU copy and return a tensor on the input's device.
Tensor nonzero(const Tensor& self) {
  check_defined(self, "nonzero");
  if (!self.is_cpu()) return nonzero(self.cpu()).to(self.device());
  const Tensor flags = self.ne(0).contiguous();
  const bool* f = flags.data_ptr<bool>();
  std::vector<int64_t> coords;
  int64_t count = 0, k = 0;
  for_each_index(self.sizes(), [&](std::vector<int64_t>& at) {
    if (f[k++]) {
      coords.insert(coords.end(), at.begin(), at.end());
      ++count;
    }
  });
  Tensor out = empty({count, self.dim()}, TensorOptions(kLong));
  std::copy(coords.begin(), coords.end(), out.data_ptr<int64_t>());
  return out;
}

bool is_nonzero(const Tensor& self) {
  check_defined(self, "is_nonzero");
  if (self.numel() == 0) fail("is_nonzero", "boolean value of a tensor with no values is ambiguous");
  if (self.numel() > 1)
    fail("is_nonzero", "boolean value of a tensor with more than one value is ambiguous (shape ", self.sizes(), ")");
  return self.item().toBool();
}

Tensor masked_select(const Tensor& self, const Tensor& mask) {
  check_defined(self, "masked_select");
  check_defined(mask, "masked_select", "mask");
  const Device device = common_device({&self, &mask}, "masked_select");
  if (!device.is_cpu()) return masked_select(self.cpu(), mask.cpu()).to(device);
  if (mask.dtype() != kBool) fail("masked_select", "expected a bool mask, got ", mask.dtype());
  const auto shape = infer_size(self.sizes(), mask.sizes(), "masked_select");
  const Tensor values = self.expand(shape).contiguous();
  const Tensor m = mask.expand(shape).contiguous();
  const bool* mp = m.data_ptr<bool>();
  int64_t count = 0;
  for (int64_t i = 0; i < m.numel(); ++i) count += mp[i];
  Tensor out = empty({count}, self.options());
  dispatch_all(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = static_cast<const T*>(values.data_ptr());
    T* dst = static_cast<T*>(out.data_ptr());
    for (int64_t i = 0, k = 0; i < m.numel(); ++i)
      if (mp[i]) dst[k++] = src[i];
  });
  return out;
}

Tensor unique(const Tensor& self, bool sorted) {
  check_defined(self, "unique");
  if (!self.is_cpu()) return unique(self.cpu(), sorted).to(self.device());
  const Tensor flat = self.reshape({-1}).contiguous();
  return dispatch_all(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = static_cast<const T*>(flat.data_ptr());
    std::vector<T> v(p, p + flat.numel());
    // NaNs are all distinct in torch.unique; sort them last and keep each.
    std::sort(v.begin(), v.end(), [](T a, T b) {
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(a)) return false;
        if (std::isnan(b)) return true;
      }
      return a < b;
    });
    v.erase(std::unique(v.begin(), v.end()), v.end());
    Tensor out = empty({static_cast<int64_t>(v.size())}, self.options());
    std::copy(v.begin(), v.end(), static_cast<T*>(out.data_ptr()));
    return out;
  });
}

}  // namespace fg
