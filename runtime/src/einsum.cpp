// fg::einsum: Einstein summation as torch.einsum.
//
// Equation: comma-separated operand subscripts, optionally "->" and the output subscripts.
// Subscripts are letters (a-z, A-Z) and at most one "..." per operand, which stands for the
// leading/trailing dims not named by letters; ellipsis dims of all operands broadcast together.
// Without "->" the output is the ellipsis dims followed by the letters that appear exactly once,
// in alphabetical order (upper case first). Size-1 dims broadcast against any size.
//
// Evaluation: each operand first takes the diagonals of its repeated subscripts (strided views)
// and sums out the subscripts no other operand or the output uses. Operands are then contracted
// pairwise, left to right; each contraction permutes both sides (views) into
// [batch, free, contracted] / [batch, contracted, free], merges those groups into a 3-D shape
// (a view when the strides allow, else one copy) and runs one bmm.
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "device.h"
#include "internal.h"

namespace fg {
namespace {

using detail::fail;

constexpr int kLetters = 52;  // label ids: 'A'-'Z' -> 0..25, 'a'-'z' -> 26..51, ellipsis dims -> 52..

int letter_id(char c) { return c >= 'A' && c <= 'Z' ? c - 'A' : c - 'a' + 26; }
char id_letter(int id) { return static_cast<char>(id < 26 ? 'A' + id : 'a' + id - 26); }
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// One side of the equation before ellipsis expansion: letter ids, and where "..." stood.
struct Subscripts {
  std::vector<int> letters;
  int ellipsis_at = -1;  // index into letters before which "..." stood; -1 for none
};

Subscripts parse_subscripts(const std::string& s, const std::string& equation, const char* what, int operand) {
  Subscripts out;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (is_letter(c)) {
      out.letters.push_back(letter_id(c));
    } else if (c == '.') {
      if (s.compare(i, 3, "...") != 0)
        fail("einsum", "invalid equation \"", equation, "\": '.' must be part of an ellipsis \"...\"");
      if (out.ellipsis_at >= 0) {
        if (operand >= 0)
          fail("einsum", "invalid equation \"", equation, "\": operand ", operand, " has more than one ellipsis");
        fail("einsum", "invalid equation \"", equation, "\": the ", what, " has more than one ellipsis");
      }
      out.ellipsis_at = static_cast<int>(out.letters.size());
      i += 2;
    } else {
      fail("einsum", "invalid character '", c, "' in equation \"", equation,
           "\" (subscripts must be letters a-z, A-Z or \"...\")");
    }
  }
  return out;
}

std::string subscript_str(const Subscripts& s) {
  std::string r;
  for (size_t i = 0; i <= s.letters.size(); ++i) {
    if (static_cast<int>(i) == s.ellipsis_at) r += "...";
    if (i < s.letters.size()) r += id_letter(s.letters[i]);
  }
  return r;
}

// A tensor whose dims carry label ids (one per dim).
struct Labeled {
  Tensor t;
  std::vector<int> labels;
};

std::vector<int64_t> sizes_of(const Tensor& t) { return t.sizes().vec(); }
std::vector<int64_t> strides_of(const Tensor& t) { return t.strides().vec(); }

// The view of t with its dims reordered by `order` (a permutation of 0..dim-1).
Tensor permute_view(const Tensor& t, const std::vector<int>& order) {
  std::vector<int64_t> sizes, strides;
  for (int d : order) {
    sizes.push_back(t.sizes()[d]);
    strides.push_back(t.strides()[d]);
  }
  return detail::make_view(t, std::move(sizes), std::move(strides), t.storage_offset());
}

// Reorders x's dims so its labels read as `want` (which must be a permutation of x.labels).
Labeled permute_to(const Labeled& x, const std::vector<int>& want) {
  std::vector<int> order;
  for (int l : want)
    order.push_back(static_cast<int>(std::find(x.labels.begin(), x.labels.end(), l) - x.labels.begin()));
  bool identity = true;
  for (size_t i = 0; i < order.size(); ++i) identity = identity && order[i] == static_cast<int>(i);
  if (identity) return {x.t, want};
  return {permute_view(x.t, order), want};
}

// Sums x over the dims labelled by any of `labels`.
Labeled sum_labels(const Labeled& x, const std::vector<int>& labels) {
  std::vector<int64_t> dims;
  Labeled r;
  for (size_t d = 0; d < x.labels.size(); ++d) {
    if (std::find(labels.begin(), labels.end(), x.labels[d]) != labels.end())
      dims.push_back(static_cast<int64_t>(d));
    else
      r.labels.push_back(x.labels[d]);
  }
  if (dims.empty()) return x;
  r.t = sum(x.t, dims, /*keepdim=*/false);
  return r;
}

// Merges consecutive dims of t into groups of the given counts (each group one dim, a group of
// 0 dims a size-1 dim): a view when the strides allow, else a copy.
Tensor merge_dims(const Tensor& t, const std::vector<int>& groups) {
  auto try_merge = [&](const Tensor& x, std::vector<int64_t>& sizes, std::vector<int64_t>& strides) {
    const auto xs = x.sizes(), xt = x.strides();
    size_t d = 0;
    for (int g : groups) {
      int64_t size = 1, stride = 1;
      bool first = true;
      // Walk the group innermost first; size-1 dims never step.
      for (int j = g - 1; j >= 0; --j) {
        const int64_t s = xs[d + j], st = xt[d + j];
        if (s == 1) continue;
        if (first) {
          stride = st;
          first = false;
        } else if (st != stride * size) {
          return false;
        }
        size *= s;
      }
      for (int j = 0; j < g; ++j)
        if (xs[d + j] == 0) size = 0;
      sizes.push_back(size);
      strides.push_back(stride);
      d += static_cast<size_t>(g);
    }
    return true;
  };
  std::vector<int64_t> sizes, strides;
  if (try_merge(t, sizes, strides))
    return detail::make_view(t, std::move(sizes), std::move(strides), t.storage_offset());
  const Tensor c = t.contiguous();
  sizes.clear();
  strides.clear();
  try_merge(c, sizes, strides);
  return detail::make_view(c, std::move(sizes), std::move(strides), c.storage_offset());
}

// t with dim `d` (of size 1) broadcast to `size` (stride 0).
Tensor expand_dim(const Tensor& t, size_t d, int64_t size) {
  std::vector<int64_t> sizes = sizes_of(t), strides = strides_of(t);
  sizes[d] = size;
  strides[d] = 0;
  return detail::make_view(t, std::move(sizes), std::move(strides), t.storage_offset());
}

bool contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

int64_t label_size(const Labeled& x, int label) {
  for (size_t d = 0; d < x.labels.size(); ++d)
    if (x.labels[d] == label) return x.t.sizes()[d];
  return 1;
}

// a (x) b summed over the labels both have and `keep` lacks.
Labeled contract(Labeled a, Labeled b, const std::vector<int>& keep) {
  std::vector<int> batch, contracted, left, right;
  for (int l : a.labels) {
    if (contains(b.labels, l))
      (contains(keep, l) ? batch : contracted).push_back(l);
    else
      left.push_back(l);
  }
  for (int l : b.labels)
    if (!contains(a.labels, l)) right.push_back(l);

  // Size-1 broadcasting between the two sides.
  std::vector<int> sum_a, sum_b;
  for (int l : contracted) {
    const int64_t sa = label_size(a, l), sb = label_size(b, l);
    if (sa == sb) continue;
    // sum_j x[j] * y[0] = (sum_j x[j]) * y[0]: reduce the larger side to size 1.
    (sa == 1 ? sum_b : sum_a).push_back(l);
  }
  auto keepdim_sum = [](Labeled& x, const std::vector<int>& labels) {
    std::vector<int64_t> dims;
    for (size_t d = 0; d < x.labels.size(); ++d)
      if (contains(labels, x.labels[d])) dims.push_back(static_cast<int64_t>(d));
    if (!dims.empty()) x.t = sum(x.t, dims, /*keepdim=*/true);
  };
  keepdim_sum(a, sum_a);
  keepdim_sum(b, sum_b);
  for (int l : batch) {
    const int64_t sa = label_size(a, l), sb = label_size(b, l);
    if (sa == sb) continue;
    Labeled& small = sa == 1 ? a : b;
    const size_t d = std::find(small.labels.begin(), small.labels.end(), l) - small.labels.begin();
    small.t = expand_dim(small.t, d, std::max(sa, sb));
  }

  std::vector<int> a_order = batch, b_order = batch;
  a_order.insert(a_order.end(), left.begin(), left.end());
  a_order.insert(a_order.end(), contracted.begin(), contracted.end());
  b_order.insert(b_order.end(), contracted.begin(), contracted.end());
  b_order.insert(b_order.end(), right.begin(), right.end());
  const Labeled pa = permute_to(a, a_order), pb = permute_to(b, b_order);

  std::vector<int64_t> out_sizes;
  for (int l : batch) out_sizes.push_back(label_size(pa, l));
  for (int l : left) out_sizes.push_back(label_size(pa, l));
  for (int l : right) out_sizes.push_back(label_size(pb, l));
  std::vector<int> out_labels = batch;
  out_labels.insert(out_labels.end(), left.begin(), left.end());
  out_labels.insert(out_labels.end(), right.begin(), right.end());

  const int nb = static_cast<int>(batch.size()), nl = static_cast<int>(left.size()),
            nc = static_cast<int>(contracted.size()), nr = static_cast<int>(right.size());
  Tensor r;
  if (nc == 0) {
    // Nothing to sum: a broadcast product [B, M, 1] * [B, 1, N], no reduction to hand to bmm.
    const Tensor a3 = merge_dims(pa.t, {nb, nl, 0});
    const Tensor b3 = merge_dims(pb.t, {nb, 0, nr});
    r = mul(a3, b3);
  } else {
    const Tensor a3 = merge_dims(pa.t, {nb, nl, nc});
    const Tensor b3 = merge_dims(pb.t, {nb, nc, nr});
    r = bmm(a3, b3);
  }
  // [B, M, N] is contiguous, so splitting it back into the labelled dims is a view.
  if (!r.is_contiguous()) r = r.contiguous();
  return {detail::make_view(r, out_sizes, detail::contiguous_strides(out_sizes), r.storage_offset()), out_labels};
}

}  // namespace

Tensor einsum(const std::string& equation_in, const std::vector<Tensor>& tensors) {
  std::string eq;
  for (char c : equation_in)
    if (c != ' ' && c != '\t' && c != '\n') eq += c;

  // ---- split into operand subscripts and output
  std::string lhs = eq, rhs;
  const size_t arrow = eq.find("->");
  const bool explicit_output = arrow != std::string::npos;
  if (explicit_output) {
    lhs = eq.substr(0, arrow);
    rhs = eq.substr(arrow + 2);
    if (rhs.find("->") != std::string::npos)
      fail("einsum", "invalid equation \"", equation_in, "\": more than one \"->\"");
  }
  // '-' and '>' may only form the one "->"; ',' only separates operands.
  for (char c : explicit_output ? rhs : lhs)
    if (c == '-' || c == '>') fail("einsum", "invalid equation \"", equation_in, "\": '", c, "' outside \"->\"");
  if (rhs.find(',') != std::string::npos)
    fail("einsum", "invalid equation \"", equation_in, "\": the output subscripts contain ','");
  std::vector<std::string> parts;
  {
    size_t start = 0;
    while (true) {
      const size_t comma = lhs.find(',', start);
      parts.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (tensors.empty()) fail("einsum", "expected at least one operand tensor, got none");
  if (parts.size() != tensors.size())
    fail("einsum", "equation has ", parts.size(), " operands but ", tensors.size(), " tensors were given");

  const int nops = static_cast<int>(tensors.size());
  for (int i = 0; i < nops; ++i) {
    detail::check_defined(tensors[i], "einsum", "operand");
    if (tensors[i].dtype() != tensors[0].dtype())
      fail("einsum", "expected all operands to have the same dtype, got ", tensors[0].dtype(), " (operand 0) and ",
           tensors[i].dtype(), " (operand ", i, ")");
  }
  std::vector<const Tensor*> operands;
  for (const Tensor& t : tensors) operands.push_back(&t);
  detail::common_device(operands, "einsum");
  if (tensors[0].dtype() == kBool) fail("einsum", "expected float32, float64 or int64 operands, got bool");

  // ---- subscripts per operand, ellipsis dims counted
  std::vector<Subscripts> subs;
  int64_t ell_dims = 0;  // the broadcast ellipsis rank
  std::vector<int64_t> op_ell(nops, 0);
  for (int i = 0; i < nops; ++i) {
    subs.push_back(parse_subscripts(parts[i], equation_in, "operand", i));
    const int64_t named = static_cast<int64_t>(subs[i].letters.size());
    const int64_t ndim = tensors[i].dim();
    if (subs[i].ellipsis_at < 0 ? named != ndim : named > ndim)
      fail("einsum", "operand ", i, " has subscripts \"", subscript_str(subs[i]), "\" for ",
           subs[i].ellipsis_at < 0 ? "" : "at least ", named, " dimension", named == 1 ? "" : "s", " but its shape ",
           tensors[i].sizes(), " has ", ndim);
    op_ell[i] = subs[i].ellipsis_at < 0 ? 0 : ndim - named;
    ell_dims = std::max(ell_dims, op_ell[i]);
  }

  // ---- label ids per dim, sizes checked
  std::vector<Labeled> ops(nops);
  std::vector<int64_t> size_of(kLetters + ell_dims, -1);
  std::vector<int> size_from(kLetters + ell_dims, -1);
  for (int i = 0; i < nops; ++i) {
    const Subscripts& s = subs[i];
    std::vector<int>& labels = ops[i].labels;
    for (size_t j = 0; j <= s.letters.size(); ++j) {
      if (static_cast<int>(j) == s.ellipsis_at)
        for (int64_t e = 0; e < op_ell[i]; ++e) labels.push_back(kLetters + static_cast<int>(ell_dims - op_ell[i] + e));
      if (j < s.letters.size()) labels.push_back(s.letters[j]);
    }
    const auto sizes = tensors[i].sizes();
    // Repeated subscripts within the operand must match exactly (they become a diagonal).
    for (size_t d = 0; d < labels.size(); ++d)
      for (size_t e = d + 1; e < labels.size(); ++e)
        if (labels[d] == labels[e] && sizes[d] != sizes[e])
          fail("einsum", "subscript '", id_letter(labels[d]), "' is repeated in operand ", i, " but the sizes differ (",
               sizes[d], " != ", sizes[e], ", shape ", sizes, ")");
    for (size_t d = 0; d < labels.size(); ++d) {
      const int l = labels[d];
      const int64_t sz = sizes[d];
      if (size_of[l] < 0 || size_of[l] == 1) {
        if (size_of[l] < 0 || sz != 1) {
          size_of[l] = sz;
          size_from[l] = i;
        }
      } else if (sz != 1 && sz != size_of[l]) {
        const int j = size_from[l];
        if (l < kLetters)
          fail("einsum", "subscript '", id_letter(l), "' has size ", size_of[l], " in operand ", j, " (shape ",
               tensors[j].sizes(), ") but size ", sz, " in operand ", i, " (shape ", sizes, ")");
        fail("einsum", "the ellipsis dimensions of operand ", j, " (shape ", tensors[j].sizes(), ") and operand ", i,
             " (shape ", sizes, ") do not broadcast (", size_of[l], " != ", sz, ")");
      }
    }
  }

  // ---- output labels
  std::vector<int> out_labels;
  std::vector<int> count(kLetters, 0);
  for (const Subscripts& s : subs)
    for (int l : s.letters) ++count[l];
  auto push_ellipsis = [&] {
    for (int64_t e = 0; e < ell_dims; ++e) out_labels.push_back(kLetters + static_cast<int>(e));
  };
  if (explicit_output) {
    const Subscripts out = parse_subscripts(rhs, equation_in, "output", -1);
    for (size_t j = 0; j <= out.letters.size(); ++j) {
      if (static_cast<int>(j) == out.ellipsis_at) push_ellipsis();
      if (j >= out.letters.size()) continue;
      const int l = out.letters[j];
      if (count[l] == 0)
        fail("einsum", "output subscript '", id_letter(l), "' does not appear in any operand of \"", equation_in, "\"");
      if (contains(out_labels, l))
        fail("einsum", "output subscript '", id_letter(l), "' appears more than once in \"", equation_in, "\"");
      out_labels.push_back(l);
    }
  } else {
    push_ellipsis();
    for (int l = 0; l < kLetters; ++l)
      if (count[l] == 1) out_labels.push_back(l);
  }

  {  // the result's size, checked before any product is formed (so that its error is einsum's)
    std::vector<int64_t> out_sizes;
    for (int l : out_labels) out_sizes.push_back(std::max<int64_t>(size_of[static_cast<size_t>(l)], 1));
    detail::checked_numel(out_sizes, "einsum");
  }

  // ---- per operand: diagonals of repeated labels, then labels used nowhere else summed out
  for (int i = 0; i < nops; ++i) {
    Labeled& x = ops[i];
    x.t = tensors[i];
    for (size_t d = 0; d < x.labels.size(); ++d) {
      for (size_t e = x.labels.size(); e-- > d + 1;) {
        if (x.labels[e] != x.labels[d]) continue;
        // Diagonal over dims d and e: one dim at d stepping both strides.
        std::vector<int64_t> sizes = sizes_of(x.t), strides = strides_of(x.t);
        strides[d] += strides[e];
        sizes.erase(sizes.begin() + e);
        strides.erase(strides.begin() + e);
        x.t = detail::make_view(x.t, std::move(sizes), std::move(strides), x.t.storage_offset());
        x.labels.erase(x.labels.begin() + e);
      }
    }
  }
  auto used_elsewhere = [&](int l, int self) {
    if (contains(out_labels, l)) return true;
    for (int j = 0; j < nops; ++j)
      if (j != self && contains(ops[j].labels, l)) return true;
    return false;
  };
  for (int i = 0; i < nops; ++i) {
    std::vector<int> lonely;
    for (int l : ops[i].labels)
      if (!used_elsewhere(l, i)) lonely.push_back(l);
    ops[i] = sum_labels(ops[i], lonely);
  }

  // ---- contract left to right
  Labeled acc = ops[0];
  for (int i = 1; i < nops; ++i) {
    std::vector<int> keep = out_labels;
    for (int j = i + 1; j < nops; ++j)
      for (int l : ops[j].labels)
        if (!contains(keep, l)) keep.push_back(l);
    acc = contract(acc, ops[i], keep);
  }

  // ---- labels not in the output (e.g. ellipsis dims an explicit output omits), then the order
  std::vector<int> extra;
  for (int l : acc.labels)
    if (!contains(out_labels, l)) extra.push_back(l);
  acc = sum_labels(acc, extra);
  // Output labels that every operand had at size 1 while broadcasting elsewhere cannot occur:
  // each output label is in acc with its broadcast size after the contractions.
  const Labeled result = permute_to(acc, out_labels);
  if (result.t.is_same(tensors[0]))
    return detail::make_view(result.t, sizes_of(result.t), strides_of(result.t), result.t.storage_offset());
  return result.t;
}

}  // namespace fg
