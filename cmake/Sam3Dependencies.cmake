# Finds every third-party dependency; each becomes an imported target.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(ZLIB REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(OpenCV REQUIRED COMPONENTS core imgproc imgcodecs)
find_package(JPEG REQUIRED)  # JPEG and PNG are decoded directly, with our own error handling
find_package(PNG REQUIRED)
find_package(CURL REQUIRED)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
pkg_check_modules(LIBZIP REQUIRED IMPORTED_TARGET libzip)
# Debian's python3 when there is one (its numpy, onnx and pytest are what the tests use); the
# development part is for the Python module.
if(NOT Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python3_EXECUTABLE /usr/bin/python3)
endif()
find_package(Python3 REQUIRED COMPONENTS Interpreter OPTIONAL_COMPONENTS Development.Module)
pkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)

# ONNX Runtime, in this order: an explicit root (SAM3_ORT_ROOT, the layout of the release
# tarball: include/ + lib/), an installed CMake package, pkg-config, then .deps/ made by
# scripts/setup.sh.
set(SAM3_ORT_ROOT "$ENV{SAM3_ORT_ROOT}" CACHE PATH "ONNX Runtime root (include/ and lib/)")
set(_ort_roots ${SAM3_ORT_ROOT})
if(NOT SAM3_ORT_ROOT)
  find_package(onnxruntime CONFIG QUIET)
  if(TARGET onnxruntime::onnxruntime)
    add_library(sam3_ort INTERFACE)
    target_link_libraries(sam3_ort INTERFACE onnxruntime::onnxruntime)
    message(STATUS "ONNX Runtime: CMake package ${onnxruntime_DIR}")
  else()
    pkg_check_modules(ORT QUIET IMPORTED_TARGET libonnxruntime)
    if(ORT_FOUND)
      add_library(sam3_ort INTERFACE)
      target_link_libraries(sam3_ort INTERFACE PkgConfig::ORT)
      message(STATUS "ONNX Runtime: pkg-config ${ORT_VERSION}")
    endif()
  endif()
  list(APPEND _ort_roots ${CMAKE_SOURCE_DIR}/.deps/onnxruntime)
endif()
if(NOT TARGET sam3_ort)
  find_path(ORT_INCLUDE_DIR onnxruntime_cxx_api.h
    PATHS ${_ort_roots} PATH_SUFFIXES include include/onnxruntime NO_DEFAULT_PATH)
  find_library(ORT_LIBRARY NAMES onnxruntime libonnxruntime.so.1
    PATHS ${_ort_roots} PATH_SUFFIXES lib lib64 NO_DEFAULT_PATH)
  if(NOT ORT_INCLUDE_DIR OR NOT ORT_LIBRARY)
    message(FATAL_ERROR "ONNX Runtime not found. Run scripts/setup.sh, or set SAM3_ORT_ROOT "
      "to a directory with include/onnxruntime_cxx_api.h and lib/libonnxruntime.so")
  endif()
  add_library(sam3_ort INTERFACE)
  target_include_directories(sam3_ort SYSTEM INTERFACE ${ORT_INCLUDE_DIR})
  target_link_libraries(sam3_ort INTERFACE ${ORT_LIBRARY})
  get_filename_component(_ort_libdir ${ORT_LIBRARY} DIRECTORY)
  set(CMAKE_BUILD_RPATH ${CMAKE_BUILD_RPATH} ${_ort_libdir})
  set(CMAKE_INSTALL_RPATH ${CMAKE_INSTALL_RPATH} ${_ort_libdir})
  message(STATUS "ONNX Runtime: ${ORT_LIBRARY}")
endif()
