// funcgen: torch.func for C++, done at compile time. Include this in code that funcgen transforms
// and in code that calls the generated functions.
#pragma once

#include "funcgen/runtime/ad.h"
#include "funcgen/runtime/array_ref.h"
#include "funcgen/runtime/cpu_features.h"
#include "funcgen/runtime/cuda.h"
#include "funcgen/runtime/error.h"
#include "funcgen/runtime/fused.h"
#include "funcgen/runtime/ops.h"
#include "funcgen/runtime/random.h"
#include "funcgen/runtime/scalar_type.h"
#include "funcgen/runtime/structures.h"
#include "funcgen/runtime/tensor.h"

// FUNCGEN("name = transform(f, ...)") stands before a function definition. It changes nothing in
// the compiled program; under Clang it leaves an annotation that the funcgen tool reads.
#if defined(__clang__)
#define FUNCGEN(spec) [[clang::annotate("funcgen:" spec)]]
#else
#define FUNCGEN(spec)
#endif
