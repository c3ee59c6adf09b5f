#include "pipeline/pipeline.h"

#include <algorithm>
#include <cctype>
#include <functional>

#include "analyses/batching.h"
#include "checks/checks.h"
#include "emitter/printer.h"
#include "ir/build.h"
#include "ir/cxx_text.h"
#include "pipeline/callees.h"
#include "transforms/ad/ad_transforms.h"
#include "transforms/fuse.h"
#include "transforms/simplify.h"
#include "transforms/structures.h"

namespace funcgen {

namespace {

bool is_flat_return(const ir::Function& fn) {
  if (fn.body.empty() || fn.body.back()->kind != ir::StmtKind::Return) return false;
  const ir::Expr& e = *fn.body.back()->expr;
  if (e.kind != ir::ExprKind::Tuple) return true;
  for (const auto& a : e.args)
    if (a->kind == ir::ExprKind::Tuple) return false;
  return true;
}

// Whether the spec returns a function object (vjp, linearize).
bool callable(const std::vector<SpecLink>& chain) {
  return chain.front().t->kind == spec::TransformKind::Vjp || chain.front().t->kind == spec::TransformKind::Linearize;
}

// A printed function made static (after the comment lines before it).
std::string as_static(const std::string& definition) {
  size_t at = 0;
  while (definition.compare(at, 2, "//") == 0) at = definition.find('\n', at) + 1;
  return definition.substr(0, at) + "static " + definition.substr(at);
}

bool differentiates(spec::TransformKind k) {
  return k == spec::TransformKind::Grad || k == spec::TransformKind::GradAndValue || k == spec::TransformKind::Jacrev ||
         k == spec::TransformKind::Jacfwd || k == spec::TransformKind::Hessian;
}

// Whether a vmap's in_dims map a tensor parameter of `fn` (the flat function, over whose
// parameters a tuple of in_dims was spread).
bool maps_a_tensor(const spec::Transform& t, const ir::Function& fn) {
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const spec::Dim d = t.in_dims.per_item ? (i < t.in_dims.dims.size() ? t.in_dims.dims[i] : spec::Dim()) : t.in_dims.dims.at(0);
    if (d.has_value() && ir::is_tensor_like(fn.var(fn.params[i]).type)) return true;
  }
  return false;
}

// Why a case of a specialization on optionals cannot run: a transform of the (flat) chain selects
// no tensor, where the spec as written selects some (empty if each selects some). A spec that
// selects none in any case is reported where it is generated.
std::string absent_only(const AnnotatedSpec& spec, const std::vector<SpecLink>& chain,
                        const std::vector<SpecLink>& written, const ir::Function& fn) {
  bool outer = true;  // the vmaps around everything else map fn's parameters
  for (size_t k = 0; k < chain.size() && k < written.size(); ++k) {
    const spec::Transform& t = *chain[k].t;
    const spec::DimsOption& w = written[k].t->in_dims;
    outer = outer && t.kind == spec::TransformKind::Vmap;
    const bool maps_none = outer && !maps_a_tensor(t, fn) &&
                           std::any_of(w.dims.begin(), w.dims.end(), [](const spec::Dim& d) { return d.has_value(); });
    if ((differentiates(t.kind) && t.argnums.argnums.empty()) || maps_none)
      return spec.name + ": " + spec::name_of(t.kind) + (maps_none ? " maps" : " with respect to") +
             " only arguments that hold no tensor (std::optional without a value)";
  }
  return "";
}

std::string chain_text(const std::vector<SpecLink>& chain, size_t from) {
  std::string s, close;
  for (size_t k = from; k < chain.size(); ++k) {
    if (chain[k].t->kind == spec::TransformKind::Function) {
      s += chain[k].t->function;
      break;
    }
    s += std::string(spec::name_of(chain[k].t->kind)) + "(";
    close += ")";
  }
  return s + close;
}

}  // namespace

// The names generated code passes to the runtime for its errors are the spec's, as the user wrote
// it, not those of the functions funcgen makes of it ("<spec>__flat", "<spec>__with_b", "<spec>__jvp0").
static std::string with_user_names(std::string text, const std::string& spec) {
  const std::string open = "\"" + spec + "__";
  for (size_t at = 0; (at = text.find(open, at)) != std::string::npos; ++at) {
    size_t end = at + open.size();
    while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) != 0 || text[end] == '_')) ++end;
    if (end < text.size() && text[end] == '"') text.replace(at, end + 1 - at, "\"" + spec + "\"");
  }
  return text;
}

std::optional<OutputFunction> Pipeline::generate(const AnnotatedSpec& spec) {
  std::optional<OutputFunction> out = generate_named(spec);
  if (out) {
    out->helpers = with_user_names(std::move(out->helpers), spec.name);
    out->definition = with_user_names(std::move(out->definition), spec.name);
  }
  return out;
}

std::optional<OutputFunction> Pipeline::generate_named(const AnnotatedSpec& spec) {
  const clang::FunctionDecl& decl = spec.function->getDefinition() != nullptr ? *spec.function->getDefinition() : *spec.function;
  const std::vector<std::string> optionals = structures::optional_paths(decl, context_);
  if (!optionals.empty()) return specialized(spec, decl, optionals);
  std::optional<Transformed> t = transform(spec, spec.name);
  if (!t) return std::nullopt;
  const ir::Function& fn = *t->fn;
  const GeneratedFunction& g = *t->g;
  if (!t->flat) {
    structures::HeaderNeeds needs = structures::header_needs(*fn.decl, context_);
    if (!needs.problem.empty()) {
      reporter_.report("unsupported", spec.spec_locations.at(spec.transform->offset), needs.problem);
      return std::nullopt;
    }
    return OutputFunction{fn.namespaces, g.declaration, g.helpers, g.definition, std::move(needs.lines)};
  }
  const structures::Flat& flat = *t->flat;
  const structures::Wrapper w = structures::wrapper(spec.name, flat);
  if (callable(flat.chain))  // the structured function object holds the flat one: the header declares both
    return OutputFunction{fn.namespaces, g.declaration + "\n" + w.declaration, g.helpers + g.definition + "\n",
                          w.definition, flat.user.header_lines};
  // The flat function is an overload that only the structured one calls.
  return OutputFunction{fn.namespaces, w.declaration, g.helpers + as_static(g.definition) + "\n", w.definition,
                        flat.user.header_lines};
}

// A function that takes std::optional tensors is specialized on which of them hold one, as JAX
// traces a function once per pytree structure: each combination is lowered with `if (b)` known,
// transformed into a flat function of its own, and the function the user calls picks one.
std::optional<OutputFunction> Pipeline::specialized(const AnnotatedSpec& spec, const clang::FunctionDecl& decl,
                                                    const std::vector<std::string>& optionals) {
  constexpr size_t kMaxOptionals = 4;
  const clang::SourceLocation at = spec.spec_locations.at(spec.transform->offset);
  if (optionals.size() > kMaxOptionals) {
    reporter_.report("unsupported", at,
                     "'" + decl.getNameAsString() + "' takes " + std::to_string(optionals.size()) +
                         " std::optional tensors; funcgen specializes a function once for each combination of those "
                         "that hold one, for at most " + std::to_string(kMaxOptionals) + " of them; pass fewer as optionals");
    return std::nullopt;
  }
  std::vector<structures::Specialization> cases;
  std::string helpers, declarations;
  std::vector<std::string> namespaces;
  for (size_t mask = 0; mask < (size_t{1} << optionals.size()); ++mask) {  // bit k: optional k holds a tensor
    Presence presence{&decl, {}};
    std::string name = spec.name;
    for (size_t k = 0; k < optionals.size(); ++k) {
      const bool present = (mask >> k) & 1;
      if (!present) presence.absent.insert(optionals[k]);
      name += (present ? "__with_" : "__without_") + cxx::identifier_of(optionals[k]);
    }
    Lowering lowering(context_, reporter_, presence);
    Pipeline one(context_, reporter_, lowering, resolver_, specs_);
    std::optional<Transformed> t = one.transform(spec, name);
    if (!t) return std::nullopt;
    namespaces = t->fn->namespaces;  // (the function lives as long as this case's lowering)
    structures::Specialization c{*t->flat, name, t->error};
    // A vjp's or linearize's function object holds the case's: the header declares them all.
    if (c.error.empty() && callable(c.flat.chain)) {
      declarations += t->g->declaration + "\n";
      helpers += t->g->helpers + t->g->definition + "\n";
    } else if (c.error.empty()) {
      helpers += t->g->helpers + as_static(t->g->definition) + "\n";
    }
    cases.push_back(std::move(c));
  }
  const structures::Wrapper w = structures::specialized_wrapper(spec.name, cases);
  std::vector<std::string> header = cases[0].flat.user.header_lines;
  if (!declarations.empty()) header.push_back("#include <variant>");
  return OutputFunction{namespaces, declarations + w.declaration, helpers, w.definition, std::move(header)};
}

// Lowers the spec's function, spreads its structures and runs its transforms, naming the result `name`.
std::optional<Pipeline::Transformed> Pipeline::transform(const AnnotatedSpec& spec, const std::string& name) {
  const unsigned errors_before = reporter_.errors();
  const ir::Function* fn = lowering_.lower(spec.function);
  module_.add(spec.function, {}, fn);
  if (fn == nullptr) return std::nullopt;
  std::vector<SpecLink> chain = spec_chain(spec, specs_);
  // Structured parameters or results: the transforms run on the flat function.
  std::optional<structures::Flat> flat;
  if (const StructuredSignature& sig = lowering_.signature(spec.function); sig.structured()) {
    const structures::Signature user = structures::user_signature(*fn->decl, sig.params, sig.result, context_);
    if (!user.problem.empty()) {
      reporter_.report("unsupported", spec.spec_locations.at(spec.transform->offset), user.problem);
      return std::nullopt;
    }
    structures::Refusal refusal;
    flat = structures::flatten(chain, user, structures::flat_signature(*fn, user), refusal);
    if (!flat) {
      reporter_.report(refusal.category, refusal.link.where->at(refusal.offset), refusal.message);
      return std::nullopt;
    }
    // Differentiating w.r.t. (or mapping) only optionals that hold no tensor in this case: an error
    // at run time, as torch.func raises when argnums or in_dims select no tensor.
    if (lowering_.presence().fn != nullptr)
      if (std::string error = absent_only(spec, flat->chain, chain, *fn); !error.empty())
        return Transformed{fn, std::move(flat), std::nullopt, std::move(error)};
    chain = flat->chain;
  }
  size_t head = 0;
  while (head < chain.size() && chain[head].t->kind == spec::TransformKind::Vmap) ++head;
  std::optional<GeneratedFunction> g;
  if (head < chain.size() && chain[head].t->kind != spec::TransformKind::Function) {
    if (!function_checks(spec, chain) || !outer_vmap_checks(spec, *fn, chain, head)) return std::nullopt;
    ad::Stages stages;
    stages.vmap = [&](const ir::Function& f, const std::string& n, const std::vector<VmapLevel>& levels,
                      size_t link) { return vmap_stage(spec, f, n, levels, chain_text(chain, link)); };
    stages.plain = [&](const ir::Function& f, const std::string& n, size_t link, std::string& helpers) {
      return plain_stage(spec, f, n, chain_text(chain, link), helpers);
    };
    stages.optimize = optimize_;
    // What goes wrong in code AD made has no place in the source: it is reported at the spec.
    Reporter::Context at_spec(reporter_, spec.location, "");
    AnnotatedSpec named = spec;  // a structured spec's flat function: structures::flat_name
    named.name = flat ? structures::flat_name(name, *flat) : name;
    g = ad::emit_ad_spec(named, chain, module_, reporter_, resolver_, stages);
  } else {
    std::vector<VmapLevel> levels;
    for (size_t k = 0; k < head; ++k) levels.push_back(make_level(*chain[k].t, chain[k].where, *fn));
    g = vmap_stage(spec, *fn, flat ? structures::flat_name(name, *flat) : name, levels, "");
  }
  if (!g || reporter_.errors() != errors_before || too_large(spec, *g)) return std::nullopt;
  return Transformed{fn, std::move(flat), std::move(g), ""};
}

// Nested transforms multiply code; a spec whose code no compiler would take in reasonable time
// is an error at the spec, with its size.
bool Pipeline::too_large(const AnnotatedSpec& spec, const GeneratedFunction& g) {
  constexpr size_t kMaxBytes = 2'000'000;  // about 50,000 lines
  const size_t bytes = g.declaration.size() + g.helpers.size() + g.definition.size();
  if (bytes <= kMaxBytes) return false;
  const size_t lines = static_cast<size_t>(std::count(g.helpers.begin(), g.helpers.end(), '\n') +
                                           std::count(g.definition.begin(), g.definition.end(), '\n'));
  reporter_.report("spec", spec.spec_locations.at(spec.transform->offset),
                   "'" + spec.name + "' would generate " + std::to_string(lines) + " lines of C++ (" +
                       std::to_string(bytes / 1000) + " kB), more than the " + std::to_string(kMaxBytes / 1000) +
                       " kB funcgen generates for one spec; nest fewer transforms (each multiplies the code it is "
                       "given), or differentiate a smaller function");
  return true;
}

namespace {
// The element-wise runs of every function of the program in one pass each (transforms/fuse.h).
void fuse_program(ir::Program& program) {
  for (ir::ProgramFunction& h : program.helpers) fuse_elementwise(*h.fn);
  fuse_elementwise(*program.entry.fn);
}

// `emit(f, analysis of f)` on fn simplified (transforms/simplify.h), after the checks have seen fn
// as written, or on fn itself where simplifying changes nothing or `optimize` is off.
template <typename Emit>
auto on_simplified(const ir::Function& fn, const BatchingAnalysis& analysis, const std::vector<Levels>& params,
                   const std::function<const ir::Module&(const ir::Function&)>& module_of, bool optimize, Emit&& emit) {
  if (std::unique_ptr<ir::Function> simple = optimize ? simplify(fn) : nullptr) {
    const BatchingAnalysis simple_analysis(*simple, params, analysis.vmap(), module_of(*simple));
    return emit(*simple, simple_analysis);
  }
  return emit(fn, analysis);
}
}  // namespace

std::optional<GeneratedFunction> Pipeline::vmap_stage(const AnnotatedSpec& spec, const ir::Function& fn,
                                                      const std::string& name, const std::vector<VmapLevel>& levels,
                                                      const std::string& made_by) {
  if (!is_flat_return(fn)) return nested_vmap_stage(spec, fn, name, levels, made_by);
  std::vector<Levels> params(fn.params.size(), 0);
  const VmapLevels masks = vmap_masks(levels, params);
  for (size_t k = 0; k < levels.size(); ++k) {
    Levels mapped = 0;
    for (Levels p : params) mapped |= p;
    if ((mapped & (1u << k)) == 0) {
      reporter_.report("spec", levels[k].where->at(levels[k].transform->offset),
                       "vmap needs at least one tensor argument with an in_dim that is not None");
      return std::nullopt;
    }
  }
  BatchingAnalysis analysis(fn, params, masks, module_of(fn));
  if (analysis.recursive()) {
    const ir::Expr* call = analysis.recursive_call();
    reporter_.report("unsupported",
                     call != nullptr ? call->range.getBegin() : fn.decl != nullptr ? fn.decl->getLocation() : spec.location,
                     "'" + (call != nullptr ? call->op : fn.name) +
                         "' calls itself (directly or through helpers); " + ir::recursion_advice("vmapped"));
    return std::nullopt;
  }
  const unsigned errors_before = reporter_.errors();
  {
    std::optional<Reporter::Context> in_spec;
    if (!made_by.empty())
      in_spec.emplace(reporter_, spec.location,
                      "'" + spec.name + "' vmaps the code that '" + made_by +
                          "' makes of it here; only values "
                          "batched by that vmap count");
    run_vmap_checks(VmapCheckContext{analysis, levels, spec, reporter_, context_, !made_by.empty()});
  }
  if (reporter_.errors() != errors_before) return std::nullopt;
  const std::string what = made_by.empty() ? "" : "the code that " + made_by + " makes";
  const auto module = [this](const ir::Function& f) -> const ir::Module& { return module_of(f); };
  return on_simplified(fn, analysis, params, module, optimize_, [&](const ir::Function& f, const BatchingAnalysis& a) {
    ir::Program program = emit_vmap(name, f, levels, a, reporter_, what);
    if (optimize_) fuse_program(program);
    return emitter::print_program(program);
  });
}

// grad_and_value's (gradients, value) over a structure's leaves, has_aux's (gradient, aux): the
// function's leaves are returned as one flat tuple, which vmap batches output by output (each with
// the out_dims of the output it is in), and a function of fn's name and type nests them back.
std::optional<GeneratedFunction> Pipeline::nested_vmap_stage(const AnnotatedSpec& spec, const ir::Function& fn,
                                                             const std::string& name,
                                                             const std::vector<VmapLevel>& levels,
                                                             const std::string& made_by) {
  bool one_return = true;  // the last statement only (early returns are not flattened)
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) { one_return &= s.kind != ir::StmtKind::Return || &s == fn.body.back().get(); });
  if (!one_return || fn.body.empty() || fn.body.back()->kind != ir::StmtKind::Return) {
    reporter_.report("unsupported", spec.spec_locations.at(spec.transform->offset),
                     "vmap of a function that returns nested tuples from more than one return cannot be generated yet; "
                     "return once, at the end");
    return std::nullopt;
  }
  auto flat = ir::copy_function(fn);
  ir::ExprPtr value = std::move(flat->body.back()->expr);
  flat->body.pop_back();
  std::vector<ir::ExprPtr> leaves;
  std::vector<size_t> output_of;  // the top-level output each leaf is in
  const std::string got = name + "__leaves";
  // `std::make_tuple(std::get<0>(flat__), ...)`: fn's result from the flat one's, leaf by leaf.
  std::function<std::string(ir::ExprPtr, size_t)> take = [&](ir::ExprPtr e, size_t output) -> std::string {
    if (e->kind != ir::ExprKind::Tuple) {
      leaves.push_back(std::move(e));
      output_of.push_back(output);
      return "std::get<" + std::to_string(leaves.size() - 1) + ">(flat__)";
    }
    std::vector<std::string> items;
    for (auto& a : e->args) items.push_back(take(std::move(a), output));
    return "std::make_tuple(" + cxx::join(items) + ")";
  };
  std::vector<std::string> outputs;
  for (size_t j = 0; j < value->args.size(); ++j) outputs.push_back(take(std::move(value->args[j]), j));
  ir::finish(*flat, ir::tuple(std::move(leaves)));
  std::vector<VmapLevel> flat_levels = levels;
  for (VmapLevel& level : flat_levels) {
    std::vector<spec::Dim> dims;
    for (size_t output : output_of) dims.push_back(level.out_dims.at(std::min(output, level.out_dims.size() - 1)));
    level.out_dims = std::move(dims);
    level.output_of = output_of;
  }
  std::optional<GeneratedFunction> g = vmap_stage(spec, *flat, got, flat_levels, made_by);
  if (!g) return std::nullopt;
  std::vector<std::string> args;
  for (int id : fn.params) args.push_back(fn.var(id).name);
  GeneratedFunction out;
  out.declaration = ir::declaration(fn, name) + ";";
  out.helpers = g->helpers + as_static(g->definition) + "\n";
  out.definition = ir::signature(fn, name) + " {\n  // the outputs of '" + got + "', nested as '" + fn.name +
                   "' returns them\n  const auto flat__ = " + got + "(" + cxx::join(args) + ");\n  return " +
                   fn.return_cxx_type + "{" + cxx::join(outputs) + "};\n}\n";
  return out;
}

std::string Pipeline::plain_stage(const AnnotatedSpec& spec, const ir::Function& fn, const std::string& name,
                                  const std::string& made_by, std::string& helpers) {
  const std::vector<Levels> params(fn.params.size(), 0);
  BatchingAnalysis analysis(fn, params, VmapLevels{}, module_of(fn));
  {
    Reporter::Context in_spec(reporter_, spec.location,
                              "'" + spec.name + "' vmaps the code that '" + made_by +
                                  "' makes of it here; only "
                                  "values batched by that vmap count");
    const std::vector<VmapLevel> none;
    run_vmapped_call_checks(VmapCheckContext{analysis, none, spec, reporter_, context_, true});
  }
  const auto module = [this](const ir::Function& f) -> const ir::Module& { return module_of(f); };
  return on_simplified(fn, analysis, params, module, optimize_, [&](const ir::Function& f, const BatchingAnalysis& a) {
    ir::Program program = emit_plain(f, name, a, reporter_);
    if (optimize_) fuse_program(program);
    for (const auto& h : program.helpers) helpers += emitter::print_function(h) + "\n";
    return emitter::print_body(*program.entry.fn);
  });
}

// vmap(grad(f)), vmap(jvp(f)), vmap(jacrev(f)): the outer vmaps batch f's own code as they
// batch f, and AD turns in-place ops into new values before the vmap stage sees the code it makes,
// so f is checked as those vmaps batch it (the code AD makes is checked by the vmap stage too; a
// construct found twice is reported once). Derivative transforms put f's parameters first.
bool Pipeline::outer_vmap_checks(const AnnotatedSpec& spec, const ir::Function& fn,
                                 const std::vector<SpecLink>& chain, size_t head) {
  if (head == 0) return true;
  std::vector<VmapLevel> levels;
  for (size_t k = 0; k < head; ++k) levels.push_back(make_level(*chain[k].t, chain[k].where, fn));
  std::vector<Levels> params(fn.params.size(), 0);
  const VmapLevels masks = vmap_masks(levels, params);
  if (std::all_of(params.begin(), params.end(), [](Levels l) { return l == 0; })) return true;
  BatchingAnalysis analysis(fn, params, masks, module_of(fn));
  if (analysis.recursive()) return true;  // reported where the function is vmapped
  const unsigned errors_before = reporter_.errors();
  Reporter::Context in_spec(reporter_, spec.location,
                            "'" + spec.name + "' vmaps '" + chain_text(chain, head) + "', which runs this code");
  run_vmap_checks(VmapCheckContext{analysis, levels, spec, reporter_, context_, true});
  return reporter_.errors() == errors_before;
}

const ir::Module& Pipeline::module_of(const ir::Function& fn) {
  lower_callees(fn, lowering_, module_);
  return module_;
}

bool Pipeline::function_checks(const AnnotatedSpec& spec, const std::vector<SpecLink>& chain) {
  const ir::Function* fn = lowering_.lower(spec.function);
  if (fn == nullptr) return false;
  const unsigned errors_before = reporter_.errors();
  BatchingAnalysis analysis(*fn, std::vector<Levels>(fn->params.size(), 0), VmapLevels{}, module_of(*fn));
  const std::vector<VmapLevel> none;
  run_function_checks(VmapCheckContext{analysis, none, spec, reporter_, context_, true});
  RandomnessContext random{{}, spec.function, lowering_, reporter_};
  for (const SpecLink& l : chain) random.chain.emplace_back(l.t, l.where);
  check_randomness_under_derivatives(random);
  return reporter_.errors() == errors_before;
}

}  // namespace funcgen
