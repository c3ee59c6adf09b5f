// funcgen [options] <source>... [-- <compiler flags>] | -p <build dir>
//
// Reads the FUNCGEN annotations of each source through Clang and reports, as Clang diagnostics,
// every spec that does not parse or does not fit the annotated function's signature.
#include <clang/AST/ASTConsumer.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendAction.h>
#include <clang/Tooling/ArgumentsAdjusters.h>
#include <clang/Tooling/CommonOptionsParser.h>
#include <clang/Tooling/Tooling.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/raw_ostream.h>

#include "frontend/annotations.h"

#ifndef FUNCGEN_VERSION
#define FUNCGEN_VERSION "0.0.0"
#endif
#ifndef FUNCGEN_CLANG_RESOURCE_DIR
#define FUNCGEN_CLANG_RESOURCE_DIR ""
#endif

namespace {

llvm::cl::OptionCategory category("funcgen options");
llvm::cl::opt<std::string> resource_dir(
    "resource-dir", llvm::cl::desc("Clang resource directory (default: the one found at build time)"),
    llvm::cl::init(FUNCGEN_CLANG_RESOURCE_DIR), llvm::cl::cat(category));

class Consumer : public clang::ASTConsumer {
 public:
  void HandleTranslationUnit(clang::ASTContext& context) override { funcgen::collect_specs(context); }
};

class Action : public clang::ASTFrontendAction {
 protected:
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance&, llvm::StringRef) override {
    return std::make_unique<Consumer>();
  }
};

}  // namespace

int main(int argc, const char** argv) {
  llvm::cl::SetVersionPrinter([](llvm::raw_ostream& os) { os << "funcgen " << FUNCGEN_VERSION << "\n"; });
  auto parser = clang::tooling::CommonOptionsParser::create(argc, argv, category, llvm::cl::OneOrMore,
                                                            "funcgen: torch.func transforms for C++, at compile time\n");
  if (!parser) {
    llvm::errs() << "funcgen: " << llvm::toString(parser.takeError()) << "\n";
    return 2;
  }
  clang::tooling::ClangTool tool(parser->getCompilations(), parser->getSourcePathList());
  // LibTooling does not know where the Clang headers (<stddef.h>, ...) live unless told.
  if (!resource_dir.empty())
    tool.appendArgumentsAdjuster(clang::tooling::getInsertArgumentAdjuster(
        ("-resource-dir=" + resource_dir).c_str(), clang::tooling::ArgumentInsertPosition::BEGIN));
  // The annotations are [[clang::annotate]] only under Clang's own front-end, which this is.
  const int status = tool.run(clang::tooling::newFrontendActionFactory<Action>().get());
  return status == 0 ? 0 : 1;
}
