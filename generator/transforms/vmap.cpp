#include "transforms/vmap.h"

#include <set>

#include "ir/build.h"
#include "transforms/vmap/batcher.h"

namespace funcgen {

namespace {

using ir::ExprPtr;
using ir::StmtPtr;
using vmap::braced;
using vmap::exprs;
using vmap::literal;
using vmap::quoted;
using vmap::runtime;

// The function the spec names: arguments in (each level's batch dim to the front, in level
// order), the batched body, outputs out (each level's batch dim to its out_dim).
class Entry {
 public:
  Entry(const std::string& name, const ir::Function& fn, const std::vector<VmapLevel>& levels,
        const BatchingAnalysis& analysis, Reporter& reporter)
      : name_(name), fn_(fn), levels_(levels), an_(analysis), reporter_(reporter),
        nlevels_(static_cast<int>(levels.size())) {}

  std::unique_ptr<ir::Function> make(const std::string& body_name) {
    out_ = ir::derived_function(fn_);
    out_->name = name_;
    for (int id : fn_.params) {
      const ir::Var& v = fn_.var(id);
      const int p = ir::add_var(*out_, v.name, v.type, v.cxx_type);
      out_->vars[static_cast<size_t>(p)].param_index = v.param_index;
      out_->vars[static_cast<size_t>(p)].decl = v.decl;  // its default argument is kept (ir::declaration)
      out_->params.push_back(p);
    }
    arguments_in();
    batch_sizes();
    wanted_outputs();
    int chunk_level = -1;
    for (int k = 0; k < nlevels_ && chunk_level < 0; ++k)
      if (levels_[static_cast<size_t>(k)].chunk_size) chunk_level = k;
    std::vector<ExprPtr> outs = chunk_level < 0 ? whole(body_name) : chunked(body_name, chunk_level);
    returns(std::move(outs));
    return std::move(out_);
  }

 private:
  ExprPtr ref(int id) const { return ir::var_ref(*out_, id); }
  int local(const std::string& name, const std::string& cxx_type, ir::Type type = ir::Type::Tensor) {
    return ir::add_var(*out_, name, type, cxx_type);
  }
  void add(StmtPtr s, const std::string& note = "") {
    s->comment = note;
    out_->body.push_back(std::move(s));
  }
  const spec::Dim& in_dim(int k, size_t i) const { return levels_[static_cast<size_t>(k)].in_dims[i]; }

  void arguments_in() {
    for (size_t i = 0; i < fn_.params.size(); ++i) {
      int current = out_->params[i];
      Levels lv = 0;
      for (int k = 0; k < nlevels_; ++k) {
        const spec::Dim dim = in_dim(k, i);
        if (!dim) continue;
        const std::string& pname = fn_.var(fn_.params[i]).name;
        ExprPtr moved = runtime("vmap::move_in", exprs(ref(current), literal(*dim), literal(nbatch(lv)), quoted(name_),
                                                       quoted(pname)));
        if (current == out_->params[i]) {
          const bool list = fn_.var(fn_.params[i]).type == ir::Type::TensorList;
          current = list ? local(pname + "_in__", "std::vector<fg::Tensor>", ir::Type::TensorList)
                         : local(pname + "_in__", "fg::Tensor");
          add(ir::decl(current, std::move(moved)), "in_dims level " + std::to_string(k));
        } else {
          add(ir::assign(current, std::move(moved)), "in_dims level " + std::to_string(k));
        }
        lv |= 1u << k;
      }
      args_.push_back(current);
      arg_levels_.push_back(lv);
    }
  }

  void batch_sizes() {
    for (int k = 0; k < nlevels_; ++k) {
      std::vector<ExprPtr> mapped;
      for (size_t i = 0; i < fn_.params.size(); ++i) {
        if (!(arg_levels_[i] & (1u << k))) continue;
        const int pos = nbatch(arg_levels_[i] & ((1u << k) - 1));
        const std::string& arg = out_->var(args_[i]).name;
        const bool list = fn_.var(fn_.params[i]).type == ir::Type::TensorList;  // each element is mapped
        ExprPtr item = vmap::text("{\"" + fn_.var(fn_.params[i]).name + "\", " + (list ? "nullptr" : "&" + arg) + ", " +
                                  std::to_string(pos) + (list ? ", &" + arg : "") + "}");
        item->reads = {args_[i]};
        mapped.push_back(std::move(item));
      }
      const int b = local(vmap::batch_name(k), "const int64_t", ir::Type::Int);
      batches_.push_back(b);
      add(ir::decl(b, runtime("vmap::batch_size", exprs(quoted(name_), braced(std::move(mapped))), ir::Type::Int)));
    }
  }

  // Every output gets the batch dims its out_dims ask for; a batched output with out_dims=None is
  // an error at the spec.
  void wanted_outputs() {
    const std::vector<Levels>& got = an_.outputs();
    want_.assign(fn_.outputs, 0);
    std::set<std::pair<int, size_t>> reported;  // once per level and output of the spec
    for (size_t j = 0; j < fn_.outputs; ++j)
      for (int k = 0; k < nlevels_; ++k) {
        const VmapLevel& level = levels_[static_cast<size_t>(k)];
        const size_t output = level.output_of.empty() ? j : level.output_of.at(j);
        if (level.out_dims[j]) want_[j] |= 1u << k;
        else if ((got[j] & (1u << k)) && reported.insert({k, output}).second)
          reporter_.report("spec", out_dims_location(level, output), batched_out_dims_none(output, fn_.name));
      }
  }

  std::vector<ExprPtr> call_args(std::vector<ExprPtr> tensors) const {
    for (int k = 0; k < nlevels_; ++k) tensors.push_back(ref(batches_[static_cast<size_t>(k)]));
    return tensors;
  }

  // The outputs of a call of the body (a value of `result`), at the levels they are wanted.
  std::vector<ExprPtr> outputs_of(int result) const {
    std::vector<ExprPtr> outs;
    const bool tuple = fn_.return_type == ir::Type::TensorTuple;
    for (size_t j = 0; j < fn_.outputs; ++j) {
      ExprPtr o = ref(result);
      if (tuple) o = ir::get(std::move(o), static_cast<int>(j));
      const Levels have = an_.outputs()[j];
      if (have != want_[j]) {
        std::vector<ExprPtr> sizes;
        for (int k = 0; k < nlevels_; ++k)
          if (want_[j] & (1u << k)) sizes.push_back(ref(batches_[static_cast<size_t>(k)]));
        o = runtime("vmap::materialize", exprs(std::move(o), vmap::mask(have), vmap::mask(want_[j]), braced(std::move(sizes))));
      }
      outs.push_back(std::move(o));
    }
    return outs;
  }

  std::vector<ExprPtr> whole(const std::string& body_name) {
    std::vector<ExprPtr> a;
    for (int id : args_) a.push_back(ref(id));
    const int result = local("result__", "const auto", fn_.return_type);
    add(ir::decl(result, vmap::call_named(body_name, call_args(std::move(a)), fn_.return_type)));
    return outputs_of(result);
  }

  // chunk_size: the outermost level that asks for it runs its batch in chunks. Outputs batched at
  // that level are concatenated along its dim; the others are the same in every chunk and are
  // kept as the chunks compute them.
  std::vector<ExprPtr> chunked(const std::string& body_name, int k);

  // Innermost level first: the outer batch dims stay in front while it moves.
  void returns(std::vector<ExprPtr> outs) {
    std::vector<ExprPtr> finals;
    for (size_t j = 0; j < fn_.outputs; ++j) {
      ExprPtr o = std::move(outs[j]);
      for (int k = nlevels_ - 1; k >= 0; --k) {
        const spec::Dim& d = levels_[static_cast<size_t>(k)].out_dims[j];
        if (!d) continue;
        o = runtime("vmap::move_out", exprs(std::move(o), literal(nbatch(want_[j] & ((1u << k) - 1))), literal(*d), quoted(name_)));
      }
      finals.push_back(std::move(o));
    }
    add(ir::ret(fn_.return_type == ir::Type::TensorTuple ? ir::tuple(std::move(finals)) : std::move(finals[0])));
  }

  const std::string& name_;
  const ir::Function& fn_;
  const std::vector<VmapLevel>& levels_;
  const BatchingAnalysis& an_;
  Reporter& reporter_;
  const int nlevels_;
  std::unique_ptr<ir::Function> out_;
  std::vector<int> args_;  // each parameter with its batch dims in front
  std::vector<Levels> arg_levels_;
  std::vector<int> batches_;  // the batch size of each level
  std::vector<Levels> want_;  // each output's levels
};

std::vector<ExprPtr> Entry::chunked(const std::string& body_name, int k) {
  const Levels bit = 1u << k;
  const VmapLevel& level = levels_[static_cast<size_t>(k)];
  // Vectors of tensors (read at run-time indices, or their gradients) are not sliced or concatenated
  // per chunk yet.
  const ir::Expr* returned = !fn_.body.empty() && fn_.body.back()->kind == ir::StmtKind::Return ? fn_.body.back()->expr.get() : nullptr;
  bool list_output = fn_.return_type == ir::Type::TensorList;
  if (returned != nullptr && returned->kind == ir::ExprKind::Tuple)
    for (const auto& a : returned->args) list_output |= a->type == ir::Type::TensorList;
  std::string mapped_list;
  for (size_t i = 0; i < fn_.params.size(); ++i)
    if ((arg_levels_[i] & bit) && fn_.var(fn_.params[i]).type == ir::Type::TensorList) mapped_list = fn_.var(fn_.params[i]).name;
  if (list_output || !mapped_list.empty()) {
    const std::string what = mapped_list.empty()
                                 ? "of a function that returns a vector of tensors (the gradient of a vector read at "
                                   "run-time indices)"
                                 : "mapping the vector '" + mapped_list + "', which '" + fn_.name +
                                       "' reads at run-time indices,";
    reporter_.report("unsupported", level.where->at(level.transform->offset),
                     "vmap with chunk_size " + what + " cannot be generated yet; leave out chunk_size");
    std::vector<ExprPtr> none;  // nothing is generated for a spec with an error
    for (size_t j = 0; j < fn_.outputs; ++j) none.push_back(ir::opaque("{}", ir::Type::Tensor));
    return none;
  }
  const int chunk = local("chunk__", "const std::vector<fg::Tensor>&", ir::Type::TensorList);
  std::vector<ExprPtr> pairs, positions, inner_args;
  std::string first_mapped;
  for (size_t i = 0, t = 0; i < fn_.params.size(); ++i) {
    if (fn_.var(fn_.params[i]).type != ir::Type::Tensor) {
      inner_args.push_back(ref(args_[i]));
      continue;
    }
    const bool mapped = arg_levels_[i] & bit;
    const int pos = nbatch(arg_levels_[i] & (bit - 1));  // the level's dim in the argument
    pairs.push_back(braced(exprs(ref(args_[i]), literal(mapped ? pos : -1))));
    const std::string slice = "chunk__[" + std::to_string(t++) + "]";
    if (mapped && first_mapped.empty()) first_mapped = slice + ".size(" + std::to_string(pos) + ")";
    inner_args.push_back(vmap::text(slice, ir::Type::Tensor));
    inner_args.back()->reads = {chunk};
  }
  add(vmap::comment("chunk_size=" + std::to_string(*level.chunk_size) + ": level " + std::to_string(k) + " runs in chunks"));
  std::vector<int> slot(fn_.outputs, -1), kept(fn_.outputs, -1);
  for (size_t j = 0; j < fn_.outputs; ++j) {
    if (want_[j] & bit) {
      slot[j] = static_cast<int>(positions.size());
      positions.push_back(literal(nbatch(want_[j] & (bit - 1))));
    } else {
      kept[j] = local("output" + std::to_string(j) + "__", "fg::Tensor");
      add(ir::decl(kept[j], nullptr), "not batched at level " + std::to_string(k));
    }
  }
  const bool same = level.randomness == spec::Randomness::Same;
  if (same) {
    add(vmap::comment("randomness='same': every chunk draws the values the first one draws, as torch.func does"));
    add(ir::decl(local("rng_seed__", "const uint64_t", ir::Type::Int), vmap::text("fg::default_generator().seed()", ir::Type::Int)));
    add(ir::decl(local("rng_offset__", "const uint64_t", ir::Type::Int), vmap::text("fg::default_generator().offset()", ir::Type::Int)));
  }
  // The chunk's body: its own batch size of level k, the body on the slices.
  std::vector<StmtPtr> body;
  if (same) {
    body.push_back(ir::eval(vmap::text("fg::default_generator().manual_seed(rng_seed__)")));
    body.push_back(ir::eval(vmap::text("fg::default_generator().reserve_blocks(rng_offset__)")));
  }
  const int outer_batch = batches_[static_cast<size_t>(k)];
  const int size = local(vmap::batch_name(k), "const int64_t", ir::Type::Int);
  body.push_back(ir::decl(size, vmap::text(first_mapped, ir::Type::Int)));
  body.back()->comment = "the size of this chunk";
  batches_[static_cast<size_t>(k)] = size;
  const int part = local("part__", "const auto", fn_.return_type);
  body.push_back(ir::decl(part, vmap::call_named(body_name, call_args(std::move(inner_args)), fn_.return_type)));
  std::vector<ExprPtr> chunk_outs = outputs_of(part), concatenated;
  batches_[static_cast<size_t>(k)] = outer_batch;
  for (size_t j = 0; j < fn_.outputs; ++j) {
    if (slot[j] >= 0) concatenated.push_back(std::move(chunk_outs[j]));
    else body.push_back(ir::assign(kept[j], std::move(chunk_outs[j])));
  }
  body.push_back(ir::ret(braced(std::move(concatenated), ir::Type::TensorList)));
  const int result = local("result__", "const std::vector<fg::Tensor>", ir::Type::TensorList);
  add(ir::decl(result, runtime("vmap::chunked",
                               exprs(literal(*level.chunk_size), ref(outer_batch), braced(std::move(pairs)),
                                     braced(std::move(positions)),
                                     vmap::lambda("[&](const std::vector<fg::Tensor>& chunk__) -> std::vector<fg::Tensor>",
                                                  std::move(body), false, ir::Type::TensorList)),
                               ir::Type::TensorList)));
  std::vector<ExprPtr> outs;
  for (size_t j = 0; j < fn_.outputs; ++j) outs.push_back(slot[j] >= 0 ? vmap::subscript(ref(result), slot[j]) : ref(kept[j]));
  return outs;
}

std::vector<Levels> param_levels(const ir::Function& fn, const std::vector<VmapLevel>& levels) {
  std::vector<Levels> out;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    Levels l = 0;
    for (size_t k = 0; k < levels.size(); ++k)
      if (levels[k].in_dims[i]) l |= 1u << k;
    out.push_back(l);
  }
  return out;
}

}  // namespace

ir::Program emit_vmap(const std::string& name, const ir::Function& fn, const std::vector<VmapLevel>& levels,
                      const BatchingAnalysis& analysis, Reporter& reporter, const std::string& what) {
  ir::Program program;
  vmap::Context ctx;
  ctx.spec_name = name;
  ctx.nlevels = static_cast<int>(levels.size());
  ctx.reporter = &reporter;
  ctx.program = &program;
  // The body on physical (batch-dims-in-front) values.
  const std::string body_name = name + "__batched_body";
  vmap::Batcher body(analysis, ctx, param_levels(fn, levels), false);
  std::unique_ptr<ir::Function> batched = body.run(body_name);
  program.helpers.push_back({std::move(batched),
                             (what.empty() ? fn.name : what) + " on batched values: one batch dim per vmap level in front.",
                             true});
  program.entry = {Entry(name, fn, levels, analysis, reporter).make(body_name), "", false};
  return program;
}

ir::Program emit_plain(const ir::Function& fn, const std::string& name, const BatchingAnalysis& analysis,
                       Reporter& reporter) {
  ir::Program program;
  vmap::Context ctx;
  ctx.spec_name = name;
  ctx.reporter = &reporter;
  ctx.program = &program;
  vmap::Batcher body(analysis, ctx, std::vector<Levels>(fn.params.size(), 0), false);
  program.entry = {body.run(name), "", false};
  return program;
}

}  // namespace funcgen
