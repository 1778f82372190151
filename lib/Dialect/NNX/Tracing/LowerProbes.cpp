//===- LowerProbes.cpp - probes to extra results and arguments --*- C++ -*-===//
#include "nnx/Dialect/NNX/IR/NNXOps.h"
#include "nnx/Dialect/NNX/Tracing/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXLOWERPROBESPASS
#include "nnx/Dialect/NNX/Tracing/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;

namespace {
struct NNXLowerProbesPass
    : public mlir::nnx::impl::NNXLowerProbesPassBase<NNXLowerProbesPass> {

  /// Checks the probe names of `func`: each name is read at most once and
  /// written at most once (counting the names already in its
  /// `nnx.read_probes` / `nnx.write_probes`). A name both read and written
  /// is one value: the read, first, sees it before the write (the write
  /// probes the read's result), as docs/Tracing.md says.
  LogicalResult checkNames(func::FuncOp func, ArrayRef<ProbeOp> probes) {
    llvm::StringSet<> reads, writes;
    auto collect = [&](StringRef attr, llvm::StringSet<> &names) {
      if (auto a = func->getAttrOfType<ArrayAttr>(attr))
        for (Attribute n : a)
          if (auto s = dyn_cast<StringAttr>(n))
            names.insert(s.getValue());
    };
    collect(kReadProbesAttrName, reads);
    collect(kWriteProbesAttrName, writes);
    llvm::StringMap<ProbeOp> readOps;
    for (ProbeOp p : probes) {
      bool isRead = p.getKind() == ProbeKind::read;
      if (!(isRead ? reads : writes).insert(p.getName()).second)
        return p.emitError() << "nnx-lower-probes: probe name \"" << p.getName()
                             << "\" is " << (isRead ? "read" : "written")
                             << " twice in @" << func.getSymName();
      if (isRead && writes.contains(p.getName()))
        return p.emitError()
               << "nnx-lower-probes: probe \"" << p.getName()
               << "\" is read after its write in @" << func.getSymName()
               << "; the read of a written name comes first "
                  "(it sees the value before the write)";
      if (isRead) {
        readOps[p.getName()] = p;
        continue;
      }
      if (!reads.contains(p.getName()))
        continue;
      ProbeOp read = readOps.lookup(p.getName());
      if (read && p.getValue() == read.getResult())
        continue;
      InFlightDiagnostic diag =
          p.emitError() << "nnx-lower-probes: probe \"" << p.getName()
                        << "\" is read and written in @" << func.getSymName()
                        << ", but the write does not replace the value the "
                           "read copies: a read and a write of one name "
                           "probe one value, the read first (it sees the "
                           "value before the write)";
      if (read)
        diag.attachNote(read.getLoc()) << "the read is here";
      return diag;
    }
    return success();
  }

  /// The written argument `arg` where it replaces `v`: when `v` has dynamic
  /// dims, a slice of all of `arg` with `v`'s sizes, so that the sizes of
  /// what follows are still those of the forward's inputs (the run checks
  /// that a patch has exactly the shape of the value it replaces;
  /// nnx-derive-kv-cache proves positions from the ids' length). A view.
  static Value sizedAsValue(Value arg, Value v, ProbeOp p) {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.hasStaticShape())
      return arg;
    OpBuilder b(p);
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, p.getLoc(), v);
    return tensor::ExtractSliceOp::create(b, p.getLoc(), type, arg, offsets,
                                          sizes, strides);
  }

  /// Checks `func` can take probes; emits an error and returns failure if not.
  LogicalResult check(func::FuncOp func, MutableArrayRef<ProbeOp> probes) {
    ModuleOp module = getOperation();
    if (!SymbolTable::symbolKnownUseEmpty(func, module)) {
      InFlightDiagnostic diag =
          func.emitError() << "nnx-lower-probes: function @"
                           << func.getSymName()
                           << " holds probes but has callers; inline it first";
      diag.attachNote(probes.front().getLoc()) << "probe here";
      return diag;
    }
    if (!func.getBody().hasOneBlock())
      return func.emitError()
             << "nnx-lower-probes: function @" << func.getSymName()
             << " has more than one block";
    for (ProbeOp p : probes)
      if (p->getParentOp() != func.getOperation())
        return p.emitError() << "nnx-lower-probes: probe \"" << p.getName()
                             << "\" is nested in a region; only probes in "
                                "the function body can be lowered";
    return checkNames(func, probes);
  }

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    for (func::FuncOp func : getOperation().getOps<func::FuncOp>()) {
      SmallVector<ProbeOp> probes;
      func.walk([&](ProbeOp p) { probes.push_back(p); });
      if (probes.empty())
        continue;
      if (failed(check(func, probes)))
        return signalPassFailure();

      SmallVector<Attribute> readNames, writeNames;
      if (auto a = func->getAttrOfType<ArrayAttr>(kReadProbesAttrName))
        readNames.append(a.begin(), a.end());
      if (auto a = func->getAttrOfType<ArrayAttr>(kWriteProbesAttrName))
        writeNames.append(a.begin(), a.end());
      SmallVector<Value> readValues;
      for (ProbeOp p : probes) {
        Value v = p.getValue();
        if (p.getKind() == ProbeKind::read) {
          // A copy into a buffer of its own: a read must not alias another
          // result (the same value read twice, or also returned) or an
          // argument, and it is what the caller receives.
          OpBuilder b(p);
          auto copy = bufferization::AllocTensorOp::create(
              b, p.getLoc(), cast<RankedTensorType>(v.getType()), ValueRange(),
              v);
          readValues.push_back(copy);
          readNames.push_back(p.getNameAttr());
          p.getResult().replaceAllUsesWith(v);
        } else {
          unsigned idx = func.getNumArguments();
          if (failed(func.insertArgument(
                  idx, v.getType(), DictionaryAttr::get(ctx), p.getLoc()))) {
            p.emitError() << "nnx-lower-probes: cannot add an argument";
            return signalPassFailure();
          }
          writeNames.push_back(p.getNameAttr());
          p.getResult().replaceAllUsesWith(
              sizedAsValue(func.getArgument(idx), v, p));
        }
        p.erase();
      }
      // Reads become trailing results of every return.
      if (!readValues.empty()) {
        func.walk([&](func::ReturnOp ret) {
          ret->insertOperands(ret->getNumOperands(), readValues);
        });
        unsigned first = func.getNumResults();
        for (auto [i, v] : llvm::enumerate(readValues))
          if (failed(func.insertResult(first + i, v.getType(),
                                       DictionaryAttr::get(ctx)))) {
            func.emitError() << "nnx-lower-probes: cannot add a result";
            return signalPassFailure();
          }
      }
      func->setAttr(kReadProbesAttrName, ArrayAttr::get(ctx, readNames));
      func->setAttr(kWriteProbesAttrName, ArrayAttr::get(ctx, writeNames));
    }
  }
};
} // namespace
