#include "ops/einsum_rules.h"

#include <algorithm>
#include <map>

namespace funcgen::ad {

namespace {

constexpr char kEllipsis = '*';

std::string spelled(const std::string& subscripts) {
  std::string out;
  for (char c : subscripts) out += c == kEllipsis ? std::string("...") : std::string(1, c);
  return out;
}

struct Equation {
  std::vector<std::string> inputs;
  std::string output;
};

std::string parse(const std::string& literal, size_t noperands, Equation& eq) {
  if (literal.size() < 2 || literal.front() != '"' || literal.back() != '"')
    return "its equation is not a string literal (the derivative is derived from the equation when code is generated)";
  std::string text;
  for (char c : literal.substr(1, literal.size() - 2))
    if (c != ' ') text += c;
  // '...' (the broadcast dims) becomes one placeholder character.
  for (size_t at = text.find("..."); at != std::string::npos; at = text.find("...")) text.replace(at, 3, 1, kEllipsis);
  const size_t arrow = text.find("->");
  const std::string lhs = arrow == std::string::npos ? text : text.substr(0, arrow);
  size_t start = 0;
  for (size_t comma = lhs.find(','); ; comma = lhs.find(',', start)) {
    eq.inputs.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (eq.inputs.size() != noperands)
    return "the equation names " + std::to_string(eq.inputs.size()) + " operands, the call gives " +
           std::to_string(noperands);
  std::map<char, int> count;
  for (const auto& in : eq.inputs) {
    for (char c : in) {
      if (c == kEllipsis) {
        if (std::count(in.begin(), in.end(), c) > 1) return "'...' appears twice in one operand";
        continue;
      }
      if (!std::isalpha(static_cast<unsigned char>(c))) return std::string("'") + c + "' is not an index letter";
      ++count[c];
    }
  }
  if (arrow != std::string::npos) {
    eq.output = text.substr(arrow + 2);
  } else {  // implicit output: '...' if any operand has it, then the indices that appear once, in
             // alphabetical order (as torch)
    for (const auto& in : eq.inputs)
      if (in.find(kEllipsis) != std::string::npos && eq.output.empty()) eq.output += kEllipsis;
    for (const auto& [c, n] : count)
      if (n == 1) eq.output += c;
  }
  return "";
}

}  // namespace

std::string einsum_check(const std::string& literal, size_t noperands) {
  Equation eq;
  return parse(literal, noperands, eq);
}

std::string einsum_gradient(const std::string& literal, size_t k, size_t noperands, EinsumGradient& out) {
  Equation eq;
  if (std::string error = parse(literal, noperands, eq); !error.empty()) return error;
  std::string own = eq.inputs[k];
  const size_t ellipsis = own.find(kEllipsis);
  out.broadcast = ellipsis != std::string::npos;
  // The output's gradient is an operand of the gradient's einsum. Where the forward pass summed the
  // '...' dims away, it is the same along them: it is given as '...' of no dims, which broadcasts
  // against the other operands' (and the result is broadcast to the operand's below).
  const bool summed_away = out.broadcast && eq.output.find(kEllipsis) == std::string::npos;
  std::string elsewhere = eq.output;
  std::string inputs = (summed_away ? std::string(1, kEllipsis) : "") + eq.output;
  for (size_t i = 0; i < eq.inputs.size(); ++i) {
    if (i == k) continue;
    elsewhere += eq.inputs[i];
    inputs += "," + eq.inputs[i];
  }
  // A repeated index: each repetition after the first becomes an unused letter, tied to the first
  // by an identity operand (the gradient lies on the diagonal the forward pass read).
  for (size_t p = 0; p < own.size(); ++p) {
    if (own[p] == kEllipsis || own.find(own[p]) == p) continue;
    char fresh = 0;
    for (char c : std::string("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"))
      if (literal.find(c) == std::string::npos && inputs.find(c) == std::string::npos && own.find(c) == std::string::npos) {
        fresh = c;
        break;
      }
    if (fresh == 0) return "the equation uses every index letter, leaving none for the gradient of its diagonal";
    inputs += std::string(",") + own[p] + fresh;
    elsewhere += std::string(1, own[p]) + fresh;
    own[p] = fresh;
    out.identities.push_back(static_cast<int64_t>(p));
  }
  std::string kept;
  std::vector<int64_t> after;  // positions counted from the end, for indices after '...'
  for (size_t p = 0; p < own.size(); ++p) {
    if (own[p] == kEllipsis || elsewhere.find(own[p]) != std::string::npos) {
      kept += own[p];
    } else if (ellipsis == std::string::npos || p < ellipsis) {
      out.unsqueeze.push_back(static_cast<int64_t>(p));
    } else {
      after.push_back(static_cast<int64_t>(p) - static_cast<int64_t>(own.size()));
    }
  }
  // From the end, the last first: the dims after each are then all in place.
  out.unsqueeze.insert(out.unsqueeze.end(), after.rbegin(), after.rend());
  // An operand with '...' whose gradient lacks some of its dims (the '...' dims summed away, an
  // index of its own) is broadcast to its sizes and summed back to them (its '...' may have been
  // broadcast too). Only with '...' first: the gradient's '...' may have more dims than the
  // operand's, so the dims are placed from the end.
  out.reshape = out.broadcast && (summed_away || !out.unsqueeze.empty());
  if (out.reshape && ellipsis != 0)
    return "an operand with indices before its '...' whose gradient lacks some of its dims ('...' summed away "
           "or an index of its own) cannot be differentiated yet; put '...' first";
  out.equation = "\"" + spelled(inputs) + "->" + spelled(kept) + "\"";
  return "";
}

}  // namespace funcgen::ad
