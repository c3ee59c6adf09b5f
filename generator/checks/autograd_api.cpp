// funcgen-autograd-api: eager autograd calls (libtorch's) inside a transformed function.
#include <clang/AST/RecursiveASTVisitor.h>

#include <deque>

#include "checks/check_util.h"

namespace funcgen {

namespace {

struct Api {
  const char* name;        // qualified function, or "::method" for a member function of any class
  const char* equivalent;  // what to use instead, from the UX Limitations page's table
  const char* example;     // the transform of the example spec in the note
};

// torch.autograd's eager APIs and their torch.func equivalents.
const Api kDefaultApis[] = {
    {"torch::autograd::grad", "grad or vjp", "grad"},
    {"torch::autograd::backward", "grad or vjp", "grad"},
    {"torch::autograd::functional::jvp", "jvp", "jvp"},
    {"torch::autograd::functional::vjp", "vjp", "vjp"},
    {"torch::autograd::functional::jacobian", "jacrev or jacfwd", "jacrev"},
    {"torch::autograd::functional::hessian", "hessian", "hessian"},
    {"torch::autograd::functional::hvp", "jvp of grad", "jvp"},
    {"torch::autograd::functional::vhp", "vjp of grad", "vjp"},
    {"::backward", "grad or vjp", "grad"},
    {"::requires_grad_", "grad's argnums (gradients are taken with respect to the arguments argnums names)", "grad"},
};

// The default list plus what --autograd-api added (names kept alive here).
std::vector<Api>& apis() {
  static std::vector<Api> list(std::begin(kDefaultApis), std::end(kDefaultApis));
  return list;
}

const Api* match(const clang::FunctionDecl* fn) {
  if (fn == nullptr) return nullptr;
  const std::string qualified = fn->getQualifiedNameAsString();
  for (const Api& api : apis()) {
    const std::string name = api.name;
    if (name.rfind("::", 0) == 0 ? llvm::isa<clang::CXXMethodDecl>(fn) && fn->getNameAsString() == name.substr(2)
                                 : qualified == name)
      return &api;
  }
  return nullptr;
}

class Finder : public clang::RecursiveASTVisitor<Finder> {
 public:
  std::vector<std::pair<const clang::CallExpr*, const Api*>> found;
  bool VisitCallExpr(clang::CallExpr* c) {
    if (const Api* api = match(c->getDirectCallee())) found.emplace_back(c, api);
    return true;
  }
};

}  // namespace

void add_autograd_apis(const std::vector<std::string>& names) {
  static std::deque<std::string> storage;  // stable addresses for the names' c_str()
  for (const auto& n : names) {
    storage.push_back(n);
    apis().push_back(Api{storage.back().c_str(), "grad or vjp", "grad"});
  }
}

void check_autograd_api(const VmapCheckContext& ctx, const BatchingAnalysis& fn) {
  Finder finder;
  for (const clang::Stmt* s : checks::leaf_asts(fn.function().body)) finder.TraverseStmt(const_cast<clang::Stmt*>(s));
  for (const auto& [call, api] : finder.found) {
    const clang::FunctionDecl* callee = call->getDirectCallee();
    const std::string name =
        llvm::isa<clang::CXXMethodDecl>(callee) ? callee->getNameAsString() : callee->getQualifiedNameAsString();
    clang::SourceLocation loc = call->getBeginLoc();
    if (const auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(call))
      if (const auto* me = llvm::dyn_cast<clang::MemberExpr>(mc->getCallee()->IgnoreParens())) loc = me->getMemberLoc();
    ctx.reporter.report("autograd-api", loc,
                        "'" + name +
                            "' is an eager autograd API that funcgen's transforms cannot see through; "
                            "use funcgen's " +
                            api->equivalent + " transform instead")
        << call->getSourceRange();
    const std::string f = checks::user_name(fn.function());
    ctx.reporter.note(fn.function().decl->getLocation(), std::string("funcgen's equivalent is a spec on '") + f +
                                                             "', e.g. FUNCGEN(\"" + f + "_" + api->example + " = " +
                                                             api->example + "(" + f + ")\")");
  }
}

static const CheckRegistration registration(
    {"autograd-api", false, "a transformed function calls an eager autograd API",
     "torch.autograd.grad / Tensor.backward inside a transformed function do not compose with the transforms. "
     "Use the functional transform instead: torch.autograd.grad -> grad, vjp; autograd.functional.jacobian -> "
     "jacrev/jacfwd; autograd.functional.hessian -> hessian; jvp/vjp -> jvp/vjp."},
    check_autograd_api, CheckScope::EveryTransform);

}  // namespace funcgen
