# What `cmake --install <build> --prefix <prefix>` puts into a prefix, and the
# NNXConfig.cmake that lets another CMake project find_package(NNX) there
# (docs/Integration.md):
#
#   bin/                        nnx-opt, nnx-run, nnx-compile
#   lib/                        libNNX*.a (and libnnx_cuda_runtime.so when
#                               cuda.h was found)
#   lib/cmake/nnx/              NNXConfig.cmake, NNXTargets*.cmake
#   include/nnx-aot/            the C runtime of nnx-compile's objects
#                               (lib/libnnx_aot_runtime.a)
#   include/nnx/                the headers and .td files of include/nnx, with
#                               the generated *.h.inc, *.cpp.inc and Config.h
#   share/nnx/families/         the tracing families (set $NNX_FAMILIES_DIR)
#
# The layout and the config file follow CIRCT's (cmake/modules/AddCIRCT.cmake,
# CIRCTConfig.cmake.in): one export set, NNXTargets, with the targets under
# their own names (NNXIR, NNXInit, ..., as MLIR's are), MLIR found again by
# the config file. Included by the top-level CMakeLists.txt after AddMLIR and
# before lib/; nnx_install_package() is called once every target exists.

set(NNX_INSTALL_PACKAGE_DIR lib${LLVM_LIBDIR_SUFFIX}/cmake/nnx)

# add_mlir_library (AddMLIR.cmake) installs every library through this
# function, which upstream hard-codes to MLIR's export set (MLIRTargets, via
# get_target_export_arg). CIRCT opts out with DISABLE_INSTALL in its own
# add_circt_library wrapper; nnx's lib/ declares its libraries with the plain
# upstream functions, so the hook itself is redefined: each library is
# installed once, into NNXTargets, and its consumers get the installed
# include/ (the build tree itself uses include_directories()).
function(add_mlir_library_install name)
  install(TARGETS ${name}
    EXPORT NNXTargets
    COMPONENT ${name}
    LIBRARY DESTINATION lib${LLVM_LIBDIR_SUFFIX}
    ARCHIVE DESTINATION lib${LLVM_LIBDIR_SUFFIX}
    RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
  target_include_directories(${name} INTERFACE $<INSTALL_INTERFACE:include>)
  set_property(GLOBAL APPEND PROPERTY NNX_EXPORTS ${name})
  set_property(GLOBAL APPEND PROPERTY NNX_ALL_LIBS ${name})
endfunction()

# The tools, the CUDA runtime, the headers, the families and the CMake
# package. Called by the top-level CMakeLists.txt after lib/ and tools/.
function(nnx_install_package)
  # NNXExecution links the CUDA runtime publicly: it must be in the export
  # set whenever it is built.
  if(TARGET nnx_cuda_runtime)
    add_mlir_library_install(nnx_cuda_runtime)
  endif()
  # The tools' RUNPATH is $ORIGIN/../lib (llvm_setup_rpath); installed, they
  # also need the libMLIR.so of
  # LLVM_LIBRARY_DIR, which the build tree's RUNPATH alone names.
  foreach(tool nnx-opt nnx-run nnx-compile)
    if(TARGET ${tool})
      set_property(TARGET ${tool} APPEND PROPERTY
        INSTALL_RPATH "${LLVM_LIBRARY_DIR}")
      install(TARGETS ${tool}
        EXPORT NNXTargets
        COMPONENT ${tool}
        RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
      set_property(GLOBAL APPEND PROPERTY NNX_EXPORTS ${tool})
    endif()
  endforeach()

  # Headers and TableGen sources as written, then the generated ones (the
  # build tree's include/nnx also holds CMake's bookkeeping, left out).
  install(DIRECTORY ${NNX_SOURCE_DIR}/include/nnx
    DESTINATION include
    COMPONENT nnx-headers
    FILES_MATCHING
    PATTERN "*.h"
    PATTERN "*.td"
    PATTERN "*.def")
  install(DIRECTORY ${NNX_BINARY_DIR}/include/nnx
    DESTINATION include
    COMPONENT nnx-headers
    FILES_MATCHING
    PATTERN "*.h"
    PATTERN "*.inc"
    PATTERN "CMakeFiles" EXCLUDE)
  # The C runtime of ahead-of-time objects (nnx-compile's).
  install(DIRECTORY ${NNX_SOURCE_DIR}/include/nnx-aot
    DESTINATION include
    COMPONENT nnx-headers
    FILES_MATCHING
    PATTERN "*.h")
  install(DIRECTORY ${NNX_SOURCE_DIR}/families/
    DESTINATION share/nnx/families
    COMPONENT nnx-families)

  install(EXPORT NNXTargets
    DESTINATION ${NNX_INSTALL_PACKAGE_DIR}
    COMPONENT nnx-cmake-exports)
  get_property(NNX_EXPORTS GLOBAL PROPERTY NNX_EXPORTS)
  get_property(NNX_ALL_LIBS GLOBAL PROPERTY NNX_ALL_LIBS)
  # The MLIR nnx was built against: its libraries link that libMLIR.so.
  get_filename_component(NNX_CONFIG_MLIR_DIR "${MLIR_DIR}" REALPATH)
  set(NNX_CONFIG_LLVM_VERSION "${LLVM_PACKAGE_VERSION}")
  configure_file(${NNX_SOURCE_DIR}/cmake/NNXConfig.cmake.in
    ${NNX_BINARY_DIR}/CMakeFiles/NNXConfig.cmake @ONLY)
  install(FILES ${NNX_BINARY_DIR}/CMakeFiles/NNXConfig.cmake
    DESTINATION ${NNX_INSTALL_PACKAGE_DIR}
    COMPONENT nnx-cmake-exports)
endfunction()
