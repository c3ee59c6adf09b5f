// Small helpers for building C++ text in the emitters (vmap, grad): joining, and putting in or
// taking out the parentheses an expression needs where it is used.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace funcgen::cxx {

// A name (qualified or not): needs no parentheses anywhere.
bool is_identifier(const std::string& s);
// The expression in parentheses unless it is a name, a literal or a call (no operator at its top).
std::string paren(const std::string& s);
// The expression without the parentheses around the whole of it, where it stands alone.
std::string unparen(const std::string& s);
std::string join(const std::vector<std::string>& items, const char* sep = ", ");
// Call arguments: joined, each without needless parentheses.
std::string join_args(const std::vector<std::string>& args);
// An identifier made of the words of `path` (`p.layer["w"]` -> p_layer_w): other characters become
// one '_' between words.
std::string identifier_of(const std::string& path);
// The stem of a name derived from `base` (a user's name or a generated one): a valid identifier
// without "__" and without '_' at either end, so that generated names made of it and a "__" end
// are valid whatever the user's name was (`_`, `__2`, `_X`); "v" where nothing of it is left.
std::string name_stem(const std::string& base);
// The type of a tuple of values of `types`, and a tuple of `items` of those types: std::tuple, or
// for many tensors std::array<fg::Tensor, N>, read the same way (std::get<k>, structured bindings).
// libstdc++'s std::tuple nests a template per element, so that a structure of 450 tensors passed
// the compilers' instantiation depth; std::array has no such limit.
std::string tuple_type(const std::vector<std::string>& types);
std::string tuple_value(const std::vector<std::string>& items, const std::vector<std::string>& types);
// The declaration of `name` as a `type` spelled as Clang prints types: `double[3]` declares
// `double name[3]`, `double (&)[3]` `double (&name)[3]`; other types `type name` (`T& name`).
std::string declaration(const std::string& type, const std::string& name);
// A C++ string literal of `s` (quotes and backslashes escaped).
std::string string_literal(const std::string& s);
// `text` with the identifiers that `names` maps replaced (not those after `.`, `->` or `::`).
std::string replace_identifiers(const std::string& text, const std::map<std::string, std::string>& names);

}  // namespace funcgen::cxx
