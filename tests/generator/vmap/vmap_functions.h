// The vmap "op database": the original (unbatched) functions of vmap_functions.cpp. funcgen
// batches them as their FUNCGEN specs say; test_vmap.cpp calls both, comparing each generated
// function with a loop of calls of the original over the batch.
#pragma once

#include <funcgen/funcgen.h>

#include <cstdint>
#include <tuple>

namespace vt {

// element-wise
fg::Tensor unary_chain(const fg::Tensor& x);
fg::Tensor binary_ops(const fg::Tensor& x, const fg::Tensor& y);
fg::Tensor write_then_read(const fg::Tensor& x);
fg::Tensor copy_through_reference(const fg::Tensor& x, const fg::Tensor& y);
fg::Tensor out_variant_write(const fg::Tensor& x, const fg::Tensor& w);
fg::Tensor reassigned_unread(const fg::Tensor& x);
fg::Tensor scalar_operands(const fg::Tensor& x, double alpha);
fg::Tensor where_clamp(const fg::Tensor& x, const fg::Tensor& y, double lo, double hi);
fg::Tensor compare_ops(const fg::Tensor& x, const fg::Tensor& y);

// reductions and normalisations
fg::Tensor reduce_all(const fg::Tensor& x);
fg::Tensor reduce_dims(const fg::Tensor& x);
fg::Tensor reduce_keepdim(const fg::Tensor& x);
std::tuple<fg::Tensor, fg::Tensor> max_dim_get(const fg::Tensor& x);
std::tuple<fg::Tensor, fg::Tensor> max_dim_bind(const fg::Tensor& x);
std::tuple<fg::Tensor, fg::Tensor> argmax_fn(const fg::Tensor& x);
fg::Tensor logsumexp_norm(const fg::Tensor& x);
fg::Tensor softmaxes(const fg::Tensor& x);

// views
fg::Tensor transpose_t(const fg::Tensor& x);
fg::Tensor permute_fn(const fg::Tensor& x);
std::tuple<fg::Tensor, fg::Tensor> squeeze_unsqueeze(const fg::Tensor& x);
fg::Tensor select_index(const fg::Tensor& x);
fg::Tensor slice_narrow(const fg::Tensor& x);
fg::Tensor diagonal_fn(const fg::Tensor& x);
std::tuple<fg::Tensor, fg::Tensor, fg::Tensor> flatten_reshape(const fg::Tensor& x);
fg::Tensor view_fn(const fg::Tensor& x);
std::tuple<fg::Tensor, fg::Tensor> expand_fn(const fg::Tensor& x);
fg::Tensor movedim_fn(const fg::Tensor& x);

// in place
fg::Tensor add_into(fg::Tensor y, const fg::Tensor& x);
fg::Tensor plus_assign(fg::Tensor y, const fg::Tensor& x);
fg::Tensor inplace_local(const fg::Tensor& x, const fg::Tensor& y);
fg::Tensor diag_embed_copy(const fg::Tensor& v);
fg::Tensor zero_fill(const fg::Tensor& x);
fg::Tensor new_factories(const fg::Tensor& x);

// linear algebra
fg::Tensor matmul_fn(const fg::Tensor& a, const fg::Tensor& b);
fg::Tensor matmul_method(const fg::Tensor& a, const fg::Tensor& b);
fg::Tensor mm_fn(const fg::Tensor& a, const fg::Tensor& b);
fg::Tensor mv_fn(const fg::Tensor& a, const fg::Tensor& v);
fg::Tensor dot_fn(const fg::Tensor& a, const fg::Tensor& b);
fg::Tensor outer_fn(const fg::Tensor& a, const fg::Tensor& b);
fg::Tensor bmm_fn(const fg::Tensor& a, const fg::Tensor& b);
fg::Tensor linear_fn(const fg::Tensor& x, const fg::Tensor& w, const fg::Tensor& b);
fg::Tensor linear_nobias(const fg::Tensor& x, const fg::Tensor& w);
fg::Tensor conv_fn(const fg::Tensor& x, const fg::Tensor& w, const fg::Tensor& b);
fg::Tensor norms(const fg::Tensor& x, const fg::Tensor& w, const fg::Tensor& b);
fg::Tensor attention(const fg::Tensor& q, const fg::Tensor& k, const fg::Tensor& v);
fg::Tensor norm_stats(const fg::Tensor& x, const fg::Tensor& w, const fg::Tensor& mean, const fg::Tensor& var);
fg::Tensor layers(const fg::Tensor& x, const fg::Tensor& table);
fg::Tensor losses(const fg::Tensor& x, const fg::Tensor& t);
fg::Tensor pieces(const fg::Tensor& x);
fg::Tensor conv1d_unbatched(const fg::Tensor& x, const fg::Tensor& w);
fg::Tensor conv_transpose_fn(const fg::Tensor& x, const fg::Tensor& w);
fg::Tensor einsum_fn(const fg::Tensor& a, const fg::Tensor& b);

// joining and indexing
fg::Tensor cat_stack(const fg::Tensor& x, const fg::Tensor& y);
fg::Tensor index_ops(const fg::Tensor& x, const fg::Tensor& idx);
fg::Tensor gather_fn(const fg::Tensor& x, const fg::Tensor& idx);

// losses and a model
fg::Tensor mse_fn(const fg::Tensor& x, const fg::Tensor& y);
fg::Tensor nll_fn(const fg::Tensor& logits, const fg::Tensor& target);
fg::Tensor cross_entropy_fn(const fg::Tensor& logits, const fg::Tensor& target);
fg::Tensor mlp_loss(const fg::Tensor& w1, const fg::Tensor& b1, const fg::Tensor& w2, const fg::Tensor& b2,
                    const fg::Tensor& x, const fg::Tensor& target);

// user functions, control flow, tuples, scalars
fg::Tensor helper_mix(const fg::Tensor& a, const fg::Tensor& b);
fg::Tensor calls_helpers(const fg::Tensor& x, const fg::Tensor& y);
fg::Tensor custom_dot(const fg::Tensor& x);
fg::Tensor loop_accumulate(const fg::Tensor& x, int n);
fg::Tensor factory_accumulator(const fg::Tensor& x);
std::tuple<fg::Tensor, fg::Tensor> pair_fn(const fg::Tensor& x, const fg::Tensor& y);
fg::Tensor scale_select(const fg::Tensor& x, double a, int k);

// more ops and patterns
fg::Tensor dims_from_params(const fg::Tensor& x, int d, int64_t e);
fg::Tensor misc_ops(const fg::Tensor& x);
fg::Tensor scatter_fn(const fg::Tensor& x, const fg::Tensor& idx, const fg::Tensor& src);
fg::Tensor fallback_fn(const fg::Tensor& x, const fg::Tensor& y);
fg::Tensor uses_unseen(const fg::Tensor& x);
// Defined in unseen_helpers.cpp, which funcgen does not read: under vmap they run per example.
std::tuple<fg::Tensor, fg::Tensor> unseen_split(const fg::Tensor& x);
void unseen_record(const fg::Tensor& x);
int64_t unseen_records();  // how often unseen_record ran
std::tuple<fg::Tensor, fg::Tensor> const_out(const fg::Tensor& x);
fg::Tensor branch_return(const fg::Tensor& x, const fg::Tensor& y, int n);
fg::Tensor branch_assign(const fg::Tensor& x, const fg::Tensor& y, int n);
fg::Tensor tuple_helper(const fg::Tensor& x, const fg::Tensor& b);
std::tuple<fg::Tensor, fg::Tensor> mixed_tuples(const fg::Tensor& x, const fg::Tensor& y);
fg::Tensor reassign_param(fg::Tensor y, const fg::Tensor& x);
fg::Tensor choices(const fg::Tensor& x, const fg::Tensor& y, const fg::Tensor& w, int n);

// randomness
fg::Tensor add_noise(const fg::Tensor& x);
fg::Tensor add_fresh_noise(const fg::Tensor& x);
fg::Tensor dropout_fn(const fg::Tensor& x);
fg::Tensor eval_dropout(const fg::Tensor& x);
fg::Tensor bernoulli_fn(const fg::Tensor& p);

}  // namespace vt
