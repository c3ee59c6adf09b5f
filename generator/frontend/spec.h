// The spec language of FUNCGEN("name = transform(f, ...)"): torch.func's Python call syntax,
// parsed into a transform tree. Independent of Clang: positions are byte offsets into the spec
// string, which the Clang front-end maps to source locations inside the string literal.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace funcgen::spec {

// A Python literal or expression of the spec, as written.
struct Value {
  enum class Kind { None, Bool, Int, String, Tuple, Name, Call };
  Kind kind = Kind::None;
  size_t offset = 0;  // first byte in the spec string
  size_t end = 0;     // one past the last byte
  bool boolean = false;
  int64_t integer = 0;
  std::string text;                                // String: contents; Name and Call: the name
  std::vector<Value> items;                        // Tuple: elements; Call: positional arguments
  std::vector<std::pair<std::string, Value>> kwargs;  // Call: keyword arguments, in order
  std::vector<size_t> kwarg_offsets;               // Call: offset of each keyword's name
};

// The whole annotation: `name = value`, or a derivative rule `custom_vjp(f)` (no name).
struct Annotation {
  std::string name;  // empty for a rule
  size_t name_offset = 0;
  Value value;
};

// A suggested edit of the spec string: replace `length` bytes at `offset` with `text`.
struct FixIt {
  size_t offset = 0;
  size_t length = 0;
  std::string text;
};

// What went wrong, where in the spec string.
struct Diagnostic {
  size_t offset = 0;
  std::string message;
  std::vector<std::pair<size_t, std::string>> notes;  // offset, text
  std::optional<FixIt> fixit;
};

class ParseError : public std::exception {
 public:
  explicit ParseError(Diagnostic d) : diagnostic_(std::move(d)) {}
  const Diagnostic& diagnostic() const { return diagnostic_; }
  const char* what() const noexcept override { return diagnostic_.message.c_str(); }

 private:
  Diagnostic diagnostic_;
};

// Parses `name = call(...)`; throws ParseError at the offending byte.
Annotation parse(const std::string& text);

// ---------------------------------------------------------------- the transform tree

enum class TransformKind { Function, Vmap, Grad, GradAndValue, Vjp, Jvp, Jacrev, Jacfwd, Hessian, Linearize };
const char* name_of(TransformKind kind);

// A vmap in_dims / out_dims entry: an int, or None (not mapped).
using Dim = std::optional<int64_t>;

// An in_dims entry over a structure, as torch.func's in_dims pytrees: an int or None for the whole
// argument, or a tuple with one entry per field / element (`in_dims=((0, None), 0)`).
struct DimTree {
  Dim dim;                     // a leaf's entry
  size_t offset = 0;
  bool is_tuple = false;
  std::vector<DimTree> items;  // a tuple's entries
  bool any_mapped() const;
};

// A dims option as written: one entry for all (broadcast), or one per argument / output.
struct DimsOption {
  bool per_item = false;  // written as a tuple
  std::vector<Dim> dims;  // one element when !per_item; an entry written as a tuple: 0 if it maps any
  size_t offset = 0;
  std::vector<size_t> item_offsets;
  std::vector<DimTree> trees;  // per_item: each entry as written (in_dims only takes nested tuples)
};

struct ArgnumsOption {
  bool is_tuple = false;
  std::vector<int64_t> argnums;
  size_t offset = 0;
  std::vector<size_t> item_offsets;
};

enum class Randomness { Error, Different, Same };
enum class ControlFlow { Error, Select };

struct Transform {
  TransformKind kind = TransformKind::Function;
  size_t offset = 0;  // of the transform's name (or the function's name)
  size_t end = 0;     // one past the closing parenthesis (or the name)
  std::string function;               // Function: the C++ function or earlier spec name
  std::shared_ptr<const Transform> inner;  // every other kind: what it transforms

  // vmap
  DimsOption in_dims{false, {Dim(0)}, 0, {}, {}};
  DimsOption out_dims{false, {Dim(0)}, 0, {}, {}};
  Randomness randomness = Randomness::Error;
  size_t randomness_offset = 0;
  size_t randomness_length = 0;
  bool randomness_given = false;
  std::optional<int64_t> chunk_size;
  ControlFlow control_flow = ControlFlow::Error;
  // grad, grad_and_value, jacrev, jacfwd, hessian
  ArgnumsOption argnums{false, {0}, 0, {}};
  bool has_aux = false;
};

// Builds the transform tree of an annotation's value, checking transform names, option names,
// option types and values; throws ParseError at the offending byte.
std::shared_ptr<const Transform> build_transform(const Value& value);
// The nesting of transforms without their options: "vmap(jacrev(f))".
std::string nesting_of(const Transform& t);

// ---------------------------------------------------------------- checking against signatures

struct Param {
  std::string name;
  bool is_tensor = true;       // fg::Tensor; otherwise a C++ scalar passed through
  std::string type_spelling;   // for messages: "int", "double", ...
  bool structured = false;     // tensors inside a structure (frontend/pytree.h): in_dims may be a tuple
};

// The C++-level signature of a function, or of a transform of one.
struct FunctionInfo {
  std::string name;
  std::vector<Param> params;
  size_t outputs = 1;          // number of returned tensors (the elements of a std::tuple)
  bool returns_tuple = false;
  bool returns_callable = false;  // vjp and linearize return a function object
};

// Finds the annotated function or an earlier spec by name; nullptr when unknown.
using FunctionLookup = std::function<const FunctionInfo*(const std::string& name)>;

// Checks a transform against the signatures it applies to (in_dims arity, in_dims or argnums on a
// non-tensor argument, unknown function names, ...) and returns the signature of its result.
// Throws ParseError at the offending byte.
FunctionInfo check_transform(const Transform& transform, const FunctionLookup& lookup);

}  // namespace funcgen::spec
