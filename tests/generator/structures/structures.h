// The structures the tutorials' C++ ports keep their parameters in, shared by the annotated file
// and the tests that call what funcgen generates of it.
#pragma once

#include <funcgen/funcgen.h>

#include <array>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace structured {

// The per-sample-gradients tutorial's model parameters, as a libtorch user keeps them.
struct Mlp {
  fg::Tensor w1, b1, w2, b2;
};

// torch.nn.Linear's parameters, and its forward as member functions: one defined here (a helper
// in a header), one annotated where structures_functions.cpp defines it (its jacobian is taken with
// respect to the layer, its first argument).
struct Linear {
  fg::Tensor weight, bias;
  fg::Tensor forward(const fg::Tensor& x) const { return fg::linear(x, weight, bias); }
  fg::Tensor affine(const fg::Tensor& x) const;
};

// The per-sample-gradients tutorial's model in libtorch's style: a class whose members are its
// layers and whose member functions compute with them (annotated where they are defined).
struct Classifier {
  Linear fc1, fc2;
  fg::Tensor forward(const fg::Tensor& x) const;
  fg::Tensor loss(const fg::Tensor& x, const fg::Tensor& target) const;
};

// A layer with a scale that is not a parameter: passed through, copied into gradients.
struct Scaled {
  Linear layer;
  double scale;
};

// Two heads of one model: a structured result.
struct Heads {
  fg::Tensor logits, probs;
};

// dict(model.named_parameters()) in C++.
using ParamDict = std::map<std::string, fg::Tensor>;

// Defined in structures_functions.cpp, with the FUNCGEN specs that transform them.
fg::Tensor predict(const Linear& layer, const fg::Tensor& x);
Heads heads(const Linear& layer, const fg::Tensor& x);
fg::Tensor scaled_loss(const Scaled& s, const std::array<fg::Tensor, 2>& xs);
fg::Tensor pair_loss(const std::pair<fg::Tensor, fg::Tensor>& ab, const fg::Tensor& x);
fg::Tensor tuple_loss(const std::tuple<fg::Tensor, fg::Tensor>& abs, const fg::Tensor& x);
fg::Tensor vector_loss(const std::vector<fg::Tensor>& ws, const fg::Tensor& x);
fg::Tensor list_loss(const fg::Tensor& a, const fg::Tensor& b, const fg::Tensor& x);

// Optional tensors, as libtorch takes them (torch::nn::functional::linear's bias, a layer whose
// bias is switched off): funcgen specializes on which hold a tensor.
struct Dense {
  fg::Tensor weight;
  std::optional<fg::Tensor> bias;
  fg::Tensor forward(const fg::Tensor& x) const;
};
fg::Tensor dense_loss(const fg::Tensor& x, const fg::Tensor& w, const std::optional<fg::Tensor>& bias);
fg::Tensor layer_loss(const Dense& layer, const fg::Tensor& x, const std::optional<fg::Tensor>& scale);
fg::Tensor tested_loss(const fg::Tensor& x, const std::optional<fg::Tensor>& b, bool use_bias, int mode);

// Layers called as functors, as libtorch calls its modules (`fc2(fc1(x))`).
struct Affine {
  fg::Tensor weight, bias;
  fg::Tensor operator()(const fg::Tensor& x) const { return fg::linear(x, weight, bias).tanh(); }
};
struct TwoLayers {
  Affine fc1, fc2;
  fg::Tensor operator()(const fg::Tensor& x) const { return fc2(fc1(x)); }
};
fg::Tensor two_layer_loss(const TwoLayers& net, const fg::Tensor& x);
fg::Tensor chosen_layer_loss(const TwoLayers& net, const fg::Tensor& x);
std::tuple<fg::Tensor, fg::Tensor> aux_loss(const Mlp& params, const fg::Tensor& x);
std::tuple<fg::Tensor, Heads> heads_aux_loss(const Linear& layer, const fg::Tensor& x);
std::tuple<fg::Tensor, std::tuple<fg::Tensor, fg::Tensor>> tuple_aux_loss(const fg::Tensor& x);
Heads two_heads(const fg::Tensor& x);
ParamDict named_heads(const fg::Tensor& x);
std::tuple<fg::Tensor, ParamDict> dict_aux(const fg::Tensor& x);
std::vector<fg::Tensor> listed(const fg::Tensor& x);

enum class Mode : int { Scale, Keep };
fg::Tensor case_loss(const fg::Tensor& x, const std::optional<fg::Tensor>& b, Mode mode, bool twice);
fg::Tensor captured_loss(const Scaled& s, const fg::Tensor& x);
fg::Tensor captured_dict_loss(const ParamDict& p, const fg::Tensor& x);
fg::Tensor merged_loss(const Scaled& s, const fg::Tensor& x);
fg::Tensor accumulated_loss(Linear& acc, const fg::Tensor& x);

}  // namespace structured
