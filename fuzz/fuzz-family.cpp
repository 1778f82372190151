//===- fuzz-family.cpp - family loader and path resolver ------------------===//
//
// The first byte of the input picks one of the models the shipped families
// are written for (examples/families/*.mlir, and the tracing tests' tiny
// model); the rest is a family file. It is loaded the way nnx-insert-probes
// and nnx-support load one (a file, `extends` looked up in families/), and
// every standardized name it gives the model is listed and resolved for read
// and for write, as nnx-support does.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "nnx/Dialect/NNX/Tracing/Resolver.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <vector>

using namespace mlir;
using namespace mlir::nnx;
namespace nnxtracing = mlir::nnx::tracing;

namespace {
/// The models, parsed once: the resolver only reads them.
struct Models {
  std::unique_ptr<MLIRContext> context;
  std::vector<OwningOpRef<ModuleOp>> modules;
  std::vector<ModelOp> models;
  std::string familyFile;
};
} // namespace

static Models *models;

static void loadModel(llvm::StringRef relative) {
  std::string path = nnxfuzz::sourcePath(relative);
  auto buffer = llvm::MemoryBuffer::getFile(path);
  OwningOpRef<ModuleOp> module;
  if (!buffer || nnxfuzz::parseInput(*models->context, (*buffer)->getBuffer(),
                                     module) != nnxfuzz::ParseOutcome::Parsed)
    nnxfuzz::fail("family", "cannot read the model " + path);
  for (ModelOp model : module->getOps<ModelOp>())
    models->models.push_back(model);
  models->modules.push_back(std::move(module));
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  models = new Models;
  models->context = nnxfuzz::makeContext();
  for (const char *name :
       {"bloom", "cohere", "falcon", "gemma2", "gpt2", "llama"})
    loadModel((llvm::Twine("examples/families/") + name + ".mlir").str());
  loadModel("test/Dialect/NNX/Tracing/Inputs/tiny.mlir");
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("nnx-fuzz-family", dir))
    nnxfuzz::fail("family", "cannot create a temporary directory");
  llvm::sys::path::append(dir, "fuzz.json");
  models->familyFile = std::string(dir);
  return 0;
}

/// Lists and resolves every name of `family` on `model`, as nnx-support.
static void resolveAll(const nnxtracing::Family &family, ModelOp model) {
  nnxtracing::Resolver resolver(family, model);
  std::string error;
  std::vector<std::string> names = resolver.listNames(error);
  for (const std::string &name : names)
    for (bool forWrite : {false, true}) {
      nnxtracing::Resolution r = resolver.resolve(name, forWrite);
      if (r.ok())
        (void)resolver.getOrder().position(r.location);
      (void)r.location.describe();
    }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return -1;
  ModelOp model = models->models[data[0] % models->models.size()];
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(models->familyFile, ec);
    if (ec)
      nnxfuzz::fail("family", "cannot write " + models->familyFile);
    os.write(reinterpret_cast<const char *>(data) + 1, size - 1);
  }
  std::string error;
  std::optional<nnxtracing::Family> family = nnxtracing::loadFamily(
      models->familyFile, nnxfuzz::sourcePath("families"), error);
  if (family)
    resolveAll(*family, model);
  return 0;
}
