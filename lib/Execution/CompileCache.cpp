//===- CompileCache.cpp - the entries of the compile cache ----------------===//
#include "CompileCache.h"

#include "ExecutionError.h"
#include "HashStream.h"
#include "Parameters.h"

#include "mlir/IR/Verifier.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/TargetParser/Host.h"

#include <elf.h>
#include <link.h>

using namespace mlir;
using namespace mlir::nnx;

static constexpr size_t kHashSize = 32;
/// The first bytes of a lowering entry.
static constexpr llvm::StringLiteral kLoweringMagic = "NNXLOW1\n";

std::string mlir::nnx::cacheEntryPath(llvm::StringRef dir, llvm::StringRef key,
                                      llvm::StringRef extension) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, key + "." + extension);
  return std::string(path);
}

std::unique_ptr<llvm::MemoryBuffer>
mlir::nnx::readCacheEntry(llvm::StringRef path, llvm::StringRef magic) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!file)
    return nullptr;
  llvm::StringRef bytes = (*file)->getBuffer();
  if (!bytes.consume_front(magic) || bytes.size() <= kHashSize)
    return nullptr;
  llvm::StringRef stored = bytes.take_front(kHashSize);
  llvm::StringRef payload = bytes.drop_front(kHashSize);
  std::array<uint8_t, 32> actual =
      llvm::SHA256::hash(llvm::arrayRefFromStringRef(payload));
  if (stored != llvm::toStringRef(actual))
    return nullptr;
  return llvm::MemoryBuffer::getMemBufferCopy(payload, path);
}

llvm::Error mlir::nnx::writeCacheEntry(llvm::StringRef dir,
                                       llvm::StringRef path,
                                       llvm::StringRef magic,
                                       llvm::StringRef payload) {
  auto fail = [&](const llvm::Twine &what, std::error_code ec) {
    return makeError("cannot write the compile cache entry '" + path +
                     "': " + what + ": " + ec.message());
  };
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return fail("cannot create '" + dir + "'", ec);
  int fd = -1;
  llvm::SmallString<256> temporary;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(path + "-%%%%%%.tmp", fd, temporary))
    return fail("cannot create a file in '" + dir + "'", ec);
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    std::array<uint8_t, 32> hash =
        llvm::SHA256::hash(llvm::arrayRefFromStringRef(payload));
    os << magic << llvm::toStringRef(hash) << payload;
    os.close();
    if (os.has_error()) {
      std::error_code ec = os.error();
      os.clear_error();
      llvm::sys::fs::remove(temporary);
      return fail("cannot write '" + temporary + "'", ec);
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(temporary, path)) {
    llvm::sys::fs::remove(temporary);
    return fail("cannot rename '" + temporary + "'", ec);
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// The builds that lower a forward
//===----------------------------------------------------------------------===//

namespace {
/// dl_iterate_phdr's search for the loaded object that holds `address`.
struct BuildIdSearch {
  uintptr_t address;
  bool found = false;
  std::string id;
};
} // namespace

/// The GNU build ID in the notes of the loaded object `info` (empty: none).
static std::string readBuildId(const dl_phdr_info &info) {
  for (int i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr) &header = info.dlpi_phdr[i];
    if (header.p_type != PT_NOTE)
      continue;
    const char *at =
        reinterpret_cast<const char *>(info.dlpi_addr + header.p_vaddr);
    const char *end = at + header.p_memsz;
    while (at + sizeof(ElfW(Nhdr)) <= end) {
      const auto *note = reinterpret_cast<const ElfW(Nhdr) *>(at);
      const char *name = at + sizeof(ElfW(Nhdr));
      const char *desc = name + llvm::alignTo(note->n_namesz, 4);
      if (desc + note->n_descsz > end)
        break;
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
          llvm::StringRef(name, 3) == "GNU")
        return llvm::toHex(llvm::StringRef(desc, note->n_descsz));
      at = desc + llvm::alignTo(note->n_descsz, 4);
    }
  }
  return "";
}

static int findBuildId(dl_phdr_info *info, size_t, void *data) {
  auto *search = static_cast<BuildIdSearch *>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &header = info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + header.p_vaddr;
    if (header.p_type == PT_LOAD && search->address >= start &&
        search->address < start + header.p_memsz) {
      search->found = true;
      search->id = readBuildId(*info);
      return 1;
    }
  }
  return 0;
}

/// The build ID of the loaded object (executable or shared library) that
/// holds `address`; empty when it has none.
static std::string buildIdOf(const void *address) {
  BuildIdSearch search{reinterpret_cast<uintptr_t>(address), false, ""};
  dl_iterate_phdr(findBuildId, &search);
  return search.found ? search.id : "";
}

/// The build IDs of the code that lowers a forward: nnx's (this object),
/// MLIR's (the upstream passes) and LLVM's (the code generator), or empty
/// when one has none (a build without `--build-id`): the lowering is then
/// never cached, since nothing tells one build of it from the next.
static const std::string &builds() {
  static const std::string ids = [] {
    std::string all;
    for (const void *address :
         {reinterpret_cast<const void *>(&buildIdOf),
          reinterpret_cast<const void *>(&mlir::verify),
          reinterpret_cast<const void *>(&llvm::sys::getHostCPUName)}) {
      std::string id = buildIdOf(address);
      if (id.empty())
        return std::string();
      all += id + "\n";
    }
    return all;
  }();
  return ids;
}

//===----------------------------------------------------------------------===//
// Lowerings
//===----------------------------------------------------------------------===//

std::optional<std::string>
mlir::nnx::loweringCacheKey(ModuleOp module, const LoweringKeyParts &parts) {
  if (builds().empty())
    return std::nullopt;
  HashStream<llvm::SHA256> os;
  for (llvm::StringRef part :
       {llvm::StringRef(kLoweringMagic), llvm::StringRef(builds()),
        llvm::StringRef(parts.target), llvm::StringRef(parts.pipelineOptions),
        llvm::StringRef(parts.machine)})
    os << part << '\0';
  printProgram(module, os, /*withLocations=*/true);
  std::array<uint8_t, 32> hash = os.result();
  return llvm::toHex(llvm::toStringRef(hash), /*LowerCase=*/true);
}

std::optional<LoweringEntry> mlir::nnx::readLoweringEntry(llvm::StringRef dir,
                                                          llvm::StringRef key) {
  std::unique_ptr<llvm::MemoryBuffer> payload =
      readCacheEntry(cacheEntryPath(dir, key, "nnxlow"), kLoweringMagic);
  if (!payload)
    return std::nullopt;
  auto [objectKey, layouts] = payload->getBuffer().split('\n');
  if (objectKey.size() != 2 * kHashSize)
    return std::nullopt;
  return LoweringEntry{objectKey.str(), layouts.str()};
}

llvm::Error mlir::nnx::writeLoweringEntry(llvm::StringRef dir,
                                          llvm::StringRef key,
                                          const LoweringEntry &entry) {
  return writeCacheEntry(dir, cacheEntryPath(dir, key, "nnxlow"),
                         kLoweringMagic,
                         entry.objectKey + "\n" + entry.layouts);
}
