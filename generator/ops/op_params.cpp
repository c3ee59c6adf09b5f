#include "ops/op_params.h"

#include <cctype>

namespace funcgen {

namespace {

// The parameters that name a dim of their tensor argument, by the runtime's (and libtorch's) names.
bool is_dim_name(const std::string& n) {
  return n == "dim" || n == "dim0" || n == "dim1" || n == "dim2" || n == "start_dim" || n == "end_dim" ||
         n == "source" || n == "destination";
}

// The words of a list: split at spaces outside brackets.
std::vector<std::string> words(const std::string& list) {
  std::vector<std::string> out;
  std::string word;
  int depth = 0;
  for (const char c : list) {
    if (c == '(' || c == '{' || c == '[') ++depth;
    if (c == ')' || c == '}' || c == ']') --depth;
    if (depth == 0 && std::isspace(static_cast<unsigned char>(c))) {
      if (!word.empty()) out.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) out.push_back(word);
  return out;
}

}  // namespace

std::vector<OpParam> parse_op_params(const std::string& list) {
  std::vector<OpParam> out;
  for (const std::string& word : words(list)) {
    OpParam p;
    const size_t eq = word.find('=');
    p.name = word.substr(0, eq);
    if (eq != std::string::npos) p.default_value = word.substr(eq + 1);
    p.is_dim = is_dim_name(p.name);
    out.push_back(p);
  }
  return out;
}

}  // namespace funcgen
