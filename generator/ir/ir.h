// The generator's intermediate representation of a C++ tensor function: typed expression trees of
// runtime ops inside structured statements, each node with its source range.
//
// The IR mirrors the shape of the user's function (its locals keep their names, its control flow
// its structure) so that the generated code reads like the code it came from. Expressions that
// touch no tensor are kept whole as C++ text (`Opaque`), together with their AST for the checks.
#pragma once

#include <clang/AST/Decl.h>
#include <clang/AST/Expr.h>
#include <clang/AST/Stmt.h>
#include <clang/Basic/SourceLocation.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace funcgen::ir {

enum class Type {
  Tensor,       // fg::Tensor
  TensorTuple,  // std::tuple of tensors (and scalars)
  TensorList,   // std::vector<fg::Tensor> or a braced list of tensors
  IntList,      // a braced list or vector of integers (IntArrayRef arguments)
  Int,
  Float,
  Bool,
  Void,
  Other,  // anything else: enums, strings, dtypes, options (never batched)
};
const char* name_of(Type type);
inline bool is_tensor_like(Type t) { return t == Type::Tensor || t == Type::TensorTuple || t == Type::TensorList; }
inline bool is_scalar(Type t) { return t == Type::Int || t == Type::Float || t == Type::Bool; }

// A local variable or parameter of the function.
struct Var {
  int id = 0;
  std::string name;
  Type type = Type::Other;
  std::string cxx_type;  // as it is spelled in generated code
  int param_index = -1;  // >= 0 for parameters
  const clang::ValueDecl* decl = nullptr;
  std::string written;  // how the user writes it where that is not `name` (a structure's leaf: "p.w1")
};

// Whether the parameter `p` of a function is its caller's variable, which an assignment in the
// function changes for the caller: a non-const lvalue reference parameter, a fg::Tensor* (the
// caller's `&y`: writable_parameter), or a leaf of the object of a non-const member function (`void add(const fg::Tensor& x) { total = total + x; }`).
bool by_reference(const Var& p);
// Whether `fn` may change its object: a non-const member function (not a lambda's call operator).
bool changes_object(const clang::FunctionDecl& fn);
// Whether `fn` may change what its caller passes it: it takes a non-const lvalue reference or a
// fg::Tensor*, or changes its object.
bool takes_by_reference(const clang::FunctionDecl& fn);

enum class ExprKind {
  VarRef,       // a local or parameter
  Opaque,       // C++ text without tensors: literals, constants, scalar arithmetic on scalars
  Call,         // a runtime op (free function, method or operator) or a user function
  Unary,        // a scalar operator on an expression that involves tensors: `-x.size(0)`, `!b`
  Binary,       // idem: `x.dim() - 1`, `a && b`, `n < x.size(0)`
  Conditional,  // c ? a : b
  List,         // {a, b, ...}: an IntArrayRef or a list of tensors; text: a type it initializes (`T{a, b}`)
  Tuple,        // std::make_tuple(a, b), std::tuple<...>{a, b}, `return {a, b}`
  Get,          // std::get<I>(tuple)
  Cast,         // a scalar conversion of a tensor-derived value: (double)..., static_cast, implicit bool
  // Made by the transforms, never by the lowering:
  Lambda,       // text: the introducer ("[&]", "[=]() mutable -> fg::Tensor"); body: its statements;
                // `invoked`: called where it stands (`[&] { ... }()`)
  Member,       // args[0].text: a data member (fg::vmap::Batched's `value`)
};

enum class CallForm {
  Free,      // fg::op(args)
  Method,    // self.op(args); args[0] is self
  Operator,  // a + b, -a, a += b, a[i]: emitted as the runtime op it calls
  User,      // a function of the user's, defined in this file
  External,  // any other function that takes or returns tensors
  Vmapped,   // vmap(*vmapped, in_dims, out_dim)(args), output `index`: a function that a transform
             // made (a jacobian's rows inside another derivative, a vmap inside grad)
};

// How the random ops of a vmapped call draw (vmap's randomness): 'error' and 'same' draw once for
// the batch (random ops under 'error' are reported before code is made), 'different' per example.
enum class Randomness { Error, Different, Same };

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;
struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
struct Function;

// The integer parameters of a helper whose arguments are compile-time constants at a call, by
// name, with their values: a recursive helper is lowered once per such pattern, with the values
// folded into its body, so that each level of a recursion whose depth is known is a function of
// its own (frontend/lower/recursion.h).
using Constants = std::vector<std::pair<std::string, int64_t>>;

struct Expr {
  ExprKind kind = ExprKind::Opaque;
  Type type = Type::Other;
  clang::SourceRange range;
  const clang::Expr* ast = nullptr;

  int var = -1;                 // VarRef
  std::string text;             // Opaque: C++ text; Unary/Binary: the operator; Cast: the target type
  std::string op;               // Call: the runtime op's name ("add", "sum", "add_", ...)
  CallForm form = CallForm::Free;
  const clang::FunctionDecl* callee = nullptr;  // Call
  std::vector<ExprPtr> args;    // Call (Method: args[0] is self), operands of the other kinds
  std::vector<std::string> params;  // Call: the callee's parameter name of each argument ("self" first for methods)
  std::vector<Type> param_types;    // Call: the callee's parameter type of each argument
  int index = 0;                // Get: the tuple element
  std::string template_args;    // Call: explicit template arguments as written, "<float>" for item<float>()
  // Call of form User whose callee takes structures (frontend/pytree.h): per callee parameter, the
  // C++ text that rebuilds it from its leaves among `args` (kPackedLeaf stands for each in turn), or
  // "" for a parameter passed as one argument. Empty when the callee takes no structure.
  std::vector<std::string> packing;
  // Call of form User: the callee's std::optional parameters that hold no tensor here (the callee is
  // lowered once per such pattern: Lowering::lower).
  std::vector<std::string> absent;
  // Call of form User of a recursive helper: its constant arguments (the callee is lowered once
  // per pattern).
  Constants constants;
  // Call of form User whose callee returns a structure: the tensors of its result `result`
  // ("result.weight"), which the call stands for (one, or their tuple) where printed as written.
  std::vector<std::string> result_leaves;
  std::vector<int> reads;       // Opaque: the locals it reads
  std::vector<int> writes;      // Opaque: the locals it assigns or increments
  // Call of form Vmapped: the function mapped (shared by the copies of the call), the batch dim of
  // each argument (none: not mapped) and of the result (none: out_dims=None, the result is not
  // batched); `index` is the output taken, `op` a label for the emitted helper's name.
  std::shared_ptr<const Function> vmapped;
  std::vector<std::optional<int64_t>> in_dims;
  std::optional<int64_t> out_dim = 0;
  Randomness randomness = Randomness::Error;  // Vmapped
  std::optional<int64_t> chunk_size;  // Vmapped: the batch runs in chunks of this many (jacrev's chunk_size)
  std::vector<StmtPtr> body;    // Lambda
  bool invoked = false;         // Lambda
  // Batched IR (what vmap makes): the vmap levels the value is batched at, bit k for level k
  // (analyses/batching.h's Levels); 0 in unbatched code.
  uint32_t levels = 0;

  const Expr& arg(size_t i) const { return *args[i]; }
};

inline constexpr char kPackedLeaf = '\x01';
// In `packing`: a lambda passed to a helper (kLambdaArg, then the text of the lambda, then a
// kHeldLeaf for each variable it captures, which the helper is passed as arguments and the printed
// call does not pass: the lambda holds them).
inline constexpr char kLambdaArg = '\x02';
inline constexpr char kHeldLeaf = '\x03';

// Whether the call is of a lambda (a variable of the body, or one a helper was passed).
// An optional argument left out where a tensor goes: `{}` or `std::nullopt`.
inline bool is_absent(const Expr& e) {
  return (e.kind == ExprKind::List && e.args.empty()) ||
         (e.kind == ExprKind::Opaque && (e.text == "{}" || e.text == "std::nullopt"));
}
inline bool is_lambda_call(const Expr& e) { return e.kind == ExprKind::Call && e.form == CallForm::User && e.op == "lambda"; }

// Whether the call is of a lambda that a helper was passed (it has no text: its name is not in scope
// where the call could be printed), or passes a lambda to a helper: such calls are always
// transformed, never printed as written (vmap makes a version of them even where nothing is batched).
inline bool passes_lambda(const Expr& e) {
  if (is_lambda_call(e) && e.text.empty()) return true;
  if (e.kind != ExprKind::Call || e.form != CallForm::User) return false;
  for (const std::string& p : e.packing)
    if (p.find(kLambdaArg) != std::string::npos) return true;
  return false;
}

enum class StmtKind {
  Decl,      // T var = expr;  (expr may be null: default-constructed)
  Bind,      // auto [a, b] = expr;  (vars: the bound names)
  Assign,    // var = expr; or var op= expr for scalars (text: the operator)
  Eval,      // expr;  (in-place ops, calls for their side effects)
  If,        // if (expr) body else else_body
  For,       // for (init; expr; step) body
  While,     // while (expr) body
  DoWhile,   // do body while (expr);
  Switch,    // switch (expr) body, with Case statements in body
  Case,      // case / default label (text: the label's C++ text, "default" for default)
  Break,
  Continue,
  Return,    // return expr;
  Block,     // { body }
  Opaque,    // a statement without tensors, kept as C++ text
};

struct Stmt {
  StmtKind kind = StmtKind::Opaque;
  clang::SourceRange range;
  const clang::Stmt* ast = nullptr;
  int var = -1;                    // Decl, Assign
  std::vector<int> vars;           // Bind
  std::string text;                // Assign: "=", "+=", ...; Case: label; Opaque: C++ text
  ExprPtr expr;                    // initializer, value, condition, returned value
  std::vector<StmtPtr> body;       // If then, loops, Block, Switch
  std::vector<StmtPtr> else_body;  // If
  std::vector<StmtPtr> init;       // For
  ExprPtr step;                    // For
  bool has_else = false;
  std::vector<int> reads;          // Opaque: the locals it reads
  std::vector<int> writes;         // Opaque: the locals it assigns or increments
  bool is_static_local = false;    // Decl of a `static` local (state that outlives the call)
  bool lambda_definition = false;  // Opaque: a lambda's, kept for the calls printed as written
  std::string comment;             // printed after the statement, for readers of generated code
};

// One function of the user's, lowered.
struct Function {
  std::string name;                  // unqualified
  std::string qualified_name;        // with namespaces, for calls from generated code
  std::vector<std::string> namespaces;  // enclosing namespaces, outermost first ("" for anonymous)
  std::vector<Var> vars;             // parameters first, in order
  std::vector<int> params;           // var ids of the parameters
  Type return_type = Type::Tensor;
  std::string return_cxx_type;
  size_t outputs = 1;                // tensors returned (tuple elements)
  std::vector<StmtPtr> body;
  const clang::FunctionDecl* decl = nullptr;
  Constants constants;  // the constant arguments it was lowered for (a level of a recursion)

  const Var& var(int id) const { return vars[static_cast<size_t>(id)]; }
};

// Calls `fn` on every expression of the statements, children before parents.
void for_each_expr(const std::vector<StmtPtr>& body, const std::function<void(const Expr&)>& fn);
void for_each_expr(const Expr& expr, const std::function<void(const Expr&)>& fn);
// Whether evaluating `e` computes a tensor (it does not only read one: `z.defined()` does not), or
// may: it calls a helper.
bool computes_tensors(const Expr& e);
void for_each_stmt(const std::vector<StmtPtr>& body, const std::function<void(const Stmt&)>& fn);

// The names that a function's C++ text (opaque statements and expressions, case labels, calls
// of other code) uses, its locals' included: a name the transforms introduce must be none of
// them, or it would hide the global or function the text means.
std::set<std::string> text_names(const Function& fn);
// The names `e` (an expression of fn) reads: its variables and the identifiers of its C++ text.
std::set<std::string> names_in(const Function& fn, const Expr& e);

// A switch body's statements in order, with the blocks that the lowering makes of `case x: stmt`
// opened: Case labels and the statements after them, side by side.
std::vector<const Stmt*> switch_items(const std::vector<StmtPtr>& body);

}  // namespace funcgen::ir
