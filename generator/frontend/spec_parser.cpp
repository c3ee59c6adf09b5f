// Lexer, parser and option checker of the spec language (spec.h).
#include <algorithm>
#include <cctype>
#include <map>

#include "spec.h"

namespace funcgen::spec {
namespace {

[[noreturn]] void error(size_t offset, std::string message,
                        std::vector<std::pair<size_t, std::string>> notes = {},
                        std::optional<FixIt> fixit = std::nullopt) {
  throw ParseError(Diagnostic{offset, std::move(message), std::move(notes), std::move(fixit)});
}

// ---------------------------------------------------------------- lexer
struct Token {
  enum class Kind { Name, Int, String, Punct, End };
  Kind kind;
  size_t offset, end;
  std::string text;  // Name: identifier; String: contents; Punct: the character
  int64_t integer = 0;
};

std::vector<Token> lex(const std::string& s) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      out.push_back({Token::Kind::Name, i, j, s.substr(i, j - i)});
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '-' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      size_t j = i + 1;
      while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
      if (j < s.size() && (s[j] == '.' || std::isalpha(static_cast<unsigned char>(s[j]))))
        error(i, "expected an integer literal; dims, argnums and sizes are ints");
      Token t{Token::Kind::Int, i, j, s.substr(i, j - i)};
      try {
        t.integer = std::stoll(t.text);
      } catch (const std::exception&) {
        error(i, "integer literal '" + t.text + "' is out of range");
      }
      out.push_back(t);
      i = j;
    } else if (c == '\'' || c == '"') {
      size_t j = i + 1;
      while (j < s.size() && s[j] != c) ++j;
      if (j >= s.size()) error(i, std::string("unterminated string literal; add the closing ") + c);
      out.push_back({Token::Kind::String, i, j + 1, s.substr(i + 1, j - i - 1)});
      i = j + 1;
    } else if (c == '(' || c == ')' || c == ',' || c == '=') {
      out.push_back({Token::Kind::Punct, i, i + 1, std::string(1, c)});
      ++i;
    } else {
      error(i, std::string("unexpected character '") + c + "' in spec");
    }
  }
  out.push_back({Token::Kind::End, s.size(), s.size(), ""});
  return out;
}

// ---------------------------------------------------------------- parser
class Parser {
 public:
  explicit Parser(const std::string& text) : tokens_(lex(text)) {}

  Annotation annotation() {
    Annotation a;
    const Token& name = peek();
    // A derivative rule: `custom_vjp(f)` / `custom_jvp(f)` annotates the rule, generates nothing.
    if (name.kind == Token::Kind::Name && (name.text == "custom_vjp" || name.text == "custom_jvp") &&
        pos_ + 1 < tokens_.size() && tokens_[pos_ + 1].text == "(") {
      a.value = value();
      if (peek().kind != Token::Kind::End) error(peek().offset, "unexpected text after the rule");
      return a;
    }
    if (name.kind != Token::Kind::Name)
      error(name.offset, "expected the name of the generated function; a spec reads 'name = transform(f, ...)'");
    a.name = name.text;
    a.name_offset = name.offset;
    next();
    if (!is_punct("="))
      error(peek().offset, "expected '=' after '" + a.name + "'; a spec reads 'name = transform(f, ...)'");
    next();
    a.value = value();
    if (peek().kind != Token::Kind::End) error(peek().offset, "unexpected text after the transform expression");
    return a;
  }

 private:
  const Token& peek() const { return tokens_[pos_]; }
  const Token& next() { return tokens_[pos_++]; }
  bool is_punct(const char* p) const { return peek().kind == Token::Kind::Punct && peek().text == p; }

  Value value() {
    const Token& t = peek();
    Value v;
    v.offset = t.offset;
    v.end = t.end;
    switch (t.kind) {
      case Token::Kind::Int:
        v.kind = Value::Kind::Int;
        v.integer = t.integer;
        next();
        return v;
      case Token::Kind::String:
        v.kind = Value::Kind::String;
        v.text = t.text;
        next();
        return v;
      case Token::Kind::Name: {
        next();
        if (t.text == "None") return v;
        if (t.text == "True" || t.text == "False") {
          v.kind = Value::Kind::Bool;
          v.boolean = t.text == "True";
          return v;
        }
        v.kind = Value::Kind::Name;
        v.text = t.text;
        if (is_punct("(")) call_arguments(v);
        return v;
      }
      case Token::Kind::Punct:
        if (t.text == "(") return tuple_or_group();
        error(t.offset, "expected a value, got '" + t.text + "'");
      case Token::Kind::End:
        error(t.offset, "unexpected end of spec; expected a value");
    }
    error(t.offset, "expected a value");
  }

  void call_arguments(Value& call) {
    call.kind = Value::Kind::Call;
    const size_t open = peek().offset;
    next();  // (
    while (!is_punct(")")) {
      if (peek().kind == Token::Kind::End)
        error(peek().offset, "expected ')' to close the call to '" + call.text + "'", {{open, "the call opens here"}});
      // keyword argument: NAME '=' value
      if (peek().kind == Token::Kind::Name && tokens_[pos_ + 1].kind == Token::Kind::Punct &&
          tokens_[pos_ + 1].text == "=") {
        const Token& key = next();
        next();  // =
        for (size_t k = 0; k < call.kwargs.size(); ++k)
          if (call.kwargs[k].first == key.text)
            error(key.offset, "keyword argument '" + key.text + "' is given twice",
                  {{call.kwarg_offsets[k], "first given here"}});
        call.kwargs.emplace_back(key.text, value());
        call.kwarg_offsets.push_back(key.offset);
      } else {
        if (!call.kwargs.empty())
          error(peek().offset, "positional argument follows keyword argument");
        call.items.push_back(value());
      }
      if (is_punct(",")) {
        next();
      } else if (peek().kind == Token::Kind::End) {
        error(peek().offset, "expected ')' to close the call to '" + call.text + "'", {{open, "the call opens here"}});
      } else if (!is_punct(")")) {
        error(peek().offset, "expected ',' or ')' in the call to '" + call.text + "'", {{open, "the call opens here"}});
      }
    }
    call.end = peek().end;
    next();  // )
  }

  Value tuple_or_group() {
    Value v;
    v.kind = Value::Kind::Tuple;
    v.offset = peek().offset;
    next();  // (
    bool saw_comma = false;
    while (!is_punct(")")) {
      if (peek().kind == Token::Kind::End)
        error(peek().offset, "expected ')' to close the tuple", {{v.offset, "the tuple opens here"}});
      v.items.push_back(value());
      if (is_punct(",")) {
        next();
        saw_comma = true;
      } else if (peek().kind == Token::Kind::End) {
        error(peek().offset, "expected ')' to close the tuple", {{v.offset, "the tuple opens here"}});
      } else if (!is_punct(")")) {
        error(peek().offset, "expected ',' or ')' in the tuple", {{v.offset, "the tuple opens here"}});
      }
    }
    v.end = peek().end;
    next();  // )
    // `(x)` is x, as in Python; `(x,)` and `()` are tuples.
    if (v.items.size() == 1 && !saw_comma) return v.items[0];
    return v;
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
};

// ---------------------------------------------------------------- transform options

struct Signature {
  TransformKind kind;
  std::vector<std::string> positional;  // after func, in order
  std::vector<std::string> keyword_only;
};

const std::map<std::string, Signature>& signatures() {
  static const std::map<std::string, Signature> table = {
      {"vmap", {TransformKind::Vmap, {"in_dims", "out_dims", "randomness"}, {"chunk_size", "control_flow"}}},
      {"grad", {TransformKind::Grad, {"argnums", "has_aux"}, {}}},
      {"grad_and_value", {TransformKind::GradAndValue, {"argnums", "has_aux"}, {}}},
      {"vjp", {TransformKind::Vjp, {}, {"has_aux"}}},
      {"jvp", {TransformKind::Jvp, {}, {"has_aux"}}},
      {"jacrev", {TransformKind::Jacrev, {"argnums"}, {"has_aux", "chunk_size"}}},
      {"jacfwd", {TransformKind::Jacfwd, {"argnums", "has_aux"}, {"randomness"}}},
      {"hessian", {TransformKind::Hessian, {"argnums"}, {}}},
      {"linearize", {TransformKind::Linearize, {}, {}}},
  };
  return table;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
}

// The closest candidate within two edits, or "".
std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = 3;
  for (const auto& c : candidates) {
    const size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}
std::string did_you_mean(const std::string& best) { return best.empty() ? "" : "; did you mean '" + best + "'?"; }
std::optional<FixIt> rename(size_t offset, const std::string& from, const std::string& to) {
  if (to.empty()) return std::nullopt;
  return FixIt{offset, from.size(), to};
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

Dim dim_entry(const Value& v, const std::string& option) {
  if (v.kind == Value::Kind::None) return std::nullopt;
  if (v.kind == Value::Kind::Int) return v.integer;
  error(v.offset, option + " entries must be an int or None");
}

DimTree dim_tree(const Value& v, const std::string& option) {
  DimTree t;
  t.offset = v.offset;
  if (v.kind != Value::Kind::Tuple) {
    t.dim = dim_entry(v, option);
    return t;
  }
  t.is_tuple = true;
  for (const Value& item : v.items) t.items.push_back(dim_tree(item, option));
  return t;
}

DimsOption dims_option(const Value& v, const std::string& option) {
  DimsOption d;
  d.offset = v.offset;
  if (v.kind == Value::Kind::Tuple) {
    d.per_item = true;
    for (const Value& item : v.items) {
      if (item.kind == Value::Kind::Tuple && option != "in_dims")
        error(item.offset, "nested tuples in " + option + " are not supported; give one int or None per output");
      d.trees.push_back(dim_tree(item, option));
      const DimTree& tree = d.trees.back();
      d.dims.push_back(tree.is_tuple ? (tree.any_mapped() ? Dim(0) : std::nullopt) : tree.dim);
      d.item_offsets.push_back(item.offset);
    }
    return d;
  }
  if (v.kind != Value::Kind::Int && v.kind != Value::Kind::None)
    error(v.offset, option + " must be an int, None, or a tuple of them");
  d.dims.push_back(dim_entry(v, option));
  d.item_offsets.push_back(v.offset);
  return d;
}

ArgnumsOption argnums_option(const Value& v) {
  ArgnumsOption a;
  a.offset = v.offset;
  if (v.kind == Value::Kind::Int) {
    a.argnums.push_back(v.integer);
    a.item_offsets.push_back(v.offset);
    return a;
  }
  if (v.kind != Value::Kind::Tuple || v.items.empty())
    error(v.offset, "argnums must be an int or a non-empty tuple of ints");
  a.is_tuple = true;
  for (const Value& item : v.items) {
    if (item.kind != Value::Kind::Int) error(item.offset, "argnums must be an int or a non-empty tuple of ints");
    for (size_t k = 0; k < a.argnums.size(); ++k)
      if (a.argnums[k] == item.integer)
        error(item.offset, "argnums has " + std::to_string(item.integer) + " twice", {{a.item_offsets[k], "first here"}});
    a.argnums.push_back(item.integer);
    a.item_offsets.push_back(item.offset);
  }
  return a;
}

bool bool_option(const Value& v, const std::string& option) {
  if (v.kind != Value::Kind::Bool) error(v.offset, option + " must be True or False");
  return v.boolean;
}

std::string string_option(const Value& v, const std::string& option, const std::vector<std::string>& allowed) {
  if (v.kind != Value::Kind::String || std::find(allowed.begin(), allowed.end(), v.text) == allowed.end()) {
    std::string quoted;
    for (const auto& a : allowed) quoted += (quoted.empty() ? "'" : ", '") + a + "'";
    error(v.offset, option + " must be one of " + quoted);
  }
  return v.text;
}

void apply_option(Transform& t, const std::string& key, const Value& v) {
  if (key == "in_dims") {
    t.in_dims = dims_option(v, "in_dims");
  } else if (key == "out_dims") {
    t.out_dims = dims_option(v, "out_dims");
  } else if (key == "randomness") {
    const std::string r = string_option(v, "randomness", {"error", "different", "same"});
    t.randomness = r == "error" ? Randomness::Error : r == "different" ? Randomness::Different : Randomness::Same;
    t.randomness_offset = v.offset;
    t.randomness_length = v.end - v.offset;
    t.randomness_given = true;
  } else if (key == "chunk_size") {
    if (v.kind == Value::Kind::None) {
      t.chunk_size.reset();
    } else if (v.kind == Value::Kind::Int && v.integer > 0) {
      t.chunk_size = v.integer;
    } else {
      error(v.offset, "chunk_size must be a positive int or None");
    }
  } else if (key == "control_flow") {
    t.control_flow = string_option(v, "control_flow", {"error", "select"}) == "select" ? ControlFlow::Select
                                                                                      : ControlFlow::Error;
  } else if (key == "argnums") {
    t.argnums = argnums_option(v);
  } else if (key == "has_aux") {
    t.has_aux = bool_option(v, "has_aux");
  }
}

}  // namespace

bool DimTree::any_mapped() const {
  if (!is_tuple) return dim.has_value();
  for (const DimTree& item : items)
    if (item.any_mapped()) return true;
  return false;
}

std::string nesting_of(const Transform& t) {
  if (t.kind == TransformKind::Function || t.inner == nullptr) return t.function;
  return std::string(name_of(t.kind)) + "(" + nesting_of(*t.inner) + ")";
}

const char* name_of(TransformKind kind) {
  switch (kind) {
    case TransformKind::Function: return "function";
    case TransformKind::Vmap: return "vmap";
    case TransformKind::Grad: return "grad";
    case TransformKind::GradAndValue: return "grad_and_value";
    case TransformKind::Vjp: return "vjp";
    case TransformKind::Jvp: return "jvp";
    case TransformKind::Jacrev: return "jacrev";
    case TransformKind::Jacfwd: return "jacfwd";
    case TransformKind::Hessian: return "hessian";
    case TransformKind::Linearize: return "linearize";
  }
  return "?";
}

Annotation parse(const std::string& text) { return Parser(text).annotation(); }

std::shared_ptr<const Transform> build_transform(const Value& value) {
  auto t = std::make_shared<Transform>();
  t->offset = value.offset;
  t->end = value.end;
  if (value.kind == Value::Kind::Name) {
    t->kind = TransformKind::Function;
    t->function = value.text;
    return t;
  }
  if (value.kind != Value::Kind::Call)
    error(value.offset, "expected a function name or a transform such as 'vmap(f)'");

  std::vector<std::string> names;
  for (const auto& [name, sig] : signatures()) names.push_back(name);
  const auto it = signatures().find(value.text);
  if (it == signatures().end()) {
    const std::string best = closest(value.text, names);
    error(value.offset, "unknown transform '" + value.text + "'" + did_you_mean(best),
          {{value.offset, "transforms are " + join(names)}}, rename(value.offset, value.text, best));
  }
  const Signature& sig = it->second;
  t->kind = sig.kind;

  if (value.items.empty())
    error(value.end > 0 ? value.end - 1 : value.offset,
          std::string(name_of(sig.kind)) + " needs the function to transform as its first argument");
  t->inner = build_transform(value.items[0]);

  if (value.items.size() - 1 > sig.positional.size())
    error(value.items[sig.positional.size() + 1].offset,
          "too many positional arguments for " + value.text + " (it takes func" +
              (sig.positional.empty() ? "" : ", " + join(sig.positional)) + ")");
  std::vector<std::string> given;
  for (size_t i = 1; i < value.items.size(); ++i) {
    given.push_back(sig.positional[i - 1]);
    apply_option(*t, sig.positional[i - 1], value.items[i]);
  }
  std::vector<std::string> allowed = sig.positional;
  allowed.insert(allowed.end(), sig.keyword_only.begin(), sig.keyword_only.end());
  for (size_t k = 0; k < value.kwargs.size(); ++k) {
    const auto& [key, v] = value.kwargs[k];
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      const std::string best = closest(key, allowed);
      error(value.kwarg_offsets[k], "unknown option '" + key + "' for " + value.text + did_you_mean(best),
            {{value.offset, value.text + " takes " + (allowed.empty() ? std::string("no options") : join(allowed))}},
            rename(value.kwarg_offsets[k], key, best));
    }
    if (std::find(given.begin(), given.end(), key) != given.end())
      error(value.kwarg_offsets[k], "option '" + key + "' of " + value.text + " is given both by position and by keyword");
    given.push_back(key);
    apply_option(*t, key, v);
  }
  return t;
}

}  // namespace funcgen::spec
