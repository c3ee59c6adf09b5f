#include "ir/cxx_text.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace funcgen::cxx {

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':'; });
}

std::string identifier_of(const std::string& path) {
  std::string name;
  for (char c : path) {
    const bool word = std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    if (word) name += c;
    else if (!name.empty() && name.back() != '_') name += '_';
  }
  while (!name.empty() && name.back() == '_') name.pop_back();
  return is_identifier(name) ? name : name_stem(name);  // (`_`: nothing but underscores)
}

std::string name_stem(const std::string& base) {
  std::string stem;
  for (char c : base) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    if (c != '_' || (!stem.empty() && stem.back() != '_')) stem += c;
  }
  while (!stem.empty() && stem.back() == '_') stem.pop_back();
  if (stem.empty() || std::isdigit(static_cast<unsigned char>(stem[0]))) stem = "v" + stem;
  return stem;
}

// Wraps an expression in parentheses unless it is a name, a literal or a call.
std::string paren(const std::string& s) {
  if (is_identifier(s)) return s;
  std::string open;  // the brackets open at this point: ( [ { and < of template arguments
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"' || c == '\'') {  // a string literal: "ij,jk->ik"
      for (++i; i < s.size() && s[i] != c; ++i)
        if (s[i] == '\\') ++i;
      continue;
    }
    const bool after_name = i > 0 && (std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_');
    if (c == '(' || c == '[' || c == '{' || (c == '<' && after_name)) {
      open += c;
    } else if (c == ')' || c == ']' || c == '}' || (c == '>' && !open.empty() && open.back() == '<')) {
      if (!open.empty()) open.pop_back();
    } else if (c == ':' && ((i + 1 < s.size() && s[i + 1] == ':') || (i > 0 && s[i - 1] == ':'))) {
      continue;  // fg::op
    } else if (open.empty() && std::strchr(" +-*/%!?:=&|^~,<>", c) != nullptr) {
      return "(" + s + ")";
    }
  }
  // A '<' after a name that no '>' closed was a comparison or a shift (`i<1`, `i<<1`), not a template's.
  if (open.find('<') != std::string::npos) return "(" + s + ")";
  return s;
}

// Whether s[at] stands inside [], {} or the <> of template arguments opened after s's first '('.
bool inside_brackets(const std::string& s, size_t at) {
  int open = 0;
  for (size_t i = 1; i < at; ++i) {
    const char c = s[i];
    const bool after_name = std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_';
    if (c == '[' || c == '{' || (c == '<' && after_name)) ++open;
    else if ((c == ']' || c == '}' || c == '>') && open > 0) --open;
  }
  return open > 0;
}

// Drops the parentheses around a whole expression (`(a + b)`), where it stands alone: as an
// argument, an initializer, a condition or a returned value.
std::string unparen(const std::string& s) {
  if (s.size() < 2 || s.front() != '(' || s.back() != ')') return s;
  int depth = 0;
  char quote = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quote != 0) {
      if (c == '\\') ++i;
      else if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')' && --depth == 0 && i + 1 != s.size()) {
      return s;  // (a) + (b)
    } else if (c == ',' && depth == 1 && !inside_brackets(s, i)) {
      return s;  // (i++, i + j): without them, a list of declarators or of arguments
    }
  }
  return s.substr(1, s.size() - 2);
}

std::string join_args(const std::vector<std::string>& args) {
  std::string s;
  for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + unparen(args[i]);
  return s;
}

std::string declaration(const std::string& type, const std::string& name) {
  // The declarator goes where Clang's spelling of an array (or a pointer or reference to one) has
  // its hole: inside `(*)` / `(&)`, else before the first bound. (Types inside template arguments
  // hold their brackets between <>, which no declarator enters.)
  int angle = 0;
  for (size_t i = 0; i < type.size(); ++i) {
    const char c = type[i];
    if (c == '<') ++angle;
    if (c == '>') --angle;
    if (angle != 0) continue;
    if (c == '(' && i + 2 < type.size() && (type[i + 1] == '*' || type[i + 1] == '&') && type[i + 2] == ')')
      return type.substr(0, i + 2) + name + type.substr(i + 2);
    if (c == '[') return (i > 0 && type[i - 1] == ' ' ? type.substr(0, i) : type.substr(0, i) + " ") + name + type.substr(i);
  }
  return type + (!type.empty() && type.back() == '&' ? "" : " ") + name;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

std::string replace_identifiers(const std::string& text, const std::map<std::string, std::string>& names) {
  if (names.empty()) return text;
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '"' || c == '\'') {  // literals are left alone
      size_t j = i + 1;
      while (j < text.size() && text[j] != c) j += text[j] == '\\' ? 2 : 1;
      out += text.substr(i, j + 1 - i);
      i = j + 1;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
      const std::string word = text.substr(i, j - i);
      const bool member = (i > 0 && text[i - 1] == '.') || (i > 1 && (text.compare(i - 2, 2, "::") == 0 ||
                                                                      text.compare(i - 2, 2, "->") == 0));
      auto it = names.find(word);
      out += (!member && it != names.end()) ? it->second : word;
      i = j;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

namespace {
// Up to this many, a std::tuple as users write it; more, when they are all tensors, an array.
constexpr size_t kTupleItems = 64;
bool as_array(const std::vector<std::string>& types) {
  return types.size() > kTupleItems && std::all_of(types.begin(), types.end(), [](const std::string& t) { return t == "fg::Tensor"; });
}
}  // namespace

std::string tuple_type(const std::vector<std::string>& types) {
  if (as_array(types)) return "std::array<fg::Tensor, " + std::to_string(types.size()) + ">";
  return "std::tuple<" + join(types) + ">";
}

std::string tuple_value(const std::vector<std::string>& items, const std::vector<std::string>& types) {
  if (as_array(types)) return tuple_type(types) + "{" + join_args(items) + "}";
  return "std::make_tuple(" + join_args(items) + ")";
}

std::string string_literal(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace funcgen::cxx
