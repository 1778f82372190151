//===- OutputFile.cpp - write a tool's output file safely -----------------===//
#include "nnx/Support/OutputFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

static Error makeError(StringRef path, const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), path + ": " + msg);
}

namespace {
/// Where the bytes go first, and how they reach the named path.
struct OutputPlan {
  /// Rename the temporary over `target` (a regular file, or nothing yet);
  /// otherwise open the named path and write into it.
  bool replace = true;
  /// The file the rename replaces: the named path, or a symlink's target.
  SmallString<256> target;
};
} // namespace

/// Replaces a regular file (through a symlink: its target) or an absent
/// path; writes into anything else.
static Expected<OutputPlan> planOutput(StringRef path) {
  OutputPlan plan;
  plan.target = path;
  sys::fs::file_status followed, own;
  bool exists = !sys::fs::status(path, followed, /*follow=*/true);
  bool isLink = !sys::fs::status(path, own, /*follow=*/false) &&
                sys::fs::is_symlink_file(own);
  if (!exists) {
    // A dangling symlink: writing through it creates its target.
    plan.replace = !isLink;
    return plan;
  }
  if (!sys::fs::is_regular_file(followed)) {
    plan.replace = false;
    return plan;
  }
  if (isLink)
    if (std::error_code ec = sys::fs::real_path(path, plan.target))
      return makeError(path, "cannot resolve the symlink: " + ec.message());
  return plan;
}

/// A temporary for `plan`: beside the file it replaces, or in the system's
/// temporary directory when the bytes are copied into the named path.
static Expected<sys::fs::TempFile> createTemporary(StringRef path,
                                                   const OutputPlan &plan) {
  SmallString<256> model;
  if (plan.replace) {
    model = plan.target;
    model += ".tmp-%%%%%%";
  } else {
    sys::path::system_temp_directory(/*ErasedOnReboot=*/true, model);
    sys::path::append(model, "nnx-output-%%%%%%");
  }
  Expected<sys::fs::TempFile> temp =
      sys::fs::TempFile::create(model, sys::fs::all_read | sys::fs::all_write);
  if (!temp)
    return makeError(path, Twine("cannot create a temporary file ") +
                               (plan.replace ? "beside it" : "to stage it") +
                               ": " + toString(temp.takeError()));
  return temp;
}

/// Copies the finished temporary `from` into the existing non-regular
/// `path` (a device, a FIFO, a dangling symlink's target).
static Error copyInto(StringRef path, StringRef from) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> bytes = MemoryBuffer::getFile(
      from, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!bytes)
    return makeError(path, "cannot read back the temporary file: " +
                               bytes.getError().message());
  std::error_code ec;
  raw_fd_ostream os(path, ec, sys::fs::OF_None);
  if (ec)
    return makeError(path, "cannot open it: " + ec.message());
  os << (*bytes)->getBuffer();
  os.close();
  if (os.has_error()) {
    ec = os.error();
    os.clear_error();
    return makeError(path, "cannot write into it: " + ec.message());
  }
  return Error::success();
}

/// Runs `produce` into the open temporary; a stream error becomes an error
/// naming `path`.
static Error produceInto(StringRef path, sys::fs::TempFile &temp,
                         function_ref<Error(raw_ostream &)> produce) {
  raw_fd_ostream os(temp.FD, /*shouldClose=*/false);
  if (Error err = produce(os))
    return err;
  os.flush();
  if (os.has_error()) {
    std::error_code ec = os.error();
    os.clear_error();
    return makeError(path, "cannot write file: " + ec.message());
  }
  return Error::success();
}

Error mlir::nnx::writeOutputFile(StringRef path,
                                 function_ref<Error(raw_ostream &)> produce) {
  Expected<OutputPlan> plan = planOutput(path);
  if (!plan)
    return plan.takeError();
  Expected<sys::fs::TempFile> temp = createTemporary(path, *plan);
  if (!temp)
    return temp.takeError();
  if (Error err = produceInto(path, *temp, produce))
    return joinErrors(std::move(err), temp->discard());
  if (plan->replace) {
    if (Error err = temp->keep(plan->target))
      return makeError(path, "cannot move the temporary file into place: " +
                                 toString(std::move(err)));
    return Error::success();
  }
  Error copied = copyInto(path, temp->TmpName);
  return joinErrors(std::move(copied), temp->discard());
}
