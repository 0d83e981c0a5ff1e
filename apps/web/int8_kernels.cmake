# The tab's own kernels (docs/browser.md "Relaxed-SIMD int8 products", "The tab's own attention
# kernel"): the int8 product (kernels/int8_gemm.c) and attention (kernels/attention.c) in one
# freestanding wasm32 module (one shared memory, one worker pool, one probe), in two builds,
# relaxed SIMD and SIMD128, compiled by clang-22 and linked by wasm-ld-22 (Debian's clang-22 and
# lld-22: Emscripten's clang 14 has no relaxed SIMD). The files keep their first names
# (int8-*.wasm: `sam3 web export` copies them by name). Without them the module runs ONNX Runtime
# Web's own kernels, as before.
find_program(SAM3_CLANG_WASM NAMES clang-22)
find_program(SAM3_WASM_LD NAMES wasm-ld-22)
if(NOT SAM3_CLANG_WASM OR NOT SAM3_WASM_LD)
  message(STATUS "clang-22 or wasm-ld-22 not found (Debian's clang-22, lld-22): the tab's own int8 and attention kernels are not built")
  return()
endif()
set(_kernel_sources int8_gemm attention float_gemm)
set(_kernel_outputs)
foreach(build relaxed simd128)
  set(_flags -msimd128)
  if(build STREQUAL relaxed)
    list(APPEND _flags -mrelaxed-simd -DSAM3_RELAXED)
  endif()
  set(_out ${SAM3_WEB_OUT}/int8-${build}.wasm)
  set(_compile)
  set(_objects)
  set(_deps)
  foreach(src IN LISTS _kernel_sources)
    set(_obj ${CMAKE_CURRENT_BINARY_DIR}/${src}-${build}.o)
    list(APPEND _compile COMMAND ${SAM3_CLANG_WASM} --target=wasm32 -O3 ${_flags} -matomics -mbulk-memory -ffp-contract=off -Wall -Wextra
         -Werror -c ${CMAKE_CURRENT_SOURCE_DIR}/kernels/${src}.c -o ${_obj})
    list(APPEND _objects ${_obj})
    list(APPEND _deps ${CMAKE_CURRENT_SOURCE_DIR}/kernels/${src}.c)
  endforeach()
  # Compiled and linked in two steps: clang's driver would run binaryen's wasm-opt after the link
  # when one is installed, and Debian 12's (version 108, Emscripten's) drops an operand of the
  # relaxed dot product (an older draft of the instruction). A shared memory imported by every
  # thread's instance; each sets its own stack pointer.
  add_custom_command(OUTPUT ${_out}
    ${_compile}
    COMMAND ${SAM3_WASM_LD} --no-entry --import-memory --shared-memory --max-memory=4294967296 --export=__heap_base
            --export=__stack_pointer -z stack-size=65536 ${_objects} -o ${_out}
    DEPENDS ${_deps}
    COMMENT "int8 and attention kernels for the tab (${build})")
  list(APPEND _kernel_outputs ${_out})
endforeach()
add_custom_target(sam3_int8_kernels ALL DEPENDS ${_kernel_outputs})
add_dependencies(sam3_wasm sam3_int8_kernels)
