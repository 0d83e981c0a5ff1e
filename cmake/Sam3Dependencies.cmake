# Finds every third-party dependency; each becomes an imported target. sam3::sam3 needs ONNX
# Runtime, the image codecs (libjpeg, libpng, libwebp, libtiff), OpenCV's core and imgproc, zlib
# and nlohmann-json; every other library belongs to an optional module below, looked for only
# when its option is on (test-only libraries: tests/CMakeLists.txt).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(ZLIB REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(OpenCV REQUIRED COMPONENTS core imgproc)
find_package(JPEG REQUIRED)  # JPEG and PNG are decoded directly, with our own error handling
find_package(PNG REQUIRED)
find_package(TIFF REQUIRED)  # TIFF through libtiff, BMP by sam3 itself: no imgcodecs in the core
pkg_check_modules(WEBP REQUIRED IMPORTED_TARGET libwebp)

# The optional modules, each ON by default: a module whose libraries are missing is turned off
# with a message saying what to install (SAM3_HAVE_<MODULE> says what this build has).
option(SAM3_HUB "sam3::hub: the model registry, downloads, checksums, archives (libcurl, OpenSSL, libzip)" ON)
option(SAM3_SERVER "sam3 serve's HTTP service and labeling-tool protocols (Boost.Beast, OpenSSL, libcurl, pugixml)" ON)
option(SAM3_VIDEO_IO "sam3::video_io: video files in, overlay videos out (FFmpeg's libraries)" ON)
option(SAM3_CLI "The sam3 program (CLI11; needs the hub, the server and video I/O)" ON)
option(SAM3_BENCH "The benchmark programs (CLI11)" ON)
# Turns a wanted module off, saying why and what to install.
macro(sam3_module_missing var what install)
  set(${var} OFF)
  message(WARNING "${what} is off: ${install}, and configure again (or turn its option off to say so)")
endmacro()
set(SAM3_HAVE_HUB ${SAM3_HUB})
set(SAM3_HAVE_SERVER ${SAM3_SERVER})
if(SAM3_HUB OR SAM3_SERVER)
  find_package(CURL QUIET)
  find_package(OpenSSL QUIET COMPONENTS Crypto)
endif()
if(SAM3_HUB)
  pkg_check_modules(LIBZIP QUIET IMPORTED_TARGET libzip)
  if(NOT TARGET CURL::libcurl OR NOT TARGET OpenSSL::Crypto OR NOT LIBZIP_FOUND)
    sam3_module_missing(SAM3_HAVE_HUB "the hub (SAM3_HUB: sam3 models pull)" "apt-get install libcurl4-openssl-dev libssl-dev libzip-dev")
  endif()
endif()
if(SAM3_SERVER)
  find_package(pugixml QUIET)
  find_package(Boost 1.74 QUIET)  # Beast and Asio, header-only (Debian libboost-dev)
  if(NOT TARGET CURL::libcurl OR NOT TARGET OpenSSL::Crypto OR NOT TARGET pugixml::pugixml OR NOT Boost_FOUND)
    sam3_module_missing(SAM3_HAVE_SERVER "the server (SAM3_SERVER: sam3 serve)"
      "apt-get install libboost-dev libssl-dev libcurl4-openssl-dev libpugixml-dev")
  endif()
endif()
# GDAL (optional; Debian's libgdal-dev): map labeling of georeferenced rasters (sam3::geo, `sam3
# label` to GPKG/FGB/SHP, Python's label_map, the QGIS plugin). SAM3_MAPS=OFF leaves it out.
option(SAM3_MAPS "Map labeling of georeferenced rasters with GDAL, when GDAL is installed" ON)
set(SAM3_HAVE_MAPS OFF)
if(SAM3_MAPS)
  find_package(GDAL CONFIG QUIET)
  if(TARGET GDAL::GDAL)
    set(SAM3_HAVE_MAPS ON)
  else()
    message(WARNING "GDAL not found: map labeling (sam3 label to gpkg/fgb/shp, Python's label_map, the QGIS "
      "plugin) is off. apt-get install libgdal-dev (scripts/setup.sh does) and configure again to turn it on.")
  endif()
endif()
# Debian's python3 when there is one (its numpy, onnx and pytest are what the tests use); the
# development part is for the Python module.
if(NOT Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python3_EXECUTABLE /usr/bin/python3)
endif()
find_package(Python3 REQUIRED COMPONENTS Interpreter OPTIONAL_COMPONENTS Development.Module)
# FFmpeg's libraries (Debian's libavformat-dev, libavcodec-dev, libswscale-dev): video files
# are decoded and overlay videos encoded with them (sam3::video_io).
set(SAM3_HAVE_VIDEO_IO ${SAM3_VIDEO_IO})
if(SAM3_VIDEO_IO)
  pkg_check_modules(FFMPEG QUIET IMPORTED_TARGET libavformat libavcodec libswscale libavutil)
  if(FFMPEG_FOUND)
    message(STATUS "FFmpeg: libavformat ${FFMPEG_libavformat_VERSION}, libavcodec ${FFMPEG_libavcodec_VERSION}")
  else()
    sam3_module_missing(SAM3_HAVE_VIDEO_IO "video I/O (SAM3_VIDEO_IO: sam3 track, video files and overlay videos)"
      "FFmpeg's libraries were not found; apt-get install libavformat-dev libavcodec-dev libswscale-dev (scripts/setup.sh does)")
  endif()
endif()
# The server answers Label Studio's video projects, so it needs video I/O.
if(SAM3_HAVE_SERVER AND NOT SAM3_HAVE_VIDEO_IO)
  sam3_module_missing(SAM3_HAVE_SERVER "the server (SAM3_SERVER: sam3 serve)" "it needs video I/O (above)")
endif()
# CLI11 for the sam3 program and the benchmarks.
if(SAM3_CLI OR SAM3_BENCH)
  find_package(CLI11 CONFIG QUIET)
endif()
set(SAM3_HAVE_CLI ${SAM3_CLI})
if(SAM3_CLI AND NOT (SAM3_HAVE_HUB AND SAM3_HAVE_SERVER AND SAM3_HAVE_VIDEO_IO))
  sam3_module_missing(SAM3_HAVE_CLI "the sam3 program (SAM3_CLI)" "it needs the hub, the server and video I/O (above)")
elseif(SAM3_CLI AND NOT TARGET CLI11::CLI11)
  sam3_module_missing(SAM3_HAVE_CLI "the sam3 program (SAM3_CLI)" "apt-get install libcli11-dev")
endif()

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
