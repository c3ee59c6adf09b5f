// fused.h: a program of element-wise steps run tile by tile through the SIMD kernels that the ops
// themselves use (cpu/kernels.h), with the values between steps in per-tile scratch.
#include "funcgen/runtime/fused.h"

#include <omp.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>

#include "cpu/kernels.h"
#include "funcgen/runtime/ad.h"
#include "elementwise.h"
#include "internal.h"
#include "strided_loop.h"

namespace fg {
namespace {

using cpu::BinaryKind;
using detail::fail;
using cpu::UnaryKind;

// The ops by name (templates/fused.def, the generator's list too).
const std::map<std::string, UnaryKind>& unary_ops() {
  static const std::map<std::string, UnaryKind> ops = {
#define FG_FUSED_UNARY(name, kind) {#name, UnaryKind::kind},
#define FG_FUSED_BINARY(name, kind)
#include "fused.def"
#undef FG_FUSED_BINARY
#undef FG_FUSED_UNARY
  };
  return ops;
}

const std::map<std::string, BinaryKind>& binary_ops() {
  static const std::map<std::string, BinaryKind> ops = {
#define FG_FUSED_UNARY(name, kind)
#define FG_FUSED_BINARY(name, kind) {#name, BinaryKind::kind},
#include "fused.def"
#undef FG_FUSED_BINARY
#undef FG_FUSED_UNARY
  };
  return ops;
}

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      parts.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  return parts;
}

// Tiles of this many elements: a few kilobytes per value, so a program's live values stay in L1/L2.
constexpr int64_t kTile = 1024;

// A tensor the fused path reads: contiguous (stride 1) or one value expanded (stride 0).
bool streamable(const Tensor& t) {
  if (t.is_contiguous()) return true;
  for (int64_t s : t.strides())
    if (s != 0) return false;
  return true;
}

// Whether a tensor of sizes `from` expands to `to` (Tensor::expand's rule).
bool broadcasts_to(IntArrayRef from, IntArrayRef to) {
  if (from.size() > to.size()) return false;
  const size_t lead = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != to[lead + i] && from[i] != 1) return false;
  return true;
}

}  // namespace

using detail::fail;

Fused::Fused(std::vector<std::string> inputs, const std::string& program, const std::vector<std::string>& outputs)
    : input_names_(std::move(inputs)) {
  std::map<std::string, int> values;
  auto operand = [&](const std::string& text, const std::string& stmt) {
    Operand o;
    const auto in = std::find(input_names_.begin(), input_names_.end(), text);
    if (in != input_names_.end()) {
      o.kind = Operand::Input;
      o.index = static_cast<int>(in - input_names_.begin());
    } else if (auto v = values.find(text); v != values.end()) {
      o.kind = Operand::Value;
      o.index = v->second;
    } else {
      char* end = nullptr;
      o.integral = text.find_first_of(".eEnN") == std::string::npos;
      // A whole number is an int64, as in C++ (-0 is 0; above 2^53 it stays exact).
      o.integer = o.integral ? std::strtoll(text.c_str(), &end, 10) : 0;
      o.number = o.integral ? static_cast<double>(o.integer) : std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size())
        fail("Fused", "operand '", text, "' of '", stmt, "' is neither an input, an earlier value nor a number");
    }
    return o;
  };
  for (const std::string& stmt : split(program, ';')) {
    if (stmt.empty()) continue;
    const size_t eq = stmt.find('='), open = stmt.find('('), close = stmt.rfind(')');
    if (eq == std::string::npos || open == std::string::npos || close == std::string::npos || open < eq || close < open)
      fail("Fused", "statement '", stmt, "' is not 'name = op(operands)'");
    const std::string name = trim(stmt.substr(0, eq)), op = trim(stmt.substr(eq + 1, open - eq - 1));
    const std::vector<std::string> args = split(stmt.substr(open + 1, close - open - 1), ',');
    Step s;
    s.op = op;
    if ((op == "expand_as" || op == "sum_to_as") && args.size() == 2) {
      s.shape = op == "expand_as" ? Shape::ExpandAs : Shape::SumToAs;
      s.b = operand(args[1], stmt);
    } else if (auto u = unary_ops().find(op); u != unary_ops().end() && args.size() == 1) {
      s.kind = static_cast<int>(u->second);
    } else if (auto b = binary_ops().find(op); b != binary_ops().end() && args.size() == 2) {
      s.binary = true;
      s.kind = static_cast<int>(b->second);
      s.b = operand(args[1], stmt);
    } else {
      fail("Fused", "'", op, "' with ", args.size(), " operand(s) in '", stmt, "' is not an element-wise op it runs");
    }
    s.a = operand(args[0], stmt);
    if (s.shape != Shape::None && (s.a.kind == Operand::Number || s.b.kind == Operand::Number))
      fail("Fused", "statement '", stmt, "' reshapes a number");
    if (s.a.kind == Operand::Number && (!s.binary || s.b.kind == Operand::Number))
      fail("Fused", "statement '", stmt, "' reads no tensor");
    if (name.empty() || values.count(name) != 0 ||
        std::find(input_names_.begin(), input_names_.end(), name) != input_names_.end())
      fail("Fused", "statement '", stmt, "' does not name a new value");
    values[name] = static_cast<int>(steps_.size());
    steps_.push_back(s);
  }
  for (const std::string& n : outputs) {
    auto v = values.find(n);
    if (v == values.end()) fail("Fused", "output '", n, "' is not a value of the program");
    if (std::find(outputs_.begin(), outputs_.end(), v->second) != outputs_.end())
      fail("Fused", "output '", n, "' is named twice");
    outputs_.push_back(v->second);
  }
  plan();
}

// The fused path's program: a shape step is the identity on values of one shape, so its readers
// read its operand, and only the computing steps remain.
void Fused::plan() {
  Plan& p = plan_;
  std::vector<Plan::Source> as(steps_.size());  // what each statement stands for in the plan
  auto resolved = [&](const Operand& o) { return o.kind == Operand::Value ? as[o.index].from : o; };
  p.role.assign(input_names_.size(), 0);
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& st = steps_[i];
    if (st.shape != Shape::None) {
      if (st.a.kind == Operand::Input) p.role[st.a.index] |= st.shape == Shape::ExpandAs ? Broadcast : Data;
      if (st.b.kind == Operand::Input) p.role[st.b.index] |= ShapeOnly;
      const bool of_value = st.a.kind == Operand::Value;
      // The tensor it is: an expand_as a view of its own, a sum_to_as its operand's tensor.
      const int handle = st.shape == Shape::ExpandAs ? static_cast<int>(i) : of_value ? as[st.a.index].handle : -1 - st.a.index;
      as[i] = {resolved(st.a), st.shape == Shape::ExpandAs || (of_value && as[st.a.index].view), handle};
      continue;
    }
    Step c = st;
    c.a = resolved(st.a);
    if (st.binary) c.b = resolved(st.b);
    for (const Operand* o : {&st.a, &st.b})
      if (o->kind == Operand::Input && (o == &st.a || st.binary)) p.role[o->index] |= Data;
    as[i] = {Operand{Operand::Value, static_cast<int>(p.steps.size())}, false, static_cast<int>(i)};
    p.steps.push_back(c);
  }
  const auto lead = std::find_if(p.role.begin(), p.role.end(), [](int r) { return (r & Data) != 0; });
  p.lead = lead == p.role.end() ? -1 : static_cast<int>(lead - p.role.begin());
  p.allocated.assign(p.steps.size(), -1);
  for (int o : outputs_) {
    const Plan::Source src = as[o];
    p.outputs.push_back(src);
    if (src.from.kind == Operand::Value && p.allocated[src.from.index] < 0) p.allocated[src.from.index] = p.tensors++;
  }
  for (const Step& st : p.steps)
    for (const Operand* o : {&st.a, &st.b}) {
      p.numbers32.push_back(static_cast<float>(o->number));
      p.numbers64.push_back(o->number);
    }
  p.last_use.assign(p.steps.size(), -1);
  for (size_t i = 0; i < p.steps.size(); ++i)
    for (const Operand* o : {&p.steps[i].a, &p.steps[i].b})
      if (o->kind == Operand::Value && (o == &p.steps[i].a || p.steps[i].binary)) p.last_use[o->index] = static_cast<int>(i);
}

void Fused::check_outputs(size_t n) const {
  if (n != outputs_.size()) fail("Fused", "the program has ", outputs_.size(), " outputs, not ", n);
}

std::vector<Tensor> Fused::run_vector(const Tensor* inputs, size_t count) const {
  std::vector<Tensor> out(outputs_.size());
  run_into(inputs, count, out.data());
  return out;
}

namespace {
// A call's bookkeeping, per thread and kept between calls: a small function runs its programs
// every time it is called, and their vectors would otherwise cost as many allocations as their
// values. (fused<T> calls nothing that runs a program; its threads only read the caller's.)
struct Workspace {
  std::vector<Tensor> ready;  // the inputs as the fused path reads them
  std::vector<Tensor> values;
  std::vector<char> uniform, input_uniform;
  std::vector<int> slot, free, allocated_step;
  std::vector<const void*> in_ptr;
  std::vector<void*> out_ptr;
};
Workspace& workspace() {
  thread_local Workspace w;
  return w;
}
// Drops the tensors a call held (the vectors keep their capacity), also when it throws.
struct Release {
  Workspace& w;
  ~Release() {
    w.ready.clear();
    w.values.clear();
  }
};
}  // namespace

void Fused::run_into(const Tensor* in, size_t count, Tensor* out) const {
  if (count != input_names_.size())
    fail("Fused", "the program reads ", input_names_.size(), " inputs, but ", count, " were given");
  if (plan_.lead < 0) return op_by_op(in, out);
  const Tensor& lead = in[plan_.lead];
  if (!lead.defined() || !lead.is_cpu() || !isFloatingType(lead.dtype()) || lead.numel() == 0) return op_by_op(in, out);
  const IntArrayRef sizes = lead.sizes();
  Workspace& w = workspace();
  const Release release{w};
  w.ready.resize(count);
  for (size_t i = 0; i < count; ++i) {
    const Tensor& t = in[i];
    const int role = plan_.role[i];
    if (!t.defined() || !t.is_cpu()) return op_by_op(in, out);
    if ((role & (Data | ShapeOnly)) != 0 && t.sizes() != sizes) return op_by_op(in, out);
    if (role == ShapeOnly) continue;  // (its values are never read)
    if (t.dtype() != lead.dtype()) return op_by_op(in, out);
    if (role == Broadcast && t.sizes() != sizes) {
      if (!broadcasts_to(t.sizes(), sizes)) return op_by_op(in, out);
      const Tensor expanded = t.expand(sizes);
      w.ready[i] = streamable(expanded) ? expanded : expanded.contiguous();
      continue;
    }
    if (!streamable(t)) return op_by_op(in, out);
    w.ready[i] = t;
  }
  w.values.resize(static_cast<size_t>(plan_.tensors));
  if (lead.dtype() == kFloat) fused<float>(w.ready.data(), sizes, w.values.data());
  else fused<double>(w.ready.data(), sizes, w.values.data());
  for (size_t k = 0; k < plan_.outputs.size(); ++k) {
    const Plan::Source& src = plan_.outputs[k];
    size_t same = 0;
    while (same < k && plan_.outputs[same].handle != src.handle) ++same;
    if (same < k) {
      out[k] = out[same];
      continue;
    }
    const Tensor& t = src.from.kind == Operand::Input ? in[src.from.index] : w.values[plan_.allocated[src.from.index]];
    out[k] = src.view ? t.expand(sizes) : t;
  }
}

// The program through the runtime's ops: what the unfused code computes, errors included.
void Fused::op_by_op(const Tensor* inputs, Tensor* out) const {
  std::vector<Tensor> v(steps_.size());
  auto operand = [&](const Operand& o) -> detail::Operand {
    if (o.kind == Operand::Number) return detail::wrap(o.integral ? Scalar(o.integer) : Scalar(o.number));
    return {o.kind == Operand::Input ? inputs[o.index] : v[o.index], false};
  };
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = steps_[i];
    if (s.shape != Shape::None) {
      const Tensor& a = operand(s.a).tensor;
      const IntArrayRef to = operand(s.b).tensor.sizes();
      v[i] = s.shape == Shape::ExpandAs ? a.expand(to) : ad::sum_to(a, to);
      continue;
    }
    v[i] = s.binary ? detail::elementwise_binary(static_cast<BinaryKind>(s.kind), operand(s.a), operand(s.b),
                                                 s.op.c_str())
                    : detail::elementwise_unary(static_cast<UnaryKind>(s.kind), operand(s.a).tensor, s.op.c_str());
  }
  for (size_t k = 0; k < outputs_.size(); ++k) out[k] = v[outputs_[k]];
}

template <typename T>
void Fused::fused(const Tensor* inputs, IntArrayRef sizes, Tensor* values) const {
  const std::vector<Step>& steps = plan_.steps;
  int64_t n = 1;
  for (int64_t d : sizes) n *= d;
  const size_t count = steps.size(), ninputs = input_names_.size();
  Workspace& w = workspace();
  // A value is uniform (one number for every element) when all it reads is: expanded inputs and
  // numbers. It is computed once, on one element.
  std::vector<char>& uniform = w.uniform;
  std::vector<char>& input_uniform = w.input_uniform;
  uniform.assign(count, 0);
  input_uniform.assign(ninputs, 0);
  for (size_t i = 0; i < ninputs; ++i)
    input_uniform[i] = inputs[i].defined() && inputs[i].numel() > 1 && !inputs[i].is_contiguous();
  auto is_uniform = [&](const Operand& o) {
    return o.kind == Operand::Number || (o.kind == Operand::Input ? input_uniform[o.index] : uniform[o.index]) != 0;
  };
  for (size_t i = 0; i < count; ++i)
    uniform[i] = is_uniform(steps[i].a) && (!steps[i].binary || is_uniform(steps[i].b));
  const T* const numbers = numbers_of<T>();
  const std::vector<int>& output_of = plan_.allocated;
  // Scratch slots for the values that are neither uniform nor outputs: a slot is free again after
  // its value's last reader (never the slot of the step's own operands).
  std::vector<int>& slot = w.slot;
  slot.assign(count, -1);
  int slots = 0;
  {
    std::vector<int>& free = w.free;
    free.clear();
    for (size_t i = 0; i < count; ++i) {
      if (!uniform[i] && output_of[i] < 0) {
        if (free.empty()) {
          slot[i] = slots++;
        } else {
          slot[i] = free.back();
          free.pop_back();
        }
      }
      const int step = static_cast<int>(i);
      for (int v : {steps[i].a.kind == Operand::Value ? steps[i].a.index : -1,
                    steps[i].binary && steps[i].b.kind == Operand::Value ? steps[i].b.index : -1})
        if (v >= 0 && plan_.last_use[v] == step && slot[v] >= 0 &&
            std::find(free.begin(), free.end(), slot[v]) == free.end())
          free.push_back(slot[v]);  // slot[v] keeps naming where v is until the step has read it
    }
  }
  const TensorOptions options = TensorOptions().dtype(sizeof(T) == sizeof(float) ? kFloat : kDouble);
  std::vector<void*>& out_ptr = w.out_ptr;
  out_ptr.resize(static_cast<size_t>(plan_.tensors));
  for (size_t k = 0; k < out_ptr.size(); ++k) {
    values[k] = empty(sizes, options);
    out_ptr[k] = values[k].template data_ptr<T>();
  }
  std::vector<int>& allocated_step = w.allocated_step;  // the step each tensor holds
  allocated_step.resize(static_cast<size_t>(plan_.tensors));
  for (size_t i = 0; i < count; ++i)
    if (output_of[i] >= 0) allocated_step[static_cast<size_t>(output_of[i])] = static_cast<int>(i);
  std::vector<const void*>& in_ptr = w.in_ptr;
  in_ptr.resize(ninputs);
  for (size_t i = 0; i < ninputs; ++i) in_ptr[i] = inputs[i].defined() ? inputs[i].template data_ptr<T>() : nullptr;
  auto input = [&](int i) { return static_cast<const T*>(in_ptr[static_cast<size_t>(i)]); };
  auto output = [&](int k) { return static_cast<T*>(out_ptr[static_cast<size_t>(k)]); };

  // Tiles [first, last) with this thread's scratch.
  auto run_tiles = [&](int64_t first, int64_t last) {
    // Per thread and kept between calls: a small function calls this every time it runs.
    thread_local std::vector<T> scratch_buffer, once_buffer;
    const size_t scratch_size = static_cast<size_t>(slots) * kTile;
    if (scratch_buffer.size() < scratch_size) scratch_buffer.resize(scratch_size);
    if (once_buffer.size() < count) once_buffer.resize(count);
    T* const scratch = scratch_buffer.data();
    T* const once = once_buffer.data();  // the uniform values
    for (int64_t tile = first; tile < last; ++tile) {
      const int64_t at = tile * kTile, m = std::min(kTile, n - at);
      // Where operand o of step i is, and its stride (0: one value for the tile).
      auto source = [&](size_t i, const Operand& o, bool second, int64_t& stride) -> const T* {
        stride = is_uniform(o) ? 0 : 1;
        if (o.kind == Operand::Number) return &numbers[2 * i + (second ? 1 : 0)];
        if (o.kind == Operand::Input) return input_uniform[o.index] ? input(o.index) : input(o.index) + at;
        if (uniform[o.index]) return &once[o.index];
        if (output_of[o.index] >= 0) return output(output_of[o.index]) + at;
        return scratch + slot[o.index] * kTile;
      };
      for (size_t i = 0; i < count; ++i) {
        const Step& s = steps[i];
        if (uniform[i] && tile != first) continue;  // computed on the first tile
        T* dst = uniform[i]                ? &once[i]
                 : output_of[i] >= 0 ? output(output_of[i]) + at
                                     : scratch + slot[i] * kTile;
        const int64_t len = uniform[i] ? 1 : m;
        int64_t sa = 0, sb = 0;
        const T* a = source(i, s.a, false, sa);
        if (s.binary) {
          const T* b = source(i, s.b, true, sb);
          cpu::binary(static_cast<BinaryKind>(s.kind), a, sa, b, sb, dst, len);
        } else {  // (a uniform operand makes the step uniform: len is 1 there)
          cpu::unary(static_cast<UnaryKind>(s.kind), a, dst, len);
        }
      }
      for (size_t k = 0; k < allocated_step.size(); ++k)  // a uniform output still fills its tensor
        if (uniform[allocated_step[k]]) {
          T* const o = output(static_cast<int>(k)) + at;
          std::fill(o, o + m, once[allocated_step[k]]);
        }
    }
  };
  const int64_t tiles = (n + kTile - 1) / kTile;
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  if (threads > 1 && n * static_cast<int64_t>(count) >= 4 * detail::kParallelGrain && tiles > 1) {
#pragma omp parallel num_threads(static_cast<int>(std::min<int64_t>(threads, tiles)))
    {
      const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
      run_tiles(tiles * t / nt, tiles * (t + 1) / nt);
    }
  } else {
    run_tiles(0, tiles);
  }
}

}  // namespace fg
