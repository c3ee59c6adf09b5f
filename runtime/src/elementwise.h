// Element-wise machinery shared by elementwise.cpp and the ops composed from it.
#pragma once

#include "cpu/kernels.h"
#include "internal.h"

namespace fg::detail {

// An operand of a type-promoting op: a tensor, or a C++ number wrapped as a 0-d tensor, which
// (as in torch.result_type) only decides the dtype when its category (bool < integer < floating)
// is higher than every tensor's.
struct Operand {
  Tensor tensor;
  bool wrapped_number = false;
};
Operand wrap(const Scalar& s);
ScalarType result_type(std::initializer_list<Operand> operands);

// out = a (op) b, all of out's dtype, a and b broadcast to out's shape; out may be strided.
void run_binary(cpu::BinaryKind kind, const Tensor& out, const Tensor& a, const Tensor& b);
// out = op(in), same dtype, in broadcast to out's shape.
void run_unary(cpu::UnaryKind kind, const Tensor& out, const Tensor& in);

// The ops themselves (fg::sin, fg::mul, `2 - x`, ...), by kernel kind, with `op` naming them in
// errors: broadcasting, promotion, devices, checks.
Tensor elementwise_unary(cpu::UnaryKind kind, const Tensor& self, const char* op);
Tensor elementwise_binary(cpu::BinaryKind kind, const Operand& a, const Operand& b, const char* op);

}  // namespace fg::detail
