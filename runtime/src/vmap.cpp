// fg::vmap: the run-time batching rules that funcgen's generated vmap code calls (see vmap.h).
//
// Every rule computes, in one batched call, what looping over the examples would: for each
// combination of batch indices, the logical slice of the result equals the unbatched op applied
// to the logical slices of the operands (operands unbatched at a level are shared by all of its
// examples). Shape work is done with views; the only copies are those the underlying op makes.
#include "funcgen/runtime/vmap.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>

#include "internal.h"
#include "vmap_internal.h"

namespace fg::vmap {
namespace detail {

constexpr int kMaxLevels = 32;

bool has_level(Levels levels, int level) { return (levels >> level) & 1u; }

std::string levels_str(Levels levels) {
  std::ostringstream os;
  os << '{';
  bool first = true;
  for (int l = 0; l < kMaxLevels; ++l)
    if (has_level(levels, l)) {
      os << (first ? "" : ", ") << l;
      first = false;
    }
  os << '}';
  return os.str();
}

IntArrayRef tail_sizes(const Tensor& x, int64_t nb) {
  return IntArrayRef(x.sizes().data() + nb, static_cast<size_t>(x.dim() - nb));
}

// A batched operand must be defined and have at least one dim per level.
void check_operand(const Batched& b, const char* fn, const char* arg) {
  if (!b.value.defined()) vfail(fn, "the ", arg, " tensor is undefined");
  if (b.value.dim() < nbatch(b.levels))
    vfail(fn, arg, " of shape ", b.value.sizes(), " is batched at levels ", levels_str(b.levels),
          " but has fewer than ", nbatch(b.levels), " dims");
}

int64_t lrank(const Batched& b) { return b.value.dim() - nbatch(b.levels); }
IntArrayRef lshape(const Batched& b) { return tail_sizes(b.value, nbatch(b.levels)); }

// Wraps a (possibly negative) logical dim of a tensor of logical rank `rank` (a scalar accepts 0
// and -1, as torch); throws naming fn and the logical shape.
int64_t wrap_logical(int64_t d, int64_t rank, const char* fn, IntArrayRef shape) {
  const int64_t n = rank == 0 ? 1 : rank;
  if (d < -n || d >= n)
    vfail(fn, "dimension ", d, " is out of range for a tensor of logical shape ", shape,
          " (expected to be in range [", -n, ", ", n - 1, "])");
  return d < 0 ? d + n : d;
}

// "a [3, 4] (batched at levels {0}), b [4] (unbatched)": the context of a rule's errors.
std::string describe(std::initializer_list<std::pair<const char*, const Batched*>> ops) {
  std::ostringstream os;
  bool first = true;
  for (const auto& [name, b] : ops) {
    if (!b->value.defined()) continue;
    os << (first ? "" : ", ") << name << " of logical shape " << lshape(*b);
    if (b->levels)
      os << " (batched at levels " << levels_str(b->levels) << ')';
    else
      os << " (unbatched)";
    first = false;
  }
  return os.str();
}

}  // namespace detail

namespace {
using namespace detail;

// x with size-1 dims inserted so that it has one batch dim per level of `want` (x has those of
// `have` at the front) and `pad` more size-1 dims right after the batch dims. One view.
Tensor insert_unit_dims(const Tensor& x, Levels have, Levels want, int64_t pad, const char* fn) {
  if ((have & ~want) != 0)
    vfail(fn, "levels ", levels_str(have), " are not a subset of levels ", levels_str(want));
  if (x.dim() < nbatch(have))
    vfail(fn, "a tensor of shape ", x.sizes(), " cannot be batched at levels ", levels_str(have));
  if (have == want && pad == 0) return x;
  std::vector<int64_t> sizes = x.sizes().vec(), strides = x.strides().vec();
  auto insert = [&](size_t at) {
    const int64_t stride = at < sizes.size() ? sizes[at] * strides[at] : 1;
    sizes.insert(sizes.begin() + static_cast<std::ptrdiff_t>(at), 1);
    strides.insert(strides.begin() + static_cast<std::ptrdiff_t>(at), stride == 0 ? 1 : stride);
  };
  size_t at = 0;
  for (int l = 0; l < kMaxLevels; ++l) {
    if (!has_level(want, l)) continue;
    if (!has_level(have, l)) insert(at);
    ++at;
  }
  for (int64_t i = 0; i < pad; ++i) insert(at);
  return fg::detail::make_view(x, std::move(sizes), std::move(strides), x.storage_offset());
}

// x with `count` size-1 dims inserted at position nb (in front of its logical dims). One view.
Tensor pad_logical(const Tensor& x, int64_t nb, int64_t count) {
  if (count == 0) return x;
  std::vector<int64_t> sizes = x.sizes().vec(), strides = x.strides().vec();
  const int64_t stride = nb < x.dim() ? std::max<int64_t>(sizes[nb] * strides[nb], 1) : 1;
  sizes.insert(sizes.begin() + nb, static_cast<size_t>(count), 1);
  strides.insert(strides.begin() + nb, static_cast<size_t>(count), stride);
  return fg::detail::make_view(x, std::move(sizes), std::move(strides), x.storage_offset());
}

}  // namespace

namespace detail {
// The batch size of every level of `all` (in level order), taken from the operands that have it;
// throws when two operands disagree.
std::vector<int64_t> level_sizes(const Batched* ops, size_t n, Levels all, const char* fn) {
  std::vector<int64_t> sizes;
  for (int l = 0; l < kMaxLevels; ++l) {
    if (!has_level(all, l)) continue;
    int64_t size = -1;
    size_t from = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!ops[i].value.defined() || !has_level(ops[i].levels, l)) continue;
      // The position of level l among operand i's batch dims.
      const int64_t pos = nbatch(ops[i].levels & ((1u << l) - 1u));
      const int64_t s = ops[i].value.size(pos);
      if (size < 0) {
        size = s;
        from = i;
      } else if (s != size) {
        vfail(fn, "operands ", from, " (shape ", ops[from].value.sizes(), ") and ", i, " (shape ",
              ops[i].value.sizes(), ") have different batch sizes at vmap level ", l, " (", size, " != ", s, ")");
      }
    }
    if (size < 0) vfail(fn, "no operand is batched at vmap level ", l);
    sizes.push_back(size);
  }
  return sizes;
}

std::vector<int64_t> level_sizes(const std::vector<Batched>& ops, Levels all, const char* fn) {
  return level_sizes(ops.data(), ops.size(), all, fn);
}
}  // namespace detail

namespace {

// x (batched at `have`) with every level of `all` as a full-size batch dim (expanded views).
Tensor full_batch(const Tensor& x, Levels have, Levels all, const std::vector<int64_t>& sizes) {
  return materialize(x, have, all, sizes);
}

std::vector<int64_t> concat(IntArrayRef a, IntArrayRef b) {
  std::vector<int64_t> r(a.begin(), a.end());
  r.insert(r.end(), b.begin(), b.end());
  return r;
}

// The unit (1-element) batched operand list helper for level_sizes on a few operands.
std::vector<int64_t> sizes_of(std::initializer_list<const Batched*> ops, Levels all, const char* fn) {
  std::vector<Batched> v;
  for (const Batched* b : ops) v.push_back(*b);
  return level_sizes(v, all, fn);
}

// The batched operands expanded to all levels of the union (logical dims unchanged); operands
// with levels == 0 get the batch dims in front.
std::vector<Tensor> expand_to_union(const std::vector<Batched>& ops, Levels all, const char* fn) {
  const std::vector<int64_t> sizes = level_sizes(ops, all, fn);
  std::vector<Tensor> out;
  out.reserve(ops.size());
  for (const Batched& b : ops) out.push_back(full_batch(b.value, b.levels, all, sizes));
  return out;
}

}  // namespace

// ================================================================== entry and exit

Tensor move_in(const Tensor& x, int64_t in_dim, int64_t position, const char* fn, const char* name) {
  if (!x.defined()) vfail(fn, "argument '", name, "' is an undefined tensor and cannot be mapped");
  if (position < 0 || position > x.dim())
    vfail(fn, "batch position ", position, " of argument '", name, "' is out of range for a tensor of shape ",
          x.sizes());
  const int64_t rank = x.dim() - position;
  if (in_dim < -rank || in_dim >= rank)
    vfail(fn, "in_dim ", in_dim, " of argument '", name, "' is out of range for a tensor of shape ",
          tail_sizes(x, position));
  const int64_t d = position + (in_dim < 0 ? in_dim + rank : in_dim);
  return d == position ? x : x.movedim(d, position);
}

std::vector<Tensor> move_in(const std::vector<Tensor>& xs, int64_t in_dim, int64_t position, const char* fn,
                            const char* name) {
  std::vector<Tensor> out;
  out.reserve(xs.size());
  for (size_t k = 0; k < xs.size(); ++k)
    out.push_back(move_in(xs[k], in_dim, position, fn, (std::string(name) + "[" + std::to_string(k) + "]").c_str()));
  return out;
}

int64_t batch_size(const char* fn, std::initializer_list<MappedArg> args) {
  if (args.size() == 0) vfail(fn, "at least one argument must be mapped over a batch dimension");
  std::string first;  // the argument that gave the size
  int64_t size = -1;
  const auto check = [&](const std::string& name, const Tensor* value, int64_t dim) {
    if (value == nullptr || !value->defined()) vfail(fn, "argument '", name, "' is an undefined tensor");
    const int64_t n = value->dim();
    if (dim < -n || dim >= n)
      vfail(fn, "mapped dim ", dim, " of argument '", name, "' is out of range for a tensor of shape ", value->sizes());
    const int64_t s = value->size(dim);
    if (size < 0) {
      first = name;
      size = s;
    } else if (s != size) {
      vfail(fn, "expected all tensors to have the same size in the mapped dimension, got sizes ", size,
            " for argument '", first, "' and ", s, " for argument '", name, "'");
    }
  };
  for (const MappedArg& a : args) {
    if (a.list == nullptr) {
      check(a.name, a.value, a.dim);
      continue;
    }
    for (size_t k = 0; k < a.list->size(); ++k)
      check(std::string(a.name) + "[" + std::to_string(k) + "]", &(*a.list)[k], a.dim);
  }
  if (size < 0) vfail(fn, "the mapped vectors are empty, so no argument gives the batch size");
  return size;
}

Tensor materialize(const Tensor& x, Levels have, Levels all, const std::vector<int64_t>& batch_sizes) {
  if (!x.defined()) return x;  // no value (a gradient that only a branch not taken would have set)
  if ((have & ~all) != 0)
    vfail("materialize", "levels ", levels_str(have), " are not a subset of levels ", levels_str(all));
  if (static_cast<int64_t>(batch_sizes.size()) != nbatch(all))
    vfail("materialize", "expected ", nbatch(all), " batch sizes for levels ", levels_str(all), ", got ",
          IntArrayRef(batch_sizes));
  if (have == all) return x;
  const Tensor y = insert_unit_dims(x, have, all, 0, "materialize");
  const std::vector<int64_t> target = with_batch(batch_sizes, tail_sizes(y, nbatch(all)));
  return with_context("materialize", [&] { return "expanding a tensor of shape " + fg::detail::shape_str(x.sizes()); },
                      [&] { return y.expand(target); });
}

std::vector<Tensor> materialize(const std::vector<Tensor>& xs, Levels have, Levels all,
                                const std::vector<int64_t>& batch_sizes) {
  std::vector<Tensor> out;
  out.reserve(xs.size());
  for (const Tensor& x : xs) out.push_back(materialize(x, have, all, batch_sizes));
  return out;
}

std::vector<Tensor> move_out(const std::vector<Tensor>& xs, int64_t position, int64_t out_dim, const char* fn) {
  std::vector<Tensor> out;
  out.reserve(xs.size());
  for (const Tensor& x : xs) out.push_back(move_out(x, position, out_dim, fn));
  return out;
}

std::vector<Tensor> list_gradient(const std::vector<Tensor>& grads, Levels have, const std::vector<Tensor>& like,
                                  Levels like_levels, Levels all, const std::vector<int64_t>& batch_sizes) {
  if (grads.size() > like.size())
    vfail("ad::list_gradient", "gradients for ", grads.size(), " elements of a list of ", like.size(),
          " (internal error of the generated code)");
  std::vector<Tensor> out(like.size());
  for (size_t k = 0; k < like.size(); ++k)
    out[k] = k < grads.size() && grads[k].defined()
                 ? materialize(grads[k], have, all, batch_sizes)
                 : materialize(fg::zeros_like(like[k]), like_levels, all, batch_sizes);
  return out;
}

Tensor move_out(const Tensor& x, int64_t position, int64_t out_dim, const char* fn) {
  if (!x.defined()) vfail(fn, "the output is an undefined tensor");
  if (position < 0 || position >= x.dim())
    vfail(fn, "batch position ", position, " is out of range for an output of shape ", x.sizes());
  const int64_t rank = x.dim() - position;  // the example's dims plus this level's batch dim
  if (out_dim < -rank || out_dim >= rank)
    vfail(fn, "out_dim ", out_dim, " is out of range for an output of shape ", tail_sizes(x, position + 1),
          " (expected to be in range [", -rank, ", ", rank - 1, "])");
  const int64_t d = position + (out_dim < 0 ? out_dim + rank : out_dim);
  return d == position ? x : x.movedim(position, d);
}

// ================================================================== alignment

std::vector<Tensor> align_n(const Batched* operands, size_t n) {
  Levels all = 0;
  int64_t max_rank = 0;
  for (size_t i = 0; i < n; ++i) {
    check_operand(operands[i], "align", "operand");
    all |= operands[i].levels;
    max_rank = std::max(max_rank, lrank(operands[i]));
  }
  std::vector<Tensor> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const Batched& b = operands[i];
    if (b.levels == 0)
      out.push_back(b.value);
    else
      out.push_back(insert_unit_dims(b.value, b.levels, all, max_rank - lrank(b), "align"));
  }
  return out;
}

std::vector<Tensor> align_full(const std::vector<Batched>& operands) {
  std::vector<Tensor> out = align_n(operands.data(), operands.size());
  const Levels all = union_levels(operands);
  const int64_t nb = nbatch(all);
  const std::vector<int64_t> sizes = level_sizes(operands, all, "align_full");
  int64_t max_rank = 0;
  for (const Batched& b : operands) max_rank = std::max(max_rank, lrank(b));
  for (size_t i = 0; i < out.size(); ++i) {
    const Tensor& t = out[i];
    std::vector<int64_t> target = sizes;
    if (operands[i].levels == 0) {
      target.insert(target.end(), static_cast<size_t>(max_rank - t.dim()), 1);
      target.insert(target.end(), t.sizes().begin(), t.sizes().end());
    } else {
      target.insert(target.end(), t.sizes().begin() + nb, t.sizes().end());
    }
    out[i] = with_context("align_full",
                          [&] { return "operand " + std::to_string(i) + " of shape " + fg::detail::shape_str(t.sizes()); },
                          [&] { return t.expand(target); });
  }
  return out;
}

Tensor add_levels(const Tensor& x, Levels have, Levels want) {
  if (!x.defined()) vfail("add_levels", "the tensor is undefined");
  return insert_unit_dims(x, have, want, 0, "add_levels");
}

Levels union_levels(const std::vector<Batched>& operands) {
  Levels all = 0;
  for (const Batched& b : operands) all |= b.levels;
  return all;
}

std::vector<int64_t> dims(IntArrayRef logical_dims, int64_t nb) {
  std::vector<int64_t> out;
  out.reserve(logical_dims.size());
  for (int64_t d : logical_dims) out.push_back(dim(d, nb));
  return out;
}

std::vector<int64_t> reduced_dims(const Tensor& x, int64_t nb, IntArrayRef logical_dims) {
  if (!logical_dims.empty()) return dims(logical_dims, nb);
  std::vector<int64_t> out;
  for (int64_t d = nb; d < x.dim(); ++d) out.push_back(d);
  return out;
}

std::vector<int64_t> batch_shape(const Tensor& x, int64_t nb, IntArrayRef sizes) {
  if (nb < 0 || nb > x.dim())
    vfail("batch_shape", nb, " batch dims requested of a tensor of shape ", x.sizes());
  return concat(IntArrayRef(x.sizes().data(), static_cast<size_t>(nb)), sizes);
}

std::vector<int64_t> with_batch(IntArrayRef batch_sizes, IntArrayRef sizes) { return concat(batch_sizes, sizes); }

int64_t logical_size(const Tensor& x, int64_t nb, int64_t d) {
  const int64_t rank = x.dim() - nb;
  if (rank <= 0 || d < -rank || d >= rank)
    vfail("logical_size", "dimension ", d, " is out of range for a tensor of logical shape ", logical_sizes(x, nb));
  return x.size(nb + (d < 0 ? d + rank : d));
}

int64_t logical_numel(const Tensor& x, int64_t nb) { return fg::detail::product(logical_sizes(x, nb)); }

IntArrayRef logical_sizes(const Tensor& x, int64_t nb) {
  if (nb < 0 || nb > x.dim())
    vfail("logical_sizes", nb, " batch dims requested of a tensor of shape ", x.sizes());
  return tail_sizes(x, nb);
}

// ================================================================== rules with run-time shapes

Tensor flatten_logical(const Tensor& x, int64_t nb) {
  std::vector<int64_t> shape = batch_shape(x, nb, {});
  shape.push_back(logical_numel(x, nb));
  return x.reshape(shape);
}

Tensor squeeze_logical(const Tensor& x, int64_t nb) {
  const IntArrayRef ls = logical_sizes(x, nb);
  if (std::find(ls.begin(), ls.end(), int64_t{1}) == ls.end()) return x;
  std::vector<int64_t> sizes, strides;
  for (int64_t i = 0; i < x.dim(); ++i)
    if (i < nb || x.size(i) != 1) {
      sizes.push_back(x.size(i));
      strides.push_back(x.stride(i));
    }
  return fg::detail::make_view(x, std::move(sizes), std::move(strides), x.storage_offset());
}

Tensor t(const Tensor& x, int64_t nb) {
  const int64_t rank = static_cast<int64_t>(logical_sizes(x, nb).size());
  if (rank > 2)
    vfail("t", "expects a tensor with at most 2 dimensions, got logical shape ", logical_sizes(x, nb),
          "; use transpose(dim0, dim1) instead");
  return rank < 2 ? x : x.transpose(nb, nb + 1);
}

Tensor permute(const Tensor& x, int64_t nb, IntArrayRef dims_in) {
  const IntArrayRef ls = logical_sizes(x, nb);
  const int64_t rank = static_cast<int64_t>(ls.size());
  if (static_cast<int64_t>(dims_in.size()) != rank)
    vfail("permute", "dims ", dims_in, " do not match the ", rank, " dimensions of a tensor of logical shape ", ls);
  std::vector<int64_t> order;
  order.reserve(static_cast<size_t>(x.dim()));
  for (int64_t i = 0; i < nb; ++i) order.push_back(i);
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t d : dims_in) {
    const int64_t w = wrap_logical(d, rank, "permute", ls);
    if (seen[static_cast<size_t>(w)]) vfail("permute", "dims ", dims_in, " repeat dimension ", w);
    seen[static_cast<size_t>(w)] = true;
    order.push_back(nb + w);
  }
  return x.permute(order);
}

Tensor expand(const Tensor& x, int64_t nb, IntArrayRef sizes) {
  const IntArrayRef ls = logical_sizes(x, nb);
  const int64_t rank = static_cast<int64_t>(ls.size()), n = static_cast<int64_t>(sizes.size());
  if (n < rank)
    vfail("expand", "the number of sizes provided (", n, ") must be at least the number of dimensions of the"
          " tensor (", rank, "); target sizes ", sizes, ", logical tensor sizes ", ls);
  std::vector<int64_t> target = batch_shape(x, nb, {});
  const int64_t lead = n - rank;
  for (int64_t i = 0; i < n; ++i) {
    if (i < lead) {
      if (sizes[i] < 0)
        vfail("expand", "the size ", sizes[i], " is not allowed in a new leading dimension; target sizes ", sizes);
      target.push_back(sizes[i]);
      continue;
    }
    const int64_t have = ls[static_cast<size_t>(i - lead)];
    const int64_t want = sizes[i] == -1 ? have : sizes[i];
    if (want != have && have != 1)
      vfail("expand", "the expanded size (", want, ") must match the existing size (", have,
            ") at non-singleton dimension ", i, "; target sizes ", sizes, ", logical tensor sizes ", ls);
    target.push_back(want);
  }
  // New leading logical dims go after the batch dims: size-1 dims there first (one view).
  return pad_logical(x, nb, lead).expand(target);
}

// ------------------------------------------------------------------ linear algebra

namespace {

// The general batched matmul: both operands in matrix form, the union's batch dims in front,
// logical batch dims padded to the same count, then one broadcasting fg::matmul.
Batched matmul_general(const Batched& a, const Batched& b, int64_t la, int64_t lb) {
  const Levels all = a.levels | b.levels;
  Tensor A = la == 1 ? a.value.unsqueeze(-2) : a.value;
  Tensor B = lb == 1 ? b.value.unsqueeze(-1) : b.value;
  const int64_t ra = std::max<int64_t>(la, 2), rb = std::max<int64_t>(lb, 2), r = std::max(ra, rb);
  if (a.levels) A = insert_unit_dims(A, a.levels, all, r - ra, "matmul");
  if (b.levels) B = insert_unit_dims(B, b.levels, all, r - rb, "matmul");
  Tensor out = fg::matmul(A, B);
  if (lb == 1) out = out.squeeze(-1);
  if (la == 1) out = out.squeeze(lb == 1 ? -1 : -2);
  return {out, all};
}

Batched matmul_rule(const Batched& a, const Batched& b, const char* fn) {
  const int64_t la = lrank(a), lb = lrank(b);
  const auto ctx = [&] { return describe({{"self", &a}, {"other", &b}}); };
  if (la == 0 || lb == 0)
    vfail(fn, "both arguments need at least 1 dimension, got logical shapes ", lshape(a), " and ", lshape(b));
  const int64_t ka = lshape(a)[static_cast<size_t>(la - 1)];
  const int64_t kb = lshape(b)[static_cast<size_t>(lb == 1 ? 0 : lb - 2)];
  if (ka != kb)
    vfail(fn, "logical shapes ", lshape(a), " and ", lshape(b), " cannot be multiplied (", ka, " != ", kb, ")");
  return with_context(fn, ctx, [&]() -> Batched {
    if (a.levels == 0 && b.levels == 0) return {fg::matmul(a.value, b.value), 0};
    // other unbatched and at most 2-D: torch.matmul's own broadcasting over self's leading dims
    // is exactly the per-example product.
    if (b.levels == 0 && lb <= 2) return {fg::matmul(a.value, b.value), a.levels};
    // self unbatched: a vector or a matrix times batched matrices broadcasts the same way.
    if (a.levels == 0 && la <= 2 && lb >= 2) return {fg::matmul(a.value, b.value), b.levels};
    // A matrix times batched vectors: (v_i^T A^T)^T = v_i @ A^T, one matrix product.
    if (a.levels == 0 && la == 2 && lb == 1) return {fg::matmul(b.value, a.value.t()), b.levels};
    return matmul_general(a, b, la, lb);
  });
}

void check_rank(const Batched& x, int64_t want, const char* fn, const char* arg, const char* what) {
  if (lrank(x) != want) vfail(fn, "expected ", arg, " to be ", what, ", got logical shape ", lshape(x));
}

}  // namespace

Batched matmul(const Batched& a, const Batched& b) {
  check_operand(a, "matmul", "self");
  check_operand(b, "matmul", "other");
  return matmul_rule(a, b, "matmul");
}

Batched mm(const Batched& a, const Batched& b) {
  check_operand(a, "mm", "self");
  check_operand(b, "mm", "mat2");
  check_rank(a, 2, "mm", "self", "a 2-D matrix");
  check_rank(b, 2, "mm", "mat2", "a 2-D matrix");
  return matmul_rule(a, b, "mm");
}

Batched mv(const Batched& a, const Batched& v) {
  check_operand(a, "mv", "self");
  check_operand(v, "mv", "vec");
  check_rank(a, 2, "mv", "self", "a 2-D matrix");
  check_rank(v, 1, "mv", "vec", "a 1-D vector");
  return matmul_rule(a, v, "mv");
}

Batched dot(const Batched& a, const Batched& b) {
  check_operand(a, "dot", "self");
  check_operand(b, "dot", "other");
  check_rank(a, 1, "dot", "self", "a 1-D vector");
  check_rank(b, 1, "dot", "other", "a 1-D vector");
  if (a.value.dtype() != b.value.dtype())
    vfail("dot", "expected both vectors to have the same dtype, got ", a.value.dtype(), " and ", b.value.dtype());
  return matmul_rule(a, b, "dot");
}

Batched outer(const Batched& a, const Batched& b) {
  check_operand(a, "outer", "self");
  check_operand(b, "outer", "vec2");
  check_rank(a, 1, "outer", "self", "a 1-D vector");
  check_rank(b, 1, "outer", "vec2", "a 1-D vector");
  const Levels all = a.levels | b.levels;
  // [B..., n, 1] * [B..., 1, m]; unbatched operands broadcast from the right.
  const Tensor A = insert_unit_dims(a.value, a.levels, a.levels ? all : 0, 0, "outer").unsqueeze(-1);
  const Tensor B = insert_unit_dims(b.value, b.levels, b.levels ? all : 0, 0, "outer").unsqueeze(-2);
  return {fg::mul(A, B), all};
}

Batched bmm(const Batched& a, const Batched& b) {
  check_operand(a, "bmm", "self");
  check_operand(b, "bmm", "mat2");
  check_rank(a, 3, "bmm", "self", "a 3-D tensor");
  check_rank(b, 3, "bmm", "mat2", "a 3-D tensor");
  if (lshape(a)[0] != lshape(b)[0])
    vfail("bmm", "batch sizes of logical shapes ", lshape(a), " and ", lshape(b), " differ (", lshape(a)[0],
          " != ", lshape(b)[0], ")");
  return matmul_rule(a, b, "bmm");
}

Batched detail::add_aligned(const Batched& a, const Batched& b, const char* fn) {
  const auto aligned = align({a, b});  // (C++17 lambdas capture no structured binding)
  return with_context(fn, [&] { return describe({{"output", &a}, {"bias", &b}}); },
                      [&]() -> Batched { return {fg::add(aligned[0], aligned[1]), a.levels | b.levels}; });
}

Batched detail::mul_aligned(const Batched& a, const Batched& b, const char* fn) {
  const auto aligned = align({a, b});  // (C++17 lambdas capture no structured binding)
  return with_context(fn, [&] { return describe({{"output", &a}, {"weight", &b}}); },
                      [&]() -> Batched { return {fg::mul(aligned[0], aligned[1]), a.levels | b.levels}; });
}

Batched linear(const Batched& x, const Batched& w, const Batched& bias) {
  check_operand(x, "linear", "input");
  check_operand(w, "linear", "weight");
  const bool has_bias = bias.value.defined();
  if (has_bias) check_operand(bias, "linear", "bias");
  const int64_t lx = lrank(x), lw = lrank(w);
  if (lx == 0) vfail("linear", "expected an input of at least 1 dimension, got logical shape []");
  if (lw != 1 && lw != 2) vfail("linear", "expected a 1-D or 2-D weight, got logical shape ", lshape(w));
  const int64_t in_features = lshape(w)[static_cast<size_t>(lw - 1)];
  const int64_t k = lshape(x)[static_cast<size_t>(lx - 1)];
  if (k != in_features)
    vfail("linear", "input of logical shape ", lshape(x), " has ", k, " features but weight of logical shape ",
          lshape(w), " expects ", in_features);
  const auto ctx = [&] { return describe({{"input", &x}, {"weight", &w}, {"bias", &bias}}); };
  // Shared weight and bias (a bias of at most 1 dim never adds dims to the per-example result of
  // a 2-D weight): fg::linear treats the batch dims as more leading dims of the input.
  if (w.levels == 0 && lw == 2 && (!has_bias || (bias.levels == 0 && bias.value.dim() <= 1))) {
    return with_context("linear", ctx, [&]() -> Batched {
      return {fg::linear(x.value, w.value, has_bias ? std::optional<Tensor>(bias.value) : std::nullopt), x.levels};
    });
  }
  const Batched wt = lw == 2 ? Batched{w.value.transpose(-1, -2), w.levels} : w;
  Batched r = with_context("linear", ctx, [&] { return matmul_rule(x, wt, "linear"); });
  if (!has_bias) return r;
  return add_aligned(r, bias, "linear");
}

// ------------------------------------------------------------------ einsum

namespace {
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
}  // namespace

Batched einsum(const std::string& equation, const std::vector<Batched>& operands) {
  for (const Batched& b : operands) check_operand(b, "einsum", "operand");
  const Levels all = union_levels(operands);
  std::vector<Tensor> values;
  values.reserve(operands.size());
  for (const Batched& b : operands) values.push_back(b.value);
  const auto ctx = [&] {
    std::ostringstream os;
    os << "equation \"" << equation << "\" with logical shapes ";
    for (size_t i = 0; i < operands.size(); ++i) os << (i ? ", " : "") << lshape(operands[i]);
    return os.str();
  };
  if (all == 0) return with_context("einsum", ctx, [&]() -> Batched { return {fg::einsum(equation, values), 0}; });

  std::string eq;
  for (char c : equation)
    if (c != ' ' && c != '\t' && c != '\n') eq += c;
  const size_t arrow = eq.find("->");
  const bool explicit_output = arrow != std::string::npos;
  const std::string lhs = explicit_output ? eq.substr(0, arrow) : eq;
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    parts.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (parts.size() != operands.size())
    vfail("einsum", "equation \"", equation, "\" has ", parts.size(), " operands but ", operands.size(),
          " tensors were given");

  // A fresh letter per level, not used anywhere in the equation.
  bool used[128] = {};
  for (char c : eq)
    if (is_letter(c)) used[static_cast<unsigned char>(c)] = true;
  std::string fresh;
  const std::string pool = "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA";
  std::string level_letter(kMaxLevels, '?');
  {
    size_t p = 0;
    for (int l = 0; l < kMaxLevels; ++l) {
      if (!has_level(all, l)) continue;
      while (p < pool.size() && used[static_cast<unsigned char>(pool[p])]) ++p;
      if (p == pool.size())
        vfail("einsum", "equation \"", equation, "\" leaves too few unused letters for ", nbatch(all),
              " vmap levels");
      level_letter[static_cast<size_t>(l)] = pool[p++];
    }
  }
  auto letters_of = [&](Levels levels) {
    std::string s;
    for (int l = 0; l < kMaxLevels; ++l)
      if (has_level(levels, l)) s += level_letter[static_cast<size_t>(l)];
    return s;
  };

  std::string out_subs;
  if (explicit_output) {
    out_subs = eq.substr(arrow + 2);
  } else {
    // torch's implicit output: "..." if any operand has one, then the letters that appear exactly
    // once, in alphabetical order (upper case first, as ASCII).
    int count[128] = {};
    bool ellipsis = false;
    for (const std::string& p : parts) {
      if (p.find("...") != std::string::npos) ellipsis = true;
      for (char c : p)
        if (is_letter(c)) ++count[static_cast<unsigned char>(c)];
    }
    if (ellipsis) out_subs = "...";
    for (int c = 0; c < 128; ++c)
      if (count[c] == 1) out_subs += static_cast<char>(c);
  }
  std::string rewritten;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) rewritten += ',';
    rewritten += letters_of(operands[i].levels) + parts[i];
  }
  rewritten += "->" + letters_of(all) + out_subs;
  return with_context("einsum", ctx, [&]() -> Batched { return {fg::einsum(rewritten, values), all}; });
}

// ------------------------------------------------------------------ cat, stack, indexing

Batched cat(const std::vector<Batched>& tensors, int64_t dim_in) {
  if (tensors.empty()) vfail("cat", "expected a non-empty list of tensors");
  for (const Batched& b : tensors) check_operand(b, "cat", "tensor");
  const Levels all = union_levels(tensors);
  if (all == 0) {
    std::vector<Tensor> values;
    for (const Batched& b : tensors) values.push_back(b.value);
    return {fg::cat(values, dim_in), 0};
  }
  // As torch, logical 1-D empty tensors are skipped.
  std::vector<Batched> parts;
  for (const Batched& b : tensors)
    if (!(lrank(b) == 1 && lshape(b)[0] == 0)) parts.push_back(b);
  const std::vector<int64_t> sizes = level_sizes(tensors, all, "cat");
  if (parts.empty()) {
    ScalarType dt = tensors[0].value.dtype();
    for (const Batched& b : tensors) dt = promoteTypes(dt, b.value.dtype());
    return {fg::empty(with_batch(sizes, {0}), tensors[0].value.options().dtype(dt)), all};
  }
  const IntArrayRef first = lshape(parts[0]);
  const int64_t rank = static_cast<int64_t>(first.size());
  if (rank == 0) vfail("cat", "zero-dimensional tensor (at position 0) cannot be concatenated");
  const int64_t d = wrap_logical(dim_in, rank, "cat", first);
  for (size_t i = 0; i < parts.size(); ++i) {
    const IntArrayRef s = lshape(parts[i]);
    bool ok = static_cast<int64_t>(s.size()) == rank;
    for (int64_t k = 0; ok && k < rank; ++k)
      if (k != d && s[static_cast<size_t>(k)] != first[static_cast<size_t>(k)]) ok = false;
    if (!ok)
      vfail("cat", "sizes of tensors must match except in dimension ", d, "; got logical shapes ", first,
            " at position 0 and ", s, " at position ", i);
  }
  std::vector<Tensor> values;
  values.reserve(parts.size());
  for (const Batched& b : parts) values.push_back(full_batch(b.value, b.levels, all, sizes));
  return {fg::cat(values, nbatch(all) + d), all};
}

Batched stack(const std::vector<Batched>& tensors, int64_t dim_in) {
  if (tensors.empty()) vfail("stack", "expected a non-empty list of tensors");
  for (const Batched& b : tensors) check_operand(b, "stack", "tensor");
  const IntArrayRef first = lshape(tensors[0]);
  for (size_t i = 0; i < tensors.size(); ++i)
    if (lshape(tensors[i]) != first)
      vfail("stack", "expected each tensor to be equal size, but got logical shapes ", first, " at entry 0 and ",
            lshape(tensors[i]), " at entry ", i);
  const int64_t rank = static_cast<int64_t>(first.size()) + 1;
  if (dim_in < -rank || dim_in >= rank)
    vfail("stack", "dimension ", dim_in, " is out of range for stacking tensors of logical shape ", first,
          " (expected to be in range [", -rank, ", ", rank - 1, "])");
  const int64_t d = dim_in < 0 ? dim_in + rank : dim_in;
  const Levels all = union_levels(tensors);
  const std::vector<Tensor> values = expand_to_union(tensors, all, "stack");
  return {fg::stack(values, nbatch(all) + d), all};
}

namespace {

// The slow path for the indexing rules' corner cases (logical 0-d operands); errors name `fn`.
Batched fallback(const char* fn, const std::vector<Batched>& ops,
                 const std::function<Tensor(const std::vector<Tensor>&)>& op) {
  try {
    return per_example(ops, op);
  } catch (const Error& e) {
    const std::string msg = e.what(), from = "fg::vmap: per_example: ";
    if (msg.rfind(from, 0) == 0) vfail(fn, msg.substr(from.size()));
    throw;
  }
}

}  // namespace

Batched index_select(const Batched& self, int64_t dim_in, const Batched& index) {
  check_operand(self, "index_select", "self");
  check_operand(index, "index_select", "index");
  const auto ctx = [&] { return describe({{"self", &self}, {"index", &index}}); };
  const int64_t rank = lrank(self), irank = lrank(index);
  if (irank > 1) vfail("index_select", "index must be 0-d or 1-d, got logical shape ", lshape(index));
  const int64_t d = wrap_logical(dim_in, rank, "index_select", lshape(self));
  const Levels all = self.levels | index.levels;
  if (all == 0 || rank == 0) {
    if (all == 0)
      return with_context("index_select", ctx,
                          [&]() -> Batched { return {fg::index_select(self.value, dim_in, index.value), 0}; });
    return fallback("index_select", {self, index},
                    [d](const std::vector<Tensor>& v) { return fg::index_select(v[0], d, v[1]); });
  }
  const int64_t nb = nbatch(all);
  if (index.levels == 0)
    return with_context("index_select", ctx, [&]() -> Batched {
      return {fg::index_select(self.value, nbatch(self.levels) + d, index.value), self.levels};
    });
  // A per-example index: gather with the index spread over self's other dims (expanded views).
  return with_context("index_select", ctx, [&]() -> Batched {
    const std::vector<int64_t> sizes = sizes_of({&self, &index}, all, "index_select");
    const Tensor S = full_batch(self.value, self.levels, all, sizes);
    Tensor I = full_batch(irank == 0 ? index.value.unsqueeze(-1) : index.value, index.levels, all, sizes);
    const int64_t k = I.size(-1);
    std::vector<int64_t> view_shape = with_batch(sizes, {}), target = with_batch(sizes, {});
    for (int64_t j = 0; j < rank; ++j) {
      view_shape.push_back(j == d ? k : 1);
      target.push_back(j == d ? k : S.size(nb + j));
    }
    I = I.reshape(view_shape).expand(target);
    return {fg::gather(S, nb + d, I), all};
  });
}

Batched gather(const Batched& self, int64_t dim_in, const Batched& index) {
  check_operand(self, "gather", "self");
  check_operand(index, "gather", "index");
  const auto ctx = [&] { return describe({{"self", &self}, {"index", &index}}); };
  const int64_t rank = lrank(self);
  const int64_t d = wrap_logical(dim_in, rank, "gather", lshape(self));
  if (lrank(index) != rank)
    vfail("gather", "index of logical shape ", lshape(index), " and input of logical shape ", lshape(self),
          " must have the same number of dimensions");
  const Levels all = self.levels | index.levels;
  if (all == 0)
    return with_context("gather", ctx, [&]() -> Batched { return {fg::gather(self.value, dim_in, index.value), 0}; });
  if (rank == 0)
    return fallback("gather", {self, index}, [d](const std::vector<Tensor>& v) { return fg::gather(v[0], d, v[1]); });
  return with_context("gather", ctx, [&]() -> Batched {
    const std::vector<int64_t> sizes = sizes_of({&self, &index}, all, "gather");
    const Tensor S = full_batch(self.value, self.levels, all, sizes);
    const Tensor I = full_batch(index.value, index.levels, all, sizes);
    return {fg::gather(S, nbatch(all) + d, I), all};
  });
}

Batched scatter_add(const Batched& self, int64_t dim_in, const Batched& index, const Batched& src) {
  check_operand(self, "scatter_add", "self");
  check_operand(index, "scatter_add", "index");
  check_operand(src, "scatter_add", "src");
  const auto ctx = [&] { return describe({{"self", &self}, {"index", &index}, {"src", &src}}); };
  const int64_t rank = lrank(self);
  const int64_t d = wrap_logical(dim_in, rank, "scatter_add", lshape(self));
  if (lrank(index) != rank || lrank(src) != rank)
    vfail("scatter_add", "index of logical shape ", lshape(index), ", src of logical shape ", lshape(src),
          " and self of logical shape ", lshape(self), " must have the same number of dimensions");
  const Levels all = self.levels | index.levels | src.levels;
  if (all == 0)
    return with_context("scatter_add", ctx,
                        [&]() -> Batched { return {fg::scatter_add(self.value, dim_in, index.value, src.value), 0}; });
  if (rank == 0)
    return fallback("scatter_add", {self, index, src},
                    [d](const std::vector<Tensor>& v) { return fg::scatter_add(v[0], d, v[1], v[2]); });
  return with_context("scatter_add", ctx, [&]() -> Batched {
    const std::vector<int64_t> sizes = sizes_of({&self, &index, &src}, all, "scatter_add");
    // fg::scatter_add clones self, so an expanded self becomes one copy per example.
    const Tensor S = full_batch(self.value, self.levels, all, sizes);
    const Tensor I = full_batch(index.value, index.levels, all, sizes);
    const Tensor R = full_batch(src.value, src.levels, all, sizes);
    return {fg::scatter_add(S, nbatch(all) + d, I, R), all};
  });
}

// ------------------------------------------------------------------ losses

Tensor detail::reduce_logical(const Tensor& x, int64_t nb, Reduction reduction) {
  const int64_t rank = x.dim() - nb;
  if (reduction == Reduction::None) return x;
  if (rank == 0) return x;  // the sum or mean of one element is that element
  std::vector<int64_t> ds;
  for (int64_t i = 0; i < rank; ++i) ds.push_back(nb + i);
  return reduction == Reduction::Sum ? x.sum(ds) : x.mean(ds);
}

Batched mse_loss(const Batched& input, const Batched& target, Reduction reduction) {
  check_operand(input, "mse_loss", "input");
  check_operand(target, "mse_loss", "target");
  const auto ctx = [&] { return describe({{"input", &input}, {"target", &target}}); };
  const Levels all = input.levels | target.levels;
  if (all == 0)
    return with_context("mse_loss", ctx,
                        [&]() -> Batched { return {fg::mse_loss(input.value, target.value, reduction), 0}; });
  with_context("mse_loss", ctx, [&] { return fg::infer_size(lshape(input), lshape(target), "mse_loss"); });
  return with_context("mse_loss", ctx, [&]() -> Batched {
    const auto [x, y] = align({input, target});
    const Tensor diff = x - y;
    return {reduce_logical(diff * diff, nbatch(all), reduction), all};
  });
}

Batched nll_loss(const Batched& input, const Batched& target, const Batched& weight, Reduction reduction,
                 int64_t ignore_index) {
  check_operand(input, "nll_loss", "input");
  check_operand(target, "nll_loss", "target");
  const bool has_weight = weight.value.defined();
  if (has_weight) check_operand(weight, "nll_loss", "weight");
  const auto ctx = [&] { return describe({{"input", &input}, {"target", &target}, {"weight", &weight}}); };
  const Levels all = input.levels | target.levels | (has_weight ? weight.levels : 0);
  if (all == 0)
    return with_context("nll_loss", ctx, [&]() -> Batched {
      return {fg::nll_loss(input.value, target.value,
                           has_weight ? std::optional<Tensor>(weight.value) : std::nullopt, reduction, ignore_index),
              0};
    });

  // The checks of fg::nll_loss, on the logical shapes.
  if (!isFloatingType(input.value.dtype()))
    vfail("nll_loss", "expected a floating-point input, got ", input.value.dtype());
  if (target.value.dtype() != kLong)
    vfail("nll_loss", "expected an int64 target of class indices, got ", target.value.dtype());
  const IntArrayRef is = lshape(input);
  const int64_t rank = static_cast<int64_t>(is.size());
  if (rank < 1) vfail("nll_loss", "expected an input of at least 1 dimension, got logical shape []");
  const int64_t class_dim = rank == 1 ? 0 : 1;
  const int64_t C = is[static_cast<size_t>(class_dim)];
  std::vector<int64_t> expected_target;
  if (rank >= 2) {
    expected_target.push_back(is[0]);
    expected_target.insert(expected_target.end(), is.begin() + 2, is.end());
  }
  if (lshape(target) != IntArrayRef(expected_target))
    vfail("nll_loss", "expected a target of logical shape ", IntArrayRef(expected_target),
          " for an input of logical shape ", is, ", got ", lshape(target));
  if (has_weight && (lrank(weight) != 1 || lshape(weight)[0] != C))
    vfail("nll_loss", "expected a weight of logical shape [", C, "], got ", lshape(weight));

  return with_context("nll_loss", ctx, [&]() -> Batched {
    std::vector<Batched> ops{input, target};
    if (has_weight) ops.push_back(weight);
    const std::vector<int64_t> sizes = level_sizes(ops, all, "nll_loss");
    const int64_t nb = nbatch(all);
    const Tensor X = full_batch(input.value, input.levels, all, sizes);   // [B..., (N,) C, d...]
    const Tensor T = full_batch(target.value, target.levels, all, sizes);  // [B..., (N, d...)]
    const Tensor keep = T.ne(ignore_index);
    const Tensor safe = fg::where(keep, T, int64_t{0});
    if (safe.numel() > 0) {
      const int64_t lo = safe.amin().item<int64_t>(), hi = safe.amax().item<int64_t>();
      if (lo < 0 || hi >= C) vfail("nll_loss", "target ", lo < 0 ? lo : hi, " is out of bounds for ", C, " classes");
    }
    const int64_t cd = nb + class_dim;
    const Tensor picked = fg::gather(X, cd, safe.unsqueeze(cd)).squeeze(cd);  // input[..., t, ...]
    Tensor w;  // the weight of each element's class, shaped like the target
    if (has_weight) {
      const int64_t trank = T.dim() - nb;
      Tensor W = weight.value.to(input.value.dtype());
      // [B or 1..., 1 (x trank), C] (or [C]) expanded over the target's shape, gathered at t.
      if (weight.levels) W = insert_unit_dims(W, weight.levels, all, trank, "nll_loss");
      W = W.expand(concat(T.sizes(), {C}));
      w = fg::gather(W, -1, safe.unsqueeze(-1)).squeeze(-1);
    }
    const Tensor losses = fg::where(keep, has_weight ? -(w * picked) : -picked, 0.0);
    if (reduction == Reduction::None) return {losses, all};
    const Tensor total = reduce_logical(losses, nb, Reduction::Sum);
    if (reduction == Reduction::Sum) return {total, all};
    const Tensor count = has_weight ? fg::where(keep, w, 0.0) : keep.to(input.value.dtype());
    return {total / reduce_logical(count, nb, Reduction::Sum), all};  // 0/0 = nan, as torch
  });
}

Batched cross_entropy(const Batched& input, const Batched& target, const Batched& weight, Reduction reduction,
                      int64_t ignore_index) {
  check_operand(input, "cross_entropy", "input");
  const int64_t rank = lrank(input);
  if (rank < 1) vfail("cross_entropy", "expected an input of at least 1 dimension, got logical shape []");
  const int64_t class_dim = nbatch(input.levels) + (rank == 1 ? 0 : 1);
  const Tensor ls = with_context("cross_entropy", [&] { return describe({{"input", &input}}); },
                                 [&] { return fg::log_softmax(input.value, class_dim); });
  try {
    return nll_loss({ls, input.levels}, target, weight, reduction, ignore_index);
  } catch (const Error& e) {
    std::string msg = e.what();
    const std::string from = "fg::vmap: nll_loss: ";
    if (msg.rfind(from, 0) == 0) throw Error("fg::vmap: cross_entropy: " + msg.substr(from.size()));
    throw;
  }
}

// ================================================================== randomness

Tensor dropout_same(const Tensor& x, int64_t nb, double p, bool train) {
  if (!x.defined()) vfail("dropout_same", "the input tensor is undefined");
  if (!(p >= 0 && p <= 1)) vfail("dropout_same", "dropout probability has to be between 0 and 1, but got ", p);
  if (!train || p == 0) return x;
  if (p == 1) return fg::zeros_like(x);
  // One mask of the logical shape, drawn as fg::dropout draws it, broadcast over the batch dims.
  const Tensor keep = fg::bernoulli(fg::empty(logical_sizes(x, nb), x.options()), 1 - p);
  return x * keep * (1.0 / (1.0 - p));
}

Tensor dropout_mask(const Tensor& x, int64_t nb, IntArrayRef batch, double p, bool train) {
  if (!x.defined()) vfail("dropout_mask", "the input tensor is undefined");
  return fg::dropout_mask(fg::empty(with_batch(batch, logical_sizes(x, nb)), x.options()), p, train);
}

Tensor feature_dropout_mask(const Tensor& x, int64_t nb, IntArrayRef batch, double p, bool train) {
  if (!x.defined()) vfail("feature_dropout_mask", "the input tensor is undefined");
  // The logical input's channel mask ([N, C, 1, ...]; [C, 1, ...] unbatched), drawn per element
  // with the 'different' levels' batch dims in front.
  const IntArrayRef ls = logical_sizes(x, nb);
  if (ls.size() < 2)
    vfail("feature_dropout", "expected an input of logical shape [N, C, *] or [C, *], got ", ls);
  std::vector<int64_t> shape(ls.begin(), ls.end());
  for (size_t d = ls.size() == 2 ? 1 : 2; d < shape.size(); ++d) shape[d] = 1;
  return fg::dropout_mask(fg::empty(with_batch(batch, shape), x.options()), p, train);
}

Tensor bernoulli_same(const Tensor& p, int64_t nb) {
  if (!p.defined()) vfail("bernoulli_same", "the probability tensor is undefined");
  if (!isFloatingType(p.dtype())) vfail("bernoulli_same", "expected floating-point probabilities, got ", p.dtype());
  if (p.numel()) {
    const double lo = fg::amin(p).item<double>(), hi = fg::amax(p).item<double>();
    if (lo < 0 || hi > 1)
      vfail("bernoulli_same", "probabilities must be in [0, 1], got values in [", lo, ", ", hi, "]");
  }
  // The uniform draws fg::bernoulli makes for one example, shared by every example.
  const Tensor u = fg::rand(logical_sizes(p, nb), p.options().dtype(kDouble));
  return fg::lt(u, p.to(kDouble)).to(p.dtype());
}

// ================================================================== fallback and chunking

Batched per_example(const std::vector<Batched>& operands, const std::function<Tensor(const std::vector<Tensor>&)>& op) {
  return per_example_outputs(operands, [&](const std::vector<Tensor>& slices) { return std::vector<Tensor>{op(slices)}; })
      .at(0);
}

std::vector<Batched> per_example_outputs(const std::vector<Batched>& operands,
                                         const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& op) {
  for (const Batched& b : operands) check_operand(b, "per_example", "operand");
  const Levels all = union_levels(operands);
  std::vector<Tensor> values;
  values.reserve(operands.size());
  for (const Batched& b : operands) values.push_back(b.value);
  if (all == 0) {
    std::vector<Batched> out;
    for (Tensor& t : op(values)) out.push_back({std::move(t), 0});
    return out;
  }
  const std::vector<int64_t> sizes = level_sizes(operands, all, "per_example");
  const int64_t count = fg::detail::product(sizes);
  if (count == 0)
    vfail("per_example", "cannot run an op without a batching rule over an empty batch (batch sizes ",
          IntArrayRef(sizes), ")");
  // The level index (into `sizes`) of each operand's batch dims.
  std::vector<std::vector<size_t>> which(operands.size());
  for (size_t i = 0; i < operands.size(); ++i) {
    size_t k = 0;
    for (int l = 0; l < kMaxLevels; ++l) {
      if (!has_level(all, l)) continue;
      if (has_level(operands[i].levels, l)) which[i].push_back(k);
      ++k;
    }
  }
  std::vector<std::vector<Tensor>> results;  // per output, per example
  std::vector<int64_t> at(sizes.size(), 0);
  std::vector<Tensor> slices(operands.size());
  for (int64_t e = 0; e < count; ++e) {
    for (size_t i = 0; i < operands.size(); ++i) {
      Tensor s = operands[i].value;
      for (size_t k : which[i]) s = s.select(0, at[k]);  // each select drops the front batch dim
      slices[i] = s;
    }
    std::vector<Tensor> outs;
    try {
      outs = op(slices);
    } catch (const Error& err) {
      vfail("per_example", "example ", IntArrayRef(at), " of batch sizes ", IntArrayRef(sizes), ": ", err.what());
    }
    if (e == 0) results.resize(outs.size());
    if (outs.size() != results.size())
      vfail("per_example", "the op returned ", outs.size(), " outputs for example ", IntArrayRef(at), " but ",
            results.size(), " for the first");
    for (size_t j = 0; j < outs.size(); ++j) results[j].push_back(std::move(outs[j]));
    for (size_t d = at.size(); d-- > 0;) {
      if (++at[d] < sizes[d]) break;
      at[d] = 0;
    }
  }
  std::vector<Batched> stacked;
  for (size_t j = 0; j < results.size(); ++j) {
    const std::vector<Tensor>& r = results[j];
    for (size_t i = 0; i < r.size(); ++i)
      if (!r[i].defined() || r[i].sizes() != r[0].sizes())
        vfail("per_example", "the op returned results of different shapes for different examples (output ", j, ": ",
              r[0].sizes(), " and ", r[i].sizes(), ")");
    stacked.push_back({fg::stack(r, 0).view(with_batch(sizes, r[0].sizes())), all});
  }
  return stacked;
}

std::vector<Tensor> chunked(int64_t chunk, int64_t batch, const std::vector<std::pair<Tensor, int64_t>>& args,
                            const std::vector<int64_t>& out_positions,
                            const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& body) {
  if (chunk <= 0) vfail("chunked", "chunk_size should be greater than 0, got ", chunk);
  if (batch < 0) vfail("chunked", "invalid batch size ", batch);
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& [x, d] = args[i];
    if (d < 0) continue;
    if (!x.defined()) vfail("chunked", "argument ", i, " is undefined");
    if (d >= x.dim() || x.size(d) != batch)
      vfail("chunked", "argument ", i, " of shape ", x.sizes(), " does not have the batch size ", batch,
            " at dim ", d);
  }
  std::vector<Tensor> values;
  values.reserve(args.size());
  for (const auto& a : args) values.push_back(a.first);
  if (chunk >= batch) {
    std::vector<Tensor> out = body(values);
    if (out.size() != out_positions.size())
      vfail("chunked", "the body returned ", out.size(), " outputs, expected ", out_positions.size());
    return out;
  }
  std::vector<std::vector<Tensor>> pieces(out_positions.size());
  for (int64_t start = 0; start < batch; start += chunk) {
    const int64_t len = std::min(chunk, batch - start);
    for (size_t i = 0; i < args.size(); ++i)
      values[i] = args[i].second < 0 ? args[i].first : args[i].first.narrow(args[i].second, start, len);
    std::vector<Tensor> out = body(values);
    if (out.size() != out_positions.size())
      vfail("chunked", "the body returned ", out.size(), " outputs, expected ", out_positions.size());
    for (size_t j = 0; j < out.size(); ++j) pieces[j].push_back(std::move(out[j]));
  }
  std::vector<Tensor> result;
  result.reserve(out_positions.size());
  for (size_t j = 0; j < out_positions.size(); ++j)
    result.push_back(with_context("chunked", [&] { return "output " + std::to_string(j); },
                                  [&] { return fg::cat(pieces[j], out_positions[j]); }));
  return result;
}

bool any(const Tensor& mask) { return mask.numel() > 0 && fg::ne(mask, 0).to(kDouble).sum().item<double>() > 0; }

}  // namespace fg::vmap
