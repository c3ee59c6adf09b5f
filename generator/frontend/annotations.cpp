#include "frontend/annotations.h"

#include "frontend/pytree.h"

#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Lex/Lexer.h>

#include <algorithm>
#include <map>

#include "compat/clang_compat.h"
#include "frontend/lower.h"
#include "frontend/spec_names.h"

namespace funcgen {
namespace {

using clang::SourceLocation;

class Collector {
 public:
  Collector(clang::ASTContext& context, const clang::Preprocessor* pp)
      : context_(context), pp_(pp), diags_(context.getDiagnostics()) {
    spec_error_ = diags_.getCustomDiagID(clang::DiagnosticsEngine::Error, "%0 [funcgen-spec]");
    spec_note_ = diags_.getCustomDiagID(clang::DiagnosticsEngine::Note, "%0");
    unsupported_ = diags_.getCustomDiagID(clang::DiagnosticsEngine::Error, "%0 [funcgen-unsupported]");
  }

  void add(const clang::FunctionDecl* fn) {
    defined_[fn->getNameAsString()] = fn;
    std::vector<const clang::AnnotateAttr*> attrs;
    for (const auto* attr : fn->specific_attrs<clang::AnnotateAttr>())
      if (compat::starts_with(compat::annotation_text(*attr), kAnnotationPrefix)) attrs.push_back(attr);
    if (attrs.empty()) return;
    const auto& sm = context_.getSourceManager();
    std::sort(attrs.begin(), attrs.end(), [&](const auto* a, const auto* b) {
      return sm.isBeforeInTranslationUnit(a->getLocation(), b->getLocation());
    });
    const std::optional<spec::FunctionInfo> info = function_info(fn);
    if (!info) return;  // the signature itself was reported
    functions_[info->name] = *info;
    for (const auto* attr : attrs) {
      const std::string text = compat::annotation_text(*attr).substr(sizeof(kAnnotationPrefix) - 1).str();
      const SpecLocations where(sm, context_.getLangOpts(), attr->getLocation());
      try {
        const spec::Annotation annotation = spec::parse(text);
        if (annotation.name.empty()) {
          rule(fn, *info, annotation.value, where);
          continue;
        }
        auto transform = spec::build_transform(annotation.value);
        if (!names_annotated_or_earlier(*transform, fn, where)) continue;
        const std::optional<double> factor = nesting_factor(*transform, where);
        if (!factor) continue;
        const std::optional<int> levels = vmap_levels(*transform, where);
        if (!levels) continue;
        spec::FunctionInfo result = spec::check_transform(*transform, [&](const std::string& name) -> const spec::FunctionInfo* {
          auto it = functions_.find(name);
          return it == functions_.end() ? nullptr : &it->second;
        });
        if (auto problem = name_problem(annotation.name, *transform, fn)) {
          report(where, spec::Diagnostic{annotation.name_offset, *problem, {}, std::nullopt});
          continue;
        }
        for (const std::string& type : generated_types(annotation.name, *transform)) types_[type] = annotation.name;
        factors_[annotation.name] = *factor;
        levels_[annotation.name] = *levels;
        result.name = annotation.name;
        functions_[annotation.name] = result;
        const clang::FunctionDecl* target = resolve(innermost(*transform).function);
        specs_.push_back(AnnotatedSpec{target, annotation.name, std::move(transform), result, where.at(0), where});
      } catch (const spec::ParseError& e) {
        report(where, e.diagnostic());
      }
    }
  }

  std::vector<AnnotatedSpec> take() { return std::move(specs_); }
  std::vector<CustomRule> take_rules() { return std::move(rules_); }

  void misplaced(SourceLocation annotation, SourceLocation decl, const std::string& message) {
    diags_.Report(context_.getSourceManager().getExpansionLoc(annotation), spec_error_) << message;
    diags_.Report(decl, spec_note_) << "the annotation applies to this declaration";
  }

 private:
  // About how many times a transform multiplies the code it is given (measured on the tutorials'
  // functions: reverse mode writes the forward pass and its adjoint, jacrev and jacfwd add the vmap
  // over a basis, hessian is jacfwd(jacrev)).
  static double code_factor(spec::TransformKind kind) {
    switch (kind) {
      case spec::TransformKind::Function:
      case spec::TransformKind::Vmap: return 1;
      case spec::TransformKind::Jvp:
      case spec::TransformKind::Linearize: return 2;
      case spec::TransformKind::Jacfwd: return 3;
      case spec::TransformKind::Hessian: return 16;
      default: return 4;  // grad, grad_and_value, vjp, jacrev
    }
  }

  // How many times the spec multiplies its function's code (through the earlier specs it names),
  // or nothing when that passes the bound: nesting multiplies code, and signatures, geometrically
  // (jvp 50 deep doubles its parameters 50 times, hessian 4 deep ran for minutes), so the bound is
  // checked here, before anything is built, at the transform that passes it. The sizes checked as
  // the transforms run and after printing bound what this misses (a large function).
  std::optional<double> nesting_factor(const spec::Transform& outer, const SpecLocations& where) {
    constexpr double kMaxFactor = 2048;  // grad 5 deep, hessian(hessian(f)) x 8; the tests' deepest: 256
    std::vector<const spec::Transform*> chain;
    for (const spec::Transform* t = &outer; t != nullptr; t = t->inner.get()) chain.push_back(t);
    double factor = 1;
    if (auto it = factors_.find(chain.back()->function); it != factors_.end()) factor = it->second;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      factor *= code_factor((*it)->kind);
      if (factor <= kMaxFactor) continue;
      report(where, spec::Diagnostic{(*it)->offset,
                                     "'" + std::string(spec::name_of((*it)->kind)) +
                                         "' here nests the derivative transforms deeper than funcgen generates for "
                                         "one spec (each multiplies the code it is given: this nesting about " +
                                         std::to_string(static_cast<long long>(std::min(factor, 1e15))) +
                                         " times the function's, more than " +
                                         std::to_string(static_cast<int>(kMaxFactor)) +
                                         "); nest fewer transforms, or differentiate a smaller function",
                                     {}, std::nullopt});
      return std::nullopt;
    }
    return factor;
  }

  // How many vmap levels the spec's code has (through the earlier specs it names), or nothing when
  // that passes what generated code can tell apart: a value's levels are a 32-bit mask, one bit per
  // vmap, and jacrev, jacfwd and hessian vmap their basis (hessian twice).
  std::optional<int> vmap_levels(const spec::Transform& outer, const SpecLocations& where) {
    constexpr int kMaxLevels = 32;
    std::vector<const spec::Transform*> chain;
    for (const spec::Transform* t = &outer; t != nullptr; t = t->inner.get()) chain.push_back(t);
    int levels = 0;
    if (auto it = levels_.find(chain.back()->function); it != levels_.end()) levels = it->second;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const spec::TransformKind kind = (*it)->kind;
      levels += kind == spec::TransformKind::Hessian ? 2
                : kind == spec::TransformKind::Vmap || kind == spec::TransformKind::Jacrev ||
                        kind == spec::TransformKind::Jacfwd
                    ? 1
                    : 0;
      if (levels <= kMaxLevels) continue;
      report(where, spec::Diagnostic{(*it)->offset,
                                     "'" + std::string(spec::name_of(kind)) + "' here makes " + std::to_string(levels) +
                                         " nested vmap levels (each vmap is one, jacrev and jacfwd vmap their basis, "
                                         "hessian twice), more than the " + std::to_string(kMaxLevels) +
                                         " funcgen generates; nest fewer transforms",
                                     {}, std::nullopt});
      return std::nullopt;
    }
    return levels;
  }

  // The types a spec declares beside its function, named after it: vjp's pullback, linearize's
  // jvp_fn (README: `g_pullback`).
  static std::vector<std::string> generated_types(const std::string& name, const spec::Transform& t) {
    if (t.kind == spec::TransformKind::Vjp) return {name + "_pullback"};
    if (t.kind == spec::TransformKind::Linearize) return {name + "_jvp_fn"};
    return {};
  }

  // Why the spec cannot be named `name`: the name, or a type it declares, is taken by an earlier
  // spec (its function or one of its types), by the annotated functions, or for C++
  // (generated_name_problem).
  std::optional<std::string> name_problem(const std::string& name, const spec::Transform& t,
                                          const clang::FunctionDecl* fn) const {
    const std::string pick = "; give the generated function another name";
    if (functions_.count(name) != 0) return "the name '" + name + "' is already defined" + pick;
    if (auto it = types_.find(name); it != types_.end())
      return "the name '" + name + "' is the type that the spec '" + it->second + "' generates" + pick;
    if (auto problem = generated_name_problem(name, fn, pp_)) return problem;
    for (const std::string& type : generated_types(name, t)) {
      const std::string mine = "'" + name + "' would also declare the type '" + type + "', ";
      if (functions_.count(type) != 0 || types_.count(type) != 0) return mine + "which is already defined" + pick;
      if (auto problem = generated_name_problem(type, fn, pp_))
        return mine + "and " + problem->substr(0, problem->find(';')) + pick;
    }
    return std::nullopt;
  }

  // `custom_vjp(f)` / `custom_jvp(f)` before `fn`: checks fn's signature against f's.
  void rule(const clang::FunctionDecl* fn, const spec::FunctionInfo& info, const spec::Value& call,
            const SpecLocations& where) {
    const bool vjp = call.text == "custom_vjp";
    if (call.items.size() != 1 || call.items[0].kind != spec::Value::Kind::Name || !call.kwargs.empty()) {
      report(where, spec::Diagnostic{call.offset, call.text + " takes the name of the function the rule is for: '" +
                                                      call.text + "(f)'", {}, std::nullopt});
      return;
    }
    const spec::Value& name = call.items[0];
    auto primal = defined_.find(name.text);
    if (primal == defined_.end() || primal->second == fn) {
      report(where, spec::Diagnostic{name.offset, "unknown function '" + name.text +
                                                      "'; a rule names a function defined earlier in this file",
                                     {}, std::nullopt});
      return;
    }
    const std::optional<spec::FunctionInfo> f = function_info(primal->second);
    if (!f) return;
    std::vector<spec::Param> want = f->params;
    std::vector<std::string> tensor_names;
    for (const auto& p : f->params)
      if (p.is_tensor) tensor_names.push_back(p.name);
    std::string shape;
    if (vjp) {
      want.push_back({"result", true, "fg::Tensor"});
      want.push_back({"grad", true, "fg::Tensor"});
      shape = "(" + name.text + "'s parameters, result, grad) and return the gradient of " +
              (tensor_names.size() == 1 ? "'" + tensor_names[0] + "' (fg::Tensor)"
                                        : "each tensor parameter (std::tuple of " + std::to_string(tensor_names.size()) +
                                              " fg::Tensor)");
    } else {
      for (const auto& t : tensor_names) want.push_back({t + "_tangent", true, "fg::Tensor"});
      shape = "(" + name.text + "'s parameters, then one tangent per tensor parameter) and return the result's "
              "tangent (fg::Tensor)";
    }
    bool ok = f->outputs == 1 && !f->returns_tuple;
    if (!ok) {
      report(where, spec::Diagnostic{name.offset, call.text + " rules are for functions that return one fg::Tensor; '" +
                                                      name.text + "' returns " + std::to_string(f->outputs),
                                     {}, std::nullopt});
      return;
    }
    ok = info.params.size() == want.size();
    for (size_t i = 0; ok && i < want.size(); ++i) ok = info.params[i].is_tensor == want[i].is_tensor;
    const size_t outputs = vjp ? tensor_names.size() : 1;
    ok = ok && info.outputs == outputs && info.returns_tuple == (outputs > 1);
    if (!ok) {
      report(where, spec::Diagnostic{call.offset, "the " + call.text + " rule '" + info.name + "' of '" + name.text +
                                                      "' must take " + shape,
                                     {}, std::nullopt});
      return;
    }
    for (const auto& r : rules_)
      if (r.primal == primal->second && r.vjp == vjp) {
        report(where, spec::Diagnostic{call.offset, "'" + name.text + "' already has a " + call.text + " rule ('" +
                                                        r.rule->getNameAsString() + "')",
                                       {}, std::nullopt});
        return;
      }
    rules_.push_back(CustomRule{vjp, primal->second, fn});
  }

  static const spec::Transform& innermost(const spec::Transform& t) {
    return t.kind == spec::TransformKind::Function ? t : innermost(*t.inner);
  }

  // The innermost name is the function the FUNCGEN stands before or an earlier spec (API.md);
  // another function of the file would make the spec say one function and generate another.
  bool names_annotated_or_earlier(const spec::Transform& t, const clang::FunctionDecl* fn, const SpecLocations& where) {
    const spec::Transform& f = innermost(t);
    if (f.function == fn->getNameAsString() || defined_.count(f.function) == 0) return true;
    for (const AnnotatedSpec& s : specs_)
      if (s.name == f.function) return true;
    report(where, spec::Diagnostic{f.offset, "'" + f.function + "' is another function; this FUNCGEN stands before '" +
                                                 fn->getNameAsString() + "', so name '" + fn->getNameAsString() +
                                                 "' or move the FUNCGEN before '" + f.function + "'",
                                   {}, std::nullopt});
    return false;
  }

  // The user function a spec's innermost name stands for: an earlier spec's function, or a
  // function defined so far (check_transform has made sure that the name is one of them).
  const clang::FunctionDecl* resolve(const std::string& name) const {
    for (const AnnotatedSpec& s : specs_)
      if (s.name == name) return s.function;
    return defined_.at(name);
  }

  void report(const SpecLocations& where, const spec::Diagnostic& d) {
    {  // the error is emitted when its builder goes out of scope, before the notes
      auto builder = diags_.Report(where.at(d.offset), spec_error_);
      builder << d.message;
      if (d.fixit) {
        const SourceLocation begin = where.at(d.fixit->offset);
        const SourceLocation end = where.at(d.fixit->offset + d.fixit->length);
        builder << clang::FixItHint::CreateReplacement(clang::CharSourceRange::getCharRange(begin, end),
                                                       d.fixit->text);
      }
    }
    for (const auto& [offset, text] : d.notes) diags_.Report(where.at(offset), spec_note_) << text;
  }

  std::optional<spec::FunctionInfo> function_info(const clang::FunctionDecl* fn) {
    spec::FunctionInfo info;
    info.name = fn->getNameAsString();
    bool ok = true;
    // A member function's object is its first argument (the lowering reports the classes it cannot take).
    if (const auto* method = llvm::dyn_cast<clang::CXXMethodDecl>(fn); method != nullptr && !method->isStatic())
      info.params.push_back({"self", true, cxx_spelling(method->getThisType()->getPointeeType().getUnqualifiedType(), context_), true});
    for (const clang::ParmVarDecl* p : fn->parameters()) {
      const clang::QualType t = p->getType();
      std::string why;
      const std::optional<pytree::Tree> tree = pytree::parameter_tree_of(t, context_, &why);
      if (is_fg_tensor(t)) {
        info.params.push_back({p->getNameAsString(), true, "fg::Tensor"});
      } else if (tree) {  // a structure of tensors: transformed leaf by leaf (frontend/pytree.h)
        info.params.push_back({p->getNameAsString(), true, cxx_spelling(t.getNonReferenceType().getUnqualifiedType(), context_), true});
      } else if (!why.empty()) {
        diags_.Report(p->getLocation(), unsupported_) << ("parameter '" + p->getNameAsString() + "' cannot be transformed: " + why);
        ok = false;
      } else if (!holds_tensors(t)) {
        // Any other type is passed through untouched (torch.func takes any object with in_dims None);
        // one that holds tensors would leave them unbatched and undifferentiated, silently.
        info.params.push_back({p->getNameAsString(), false, cxx_spelling(t.getNonReferenceType().getUnqualifiedType(), context_)});
      } else {
        diags_.Report(p->getLocation(), unsupported_)
            << ("parameter '" + p->getNameAsString() + "' of type '" + cxx_spelling(t.getNonReferenceType().getUnqualifiedType(), context_) +
                "' holds tensors, which cannot be transformed yet; pass each tensor as a parameter of its own");
        ok = false;
      }
    }
    const clang::QualType ret = fn->getReturnType();
    std::string why;
    const std::optional<pytree::Tree> result = pytree::tree_of(ret, context_, &why);
    if (is_fg_tensor(ret)) {
      info.outputs = 1;
    } else if (result) {  // a structure: its top-level values are the outputs
      info.returns_tuple = result->kind == pytree::Tree::Kind::Tuple;
      info.outputs = info.returns_tuple ? result->children.size() : 1;
    } else if (const auto* spec = llvm::dyn_cast_or_null<clang::ClassTemplateSpecializationDecl>(
                   ret.getCanonicalType()->getAsCXXRecordDecl());
               spec != nullptr && spec->getQualifiedNameAsString() == "std::tuple") {
      info.outputs = spec->getTemplateArgs()[0].pack_size();
      info.returns_tuple = true;
    } else {
      diags_.Report(fn->getReturnTypeSourceRange().getBegin(), unsupported_)
          << ("return type '" + cxx_spelling(ret.getNonReferenceType().getUnqualifiedType(), context_) + "' of '" + info.name +
              "' cannot be transformed; return fg::Tensor or std::tuple of them");
      ok = false;
    }
    if (!ok) return std::nullopt;
    return info;
  }

  clang::ASTContext& context_;
  const clang::Preprocessor* pp_;
  std::map<std::string, std::string> types_;  // the types specs declare -> the spec
  std::map<std::string, double> factors_;     // a spec -> how many times it multiplies its function's code
  std::map<std::string, int> levels_;         // a spec -> the vmap levels of its code
  clang::DiagnosticsEngine& diags_;
  unsigned spec_error_, spec_note_, unsupported_;
  std::map<std::string, spec::FunctionInfo> functions_;
  std::vector<AnnotatedSpec> specs_;
  std::vector<CustomRule> rules_;
  std::map<std::string, const clang::FunctionDecl*> defined_;  // functions defined so far, by name
};

class Visitor : public clang::RecursiveASTVisitor<Visitor> {
 public:
  Visitor(clang::ASTContext& context, Collector& collector) : context_(context), collector_(collector) {}
  bool VisitFunctionDecl(clang::FunctionDecl* fn) {
    if (fn->doesThisDeclarationHaveABody() && context_.getSourceManager().isInMainFile(fn->getLocation()))
      collector_.add(fn);
    return true;
  }
  // A FUNCGEN that does not stand before a function definition would generate nothing, silently.
  bool VisitDecl(clang::Decl* d) {
    if (!context_.getSourceManager().isInMainFile(d->getLocation())) return true;
    const auto* fn = llvm::dyn_cast<clang::FunctionDecl>(d);
    if (fn != nullptr && fn->doesThisDeclarationHaveABody()) return true;
    for (const auto* attr : d->specific_attrs<clang::AnnotateAttr>()) {
      if (!compat::starts_with(compat::annotation_text(*attr), kAnnotationPrefix)) continue;
      collector_.misplaced(attr->getLocation(), d->getLocation(),
                           fn != nullptr ? "FUNCGEN stands before a declaration of '" + fn->getNameAsString() +
                                               "' without a body; put it before the function's definition"
                                         : "FUNCGEN must stand right before a function definition, not before this "
                                           "declaration");
    }
    return true;
  }

 private:
  clang::ASTContext& context_;
  Collector& collector_;
};

}  // namespace

SpecLocations::SpecLocations(const clang::SourceManager& sm, const clang::LangOptions& lang, SourceLocation attr_loc)
  : fallback_(sm.getExpansionLoc(attr_loc)) {
  const SourceLocation start = fallback_;
  const clang::FileID file = sm.getFileID(start);
  bool invalid = false;
  const llvm::StringRef buffer = sm.getBufferData(file, &invalid);
  if (invalid) return;
  const unsigned offset = sm.getFileOffset(start);
  clang::Lexer lexer(sm.getLocForStartOfFile(file), lang, buffer.begin(), buffer.begin() + offset, buffer.end());
  clang::Token tok;
  std::string content;
  // FUNCGEN ( "literal" "literal"... ): look at a bounded number of tokens.
  for (int i = 0; i < 64 && !lexer.LexFromRawLexer(tok); ++i) {
    if (tok.is(clang::tok::r_paren) && end_.isValid()) break;  // (an empty "" ends its FUNCGEN too)
    if (!tok.is(clang::tok::string_literal)) continue;
    const SourceLocation loc = tok.getLocation();
    const llvm::StringRef text(buffer.data() + sm.getFileOffset(loc), tok.getLength());
    end_ = loc.getLocWithOffset(static_cast<int>(tok.getLength()) - 1);
    for (size_t k = 1; k + 1 < text.size(); ++k) {
      bytes_.push_back(loc.getLocWithOffset(static_cast<int>(k)));
      content.push_back(text[k]);
      if (text[k] == '\\' && k + 2 < text.size()) ++k;  // a simple escape is one byte
    }
  }
  // Written as [[clang::annotate("funcgen:...")]] rather than FUNCGEN(...): skip the prefix.
  const size_t prefix = sizeof(kAnnotationPrefix) - 1;
  if (content.compare(0, prefix, kAnnotationPrefix) == 0) bytes_.erase(bytes_.begin(), bytes_.begin() + prefix);
}


std::vector<SpecLink> spec_chain(const AnnotatedSpec& spec, const std::vector<AnnotatedSpec>& specs) {
  std::vector<SpecLink> chain;
  const spec::Transform* t = spec.transform.get();
  const SpecLocations* where = &spec.spec_locations;
  // Spec names are unique and name only earlier specs, so this ends; the bound is a guard.
  for (size_t guard = 0; t != nullptr && guard <= 64 * (specs.size() + 1); ++guard) {
    if (t->kind == spec::TransformKind::Function) {
      const AnnotatedSpec* inner = nullptr;
      for (const AnnotatedSpec& s : specs)
        if (s.name == t->function && &s != &spec) inner = &s;
      if (inner != nullptr) {
        t = inner->transform.get();
        where = &inner->spec_locations;
        continue;
      }
    }
    chain.push_back({t, where});
    t = t->kind == spec::TransformKind::Function ? nullptr : t->inner.get();
  }
  return chain;
}

std::vector<AnnotatedSpec> collect_specs(clang::ASTContext& context, std::vector<CustomRule>* rules,
                                        const clang::Preprocessor* pp) {
  Collector collector(context, pp);
  Visitor(context, collector).TraverseDecl(context.getTranslationUnitDecl());
  if (rules != nullptr) *rules = collector.take_rules();
  return collector.take();
}

}  // namespace funcgen
