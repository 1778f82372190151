//===- OutputFile.h - write a tool's output file safely ---------*- C++ -*-===//
//
// How every nnx tool writes a file it was named (`nnx-opt -o FILE`,
// `--nnx-externalize-weights=file=FILE`): the content is produced into a
// temporary first, and FILE is touched only once that succeeded, so a failed
// pass never truncates or deletes what FILE held. Then:
//   - a regular file, or a path that does not exist, is replaced atomically:
//     the temporary lies beside it (beside the link's target when FILE is a
//     symlink, so the link stays a link) and is renamed over it;
//   - anything else (a character device such as /dev/null, a FIFO, a
//     dangling symlink) is opened and written into, never replaced.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_SUPPORT_OUTPUTFILE_H
#define NNX_SUPPORT_OUTPUTFILE_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir::nnx {

/// Writes `path` with the bytes `produce` writes to its stream, as the file
/// comment says. An error from `produce` is returned as it is and leaves
/// `path` untouched; a failure to create, write or move the file is an error
/// that names `path`.
llvm::Error
writeOutputFile(llvm::StringRef path,
                llvm::function_ref<llvm::Error(llvm::raw_ostream &)> produce);

} // namespace mlir::nnx

#endif // NNX_SUPPORT_OUTPUTFILE_H
