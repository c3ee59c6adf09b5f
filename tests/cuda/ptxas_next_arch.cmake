# cmake -DNVCC=... -DSOURCE=x.cu -DINCLUDES="a;b" -DLMEM_IS_ERROR=ON|OFF -DWORK=dir -P ptxas_next_arch.cmake
# Emits the backend's PTX for compute_90 (what the build ships beside sm_90 code) and assembles it
# with ptxas for sm_100, as the driver would on the next architecture; spills (and, with
# LMEM_IS_ERROR, local memory) are errors there too.
file(MAKE_DIRECTORY ${WORK})
set(include_flags)
foreach(dir IN LISTS INCLUDES)
  list(APPEND include_flags -I${dir})
endforeach()
get_filename_component(bin ${NVCC} DIRECTORY)
set(lmem_flag)
if(LMEM_IS_ERROR)
  set(lmem_flag --warn-on-local-memory-usage)
endif()
execute_process(COMMAND ${NVCC} -std=c++17 -arch=compute_90 -ptx ${include_flags} ${SOURCE} -o ${WORK}/kernels.ptx
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nvcc -ptx failed (${rc})")
endif()
execute_process(COMMAND ${bin}/ptxas -arch=sm_100 --warn-on-spills ${lmem_flag} --warning-as-error
                        ${WORK}/kernels.ptx -o ${WORK}/kernels.sm_100.cubin
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ptxas -arch=sm_100 failed (${rc})")
endif()
message(STATUS "${SOURCE}: its compute_90 PTX assembles for sm_100")
