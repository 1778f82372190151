//===- MLIRCAPI.cpp - MLIR's C API as a library over libMLIR.so -----------===//
//
// libNNXMLIRCAPI.so is MLIR's libMLIRCAPIIR.a linked whole on top of the
// shared libMLIR.so (lib/CAPI/CMakeLists.txt says why); it has no code of
// its own. This file only gives the library a source.
//
//===----------------------------------------------------------------------===//
