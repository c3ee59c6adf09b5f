// Specs on functions with structured parameters or results (frontend/pytree.h): the transforms run
// on the flat function (one parameter per leaf), with in_dims and argnums spread over the leaves;
// the function the user calls takes and returns the structures, as torch.func takes and returns
// pytrees (a gradient w.r.t. a `Params` is a `Params`, jvp's tangents are structured as the primals).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/annotations.h"
#include "frontend/pytree.h"

namespace funcgen::structures {

struct Param {
  std::string name;
  std::string cxx_decl;  // as the generated function declares it ("const Params& p")
  pytree::Tree tree;     // a leaf for a tensor or a value passed through
};

struct Signature {
  std::vector<Param> params;
  pytree::Tree result;
  std::vector<std::string> header_lines;  // what a header declaring it needs (includes, forward declarations)
  std::string problem;                    // why its types cannot be declared in a header
};

// What a header that declares functions taking `fn`'s parameters and returning its result must
// see (standard headers, forward declarations of user structs and enums), and why it cannot
// declare them, if so (`problem`, empty otherwise).
struct HeaderNeeds {
  std::vector<std::string> lines;
  std::string problem;
};
HeaderNeeds header_needs(const clang::FunctionDecl& fn, const clang::ASTContext& context);

// The function the spec names: as the user wrote it, and flat (as lowered). `params` and `result`:
// the trees its lowering found (one per C++ parameter, the object first for a method).
Signature user_signature(const clang::FunctionDecl& fn, const std::vector<std::optional<pytree::Tree>>& params,
                         const std::optional<pytree::Tree>& result, const clang::ASTContext& context);
Signature flat_signature(const ir::Function& fn, const Signature& user);

// The spec's chain over the flat function, and both signatures of its result.
struct Flat {
  std::vector<std::shared_ptr<spec::Transform>> owned;
  std::vector<SpecLink> chain;
  Signature user, flat;
};

// What cannot be spread over the leaves is an error at the transform (`at`, a byte of its spec).
struct Refusal {
  SpecLink link;
  size_t offset = 0;
  std::string message;
  const char* category = "unsupported";  // or "spec": the spec does not fit the structures
};

// nullopt with `refusal` set when a transform of the chain cannot take the structures.
std::optional<Flat> flatten(const std::vector<SpecLink>& chain, const Signature& user, const Signature& flat,
                            Refusal& refusal);

// The function the user calls: checks the sizes of vectors and maps, calls the flat function
// (flat_name's) with the leaves, and builds the structured result (and the pullback or jvp_fn over
// the flat one's).
struct Wrapper {
  std::string declaration, definition;
};
Wrapper wrapper(const std::string& name, const Flat& flat);
// The flat function of a vjp or linearize spec, whose function object the structured one wraps.
std::string callable_flat_name(const std::string& name);
// The name of the flat function of the spec `name`: an overload of the structured one, or
// callable_flat_name's where it would take the same parameters (only the result is structured)
// or it is a vjp's or linearize's.
std::string flat_name(const std::string& name, const Flat& flat);

// The std::optional<fg::Tensor> parameters and fields of `fn`'s parameters ("b", "p.bias",
// "self.bias" for a member function's object), by access path.
std::vector<std::string> optional_paths(const clang::FunctionDecl& fn, const clang::ASTContext& context);

// One specialization of a function on which optionals hold tensors: the flat function `flat_name`,
// or, where it differentiates with respect to optionals that hold none, the error it raises.
struct Specialization {
  Flat flat;
  std::string flat_name;
  std::string error;
};
// The function the user calls when its arguments hold optionals: it calls the specialization for
// the optionals that hold tensors (each a flat function of its own).
Wrapper specialized_wrapper(const std::string& name, const std::vector<Specialization>& cases);

}  // namespace funcgen::structures
