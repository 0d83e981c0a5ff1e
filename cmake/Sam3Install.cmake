# `cmake --install build [--prefix P]`: the public headers, the libraries, a CMake package
# (find_package(sam3) -> sam3::sam3, sam3::hub, sam3::label, sam3::geo, sam3::video_io), a pkg-config file per
# library, the CLI and the bundled vocabulary. The libraries are static: the package finds
# their dependencies again for the program that links them (sam3Config.cmake).
include(CMakePackageConfigHelpers)
set(SAM3_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/sam3)

set(_sam3_libraries sam3 sam3_pure sam3_tokenizer sam3_kernels sam3_label)
foreach(t sam3_hub sam3_video_io sam3_geo)  # optional modules (SAM3_HUB, SAM3_VIDEO_IO, SAM3_MAPS)
  if(TARGET ${t})
    list(APPEND _sam3_libraries ${t})
  endif()
endforeach()
foreach(t IN LISTS _sam3_libraries)
  string(REPLACE "sam3_" "" _export_name ${t})
  set_target_properties(${t} PROPERTIES EXPORT_NAME ${_export_name})
endforeach()
install(TARGETS ${_sam3_libraries} sam3_ort EXPORT sam3Targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
if(TARGET sam3_onednn)
  install(TARGETS sam3_onednn EXPORT sam3Targets COMPONENT dev)
endif()
install(EXPORT sam3Targets NAMESPACE sam3:: DESTINATION ${SAM3_CMAKE_DIR} COMPONENT dev)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/sam3 ${PROJECT_BINARY_DIR}/src/generated/include/sam3
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)

# ONNX Runtime taken from a folder goes beside the libraries (the package points at it there).
if(SAM3_ORT_SOURCE STREQUAL "folder")
  file(REAL_PATH ${ORT_LIBRARY} _ort_real)
  install(FILES ${_ort_real} DESTINATION ${CMAKE_INSTALL_LIBDIR} RENAME libonnxruntime.so.1 COMPONENT dev)
endif()

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/templates/sam3Config.cmake.in
  ${PROJECT_BINARY_DIR}/sam3Config.cmake INSTALL_DESTINATION ${SAM3_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/sam3ConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/sam3Config.cmake ${PROJECT_BINARY_DIR}/sam3ConfigVersion.cmake
  DESTINATION ${SAM3_CMAKE_DIR} COMPONENT dev)

# pkg-config: `pkg-config --cflags --libs --static sam3` (static archives need their
# dependencies on the link line).
set(SAM3_PC_ORT_LIBS "-lonnxruntime")
if(SAM3_ORT_SOURCE STREQUAL "folder")
  set(SAM3_PC_ORT_LIBS "-L\${libdir} -l:libonnxruntime.so.1 -Wl,-rpath,\${libdir}")
endif()
set(SAM3_PC_DNNL_LIBS "")
if(TARGET sam3_onednn)
  set(SAM3_PC_DNNL_LIBS "-ldnnl -fopenmp")
endif()
file(RELATIVE_PATH SAM3_PC_UP /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)  # relocatable
configure_file(${PROJECT_SOURCE_DIR}/cmake/templates/sam3.pc.in ${PROJECT_BINARY_DIR}/sam3.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/sam3.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

if(TARGET sam3_cli)
  install(TARGETS sam3_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
endif()
install(FILES ${SAM3_DATA_DIR}/clip/bpe_simple_vocab_16e6.txt.gz ${SAM3_DATA_DIR}/clip/LICENSE-CLIP
  DESTINATION ${CMAKE_INSTALL_DATADIR}/sam3/clip COMPONENT dev)
