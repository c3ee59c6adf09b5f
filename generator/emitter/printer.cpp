#include "emitter/printer.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include <clang/AST/DeclCXX.h>
#include <clang/AST/Expr.h>
#include <llvm/Support/ErrorHandling.h>

#include "ir/build.h"
#include "ir/cxx_text.h"
#include "ir/program.h"
#include "ir/types.h"

namespace funcgen::emitter {

namespace {

using cxx::join;
using cxx::join_args;
using cxx::paren;
using cxx::unparen;
using ir::Expr;
using ir::ExprKind;
using ir::Stmt;
using ir::StmtKind;

class Printer {
 public:
  explicit Printer(const ir::Function& fn) : fn_(fn) {}

  std::string body() {
    std::string out;
    block(fn_.body, out, 1);
    return out;
  }

 private:
  static std::string pad(int indent) { return std::string(static_cast<size_t>(indent) * 2, ' '); }

  void line(std::string& out, int indent, const std::string& text, const std::string& comment = "") {
    out += pad(indent) + text + (comment.empty() ? "" : "  // " + comment) + "\n";
  }

  void block(const std::vector<ir::StmtPtr>& body, std::string& out, int indent) {
    for (const auto& s : body) stmt(*s, out, indent);
  }

  // A list's size recorded for derivative code that ended up not reading it (the index of a push
  // in a forward pass whose reverse runs elsewhere, or not at all): not printed.
  bool unread_size(const Stmt& s) {
    if (!s.expr || s.expr->kind != ExprKind::Opaque || s.expr->op != ir::kListSize || !ir::is_scalar(fn_.var(s.var).type))
      return false;
    if (!read_) {  // (a push_back's text does not name its index: only its reverse reads it)
      read_.emplace();
      ir::for_each_expr(fn_.body, [&](const Expr& e) {
        if (e.kind == ExprKind::VarRef) read_->insert(e.var);
        for (size_t i = 0; i < e.reads.size(); ++i)
          if (!(e.op == ir::kListPush && e.reads.size() == 3 && i == 1)) read_->insert(e.reads[i]);
      });
      ir::for_each_stmt(fn_.body, [&](const Stmt& st) { read_->insert(st.reads.begin(), st.reads.end()); });
    }
    return read_->count(s.var) == 0;
  }
  std::optional<std::set<int>> read_;

  // A copy of a number that nothing reads (a leaf of a structure passed through inlined helpers
  // that do not read it), and the copies only such copies read: not printed.
  bool unread_copy(const Stmt& s) {
    if (!unread_copies_) find_unread_copies();
    return unread_copies_->count(&s) != 0;
  }
  void find_unread_copies() {
    unread_copies_.emplace();
    std::map<int, int> reads;
    std::vector<const Stmt*> copies;
    ir::for_each_expr(fn_.body, [&](const Expr& e) {
      if (e.kind == ExprKind::VarRef) ++reads[e.var];
      for (int r : e.reads) ++reads[r];
    });
    ir::for_each_stmt(fn_.body, [&](const Stmt& st) {
      for (int r : st.reads) ++reads[r];
      if (copied(st) >= 0) copies.push_back(&st);
    });
    for (const ir::Var& v : fn_.vars)  // a name in a type (std::array<double, n>) is read too
      for (const Stmt* c : copies)
        if (ir::uses_name(v.cxx_type, fn_.var(c->var).name)) ++reads[c->var];
    for (bool changed = true; changed;) {
      changed = false;
      for (const Stmt* c : copies)
        if (reads[c->var] == 0 && unread_copies_->insert(c).second) {
          --reads[copied(*c)];
          changed = true;
        }
    }
  }
  // The variable `const T name = other;` copies (-1 for any other statement).
  int copied(const Stmt& s) const {
    if (s.kind != StmtKind::Decl || !s.expr || s.var < 0 || !ir::is_scalar(fn_.var(s.var).type) ||
        fn_.var(s.var).cxx_type.rfind("const ", 0) != 0)
      return -1;
    const Expr& e = *s.expr;
    if (e.kind == ExprKind::VarRef) return e.var;
    if (e.kind == ExprKind::Opaque && e.reads.size() == 1 && e.text == fn_.var(e.reads[0]).name) return e.reads[0];
    return -1;
  }
  std::optional<std::set<const Stmt*>> unread_copies_;

  std::string var_decl(const ir::Var& v) const { return cxx::declaration(v.cxx_type, v.name); }

  // A statement of a for loop's init, on one line without its newline ("" when it needs several).
  std::string for_init(const Stmt& s) {
    std::string text;
    const int saved = indent_;
    stmt(s, text, 0);
    indent_ = saved;
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text;
  }

  void stmt(const Stmt& s, std::string& out, int indent) {
    indent_ = indent;
    switch (s.kind) {
      case StmtKind::Decl: {
        if (unread_size(s) || unread_copy(s)) return;
        const ir::Var& v = fn_.var(s.var);
        std::string text = (s.is_static_local ? "static " : "") + var_decl(v);
        if (s.expr) text += " = " + unparen(expr(*s.expr));
        line(out, indent, text + ";", s.comment);
        return;
      }
      case StmtKind::Bind: {
        std::vector<std::string> names;
        for (int v : s.vars) names.push_back(fn_.var(v).name);
        line(out, indent, s.text + " [" + join(names) + "] = " + unparen(expr(*s.expr)) + ";", s.comment);
        return;
      }
      case StmtKind::Assign:
        line(out, indent, fn_.var(s.var).name + " " + s.text + " " + unparen(expr(*s.expr)) + ";", s.comment);
        return;
      case StmtKind::Eval:
        line(out, indent, unparen(expr(*s.expr)) + ";", s.comment);
        return;
      case StmtKind::If:
        line(out, indent, "if (" + unparen(expr(*s.expr)) + ") {", s.comment);
        block(s.body, out, indent + 1);
        if (s.has_else) {
          line(out, indent, "} else {");
          block(s.else_body, out, indent + 1);
        }
        line(out, indent, "}");
        return;
      case StmtKind::For:
        for_stmt(s, out, indent);
        return;
      case StmtKind::While:
        line(out, indent, "while (" + unparen(expr(*s.expr)) + ") {", s.comment);
        block(s.body, out, indent + 1);
        line(out, indent, "}");
        return;
      case StmtKind::DoWhile:
        line(out, indent, "do {", s.comment);
        block(s.body, out, indent + 1);
        indent_ = indent;
        line(out, indent, "} while (" + unparen(expr(*s.expr)) + ");");
        return;
      case StmtKind::Switch:
        switch_stmt(s, out, indent);
        return;
      case StmtKind::Case:
        line(out, indent - 1, s.text + ":");
        return;
      case StmtKind::Break:
        line(out, indent, "break;", s.comment);
        return;
      case StmtKind::Continue:
        line(out, indent, "continue;", s.comment);
        return;
      case StmtKind::Return:
        line(out, indent, s.expr ? "return " + unparen(expr(*s.expr)) + ";" : "return;", s.comment);
        return;
      case StmtKind::Block:
        if (s.text == "label") {  // the statement after a label: no scope of its own
          block(s.body, out, indent);
          return;
        }
        line(out, indent, "{", s.comment);
        block(s.body, out, indent + 1);
        line(out, indent, "}");
        return;
      case StmtKind::Opaque: {
        std::string text = s.text;
        if (s.ast != nullptr && llvm::isa<clang::Expr>(s.ast)) text += ";";
        line(out, indent, text, s.comment);
        return;
      }
    }
  }

  void for_stmt(const Stmt& s, std::string& out, int indent) {
    std::string init = s.init.empty() ? ";" : for_init(*s.init[0]);
    indent_ = indent;
    const std::string cond = s.expr ? unparen(expr(*s.expr)) : "";
    const std::string step = s.step ? unparen(expr(*s.step)) : "";
    if (s.init.size() > 1 || init.find('\n') != std::string::npos) {
      // An init of several statements: the loop goes in a block of its own, after them.
      line(out, indent, "{");
      block(s.init, out, indent + 1);
      line(out, indent + 1, "for (; " + cond + "; " + step + ") {", s.comment);
      block(s.body, out, indent + 2);
      line(out, indent + 1, "}");
      line(out, indent, "}");
      return;
    }
    line(out, indent, "for (" + init + " " + cond + "; " + step + ") {", s.comment);
    block(s.body, out, indent + 1);
    line(out, indent, "}");
  }

  // Each case runs in a block of its own: the names that generated code declares (alignments,
  // temporaries) must not be in scope at a later case label.
  void switch_stmt(const Stmt& s, std::string& out, int indent) {
    line(out, indent, "switch (" + unparen(expr(*s.expr)) + ") {", s.comment);
    bool open = false;
    std::vector<std::string> labels;
    for (const Stmt* t : ir::switch_items(s.body)) {
      if (t->kind == StmtKind::Case) {
        if (open) line(out, indent + 1, "}");
        open = false;
        labels.push_back(t->text + ":");
        continue;
      }
      if (!open && !labels.empty()) {
        labels.back() += " {";
        for (const auto& label : labels) line(out, indent + 1, label);
        labels.clear();
        open = true;
      }
      stmt(*t, out, open ? indent + 2 : indent + 1);
    }
    for (const auto& label : labels) line(out, indent + 1, label + (&label == &labels.back() ? " {}" : ""));
    if (open) line(out, indent + 1, "}");
    line(out, indent, "}");
  }

  std::vector<std::string> exprs(const std::vector<ir::ExprPtr>& items, size_t from = 0) {
    std::vector<std::string> out;
    for (size_t i = from; i < items.size(); ++i) out.push_back(expr(*items[i]));
    return out;
  }

  std::string expr(const Expr& e) {
    switch (e.kind) {
      case ExprKind::VarRef:
        return fn_.var(e.var).name;
      case ExprKind::Opaque:
        return e.text;
      case ExprKind::Unary: {
        const std::string a = expr(e.arg(0));
        const auto* u = llvm::dyn_cast_or_null<clang::UnaryOperator>(e.ast);
        if (u != nullptr && u->isPostfix()) return paren(a) + e.text;
        return "(" + e.text + paren(a) + ")";
      }
      case ExprKind::Binary:  // (an operand kept as text, `l + 1`, keeps the parentheses it stood in)
        return "(" + paren(expr(e.arg(0))) + " " + e.text + " " + paren(expr(e.arg(1))) + ")";
      case ExprKind::Conditional:
        return "(" + expr(e.arg(0)) + " ? " + expr(e.arg(1)) + " : " + expr(e.arg(2)) + ")";
      case ExprKind::Cast:
        return "static_cast<" + e.text + ">(" + unparen(expr(e.arg(0))) + ")";
      case ExprKind::List:  // (text: the type it initializes, `T{a, b}`, or none)
        return e.text + "{" + join_args(exprs(e.args)) + "}";
      case ExprKind::Tuple: {
        std::vector<std::string> types;
        for (const auto& a : e.args) types.push_back(a->type == ir::Type::Tensor ? "fg::Tensor" : "");
        return cxx::tuple_value(exprs(e.args), types);
      }
      case ExprKind::Get:
        return "std::get<" + std::to_string(e.index) + ">(" + unparen(expr(e.arg(0))) + ")";
      case ExprKind::Call:
        return call(e);
      case ExprKind::Lambda:
        return lambda(e);
      case ExprKind::Member:
        return paren(expr(e.arg(0))) + "." + e.text;
    }
    return e.text;
  }

  std::string lambda(const Expr& e) {
    const int indent = indent_;
    std::string body;
    block(e.body, body, indent + 1);
    indent_ = indent;
    return e.text + " {\n" + body + pad(indent) + "}" + (e.invoked ? "()" : "");
  }

  std::string call(const Expr& e) {
    const std::vector<std::string> args = exprs(e.args);
    const auto rest = [&] { return join_args(std::vector<std::string>(args.begin() + 1, args.end())); };
    switch (e.form) {
      case ir::CallForm::Free:
        return "fg::" + e.op + e.template_args + "(" + join_args(args) + ")";
      case ir::CallForm::Method:
        return paren(args[0]) + "." + e.op + e.template_args + "(" + rest() + ")";
      case ir::CallForm::Operator:
      case ir::CallForm::External:
        if (e.form == ir::CallForm::External && e.text.empty()) {  // a user's function (op: its name), or funcgen's
          return (e.callee != nullptr ? call_name(e.callee) : e.op) + e.template_args + "(" + join_args(args) + ")";
        }
        if (e.text == "[]") return paren(args[0]) + "[" + unparen(args[1]) + "]";
        if (e.text == "()") return paren(args[0]) + "(" + rest() + ")";
        if (args.size() == 1) return "(" + e.text + paren(args[0]) + ")";
        if (e.text.size() >= 2 && e.text.back() == '=' && e.text != "==" && e.text != "!=" && e.text != "<=" &&
            e.text != ">=")
          return args[0] + " " + e.text + " " + args[1];
        return "(" + paren(args[0]) + " " + e.text + " " + paren(args[1]) + ")";  // x * (i + 1)
      case ir::CallForm::User:
        return structured_result(e, user_call(e, args));
      case ir::CallForm::Vmapped:
        break;
    }
    llvm_unreachable("vmapped calls are rewritten by the vmap transform before printing");
  }

  // A call of the user's function, as written.
  static std::string user_call(const Expr& e, const std::vector<std::string>& args) {
    std::vector<std::string> given = addressed(e, packed(e, args));
    if (const auto* m = llvm::dyn_cast<clang::CXXMethodDecl>(e.callee); m != nullptr && m->getParent()->isLambda()) {
      given.erase(given.begin(), given.begin() + e.index);  // the captured values: the lambda holds them
      return e.text + "(" + join_args(given) + ")";
    }
    if (const auto* m = llvm::dyn_cast<clang::CXXMethodDecl>(e.callee); m != nullptr && !m->isStatic()) {
      const std::string object = given.front();  // the rebuilt object: Net{w1, b1}.forward(x)
      given.erase(given.begin());
      if (m->getOverloadedOperator() == clang::OO_Call) return object + "(" + join_args(given) + ")";  // Net{w1, b1}(x)
      return object + "." + e.op + e.template_args + "(" + join_args(given) + ")";
    }
    return call_name(e.callee) + e.template_args + "(" + join_args(given) + ")";
  }

  // The user's function takes a tensor's address where its parameter is a pointer to one (which the IR
  // passes as the tensor): `scale(&y, 3.0)`; a value (not a variable) lives to the call's end as a
  // const reference's temporary.
  static std::vector<std::string> addressed(const Expr& e, std::vector<std::string> given) {
    const auto* m = llvm::dyn_cast<clang::CXXMethodDecl>(e.callee);
    const size_t shift = m != nullptr && !m->isStatic() ? (m->getParent()->isLambda() ? e.index : 1) : 0;
    for (size_t i = shift; i < given.size() && i - shift < e.callee->getNumParams(); ++i) {
      const clang::QualType t = e.callee->getParamDecl(static_cast<unsigned>(i - shift))->getType();
      if (!t->isPointerType() || !is_fg_tensor(t->getPointeeType())) continue;
      const bool name = !given[i].empty() && std::all_of(given[i].begin(), given[i].end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
      });
      given[i] = name ? "&" + given[i] : "&static_cast<const fg::Tensor&>(" + given[i] + ")";
    }
    return given;
  }

  // `call` of a function that returns a structure stands for the tensors of its result that the IR
  // reads (one, or their tuple).
  static std::string structured_result(const Expr& e, const std::string& call) {
    if (e.result_leaves.empty()) return call;
    const std::string leaves =
        e.result_leaves.size() == 1 ? e.result_leaves[0] : "std::make_tuple(" + join(e.result_leaves) + ")";
    return "[&] { const auto result__ = " + call + "; return " + leaves + "; }()";  // (clang-format lays it out)
  }

  // The arguments of a call of a function that takes structures, rebuilt from their leaves.
  static std::vector<std::string> packed(const ir::Expr& e, const std::vector<std::string>& args) {
    if (e.packing.empty()) return args;
    std::vector<std::string> out;
    size_t next = 0;
    for (const std::string& pack : e.packing) {
      if (pack.empty()) {
        out.push_back(args.at(next++));
        continue;
      }
      std::string text;
      for (char c : pack) {
        if (c == ir::kHeldLeaf) ++next;  // the lambda passed holds it
        if (c == ir::kHeldLeaf || c == ir::kLambdaArg) continue;
        text += c == ir::kPackedLeaf ? cxx::unparen(args.at(next++)) : std::string(1, c);
      }
      out.push_back(text);
    }
    return out;
  }

  const ir::Function& fn_;
  int indent_ = 0;  // of the statement being printed: lambdas in it indent from there
};

}  // namespace

std::string print_body(const ir::Function& fn) { return Printer(fn).body(); }

std::string print_function(const ir::ProgramFunction& f) {
  const std::string body = print_body(*f.fn);
  std::string out = f.comment.empty() ? "" : "// " + f.comment + "\n";
  return out + (f.is_static ? "static " : "") + ir::signature(*f.fn, f.fn->name, &body) + " {\n" + body + "}\n";
}

std::string print_record(const ir::Record& r) {
  std::string out = r.comment.empty() ? "" : "// " + r.comment + "\n";
  out += "struct " + r.name + " {\n";
  for (int m : r.members) out += "  " + cxx::declaration(r.call->var(m).cxx_type, r.call->var(m).name) + ";\n";
  return out + "  " + ir::signature(*r.call, "operator()") + " const;\n};\n";
}

std::string print_record_call(const ir::Record& r) {
  const std::string body = print_body(*r.call);
  return ir::signature(*r.call, r.call->name, &body) + " const {\n" + body + "}\n";
}

ir::GeneratedFunction print_program(const ir::Program& program) {
  ir::GeneratedFunction g;
  for (const auto& h : program.helpers) g.helpers += print_function(h) + "\n";
  g.definition = print_function(program.entry);
  g.declaration = ir::declaration(*program.entry.fn, program.entry.fn->name) + ";";
  return g;
}

}  // namespace funcgen::emitter
