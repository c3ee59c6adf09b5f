#include "ir/dump.h"

namespace funcgen::ir {

namespace {

// A variable's name; "?" for an id the function has no variable of (IR a pass got wrong).
bool known(const Function& fn, int id) { return id >= 0 && static_cast<size_t>(id) < fn.vars.size(); }
std::string name(const Function& fn, int id) { return known(fn, id) ? fn.var(id).name : "?"; }

std::string names(const Function& fn, const std::vector<int>& ids) {
  std::string out;
  for (int id : ids) out += (out.empty() ? "" : ", ") + name(fn, id);
  return out;
}

// ` reads(a) writes(b)` for what an Opaque expression or statement reads and writes.
std::string effects(const Function& fn, const std::vector<int>& reads, const std::vector<int>& writes) {
  std::string out;
  if (!reads.empty()) out += " reads(" + names(fn, reads) + ")";
  if (!writes.empty()) out += " writes(" + names(fn, writes) + ")";
  return out;
}

const char* form_prefix(CallForm form) {
  switch (form) {
    case CallForm::Free: return "";
    case CallForm::Method: return "method:";
    case CallForm::Operator: return "operator:";
    case CallForm::User: return "user:";
    case CallForm::External: return "external:";
    case CallForm::Vmapped: return "vmapped:";
  }
  return "?:";
}

// A level of a recursion: `{n=2}`.
std::string constants_of(const Constants& constants) {
  std::string out;
  for (const auto& [name, value] : constants) out += (out.empty() ? "{" : ", ") + name + "=" + std::to_string(value);
  return out.empty() ? out : out + "}";
}

std::string args_of(const Function& fn, const Expr& e) {
  std::string out;
  for (const auto& a : e.args) out += (out.empty() ? "" : ", ") + dump(fn, *a);
  return out;
}

// The one-line text of a statement (without its nested bodies).
std::string head(const Function& fn, const Stmt& s) {
  const auto x = [&](const char* prefix) { return s.expr ? prefix + dump(fn, *s.expr) : std::string(); };
  switch (s.kind) {
    case StmtKind::Decl: {
      const char* type = known(fn, s.var) ? name_of(fn.var(s.var).type) : "?";
      return std::string(s.is_static_local ? "static " : "") + "decl " + name(fn, s.var) + ": " + type + x(" = ");
    }
    case StmtKind::Bind: return "bind [" + names(fn, s.vars) + "]" + x(" = ");
    case StmtKind::Assign: return "assign " + name(fn, s.var) + " " + (s.text.empty() ? "=" : s.text) + x(" ");
    case StmtKind::Eval: return "eval" + x(" ");
    case StmtKind::If: return "if" + x(" ");
    case StmtKind::For: return "for" + x(" ") + (s.step ? "; step " + dump(fn, *s.step) : "");
    case StmtKind::While: return "while" + x(" ");
    case StmtKind::DoWhile: return "do-while" + x(" ");
    case StmtKind::Switch: return "switch" + x(" ");
    case StmtKind::Case: return s.text;  // "case 0", "default"
    case StmtKind::Break: return "break";
    case StmtKind::Continue: return "continue";
    case StmtKind::Return: return "return" + x(" ");
    case StmtKind::Block: return s.text.empty() ? "block" : "block " + s.text;
    case StmtKind::Opaque:
      return std::string(s.lambda_definition ? "lambda-definition " : "") + "opaque '" + s.text + "'" +
             effects(fn, s.reads, s.writes);
  }
  return "?";
}

void stmts(const Function& fn, const std::vector<StmtPtr>& body, int indent, std::string& out) {
  const std::string pad(static_cast<size_t>(indent) * 2, ' ');
  for (const auto& s : body) {
    out += pad + head(fn, *s) + "\n";
    for (const auto& i : s->init) out += pad + "  init " + head(fn, *i) + "\n";
    stmts(fn, s->body, indent + 1, out);
    if (s->kind == StmtKind::If && s->has_else) {
      out += pad + "else\n";
      stmts(fn, s->else_body, indent + 1, out);
    }
  }
}

}  // namespace

std::string dump(const Function& fn, const Expr& e) {
  switch (e.kind) {
    case ExprKind::VarRef: return name(fn, e.var);
    case ExprKind::Opaque:
      if (!e.op.empty()) return "opaque<" + e.op + ">(" + names(fn, e.reads) + ")";
      return "'" + e.text + "'" + effects(fn, e.reads, e.writes);
    case ExprKind::Call: {
      // A lambda's call is named by its variable (its text), the lambda's captures first.
      const std::string lambda = is_lambda_call(e) ? "[" + e.text + "]" : "";
      return form_prefix(e.form) + e.op + lambda + e.template_args + constants_of(e.constants) + "(" + args_of(fn, e) + ")";
    }
    case ExprKind::Unary: return "(" + e.text + args_of(fn, e) + ")";
    case ExprKind::Binary:
      return e.args.size() == 2 ? "(" + dump(fn, e.arg(0)) + " " + e.text + " " + dump(fn, e.arg(1)) + ")" : "?";
    case ExprKind::Conditional:
      return e.args.size() == 3 ? "(" + dump(fn, e.arg(0)) + " ? " + dump(fn, e.arg(1)) + " : " + dump(fn, e.arg(2)) + ")"
                                : "?";
    case ExprKind::List: return "{" + args_of(fn, e) + "}";
    case ExprKind::Tuple: return "tuple(" + args_of(fn, e) + ")";
    case ExprKind::Get: return "get<" + std::to_string(e.index) + ">(" + args_of(fn, e) + ")";
    case ExprKind::Cast: return "cast<" + e.text + ">(" + args_of(fn, e) + ")";
    case ExprKind::Lambda: {
      std::string inner;
      for (const auto& s : e.body) inner += (inner.empty() ? "" : "; ") + head(fn, *s);
      return "lambda" + e.text + "{ " + inner + " }" + (e.invoked ? "()" : "");
    }
    case ExprKind::Member:
      return e.args.empty() ? "member(?)" : "member(" + dump(fn, e.arg(0)) + ")." + e.text;
  }
  return "?";
}

std::string dump(const Function& fn, const std::vector<StmtPtr>& body, int indent) {
  std::string out;
  stmts(fn, body, indent, out);
  return out;
}

std::string dump(const Function& fn) {
  std::string params;
  for (int p : fn.params) params += (params.empty() ? "" : ", ") + name(fn, p) + ": " + name_of(fn.var(p).type);
  return "function " + fn.name + constants_of(fn.constants) + "(" + params + ") -> " + name_of(fn.return_type) + "\n" + dump(fn, fn.body, 1);
}

}  // namespace funcgen::ir
