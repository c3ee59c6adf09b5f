# The CUDA backend's tests (ctest label `cuda`), in the tiers the backend is tested in:
#  1. every machine: the allocator and GEMM-plan logic (test_cuda_logic), the kernels run on CPU
#     threads through runtime/src/cuda/compat.h (test_cuda_kernels, and again under
#     ThreadSanitizer), and every op on kCUDA tensors through the CUDA backend compiled for the
#     CPU (test_cuda_host_run);
#  2. a GPU: the same op tests against the real backend (test_cuda_gpu, label `gpu`), which
#     skip naming the CUDA error where no GPU can be used; tests/gpu/run.sh runs them without skips;
#  3. the build itself where nvcc exists: the .cu files compile with warnings, spills and local
#     memory as errors (runtime/CMakeLists.txt), the PTX assembles for the next architecture
#     (cuda.ptxas_next_arch), and test_cuda_gpu opens cuBLAS and finds every function the backend calls.
set(FG_RUNTIME_SRC ${PROJECT_SOURCE_DIR}/runtime/src)

function(fg_cuda_test name)
  cmake_parse_arguments(ARG "" "PREFIX;LABEL" "SOURCES" ${ARGN})
  if(NOT ARG_LABEL)
    set(ARG_LABEL cuda)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_include_directories(${name} PRIVATE ${FG_RUNTIME_SRC} ${CMAKE_CURRENT_SOURCE_DIR}/cuda)
  target_link_libraries(${name} PRIVATE funcgen::runtime GTest::gtest GTest::gtest_main)
  target_compile_options(${name} PRIVATE -Wall -Wextra)
  funcgen_discover(${name} ${ARG_LABEL} DISCOVERY_TIMEOUT 60 TEST_PREFIX "${ARG_PREFIX}")
endfunction()

fg_cuda_test(test_cuda_logic SOURCES cuda/test_caching_allocator.cpp cuda/test_gemm_plan.cpp cuda/test_shared_library.cpp)
fg_cuda_test(test_cuda_kernels SOURCES cuda/test_kernels.cpp)
# The op tests and the generated code of cuda/transforms_functions.cpp, on each backend.
set(FG_DEVICE_TESTS cuda/test_device_ops.cpp cuda/test_transforms.cpp)
fg_cuda_test(test_cuda_host_run PREFIX host_run. SOURCES ${FG_DEVICE_TESTS} cuda/host_run_backend.cpp)
target_compile_definitions(test_cuda_host_run PRIVATE FG_TEST_HOST_RUN)
funcgen_generate(test_cuda_host_run SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/cuda/transforms_functions.cpp)
funcgen_generated_test(test_cuda_host_run)
if(FUNCGEN_HAVE_CUDA)
  fg_cuda_test(test_cuda_gpu PREFIX gpu. SOURCES ${FG_DEVICE_TESTS} LABEL gpu)
  funcgen_generate(test_cuda_gpu SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/cuda/transforms_functions.cpp)
  funcgen_generated_test(test_cuda_gpu)
endif()

# ThreadSanitizer cannot share a process with AddressSanitizer: these two are left to the plain build.
if(NOT FUNCGEN_SANITIZE)
  # The kernel tests need nothing of the runtime but its headers, so all of their code is instrumented.
  add_executable(test_cuda_kernels_tsan cuda/test_kernels.cpp)
  target_include_directories(test_cuda_kernels_tsan PRIVATE ${FG_RUNTIME_SRC} ${PROJECT_SOURCE_DIR}/runtime/include)
  target_compile_options(test_cuda_kernels_tsan PRIVATE -fsanitize=thread -O1 -g)
  target_link_options(test_cuda_kernels_tsan PRIVATE -fsanitize=thread)
  target_link_libraries(test_cuda_kernels_tsan PRIVATE GTest::gtest GTest::gtest_main)
  add_test(NAME cuda.kernels_under_tsan COMMAND test_cuda_kernels_tsan)
  set_tests_properties(cuda.kernels_under_tsan PROPERTIES ENVIRONMENT "TSAN_OPTIONS=halt_on_error=1")
  funcgen_label_test(cuda.kernels_under_tsan cuda)
  # ... and TSan does see a kernel's missing __syncthreads: this one must be reported.
  add_executable(cuda_tsan_missing_sync cuda/tsan_missing_sync.cpp)
  target_include_directories(cuda_tsan_missing_sync PRIVATE ${FG_RUNTIME_SRC} ${PROJECT_SOURCE_DIR}/runtime/include)
  target_compile_options(cuda_tsan_missing_sync PRIVATE -fsanitize=thread -O1 -g)
  target_link_options(cuda_tsan_missing_sync PRIVATE -fsanitize=thread)
  add_test(NAME cuda.tsan_sees_a_missing_syncthreads COMMAND cuda_tsan_missing_sync)
  set_tests_properties(cuda.tsan_sees_a_missing_syncthreads PROPERTIES
                       PASS_REGULAR_EXPRESSION "ThreadSanitizer: data race.*reverse_without_barrier")
  funcgen_label_test(cuda.tsan_sees_a_missing_syncthreads cuda)
endif()

# (sm_100 needs CUDA 12.8 or later; older toolkits skip this part of tier 3.)
if(FUNCGEN_HAVE_CUDA AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.8)
  # Tier 3: the kernels' PTX (compute_90) must also assemble for the next architecture, under the
  # same ptxas rules as the build (the trigonometric kernel may use local memory; see backend_trig.cu).
  foreach(unit backend backend_trig)
    set(lmem ON)
    if(unit STREQUAL "backend_trig")
      set(lmem OFF)
    endif()
    add_test(NAME cuda.ptxas_next_arch.${unit}
             COMMAND ${CMAKE_COMMAND} -DNVCC=${CMAKE_CUDA_COMPILER} -DSOURCE=${FG_RUNTIME_SRC}/cuda/${unit}.cu
                     -DINCLUDES=${FG_RUNTIME_SRC}$<SEMICOLON>${PROJECT_SOURCE_DIR}/runtime/include -DLMEM_IS_ERROR=${lmem}
                     -DWORK=${CMAKE_CURRENT_BINARY_DIR}/ptxas_next_arch/${unit} -P ${CMAKE_CURRENT_SOURCE_DIR}/cuda/ptxas_next_arch.cmake)
    funcgen_label_test(cuda.ptxas_next_arch.${unit} cuda)
  endforeach()
endif()
