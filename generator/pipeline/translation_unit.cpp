#include "pipeline/translation_unit.h"

#include <clang/Basic/SourceManager.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <algorithm>
#include <optional>

#include "diag/reporter.h"
#include "frontend/annotations.h"
#include "frontend/lower.h"
#include "pipeline/pipeline.h"

namespace funcgen {

TranslationUnitResult generate_translation_unit(clang::ASTContext& context, const clang::Preprocessor& preprocessor,
                                                std::vector<clang::SourceLocation> compile_errors,
                                                const ToolOptions& options) {
  const clang::SourceManager& sm = context.getSourceManager();
  Reporter reporter(context.getDiagnostics(), sm);
  reporter.set_compile_errors(std::move(compile_errors));
  reporter.set_check_globs(options.checks);
  reporter.set_warnings_as_errors(options.warnings_as_errors);
  std::vector<CustomRule> custom_rules;
  const std::vector<AnnotatedSpec> specs = collect_specs(context, &custom_rules, &preprocessor);
  Lowering lowering(context, reporter);
  ad::OpResolver resolver(context);
  for (const CustomRule& r : custom_rules) resolver.add_custom_rule(r.vjp, r.primal, r.rule);
  for (const AnnotatedSpec& spec : specs) resolver.add_generated(spec.name, spec.name + " = " + spec::nesting_of(*spec.transform));
  TranslationUnitResult result;
  result.specs = specs.size();
  Pipeline pipeline(context, reporter, lowering, resolver, specs, options.optimize);
  for (const AnnotatedSpec& spec : specs)
    if (std::optional<OutputFunction> g = pipeline.generate(spec)) result.functions.push_back(std::move(*g));
  for (auto it = sm.fileinfo_begin(); it != sm.fileinfo_end(); ++it) {
    llvm::SmallString<256> path(it->first->getName());
    llvm::sys::fs::make_absolute(path);
    llvm::sys::path::remove_dots(path, true);
    result.dependencies.push_back(path.str().str());
  }
  std::sort(result.dependencies.begin(), result.dependencies.end());
  result.dependencies.erase(std::unique(result.dependencies.begin(), result.dependencies.end()), result.dependencies.end());
  return result;
}

}  // namespace funcgen
