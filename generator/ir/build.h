// Building and copying IR: what the transforms that produce new functions (AD) need.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace funcgen::ir {

// Deep copies; `remap` (when given) maps the var ids of VarRef and the reads/writes of Opaque.
ExprPtr clone(const Expr& e, const std::function<int(int)>& remap = nullptr);
// A node without its children (operands, a lambda's or a statement's bodies).
ExprPtr copy_node(const Expr& e, const std::function<int(int)>& remap = nullptr);
StmtPtr copy_node(const Stmt& s, const std::function<int(int)>& remap = nullptr);
StmtPtr clone(const Stmt& s, const std::function<int(int)>& remap = nullptr);

ExprPtr var_ref(const Function& fn, int id);
ExprPtr opaque(const std::string& text, Type type);
ExprPtr tuple(std::vector<ExprPtr> items);
// A scalar operator on IR operands (`!done`, `i < n`), of type `type`.
ExprPtr unary(const std::string& op, ExprPtr a, Type type);
ExprPtr binary(const std::string& op, ExprPtr a, ExprPtr b, Type type);
// std::get<index>(of): one tensor of a tuple.
ExprPtr get(ExprPtr of, int index);
// `fn(args)`: a call of a function funcgen does not transform, printed as written (`fn` qualified).
ExprPtr external_call(const std::string& fn, std::vector<ExprPtr> args, Type type);
// `list[index]` on a std::vector of tensors, and whether `e` is one.
ExprPtr element(ExprPtr list, ExprPtr index);
bool is_element(const Expr& e);

// A new local of `fn` named `name` (which the caller made unique).
int add_var(Function& fn, const std::string& name, Type type, const std::string& cxx_type);

// A new function that stands for `src` (its names, namespaces, declaration and return type), with
// no variables, parameters or body yet.
std::unique_ptr<Function> derived_function(const Function& src);

// A deep copy of `src` (variables, parameters and body).
std::unique_ptr<Function> copy_function(const Function& src);

// vmap(fn, in_dims, out_dim)(args), output `output` of fn; `label` names the emitted helper.
ExprPtr vmapped_call(std::shared_ptr<const Function> fn, std::vector<ExprPtr> args,
                     std::vector<std::optional<int64_t>> in_dims, std::optional<int64_t> out_dim, int output,
                     const std::string& label);

// The stored trips of a loop's reverse pass (differentiate.cpp): a tape is a std::vector of one
// value's per-trip values. Tape operations are Opaque, so every emitter prints their text as it
// is, but tagged in `op` with their operands as `reads`, in order, so that the normalizer can
// rename them and AD can differentiate them: forward mode keeps a tape of tangents beside a tape
// of tensors; reverse mode gives a tape a tape of gradients, added to where the trips are read
// back and taken off where they were stored. The operations are closed under both modes (so any
// order of derivative goes through a loop): at/read reverse to add, add reverses to read, push to
// pop and pop to push.
inline constexpr const char* kTapePush = "tape_push";  // {tape, value}: tape.push_back(value);
inline constexpr const char* kTapeAt = "tape_at";      // {tape, index}: tape[index]
// fg::ad::list_gradient(grads, like): a list parameter's gradient (an External call)
inline constexpr const char* kListGradient = "fg::ad::list_gradient";
inline constexpr const char* kTapeAdd = "tape_add";    // {tape, index, value}: adds value to tape[index]
inline constexpr const char* kTapePop = "tape_pop";    // {tape}: the last entry, taken off
inline constexpr const char* kTapeRead = "tape_read";  // {tape, index}: tape[index], none where it has none
// A std::vector<fg::Tensor> local that the function fills with push_back and reads at run-time
// indices is a tape too: its pushes are list_push, its reads tape_at. AD records where each value
// went ({list, index, value}; the lowering gives {list, value}), so that reverse mode reads the
// value's gradient back from that entry (tape_read) rather than off the end (tape_pop).
inline constexpr const char* kListPush = "list_push";  // {list, [index,] value}: list.push_back(value);
// v[i] = value on such a list ({list, index, value}); reverse mode takes entry i of the list's
// gradients off (kTapeTake: value's gradient, cleared for the value the entry held before), and
// the reverse of that sets it (kTapeSet, which grows a list of gradients to hold entry i).
inline constexpr const char* kListSet = "list_set";  // {list, index, value}: list[index] = value;
inline constexpr const char* kTapeTake = "tape_take";  // {tape, index}: entry index, cleared
inline constexpr const char* kTapeSet = "tape_set";    // {tape, index, value}: entry index = value
// v.size() or v.empty() of a std::vector of tensors (Opaque, reads {v}): the same in every example.
inline constexpr const char* kListSize = "list_size";
// (The entries are tensors, or for a loop inside a loop, the inner loop's tapes.)
ExprPtr tape_op(const Function& fn, const std::string& op, const std::vector<int>& operands, Type type);
bool is_tape_op(const Expr& e);

// The generator state that derivative code which reruns a random function replays (fg::ad::RngState):
// `fg::ad::rng_state()`, and `fg::ad::rng_replay(state)` (it returns where the generator was).
inline constexpr const char* kRngStateType = "const fg::ad::RngState";
ExprPtr rng_state();
ExprPtr rng_replay(const Function& fn, int state);

// How a variable's value is held by value: its C++ type without `const` and `&`.
std::string value_type(const Var& v);
// The names that `stmts[from..]` declare (Decl and Bind; not those of the blocks inside).
std::set<std::string> declared_names(const Function& fn, const std::vector<StmtPtr>& stmts, size_t from = 0);

// The C++ type of a returned value: fg::Tensor, or a std::tuple of its items' types.
std::string returned_type(const Function& fn, const Expr& value);
// Ends `fn` with `return value;` and sets its return type and number of outputs.
void finish(Function& fn, ExprPtr value);

StmtPtr decl(int var, ExprPtr init);
StmtPtr assign(int var, ExprPtr value);
StmtPtr ret(ExprPtr value);
StmtPtr eval(ExprPtr value);

// The var ids that `body` reads (VarRefs and the reads of Opaque expressions and statements).
std::vector<int> reads_of(const std::vector<StmtPtr>& body);
// The var ids that one statement (and the statements in it) reads.
std::vector<int> reads_of(const Stmt& stmt);

}  // namespace funcgen::ir
