//===- InputGuard.cpp - inputs checked before MLIR's parsers see them -----===//
#include "nnx/Support/InputGuard.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <gnu/libc-version.h>
#include <link.h>
#include <optional>
#include <string>
#include <sys/resource.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

using namespace mlir;
using namespace mlir::nnx;
using llvm::StringRef;

namespace {
/// The first thing in textual IR that nnx refuses before MLIR parses it.
struct IRProblem {
  size_t offset;
  std::string message;
};
} // namespace

static bool isIdentifierChar(char c) {
  return llvm::isAlnum(c) || c == '_' || c == '$' || c == '.' || c == '!' ||
         c == '#';
}

/// The offset of the `"` that closes the string literal opening at `i`, or
/// of the end of its line when it is unterminated (the lexer's view).
static size_t skipString(StringRef text, size_t i) {
  for (++i; i < text.size(); ++i) {
    if (text[i] == '\\')
      ++i;
    else if (text[i] == '"' || text[i] == '\n')
      return i;
  }
  return text.size();
}

/// Whether the builtin `array` keyword at offset `i` opens `array<index`.
static bool isIndexDenseArray(StringRef text, size_t i) {
  if (i > 0 && isIdentifierChar(text[i - 1]))
    return false;
  StringRef rest = text.drop_front(i);
  if (!rest.consume_front("array"))
    return false;
  rest = rest.ltrim();
  if (!rest.consume_front("<"))
    return false;
  rest = rest.ltrim();
  return rest.consume_front("index") &&
         (rest.empty() || !isIdentifierChar(rest.front()));
}

/// `<` and `>` that are no brackets: `->`, `>=`, `<=`.
static bool isComparisonOrArrow(StringRef text, size_t i) {
  bool equalsNext = i + 1 < text.size() && text[i + 1] == '=';
  if (text[i] == '<')
    return equalsNext;
  return equalsNext || (i > 0 && text[i - 1] == '-');
}

/// Scans `text` without recursion, skipping strings and comments.
static std::optional<IRProblem> scanIR(StringRef text) {
  size_t depth = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    switch (char c = text[i]) {
    case '"':
      i = skipString(text, i);
      break;
    case '/':
      if (text.drop_front(i).starts_with("//")) {
        i = text.find('\n', i);
        if (i == StringRef::npos)
          return std::nullopt;
      }
      break;
    case '<':
    case '{':
    case '[':
    case '(':
      if (c == '<' && isComparisonOrArrow(text, i))
        break;
      if (++depth > kMaxIRNestingDepth)
        return IRProblem{i, "nesting deeper than " +
                                std::to_string(kMaxIRNestingDepth) +
                                " levels of brackets; nnx refuses it before "
                                "MLIR's recursive parser overflows the stack "
                                "(docs/Reliability.md)"};
      break;
    case '>':
    case '}':
    case ']':
    case ')':
      if (depth > 0 && !(c == '>' && isComparisonOrArrow(text, i)))
        --depth;
      break;
    case 'a':
      if (isIndexDenseArray(text, i))
        return IRProblem{i, "'array<index: ...>' is not supported: MLIR "
                            "22.1's dense array parser crashes on an index "
                            "element type (llvm/llvm-project#179045); use "
                            "an integer type such as i64"};
      break;
    default:
      break;
    }
  }
  return std::nullopt;
}

bool mlir::nnx::isBytecodeBuffer(const llvm::MemoryBuffer &buffer) {
  return buffer.getBuffer().starts_with("ML\xEFR");
}

namespace {
/// Reads MLIR bytecode the way MLIR's reader (its EncodingReader) does:
/// bytes, varints, sections. A read past the end fails; the checks then
/// leave the file to MLIR's reader, which refuses it.
class BytecodeScanner {
public:
  explicit BytecodeScanner(llvm::ArrayRef<uint8_t> bytes)
      : it(bytes.begin()), end(bytes.end()) {}

  bool empty() const { return it == end; }

  bool readBytes(uint64_t length, llvm::ArrayRef<uint8_t> &result) {
    if (length > uint64_t(end - it))
      return false;
    result = {it, static_cast<size_t>(length)};
    it += length;
    return true;
  }

  bool readByte(uint8_t &value) {
    llvm::ArrayRef<uint8_t> byte;
    if (!readBytes(1, byte))
      return false;
    value = byte[0];
    return true;
  }

  /// A varint: the trailing zeros of the first byte count the bytes that
  /// follow (a set low bit: none; a zero byte: eight, the whole value).
  bool readVarInt(uint64_t &value) {
    uint8_t first;
    llvm::ArrayRef<uint8_t> rest;
    if (!readByte(first))
      return false;
    if (first & 1) {
      value = first >> 1;
      return true;
    }
    unsigned extra = first == 0 ? 8 : llvm::countr_zero(first);
    if (!readBytes(extra, rest))
      return false;
    uint64_t littleEndian = first == 0 ? 0 : first;
    unsigned shift = first == 0 ? 0 : 8;
    for (uint8_t byte : rest) {
      littleEndian |= uint64_t(byte) << shift;
      shift += 8;
    }
    value = first == 0 ? littleEndian : littleEndian >> (extra + 1);
    return true;
  }

  bool skipNullTerminatedString() {
    const void *nul = std::memchr(it, 0, end - it);
    if (!nul)
      return false;
    it = static_cast<const uint8_t *>(nul) + 1;
    return true;
  }

  /// A top-level section: its id (the alignment flag cleared) and data. The
  /// padding of an aligned section is skipped by address, as MLIR does.
  bool readSection(uint8_t &id, llvm::ArrayRef<uint8_t> &data) {
    uint8_t idAndAligned;
    uint64_t length;
    if (!readByte(idAndAligned) || !readVarInt(length))
      return false;
    id = idAndAligned & 0x7f;
    if (idAndAligned & 0x80) {
      uint64_t alignment;
      if (!readVarInt(alignment) || !llvm::isPowerOf2_32(unsigned(alignment)))
        return false;
      uint8_t padding;
      while (reinterpret_cast<uintptr_t>(it) & (unsigned(alignment) - 1))
        if (!readByte(padding) || padding != 0xCB)
          return false;
    }
    return readBytes(length, data);
  }

private:
  const uint8_t *it;
  const uint8_t *end;
};
} // namespace

/// Why the attribute and type offset section `data` would make MLIR 22.1's
/// reader write past its tables, or "". The section gives the number of
/// attributes and of types, then for each, groups (a dialect, a count, a
/// size per entry) that should add up to that number; the reader writes
/// each group's entries without checking that they fit.
static std::string checkAttrTypeOffsets(llvm::ArrayRef<uint8_t> data) {
  BytecodeScanner scan(data);
  uint64_t counts[2];
  if (!scan.readVarInt(counts[0]) || !scan.readVarInt(counts[1]))
    return "";
  for (int kind = 0; kind < 2; ++kind) {
    StringRef what = kind == 0 ? "attribute" : "type";
    for (uint64_t index = 0; index != counts[kind];) {
      uint64_t dialect, entries, entrySize;
      if (!scan.readVarInt(dialect) || !scan.readVarInt(entries))
        return "";
      if (entries > counts[kind] - index)
        return llvm::formatv("its attribute and type offset section lists a "
                             "group of {0} {1} entries where {2} of {3} are "
                             "left (MLIR 22.1's reader would write past its "
                             "table of {1}s)",
                             entries, what, counts[kind] - index, counts[kind])
            .str();
      for (uint64_t i = 0; i < entries; ++i)
        if (!scan.readVarInt(entrySize))
          return "";
      index += entries;
    }
  }
  return "";
}

/// Why MLIR 22.1's reader would corrupt memory reading `bytecode`, or "".
static std::string findBytecodeProblem(StringRef bytecode) {
  BytecodeScanner scan(llvm::arrayRefFromStringRef(bytecode.drop_front(4)));
  uint64_t version;
  if (!scan.readVarInt(version) || !scan.skipNullTerminatedString())
    return "";
  constexpr uint8_t kAttrTypeOffsetSection = 3;
  while (!scan.empty()) {
    uint8_t id;
    llvm::ArrayRef<uint8_t> data;
    if (!scan.readSection(id, data))
      return "";
    if (id == kAttrTypeOffsetSection)
      return checkAttrTypeOffsets(data);
  }
  return "";
}

llvm::LogicalResult
mlir::nnx::checkParserInput(const llvm::MemoryBuffer &buffer,
                            llvm::raw_ostream &os) {
  if (isBytecodeBuffer(buffer)) {
    std::string problem = findBytecodeProblem(buffer.getBuffer());
    if (problem.empty())
      return llvm::success();
    llvm::WithColor::error(os)
        << "'" << buffer.getBufferIdentifier()
        << "' is corrupted bytecode: " << problem << "\n";
    return llvm::failure();
  }
  std::optional<IRProblem> problem = scanIR(buffer.getBuffer());
  if (!problem)
    return llvm::success();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(buffer.getMemBufferRef(),
                                       /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  sourceMgr.PrintMessage(
      os,
      llvm::SMLoc::getFromPointer(buffer.getBufferStart() + problem->offset),
      llvm::SourceMgr::DK_Error, problem->message);
  return llvm::failure();
}

void mlir::nnx::reportParserCrash(const llvm::MemoryBuffer &buffer,
                                  llvm::raw_ostream &os) {
  StringRef file = buffer.getBufferIdentifier();
  if (isBytecodeBuffer(buffer) && bytecodeReadTimedOut())
    llvm::WithColor::error(os)
        << "MLIR's bytecode reader did not finish reading '" << file
        << "' within " << getBytecodeReadSeconds(buffer.getBufferSize())
        << " s: the file is corrupted (MLIR 22.1's reader follows cyclic "
           "references of a corrupted file; the read was stopped, see "
           "docs/Reliability.md)\n";
  else if (isBytecodeBuffer(buffer))
    llvm::WithColor::error(os)
        << "MLIR's bytecode reader crashed reading '" << file
        << "': the file is corrupted (MLIR 22.1's reader does not validate "
           "every size and offset it reads; the crash was contained, see "
           "docs/Reliability.md)\n";
  else
    llvm::WithColor::error(os)
        << "MLIR's parser crashed reading '" << file
        << "' (a bug of MLIR 22.1; the crash was contained, see "
           "docs/Reliability.md)\n";
}

uint64_t mlir::nnx::getBytecodeReadBudget(uint64_t fileBytes) {
  constexpr uint64_t kMinBudget = uint64_t(4) << 30;
  uint64_t scaled = fileBytes > (UINT64_MAX >> 5) ? UINT64_MAX : fileBytes << 5;
  return std::max(kMinBudget, scaled);
}

/// The bytes of address space the process maps now (/proc/self/statm), or
/// nullopt where that cannot be read. Unused in sanitizer builds, which set
/// no limit.
[[maybe_unused]] static std::optional<uint64_t> getMappedBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0;
  if (!(statm >> pages))
    return std::nullopt;
  return pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

#if defined(__SANITIZE_ADDRESS__)
#define NNX_SANITIZED_BUILD 1
#define NNX_ASAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NNX_ASAN_BUILD 1
#endif
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) ||     \
    __has_feature(thread_sanitizer)
#define NNX_SANITIZED_BUILD 1
#endif
#endif

#ifdef NNX_ASAN_BUILD
#include <sanitizer/allocator_interface.h>
#include <sanitizer/lsan_interface.h>

#include <atomic>

/// The heap the process may hold during a bytecode read of an ASan build
/// (0: no limit). ASan's shadow memory needs the address space, so the
/// budget bounds what ASan's allocator has handed out instead: an
/// allocation that takes the heap past it is abandoned (LeakSanitizer told
/// to ignore it) and the read unwound as a crash of the reader, as the
/// failed allocation is in other builds.
static std::atomic<uint64_t> heapLimit{0};

/// Allocations from this size on compare the heap with the limit (asking
/// ASan for its statistics on every small one would slow every read down);
/// a corrupted count asks for gigabytes at once.
constexpr size_t kHeapCheckedBytes = size_t(64) << 10;

static void onAllocation(const volatile void *ptr, size_t size) {
  uint64_t limit = heapLimit.load(std::memory_order_relaxed);
  if (!limit || size < kHeapCheckedBytes ||
      __sanitizer_get_current_allocated_bytes() <= limit)
    return;
  // Only a read inside a recovery context can be unwound (other threads
  // run on unchecked).
  llvm::CrashRecoveryContext *context =
      llvm::CrashRecoveryContext::GetCurrent();
  if (!context)
    return;
  heapLimit.store(0, std::memory_order_relaxed);
  __lsan_ignore_object(const_cast<const void *>(ptr));
  context->HandleExit(1);
}

static void onDeallocation(const volatile void *) {}

/// Installs the allocation hook once; false where ASan has no room for it.
static bool installHeapLimitHook() {
  static const bool installed = __sanitizer_install_malloc_and_free_hooks(
                                    onAllocation, onDeallocation) != 0;
  return installed;
}
#endif

bool mlir::nnx::BytecodeReadLimits::isSupported() {
#if defined(NNX_ASAN_BUILD)
  return installHeapLimitHook();
#elif defined(NNX_SANITIZED_BUILD)
  return false;
#else
  return true;
#endif
}

bool mlir::nnx::BytecodeReadLimits::limitsAddressSpace() {
#ifdef NNX_SANITIZED_BUILD
  return false;
#else
  return true;
#endif
}

unsigned mlir::nnx::getBytecodeReadSeconds(uint64_t fileBytes) {
  return 5 + static_cast<unsigned>(std::min<uint64_t>(fileBytes >> 20, 86400));
}

static volatile sig_atomic_t readTimedOut = 0;

bool mlir::nnx::bytecodeReadTimedOut() { return readTimedOut != 0; }

namespace {
/// Addresses of machine code, [begin, end).
struct CodeRange {
  uintptr_t begin = 0, end = 0;
};
} // namespace

/// The code the time limit does not unwind: the executable segments of the
/// C library and of the object that defines malloc (the C library, or the
/// sanitizer runtime in the executable). Unwinding the read inside malloc
/// or free left the allocator's lists half-updated, and a later allocation
/// aborted ("malloc assertion failure in sysmalloc", 2 runs of 6 on a slow
/// input of fuzz-ir-bytecode, issue 46).
static CodeRange uninterruptible[2];

/// Sets `uninterruptible` from the loaded objects, once.
static void findUninterruptibleCode() {
  static bool found = [] {
    const uintptr_t anchors[2] = {
        reinterpret_cast<uintptr_t>(&gnu_get_libc_version),
        reinterpret_cast<uintptr_t>(&malloc)};
    dl_iterate_phdr(
        [](dl_phdr_info *info, size_t, void *data) {
          auto *anchors = static_cast<const uintptr_t *>(data);
          for (int i = 0; i < info->dlpi_phnum; ++i) {
            const ElfW(Phdr) &segment = info->dlpi_phdr[i];
            if (segment.p_type != PT_LOAD || !(segment.p_flags & PF_X))
              continue;
            CodeRange range{info->dlpi_addr + segment.p_vaddr,
                            info->dlpi_addr + segment.p_vaddr +
                                segment.p_memsz};
            for (int a = 0; a < 2; ++a)
              if (anchors[a] >= range.begin && anchors[a] < range.end)
                uninterruptible[a] = range;
          }
          return 0;
        },
        const_cast<uintptr_t *>(anchors));
    return true;
  }();
  (void)found;
}

/// Whether the signal described by `ucontext` interrupted uninterruptible
/// code (false where the program counter cannot be read).
static bool interruptedUninterruptibleCode(void *ucontext) {
#if defined(__linux__) && defined(__x86_64__)
  auto pc = static_cast<uintptr_t>(
      static_cast<ucontext_t *>(ucontext)->uc_mcontext.gregs[REG_RIP]);
#elif defined(__linux__) && defined(__aarch64__)
  auto pc = static_cast<uintptr_t>(
      static_cast<ucontext_t *>(ucontext)->uc_mcontext.pc);
#else
  uintptr_t pc = 0;
#endif
  return llvm::any_of(uninterruptible, [&](const CodeRange &range) {
    return pc >= range.begin && pc < range.end;
  });
}

/// Arms the read's timer: SIGALRM after `milliseconds`.
static void armReadTimer(uint64_t milliseconds) {
  struct itimerval timer = {};
  timer.it_value.tv_sec = static_cast<time_t>(milliseconds / 1000);
  timer.it_value.tv_usec = static_cast<suseconds_t>(milliseconds % 1000 * 1000);
  setitimer(ITIMER_REAL, &timer, nullptr);
}

/// SIGALRM during a bytecode read: unwind it like a crash of the reader,
/// unless it interrupted the C library or the allocator; then try again in a
/// millisecond.
static void onReadAlarm(int, siginfo_t *, void *ucontext) {
  if (interruptedUninterruptibleCode(ucontext)) {
    armReadTimer(1);
    return;
  }
  readTimedOut = 1;
  if (llvm::CrashRecoveryContext *context =
          llvm::CrashRecoveryContext::GetCurrent())
    context->HandleExit(1);
}

mlir::nnx::BytecodeReadLimits::BytecodeReadLimits(
    const llvm::MemoryBuffer &buffer, std::optional<uint64_t> milliseconds) {
  if (!isBytecodeBuffer(buffer))
    return;
  readTimedOut = 0;
  findUninterruptibleCode();
  struct sigaction action = {};
  action.sa_sigaction = onReadAlarm;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  timed = sigaction(SIGALRM, &action, nullptr) == 0;
  if (timed)
    armReadTimer(milliseconds.value_or(
        uint64_t(getBytecodeReadSeconds(buffer.getBufferSize())) * 1000));
#if defined(NNX_ASAN_BUILD)
  if (!installHeapLimitHook())
    return;
  uint64_t budget = getBytecodeReadBudget(buffer.getBufferSize());
  uint64_t held = __sanitizer_get_current_allocated_bytes();
  heapLimit.store(held > UINT64_MAX - budget ? UINT64_MAX : held + budget,
                  std::memory_order_relaxed);
  active = true;
#elif !defined(NNX_SANITIZED_BUILD)
  std::optional<uint64_t> mapped = getMappedBytes();
  struct rlimit limit;
  if (!mapped || getrlimit(RLIMIT_AS, &limit) != 0)
    return;
  uint64_t budget = getBytecodeReadBudget(buffer.getBufferSize());
  uint64_t wanted =
      *mapped > UINT64_MAX - budget ? UINT64_MAX : *mapped + budget;
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur <= wanted)
    return;
  savedSoftLimit = limit.rlim_cur;
  limit.rlim_cur = wanted;
  active = setrlimit(RLIMIT_AS, &limit) == 0;
#endif
}

void mlir::nnx::BytecodeReadLimits::release() {
  if (timed) {
    // The unwind from the handler left SIGALRM blocked: ignoring it drops
    // one still pending, then it is unblocked for the next read.
    armReadTimer(0);
    signal(SIGALRM, SIG_IGN);
    sigset_t alarmSignal;
    sigemptyset(&alarmSignal);
    sigaddset(&alarmSignal, SIGALRM);
    pthread_sigmask(SIG_UNBLOCK, &alarmSignal, nullptr);
    signal(SIGALRM, SIG_DFL);
    timed = false;
  }
  if (!active)
    return;
#ifdef NNX_ASAN_BUILD
  heapLimit.store(0, std::memory_order_relaxed);
#else
  struct rlimit limit;
  if (getrlimit(RLIMIT_AS, &limit) == 0) {
    limit.rlim_cur = savedSoftLimit;
    (void)setrlimit(RLIMIT_AS, &limit);
  }
#endif
  active = false;
}

bool mlir::nnx::runRecoveringCrash(llvm::function_ref<void()> fn) {
  llvm::CrashRecoveryContext::Enable();
  llvm::CrashRecoveryContext context;
  bool ok = context.RunSafely(fn);
  llvm::CrashRecoveryContext::Disable();
  return ok;
}

llvm::LogicalResult
mlir::nnx::runParserContained(const llvm::MemoryBuffer &buffer,
                              llvm::function_ref<void()> parse,
                              llvm::raw_ostream &os) {
  if (runRecoveringCrash(parse))
    return llvm::success();
  reportParserCrash(buffer, os);
  return llvm::failure();
}

OwningOpRef<ModuleOp> mlir::nnx::parseGuarded(llvm::SourceMgr &sourceMgr,
                                              MLIRContext *context,
                                              llvm::raw_ostream &os,
                                              bool *crashed) {
  if (crashed)
    *crashed = false;
  const llvm::MemoryBuffer &input =
      *sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  if (failed(checkParserInput(input, os)))
    return nullptr;
  // Bytecode is verified only once its dense data is checked: the verifier
  // reads it.
  bool bytecode = isBytecodeBuffer(input);
  ParserConfig config(context, /*verifyAfterParse=*/!bytecode);
  OwningOpRef<ModuleOp> module;
  bool contained;
  {
    // Restored after the read, also after a contained crash (which skips
    // the destructors inside the parse).
    BytecodeReadLimits memoryLimit(input);
    contained = succeeded(runParserContained(
        input, [&] { module = parseSourceFile<ModuleOp>(sourceMgr, config); },
        os));
  }
  if (!contained) {
    if (crashed)
      *crashed = true;
    // What the parse built may be inconsistent: leaked, not destroyed.
    (void)module.release();
    return nullptr;
  }
  if (module && bytecode &&
      (failed(checkDenseElementsData(*module)) ||
       failed(mlir::verify(*module))))
    return nullptr;
  return module;
}

/// Whether the raw data of `attr` fits its type (MLIR asserts it, in builds
/// with assertions only).
static bool hasValidRawData(DenseIntOrFPElementsAttr attr) {
  ShapedType type = attr.getType();
  Type element = type.getElementType();
  if (auto complex = dyn_cast<ComplexType>(element))
    element = complex.getElementType();
  if (!element.isIntOrIndexOrFloat() || !type.hasStaticShape())
    return false;
  bool splat = false;
  return DenseElementsAttr::isValidRawBuffer(type, attr.getRawData(), splat);
}

llvm::LogicalResult mlir::nnx::checkDenseElementsData(Operation *root) {
  WalkResult result = root->walk([](Operation *op) {
    WalkResult bad =
        op->getAttrDictionary().walk([](DenseIntOrFPElementsAttr attr) {
          return hasValidRawData(attr) ? WalkResult::advance()
                                       : WalkResult::interrupt();
        });
    if (!bad.wasInterrupted())
      return WalkResult::advance();
    emitError(op->getLoc())
        << "'" << op->getName()
        << "' holds a dense elements attribute whose data does not fit its "
           "type: the input is corrupted";
    return WalkResult::interrupt();
  });
  return llvm::failure(result.wasInterrupted());
}

std::optional<size_t> mlir::nnx::findJsonDepthOverflow(StringRef text,
                                                       size_t limit) {
  size_t depth = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (c == '"') {
      for (++i; i < e && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
    } else if (c == '[' || c == '{') {
      if (++depth > limit)
        return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}
