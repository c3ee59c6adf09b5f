#include "ir/program.h"

#include <cctype>

#include "ir/cxx_text.h"

namespace funcgen::ir {

bool uses_name(const std::string& text, const std::string& word) {
  const auto is_name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const bool starts = at == 0 || !is_name_char(text[at - 1]);
    const bool ends = at + word.size() == text.size() || !is_name_char(text[at + word.size()]);
    if (starts && ends) return true;
  }
  return false;
}

std::string signature(const Function& fn, const std::string& name, const std::string* body) {
  std::vector<std::string> params;
  for (int id : fn.params) {
    const Var& v = fn.var(id);
    const std::string& type = v.cxx_type;
    const bool unnamed = v.unnamed_if_unused && body != nullptr && !uses_name(*body, v.name);
    const std::string shown = unnamed ? "/*" + v.name + "*/" : v.name;
    params.push_back(type + (type.back() == '&' ? "" : " ") + shown);
  }
  return fn.return_cxx_type + " " + name + "(" + cxx::join(params) + ")";
}

}  // namespace funcgen::ir
