//===- InputGuardTest.cpp - the checks before MLIR parses an input --------===//
#include "nnx/Support/InputGuard.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <string>
#include <sys/resource.h>

using namespace mlir;
using namespace mlir::nnx;

namespace {

/// The error checkParserInput prints for `text`, or "" when it passes.
std::string refusal(llvm::StringRef text) {
  auto buffer = llvm::MemoryBuffer::getMemBuffer(text, "in.mlir");
  std::string error;
  llvm::raw_string_ostream os(error);
  if (succeeded(checkParserInput(*buffer, os)))
    return "";
  return error.empty() ? "(no message)" : error;
}

TEST(InputGuardTest, NestingLimit) {
  std::string ok = std::string(kMaxIRNestingDepth, '{') +
                   std::string(kMaxIRNestingDepth, '}');
  EXPECT_EQ(refusal(ok), "");
  std::string deep = "{" + ok + "}";
  EXPECT_NE(refusal(deep).find("in.mlir:1:1001: error: nesting deeper than "
                               "1000 levels"),
            std::string::npos)
      << refusal(deep);
  // Brackets in strings and comments, arrows and comparisons do not nest.
  std::string inString = "\"" + std::string(2000, '[') + "\\\"\"";
  EXPECT_EQ(refusal(inString + "\n// " + std::string(2000, '(') + "\n"), "");
  std::string arrows;
  for (int i = 0; i < 2000; ++i)
    arrows += "(d0) -> (d0), d0 >= 0, ";
  EXPECT_EQ(refusal("affine_map<" + arrows + ">"), "");
}

TEST(InputGuardTest, IndexDenseArray) {
  EXPECT_NE(refusal("{x = array< index : 8>}").find("llvm/llvm-project#179045"),
            std::string::npos);
  EXPECT_EQ(refusal("{x = array<i64: 8>, y = \"array<index: 8>\"}"), "");
  EXPECT_EQ(refusal("{x = my.array<index>, y = array<indexed: 1>}"), "");
  // Bytecode is left to the reader.
  EXPECT_EQ(refusal(llvm::StringRef("ML\xEFR array<index: 8>")), "");
}

/// Bytecode with one section, the attribute and type offset table, for one
/// attribute and no type, whose one group lists `entries` entries.
std::string offsetTableBytecode(unsigned char entries) {
  std::string section = {'\x03', '\x01', '\x01', char(entries << 1 | 1)};
  section.append(entries, '\x01');
  // Magic, version 6, no producer, then section 3 and its length.
  std::string bytes("ML\xEFR\x0D\0\x03", 7);
  return bytes + char(section.size() << 1 | 1) + section;
}

TEST(InputGuardTest, BytecodeOffsetTableOverflow) {
  EXPECT_EQ(refusal(offsetTableBytecode(1)), "");
  std::string error = refusal(offsetTableBytecode(3));
  EXPECT_NE(error.find("'in.mlir' is corrupted bytecode: its attribute and "
                       "type offset section lists a group of 3 attribute "
                       "entries where 1 of 1 are left"),
            std::string::npos)
      << error;
  // A table cut short is left to MLIR's reader.
  std::string cut = offsetTableBytecode(1);
  EXPECT_EQ(refusal(cut.substr(0, cut.size() - 1)), "");
}

TEST(InputGuardTest, JsonDepth) {
  EXPECT_EQ(findJsonDepthOverflow("[[[]]]", 3), std::nullopt);
  EXPECT_EQ(findJsonDepthOverflow("[[[[]]]]", 3), std::optional<size_t>(3));
  EXPECT_EQ(findJsonDepthOverflow("{\"a\": \"[[[[\\\"[[\", \"b\": [[]]}", 3),
            std::nullopt);
  EXPECT_EQ(findJsonDepthOverflow("[][][][][]", 1), std::nullopt);
}

TEST(InputGuardTest, DenseElementsData) {
  MLIRContext context;
  std::string diagnostic;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    diagnostic = diag.str();
    return success();
  });
  OpBuilder b(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(b, b.getUnknownLoc());
  auto type = RankedTensorType::get({4}, b.getF32Type());
  float data[4] = {1, 2, 3, 4};
  (*module)->setAttr("nnx.ok",
                     DenseElementsAttr::get(type, llvm::ArrayRef(data)));
  (*module)->setAttr("nnx.splat", DenseElementsAttr::get(type, 1.0f));
  EXPECT_TRUE(succeeded(checkDenseElementsData(*module)));
  EXPECT_EQ(diagnostic, "");
  // 8 bytes: neither one element (a splat) nor four, as a corrupted bytecode
  // file can make them (MLIR checks it in builds with assertions only).
  llvm::ArrayRef<char> raw(reinterpret_cast<const char *>(data), 8);
  (*module)->setAttr("nnx.bad", DenseElementsAttr::getFromRawBuffer(type, raw));
  EXPECT_TRUE(failed(checkDenseElementsData(*module)));
  EXPECT_NE(diagnostic.find("data does not fit its type"), std::string::npos)
      << diagnostic;
}

TEST(InputGuardTest, BytecodeReadBudget) {
  constexpr uint64_t GiB = uint64_t(1) << 30;
  EXPECT_EQ(getBytecodeReadBudget(0), 4 * GiB);
  EXPECT_EQ(getBytecodeReadBudget(GiB), 32 * GiB);
  EXPECT_EQ(getBytecodeReadBudget(UINT64_MAX / 2), UINT64_MAX);
}

/// The soft address-space limit of the process.
static rlim_t softAddressSpaceLimit() {
  struct rlimit limit;
  EXPECT_EQ(getrlimit(RLIMIT_AS, &limit), 0);
  return limit.rlim_cur;
}

TEST(InputGuardTest, BytecodeReadLimitsIsScoped) {
  rlim_t before = softAddressSpaceLimit();
  auto text = llvm::MemoryBuffer::getMemBuffer("nnx.model", "in.mlir");
  {
    BytecodeReadLimits limit(*text);
    EXPECT_EQ(softAddressSpaceLimit(), before) << "text is not limited";
  }
  auto bytecode = llvm::MemoryBuffer::getMemBuffer(
      llvm::StringRef("ML\xEFR\x06", 5), "in.mlirbc",
      /*RequiresNullTerminator=*/false);
  {
    BytecodeReadLimits limit(*bytecode);
    if (!limit.isActive()) {
      // only where it cannot apply, or a lower limit is already set
      EXPECT_TRUE(!BytecodeReadLimits::isSupported() ||
                  before != RLIM_INFINITY);
    } else if (BytecodeReadLimits::limitsAddressSpace()) {
      EXPECT_LT(softAddressSpaceLimit(), before);
    } else { // the heap is bounded, not the address space
      EXPECT_EQ(softAddressSpaceLimit(), before);
    }
    limit.release();
    EXPECT_EQ(softAddressSpaceLimit(), before);
  }
  EXPECT_EQ(softAddressSpaceLimit(), before);
}

/// Asks for `bytes` (never touched): an allocation that fails aborts, as
/// operator new does when the system refuses it.
static void allocateOrAbort(uint64_t bytes) {
  static void *volatile block; // the compiler may not elide the pair
  block = std::malloc(bytes);
  if (!block)
    std::abort();
  std::free(block);
}

// What a corrupted region header makes MLIR's bytecode reader ask for: more
// than the read's budget at once. Under the limit the allocation fails and
// the read is unwound as a crash, in every build that sets a limit (in ASan
// builds, the allocator's heap is what is bounded; was: no limit there, and
// test/nnx-opt/corrupt-bytecode.test's region-count inputs ran into the
// 5 s timer). After release() the same allocation is fine.
TEST(InputGuardTest, BytecodeReadLimitsRefusesAnAllocationPastTheBudget) {
  auto bytecode = llvm::MemoryBuffer::getMemBuffer(
      llvm::StringRef("ML\xEFR\x06", 5), "in.mlirbc",
      /*RequiresNullTerminator=*/false);
  uint64_t tooMuch =
      getBytecodeReadBudget(bytecode->getBufferSize()) + (uint64_t(1) << 30);
  BytecodeReadLimits limit(*bytecode);
  if (!BytecodeReadLimits::isSupported())
    GTEST_SKIP() << "no memory limit in this build (MSan, TSan)";
  if (!limit.isActive()) {
    ASSERT_TRUE(BytecodeReadLimits::limitsAddressSpace() &&
                softAddressSpaceLimit() != RLIM_INFINITY)
        << "a bytecode read has no memory limit";
    GTEST_SKIP() << "a lower address-space limit is already set";
  }
  EXPECT_FALSE(runRecoveringCrash([&] { allocateOrAbort(tooMuch); }));
  limit.release();
  EXPECT_TRUE(runRecoveringCrash([&] { allocateOrAbort(tooMuch); }));
}

// A read that allocates and frees until the time limit stops it, as MLIR's
// reader did on a corrupted file (fuzz-ir-bytecode, issue 46): the unwind
// must not leave malloc's lists half-updated (was: the signal unwound malloc
// itself, and a later allocation aborted in 2 runs of 6). Each round's
// limit fires too, so SIGALRM is not left blocked after the unwind.
TEST(InputGuardTest, BytecodeReadTimeLimitLeavesTheAllocatorWhole) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizer's malloc is in this executable, as is the "
                  "loop below: the limit would wait for the loop to leave it";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) ||     \
    __has_feature(thread_sanitizer)
  GTEST_SKIP() << "the sanitizer's malloc is in this executable, as is the "
                  "loop below: the limit would wait for the loop to leave it";
#endif
#endif
  auto bytecode = llvm::MemoryBuffer::getMemBuffer(
      llvm::StringRef("ML\xEFR\x06", 5), "in.mlirbc",
      /*RequiresNullTerminator=*/false);
  // Reachable, not leaked, after an unwind; volatile, so that a block is
  // never both freed and still listed.
  static void *volatile blocks[64];
  auto replace = [](unsigned i, size_t bytes) {
    void *old = blocks[i];
    blocks[i] = nullptr;
    std::free(old);
    blocks[i] = bytes ? std::malloc(bytes) : nullptr;
  };
  for (int round = 0; round < 20; ++round) {
    bool finished;
    {
      BytecodeReadLimits limit(*bytecode, /*milliseconds=*/10);
      finished = runRecoveringCrash([&] {
        for (unsigned n = 0;; ++n)
          replace(n % 64, 16 + n % 4000);
      });
    }
    EXPECT_FALSE(finished);
    EXPECT_TRUE(bytecodeReadTimedOut());
    for (unsigned i = 0; i < 64; ++i)
      replace(i, 100);
  }
  for (unsigned i = 0; i < 64; ++i)
    replace(i, 0);
}

TEST(InputGuardTest, RecoversFromCrash) {
  EXPECT_TRUE(runRecoveringCrash([] {}));
  EXPECT_FALSE(runRecoveringCrash([] { __builtin_trap(); }));
}

} // namespace
