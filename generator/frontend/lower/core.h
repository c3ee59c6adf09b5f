// The state that the lowerings of one function share, and the interface through which they call
// each other. Each family of C++ constructs is lowered by a class of its own (the headers beside
// this one), which derives from this one virtually and implements its part of the interface;
// FunctionLowerer (frontend/lower.cpp) is all of them, and the driver: signature, parameters, result.
#pragma once

#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/StmtCXX.h>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "diag/reporter.h"
#include "frontend/lower.h"
#include "frontend/lower/queries.h"
#include "frontend/pytree.h"
#include "ir/ir.h"

namespace funcgen::lower {

// ------------------------------------------------------------------ pieces of split and chunk
// `x.split(n, dim)`, `x.split({sizes...}, dim)` and `x.chunk(n, dim)` (or fg::split, fg::chunk)
// read by index: piece i is fg::ad::split_piece(x, n, dim, i), split_with_sizes_piece or
// chunk_piece, an op of its own that AD differentiates as a narrow, and the count
// fg::ad::split_count(x.size(dim), n), split_with_sizes_count(sizes) or chunk_count.
struct Pieces {
  const clang::Expr* tensor = nullptr;
  const clang::Expr* n = nullptr;    // split_size, the split sizes, or chunks
  const clang::Expr* dim = nullptr;  // null: 0
  bool chunk = false;
  bool sizes = false;  // n is a list of sizes
};

// ------------------------------------------------------------------ vectors built with push_back
// A local std::vector<fg::Tensor> that the body fills with push_back and stacks (fg::stack(v)) is
// a list of same-shaped tensors: it is held stacked, as one tensor (its name) and a count
// (`v_size__`), so that every transform goes through it with the ops it has: push_back is a cat
// along dim 0 (the first an unsqueeze), v[i] a select, v.size() the count, fg::stack(v) the tensor.
// One initialized with a tensor's slices (`x.unbind(d)`) is that tensor with dim d moved in front.
struct Stacked {
  int var = -1, count = -1;
  bool pushed = false;                     // a push_back was lowered: the count may be nonzero from here on
  size_t loops = 0;                        // loops around the declaration (a push inside more is in a loop)
  const clang::Expr* slices_of = nullptr;  // x of `= x.unbind(dim)`, and its dim (null: 0)
  const clang::Expr* slice_dim = nullptr;
  std::optional<Pieces> pieces;      // `= x.split(n, dim)` or `x.chunk(n, dim)`: held as x itself,
  int piece_n = -1, piece_dim = -1;  // with n and dim in variables (read as at the declaration)
};

class LowererCore {
 public:
  LowererCore(ir::Function& fn, StructuredSignature& sig, Lowering& lowering, clang::ASTContext& context,
              Reporter& reporter)
      : f_(fn),
        sig_(sig),
        lowering_(lowering),
        context_(context),
        sm_(context.getSourceManager()),
        reporter_(reporter) {}
  virtual ~LowererCore() = default;
  LowererCore(const LowererCore&) = delete;
  LowererCore& operator=(const LowererCore&) = delete;

 protected:
  // ------------------------------------------------------------------ shared utilities (core.cpp)
  std::string fresh_name(const std::string& path);
  static std::string enclosing_scope(const clang::NamedDecl* d);
  int add_var(const clang::ValueDecl* d, clang::QualType type);
  void bind_template_arguments(const clang::FunctionDecl* decl);
  void reject_variable(const clang::VarDecl* vd, const clang::Stmt* at, const std::string& why);
  bool uses_rejected(const clang::Stmt* s) const;
  void unsupported_at(clang::SourceLocation at, const std::string& what);
  void unsupported(const clang::Stmt* s, const std::string& what);
  // The statement or expression that `s` is a child of in the AST (nullptr at a declaration).
  const clang::Stmt* parent_of(const clang::Stmt* s) const;
  std::string text_of(const clang::Stmt* node) const;
  std::string written_text(const clang::Stmt* node) const;
  StmtPtr make(StmtKind kind, const clang::Stmt* s);
  // The locals that `s` reads and writes, for Opaque statements and expressions.
  template <typename Node>
  void record_uses(const clang::Stmt* s, Node& node) {
    VarUses uses(vars_);
    uses.TraverseStmt(const_cast<clang::Stmt*>(s));
    node.reads = uses.reads;
    node.writes = uses.writes;
  }
  StmtPtr opaque_stmt(const clang::Stmt* s);
  int declare_made(std::vector<StmtPtr>& out, const clang::Stmt* at, const std::string& name, ir::Type type,
                   const std::string& cxx, ExprPtr value);
  void assign_made(std::vector<StmtPtr>& out, const clang::Stmt* at, int var, int from);
  int int_local(const std::string& name, ExprPtr value, const clang::Stmt* at, std::vector<StmtPtr>& out);
  ExprPtr fg_call(const std::string& op, ir::Type type, std::vector<ExprPtr> args, std::vector<std::string> params);
  const clang::NamespaceDecl* fg_namespace() const;
  std::string numbered(const std::string& base, const std::string& suffix) const;
  int generated_var(const std::string& name, ir::Type type, const std::string& cxx_type);
  static ExprPtr method_call(const clang::CXXRecordDecl* record, const std::string& op, ir::Type type,
                             std::vector<ExprPtr> args);
  ExprPtr make_expr(ExprKind kind, const clang::Expr* e);
  ExprPtr reported(const clang::Expr* e);
  ExprPtr opaque(const clang::Expr* e);

  // ------------------------------------------------------------------ the lowerings' interface
  // What one family of constructs asks of another; each is implemented (`override`) in the header
  // named above it.
  // lower.cpp (the driver)
  virtual void collect_names(const clang::FunctionDecl* decl) = 0;
  virtual bool alias(const clang::VarDecl* vd) = 0;
  virtual int leaf_parameter(pytree::Tree& leaf, const std::string& name, const std::string& written,
                             const clang::ValueDecl* of) = 0;
  virtual void set_outputs() = 0;
  // expressions.h
  virtual const clang::Expr* strip(const clang::Expr* e) = 0;
  virtual ExprPtr lower_expr(const clang::Expr* original) = 0;
  // calls.h
  virtual void add_args(ir::Expr& x, const clang::FunctionDecl* callee, llvm::ArrayRef<const clang::Expr*> args,
                        bool fill_defaults = false, std::vector<std::string> packing = {}) = 0;
  virtual bool is_structured_type(clang::QualType t) const = 0;
  virtual ExprPtr lower_member_call(const clang::CXXMemberCallExpr* mc) = 0;
  virtual bool structured_result_of(ir::Expr& x, const clang::FunctionDecl* callee, const clang::Expr* call) = 0;
  virtual ExprPtr call_part(const clang::Expr* e) = 0;
  virtual ExprPtr lower_operator_call(const clang::CXXOperatorCallExpr* oc) = 0;
  virtual ExprPtr lower_call(const clang::CallExpr* call) = 0;
  virtual StmtPtr lower_swap(const clang::Expr* e) = 0;
  // statements.h
  virtual bool always_returns(const clang::Stmt* s) = 0;
  virtual std::vector<StmtPtr> lower_body(const clang::Stmt* s) = 0;
  // declarations.h
  virtual void leaf_writes(const clang::Stmt* s, std::vector<int>& writes) = 0;
  virtual void lower_decl(std::vector<StmtPtr>& out, const clang::Decl* d, const clang::DeclStmt* ds) = 0;
  virtual bool retargets(const clang::Expr* e) = 0;
  // structures.h
  virtual std::vector<std::string> absent_at(const clang::CallExpr* call, const clang::FunctionDecl* callee,
                                             bool discovering) = 0;
  virtual std::optional<bool> presence_test(const clang::Expr* e) = 0;
  virtual void assigns_optional(const clang::Expr* e, const clang::Expr* object) = 0;
  virtual const pytree::Tree* callee_tree(const clang::FunctionDecl* callee, unsigned i,
                                          const std::vector<std::string>& absent,
                                          const ir::Constants& constants = {}) = 0;
  virtual const pytree::Tree* object_tree(const clang::FunctionDecl* callee,
                                          const std::vector<std::string>& absent) = 0;
  virtual const pytree::Tree* signature_tree(const clang::FunctionDecl* callee, size_t k,
                                             const std::vector<std::string>& absent,
                                             const ir::Constants& constants = {}) = 0;
  virtual bool is_user_function(const clang::FunctionDecl* callee) const = 0;
  virtual pytree::Tree* resolve(const clang::Expr* e, bool discovering) = 0;
  virtual std::optional<std::string> rebuilt(const pytree::Tree& t, std::vector<int>& reads) const = 0;
  virtual pytree::Tree* resolve_decl(const clang::ValueDecl* d, bool discovering = false) = 0;
  virtual ExprPtr node_value(const pytree::Tree& t, const clang::Expr* e) = 0;
  virtual void pass_leaves(pytree::Tree& given, const pytree::Tree& wanted, const clang::Expr* e, ir::Expr& call) = 0;
  // results.h
  virtual bool returns_list(const clang::FunctionDecl* decl) = 0;
  virtual const clang::FunctionDecl* list_maker(const clang::Expr* e) = 0;
  virtual void flatten_value(const clang::Expr* e, const pytree::Tree& t, std::vector<ExprPtr>& out) = 0;
  virtual ExprPtr lower_result(const clang::Expr* e) = 0;
  // local_structures.h
  virtual std::optional<pytree::Tree> local_tree(clang::QualType type) const = 0;
  virtual bool writable(const pytree::Tree& node, const clang::Stmt* at, bool passed_on = false) = 0;
  virtual bool needs_ir(const clang::Stmt* s) const = 0;
  virtual bool names_textless(const clang::Stmt* s) const = 0;
  virtual bool helper_call(const clang::Expr* e) const = 0;
  virtual const clang::FunctionDecl* structured_callee(const clang::Expr* e) const = 0;
  virtual const clang::ValueDecl* root_decl(const clang::Expr* e) = 0;
  virtual const clang::FunctionDecl* call_root(const clang::Expr* e) = 0;
  virtual void init_leaves(const pytree::Tree& t, clang::QualType type, const clang::Expr* init, bool declare,
                           const clang::Stmt* at, std::vector<StmtPtr>& out) = 0;
  virtual bool declare_structure(const clang::VarDecl* vd, const clang::DeclStmt* ds, std::vector<StmtPtr>& out) = 0;
  virtual bool declare_bindings(const clang::DecompositionDecl* dd, const clang::DeclStmt* ds,
                                std::vector<StmtPtr>& out) = 0;
  virtual std::string with_leaves(const clang::Stmt* node, std::string text, std::vector<int>& reads) = 0;
  virtual ExprPtr fixed_element(const clang::Expr* e) = 0;
  // lambdas.h
  virtual bool capture_parameters(const clang::FunctionDecl* decl) = 0;
  virtual std::string uncapturable(const clang::LambdaCapture& c) const = 0;
  virtual std::string pass_lambda(const clang::Expr* arg, const clang::CXXRecordDecl* closure,
                                  const clang::FunctionDecl* callee, ir::Expr& call) = 0;
  virtual bool pass_list(const clang::Expr* arg, const pytree::Tree& wanted, ir::Expr& call) = 0;
  virtual ExprPtr lower_lambda_call(const clang::CXXOperatorCallExpr* oc, const clang::FunctionDecl* op) = 0;
  // stacked_lists.h
  virtual std::optional<Pieces> pieces_of(const clang::Expr* e) const = 0;
  virtual ExprPtr piece_dim(const Pieces& p) = 0;
  virtual ExprPtr piece_count(const Pieces& p, ExprPtr held, ExprPtr n, ExprPtr dim,
                              const clang::CXXRecordDecl* tensor) = 0;
  virtual ExprPtr piece_at(const Pieces& p, ExprPtr held, ExprPtr n, ExprPtr dim, ExprPtr index) = 0;
  virtual ExprPtr piece_read(const clang::Expr* e) = 0;
  virtual bool element_assigned(const clang::Expr* e) const = 0;
  virtual bool written_through(const clang::Expr* e) const = 0;
  virtual Stacked* stacked_object(const clang::CXXMemberCallExpr* mc) = 0;
  virtual const clang::VarDecl* listed_object(const clang::CXXMemberCallExpr* mc) = 0;
  virtual StmtPtr push_listed(const clang::VarDecl* vd, const clang::CXXMemberCallExpr* mc) = 0;
  virtual ExprPtr cat_of(const clang::Expr* at, std::vector<ExprPtr> items, ExprPtr dim) = 0;
  virtual const clang::Expr* unmoved(const clang::Expr* e) = 0;
  virtual void declare_stacked(Stacked& v, const clang::VarDecl* vd, const clang::DeclStmt* ds,
                               std::vector<StmtPtr>& out) = 0;
  virtual StmtPtr push(Stacked& v, const clang::CXXMemberCallExpr* mc) = 0;
  virtual ExprPtr made_list_read(const clang::Expr* e) = 0;
  virtual ExprPtr stacked_read(const clang::Expr* e) = 0;
  virtual StmtPtr indexed_stacked(const clang::CXXForRangeStmt* rs, const Stacked& v) = 0;
  // lists.h
  virtual bool filled_list(const clang::VarDecl* vd, const clang::DeclStmt* ds, std::vector<StmtPtr>& out) = 0;
  virtual const clang::VarDecl* joined_list(const clang::Expr* e) const = 0;
  virtual void hoist_init_captures(std::vector<StmtPtr>& out, const clang::Stmt* s) = 0;
  virtual void join_lists(std::vector<StmtPtr>& out, const clang::Stmt* s) = 0;
  virtual StmtPtr assign_listed(const clang::Expr* e) = 0;
  // range_for.h
  virtual ExprPtr select_of(const clang::CXXRecordDecl* record, int tensor, ExprPtr dim, ExprPtr index) = 0;
  virtual StmtPtr lower_range_for(const clang::CXXForRangeStmt* rs) = 0;
  virtual const clang::Expr* unbound(const clang::Expr* e, const clang::Expr*& dim) = 0;
  virtual StmtPtr slices(const clang::CXXForRangeStmt* rs, const clang::Expr* tensor, const clang::Expr* dim_expr) = 0;
  virtual StmtPtr index_loop(const clang::CXXForRangeStmt* rs, const char* index_type, ExprPtr bound,
                             const std::function<ExprPtr(int)>& item) = 0;
  virtual StmtPtr indexed(const clang::CXXForRangeStmt* rs, const clang::DeclRefExpr* range, bool tensors) = 0;
  // recursion.h
  virtual ir::Constants constants_at(const clang::CallExpr* call, const clang::FunctionDecl* callee) = 0;
  virtual std::optional<bool> known_test(const clang::Expr* e) = 0;
  virtual std::optional<std::vector<const clang::Stmt*>> known_case(const clang::SwitchStmt* sw) = 0;

  // ------------------------------------------------------------------ shared state
  ir::Function& f_;
  StructuredSignature& sig_;
  Lowering& lowering_;
  clang::ASTContext& context_;
  const clang::SourceManager& sm_;
  Reporter& reporter_;
  std::map<const clang::ValueDecl*, int> vars_;
  std::map<std::string, std::string> template_values_;
  std::set<const clang::ValueDecl*> rejected_;  // reported where they are declared
  std::set<const clang::ValueDecl*> lambdas_;   // variables holding lambdas of the body, parameters passed one
  // Lambdas that no generated code can name: one a helper was passed or a lambda captures, and one
  // that captures such (ir::passes_lambda: their calls are always transformed).
  std::set<const clang::ValueDecl*> textless_;
  std::map<const clang::ValueDecl*, Stacked> stacked_;  // vectors held stacked
  std::set<const clang::VarDecl*> listed_;    // vectors pushed to and read at run-time indices (ir::kListPush)
  std::map<const clang::Expr*, int> joined_;  // fg::cat/fg::stack of a list -> the variable join_lists made
  size_t loops_ = 0;                          // loops around the statement being lowered
  std::map<const clang::ValueDecl*, pytree::Tree> trees_;  // the structured parameters and locals
  std::map<const clang::VarDecl*, size_t> fixed_;  // local vectors held as their elements, by length (find_fixed)
  bool names_collected_ = false;
  std::set<std::string> names_;  // declared in the function
  std::set<const clang::Expr*> reported_indices_;
  std::map<const clang::ValueDecl*, const clang::Expr*> aliases_;  // names of parts of structured parameters
  bool ok_ = true;
};

}  // namespace funcgen::lower
