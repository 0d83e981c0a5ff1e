# Finds every third-party dependency; each becomes an imported target.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(ZLIB REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(OpenCV REQUIRED COMPONENTS core imgproc imgcodecs)  # imgcodecs: tests and seeds only
find_package(JPEG REQUIRED)  # JPEG and PNG are decoded directly, with our own error handling
find_package(PNG REQUIRED)
find_package(TIFF REQUIRED)  # TIFF through libtiff, BMP by sam3 itself: no imgcodecs in the core
pkg_check_modules(WEBP REQUIRED IMPORTED_TARGET libwebp)
find_package(CURL REQUIRED)
find_package(pugixml REQUIRED)
find_package(GDAL CONFIG REQUIRED)  # rasters of any size and georeferenced vectors (Debian libgdal-dev)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
pkg_check_modules(LIBZIP REQUIRED IMPORTED_TARGET libzip)
# Debian's python3 when there is one (its numpy, onnx and pytest are what the tests use); the
# development part is for the Python module.
if(NOT Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python3_EXECUTABLE /usr/bin/python3)
endif()
find_package(Python3 REQUIRED COMPONENTS Interpreter OPTIONAL_COMPONENTS Development.Module)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
# FFmpeg's libraries (Debian's libavformat-dev, libavcodec-dev, libswscale-dev): video files
# are decoded and overlay videos encoded with them (sam3::video_io).
pkg_check_modules(FFMPEG QUIET IMPORTED_TARGET libavformat libavcodec libswscale libavutil)
if(NOT FFMPEG_FOUND)
  message(FATAL_ERROR "FFmpeg's libraries not found: sam3 reads video files and writes overlay videos "
    "with them. Install them (apt-get install libavformat-dev libavcodec-dev libswscale-dev, or "
    "scripts/setup.sh) and configure again.")
endif()
message(STATUS "FFmpeg: libavformat ${FFMPEG_libavformat_VERSION}, libavcodec ${FFMPEG_libavcodec_VERSION}")

include(GNUInstallDirs)

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
    set(SAM3_ORT_SOURCE cmake)
    message(STATUS "ONNX Runtime: CMake package ${onnxruntime_DIR}")
  else()
    pkg_check_modules(ORT QUIET IMPORTED_TARGET libonnxruntime)
    if(ORT_FOUND)
      add_library(sam3_ort INTERFACE)
      target_link_libraries(sam3_ort INTERFACE PkgConfig::ORT)
      set(SAM3_ORT_SOURCE pkg-config)
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
  # A library from a folder (.deps/ or SAM3_ORT_ROOT) is installed beside sam3's own.
  add_library(sam3_ort INTERFACE)
  target_include_directories(sam3_ort SYSTEM INTERFACE $<BUILD_INTERFACE:${ORT_INCLUDE_DIR}>)
  target_link_libraries(sam3_ort INTERFACE $<BUILD_INTERFACE:${ORT_LIBRARY}>
    $<INSTALL_INTERFACE:$<INSTALL_PREFIX>/${CMAKE_INSTALL_LIBDIR}/libonnxruntime.so.1>)
  set(SAM3_ORT_SOURCE folder)
  get_filename_component(_ort_libdir ${ORT_LIBRARY} DIRECTORY)
  set(CMAKE_BUILD_RPATH ${CMAKE_BUILD_RPATH} ${_ort_libdir})
  set(CMAKE_INSTALL_RPATH ${CMAKE_INSTALL_RPATH} ${_ort_libdir})
  message(STATUS "ONNX Runtime: ${ORT_LIBRARY}")
endif()

# oneDNN (optional; Debian's libdnnl-dev): exact int8 products on the CPU's VNNI/AMX engines.
# Without it the build runs ONNX Runtime's own kernels. SAM3_ONEDNN=OFF leaves it out.
option(SAM3_ONEDNN "Use oneDNN's int8 kernels when oneDNN is installed" ON)
if(SAM3_ONEDNN)
  find_package(dnnl CONFIG QUIET)
  if(TARGET DNNL::dnnl)
    add_library(sam3_onednn INTERFACE)
    target_link_libraries(sam3_onednn INTERFACE DNNL::dnnl)
    set(SAM3_DNNL_PACKAGE ON)
  else()
    find_path(DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp)
    find_library(DNNL_LIBRARY NAMES dnnl)
    if(DNNL_INCLUDE_DIR AND DNNL_LIBRARY)
      add_library(sam3_onednn INTERFACE)
      target_include_directories(sam3_onednn SYSTEM INTERFACE ${DNNL_INCLUDE_DIR})
      target_link_libraries(sam3_onednn INTERFACE ${DNNL_LIBRARY})
    endif()
  endif()
endif()
if(TARGET sam3_onednn)
  find_package(OpenMP COMPONENTS CXX)  # oneDNN's threads; set per run to match ONNX Runtime's
  if(OpenMP_CXX_FOUND)
    target_link_libraries(sam3_onednn INTERFACE OpenMP::OpenMP_CXX)
    target_compile_definitions(sam3_onednn INTERFACE SAM3_HAVE_OPENMP=1)
  endif()
  message(STATUS "oneDNN: int8 kernels on (${dnnl_DIR}${DNNL_LIBRARY})")
else()
  message(STATUS "oneDNN: not used (SAM3_ONEDNN=${SAM3_ONEDNN}, or not found); int8 products run on ONNX Runtime's kernels")
endif()
