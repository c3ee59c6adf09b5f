// The spec language: parsing, option checking, and checking against function signatures, with
// the exact message and byte offset of every error.
#include <gtest/gtest.h>

#include <map>

#include "frontend/spec.h"

namespace funcgen::spec {
namespace {

std::shared_ptr<const Transform> build(const std::string& text) { return build_transform(parse(text).value); }

// Expects `text` to fail to parse or build with `message` at byte `offset`.
void expect_error(const std::string& text, size_t offset, const std::string& message) {
  try {
    build(text);
    ADD_FAILURE() << "no error for: " << text;
  } catch (const ParseError& e) {
    EXPECT_EQ(e.diagnostic().message, message) << text;
    EXPECT_EQ(e.diagnostic().offset, offset) << text << "\n" << std::string(e.diagnostic().offset, ' ') << "^";
  }
}

TEST(SpecParse, NameAndNestedTransforms) {
  const Annotation a = parse("per_sample_grads = vmap(grad(loss, argnums=(0, 1)), in_dims=(None, None, 0, 0))");
  EXPECT_EQ(a.name, "per_sample_grads");
  EXPECT_EQ(a.name_offset, 0u);
  const auto t = build_transform(a.value);
  ASSERT_EQ(t->kind, TransformKind::Vmap);
  EXPECT_EQ(t->offset, 19u);
  ASSERT_TRUE(t->in_dims.per_item);
  ASSERT_EQ(t->in_dims.dims.size(), 4u);
  EXPECT_FALSE(t->in_dims.dims[0].has_value());
  EXPECT_FALSE(t->in_dims.dims[1].has_value());
  EXPECT_EQ(*t->in_dims.dims[2], 0);
  EXPECT_EQ(*t->in_dims.dims[3], 0);
  const Transform& g = *t->inner;
  ASSERT_EQ(g.kind, TransformKind::Grad);
  EXPECT_TRUE(g.argnums.is_tuple);
  EXPECT_EQ(g.argnums.argnums, (std::vector<int64_t>{0, 1}));
  ASSERT_EQ(g.inner->kind, TransformKind::Function);
  EXPECT_EQ(g.inner->function, "loss");
  EXPECT_EQ(g.inner->offset, 29u);
}

TEST(SpecParse, DefaultsFollowTorchFunc) {
  const auto t = build("f2 = vmap(f)");
  EXPECT_FALSE(t->in_dims.per_item);
  EXPECT_EQ(t->in_dims.dims, (std::vector<Dim>{0}));
  EXPECT_EQ(t->out_dims.dims, (std::vector<Dim>{0}));
  EXPECT_EQ(t->randomness, Randomness::Error);
  EXPECT_FALSE(t->chunk_size.has_value());
  EXPECT_EQ(t->control_flow, ControlFlow::Error);
  const auto g = build("g = grad(f)");
  EXPECT_FALSE(g->argnums.is_tuple);
  EXPECT_EQ(g->argnums.argnums, (std::vector<int64_t>{0}));
  EXPECT_FALSE(g->has_aux);
}

TEST(SpecParse, PositionalOptionsLiteralsAndQuotes) {
  const auto t = build("h = vmap(f, (0, None, -1), 1, \"same\", chunk_size=4, control_flow='select')");
  EXPECT_EQ(t->in_dims.dims, (std::vector<Dim>{0, std::nullopt, -1}));
  EXPECT_EQ(t->out_dims.dims, (std::vector<Dim>{1}));
  EXPECT_EQ(t->randomness, Randomness::Same);
  EXPECT_EQ(t->chunk_size, 4);
  EXPECT_EQ(t->control_flow, ControlFlow::Select);
  // (x) is x; (x,) is a one-tuple, as in Python.
  EXPECT_FALSE(build("a = vmap(f, in_dims=(0))")->in_dims.per_item);
  EXPECT_TRUE(build("a = vmap(f, in_dims=(0,))")->in_dims.per_item);
  const auto j = build("j = jacrev(f, 1, has_aux=True, chunk_size=None)");
  EXPECT_EQ(j->argnums.argnums, (std::vector<int64_t>{1}));
  EXPECT_TRUE(j->has_aux);
  const auto hv = build("hvp = jvp(grad(f))");
  EXPECT_EQ(hv->kind, TransformKind::Jvp);
  EXPECT_EQ(hv->inner->kind, TransformKind::Grad);
}

TEST(SpecParse, SyntaxErrorsPointAtTheByte) {
  expect_error("vmap(f)", 4, "expected '=' after 'vmap'; a spec reads 'name = transform(f, ...)'");
  expect_error("= vmap(f)", 0, "expected the name of the generated function; a spec reads 'name = transform(f, ...)'");
  expect_error("g = vmap(f", 10, "expected ')' to close the call to 'vmap'");
  expect_error("g = vmap(f in_dims=0)", 11, "expected ',' or ')' in the call to 'vmap'");
  expect_error("g = vmap(f, randomness='same)", 23, "unterminated string literal; add the closing '");
  expect_error("g = vmap(f, in_dims=0.5)", 20, "expected an integer literal; dims, argnums and sizes are ints");
  expect_error("g = vmap(f) + 1", 12, "unexpected character '+' in spec");
  expect_error("g = vmap(f) h", 12, "unexpected text after the transform expression");
  expect_error("g = vmap(f, in_dims=0, 1)", 23, "positional argument follows keyword argument");
  expect_error("g = vmap(f, in_dims=0, in_dims=1)", 23, "keyword argument 'in_dims' is given twice");
}

TEST(SpecParse, UnknownTransformsAndOptionsSuggestTheClosestName) {
  expect_error("g = vmapp(f)", 4, "unknown transform 'vmapp'; did you mean 'vmap'?");
  expect_error("g = foo(f)", 4, "unknown transform 'foo'");
  expect_error("g = vmap(f, in_dim=0)", 12, "unknown option 'in_dim' for vmap; did you mean 'in_dims'?");
  expect_error("g = grad(f, randomness='same')", 12, "unknown option 'randomness' for grad");
  expect_error("g = vmap(f, 0, 0, 'same', 1)", 26, "too many positional arguments for vmap (it takes func, in_dims, out_dims, randomness)");
  expect_error("g = vmap(f, 0, in_dims=1)", 15, "option 'in_dims' of vmap is given both by position and by keyword");
  expect_error("g = vmap()", 9, "vmap needs the function to transform as its first argument");
  expect_error("g = vmap(0)", 9, "expected a function name or a transform such as 'vmap(f)'");
}

TEST(SpecParse, OptionValuesAreChecked) {
  expect_error("g = vmap(f, randomness='sometimes')", 23, "randomness must be one of 'error', 'different', 'same'");
  expect_error("g = vmap(f, control_flow=True)", 25, "control_flow must be one of 'error', 'select'");
  expect_error("g = vmap(f, in_dims='0')", 20, "in_dims must be an int, None, or a tuple of them");
  expect_error("g = vmap(f, out_dims=(0, (1, 2)))", 25, "nested tuples in out_dims are not supported; give one int or None per output");
  expect_error("g = vmap(f, in_dims=(0, True))", 24, "in_dims entries must be an int or None");
  expect_error("g = vmap(f, chunk_size=0)", 23, "chunk_size must be a positive int or None");
  expect_error("g = grad(f, argnums=(0, 0))", 24, "argnums has 0 twice");
  expect_error("g = grad(f, argnums=())", 20, "argnums must be an int or a non-empty tuple of ints");
  expect_error("g = grad(f, has_aux=1)", 20, "has_aux must be True or False");
}

// -------------------------------------------------------------- against signatures

class SpecCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    functions_["loss"] = FunctionInfo{"loss", {{"w", true, ""}, {"b", true, ""}, {"x", true, ""}, {"y", true, ""}}, 1, false, false};
    functions_["scale"] = FunctionInfo{"scale", {{"x", true, ""}, {"n", false, "int"}}, 1, false, false};
    functions_["two"] = FunctionInfo{"two", {{"x", true, ""}}, 2, true, false};
  }
  FunctionInfo check(const std::string& text) {
    return check_transform(*build(text), [this](const std::string& n) -> const FunctionInfo* {
      auto it = functions_.find(n);
      return it == functions_.end() ? nullptr : &it->second;
    });
  }
  void expect_check_error(const std::string& text, size_t offset, const std::string& message) {
    try {
      check(text);
      ADD_FAILURE() << "no error for: " << text;
    } catch (const ParseError& e) {
      EXPECT_EQ(e.diagnostic().message, message) << text;
      EXPECT_EQ(e.diagnostic().offset, offset) << text;
    }
  }
  std::map<std::string, FunctionInfo> functions_;
};

TEST_F(SpecCheck, ResultSignatures) {
  const FunctionInfo psg = check("psg = vmap(grad(loss, argnums=(0, 1)), in_dims=(None, None, 0, 0))");
  EXPECT_EQ(psg.params.size(), 4u);
  EXPECT_EQ(psg.outputs, 2u);
  EXPECT_TRUE(psg.returns_tuple);
  EXPECT_EQ(check("g = grad(loss)").outputs, 1u);
  EXPECT_FALSE(check("g = grad(loss)").returns_tuple);
  EXPECT_EQ(check("g = grad_and_value(loss)").outputs, 2u);
  const FunctionInfo j = check("j = jvp(scale)");
  ASSERT_EQ(j.params.size(), 3u);  // x, n, tangent_x
  EXPECT_EQ(j.params[2].name, "tangent_x");
  EXPECT_TRUE(check("v = vjp(loss)").returns_callable);
  EXPECT_EQ(check("h = hessian(loss)").outputs, 1u);
  EXPECT_EQ(check("j = jacrev(two)").outputs, 2u);
  // A nested tuple maps a structure's fields (spread over them by transforms/structures.cpp).
  const auto nested = build("e = vmap(model, in_dims=((0, None), (None, (None,)), None))");
  ASSERT_EQ(nested->in_dims.trees.size(), 3u);
  EXPECT_TRUE(nested->in_dims.trees[0].is_tuple);
  EXPECT_EQ(nested->in_dims.trees[0].items[0].dim, Dim(0));
  EXPECT_EQ(nested->in_dims.trees[0].items[1].offset, 29u);
  EXPECT_EQ(nested->in_dims.dims, (std::vector<Dim>{0, std::nullopt, std::nullopt}));  // mapped if any field is
  EXPECT_TRUE(nested->in_dims.trees[1].items[1].is_tuple);
  // A single int in_dims applies to the tensor arguments only.
  EXPECT_EQ(check("s = vmap(scale)").params.size(), 2u);
}

TEST_F(SpecCheck, ErrorsAgainstTheSignature) {
  expect_check_error("g = vmap(lost)", 9, "unknown function 'lost'; name the annotated function or a spec defined earlier in this file");
  expect_check_error("g = vmap(loss, in_dims=(0, 0))", 23, "in_dims has 2 entries but 'loss' takes 4 arguments");
  expect_check_error("g = vmap(scale, in_dims=(0, 0))", 28, "in_dims entry 1 maps argument 'n' (int) of 'scale', which is not a tensor; use None");
  expect_check_error("g = vmap(loss, in_dims=(0, (0, None), 0, 0))", 27, "in_dims entry 1 is a tuple, but argument 'b' (a scalar) of 'loss' is not a structure; give an int or None");
  expect_check_error("g = vmap(loss, in_dims=None)", 23, "vmap needs at least one mapped tensor argument, but in_dims maps none of 'loss'");
  expect_check_error("g = vmap(two, out_dims=(0, 1, 2))", 23, "out_dims has 3 entries but 'two' returns 2 values");
  expect_check_error("g = grad(scale, argnums=1)", 24, "argnums 1 selects argument 'n' (int) of 'scale', which cannot be differentiated; only fg::Tensor arguments can");
  expect_check_error("g = grad(loss, argnums=(0, 4))", 27, "argnums 4 is out of range: 'loss' takes 4 arguments");
  expect_check_error("g = grad(two)", 4, "grad needs 'two' to return one tensor with a single element, but it returns 2 values; return the aux values with has_aux=True");
  expect_check_error("g = grad(loss, has_aux=True)", 4, "grad(..., has_aux=True) needs 'loss' to return std::tuple<fg::Tensor, aux...>");
  expect_check_error("g = vmap(vjp(loss))", 4, "vmap cannot transform 'vjp(loss)', which returns a function (as vjp and linearize do); transform the original function instead");
  expect_check_error("g = hessian(two)", 4, "hessian needs 'two' to return one tensor, but it returns 2 values");
}

}  // namespace
}  // namespace funcgen::spec
