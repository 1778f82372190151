//===- InsertProbes.cpp - resolve tracing requests to locations -*- C++ -*-===//
#include "nnx/Dialect/NNX/Tracing/Passes.h"
#include "nnx/Dialect/NNX/Tracing/Resolver.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXINSERTPROBESPASS
#include "nnx/Dialect/NNX/Tracing/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::tracing;

namespace {
struct Request {
  std::string name;
  bool write;
  ProbeLocation location;
};

struct NNXInsertProbesPass
    : public mlir::nnx::impl::NNXInsertProbesPassBase<NNXInsertProbesPass> {
  using Base::Base;

  static void attachNotes(InFlightDiagnostic &diag, ArrayRef<Note> notes) {
    for (const Note &n : notes)
      diag.attachNote(n.first->getLoc()) << n.second;
  }

  /// Resolves and checks one list (`reads` or `writes`); false on error.
  /// A read of a name in `written` is resolved where the write lands (it
  /// follows no in-place update), so that it sees the value before the
  /// write.
  bool resolveList(Resolver &resolver, ModelOp model, const Family &fam,
                   ArrayRef<std::string> names, bool write,
                   ArrayRef<std::string> written,
                   SmallVectorImpl<Request> &out) {
    StringRef option = write ? "writes" : "reads";
    bool ok = true;
    llvm::StringSet<> seen;
    std::optional<Request> latest; // the request furthest in execution
    unsigned latestPos = 0;
    for (const std::string &name : names) {
      if (!seen.insert(name).second) {
        model.emitError() << "nnx-insert-probes: '" << name
                          << "' is listed twice in '" << option << "'";
        ok = false;
        continue;
      }
      Resolution r =
          resolver.resolve(name, write || llvm::is_contained(written, name));
      if (r.kind == Resolution::Unavailable) {
        model.emitError() << "nnx-insert-probes: '" << name
                          << "' is unavailable on family '" << fam.name
                          << "': " << r.message;
        ok = false;
        continue;
      }
      if (r.kind == Resolution::Error) {
        InFlightDiagnostic diag = model.emitError()
                                  << "nnx-insert-probes: " << r.message;
        attachNotes(diag, r.notes);
        ok = false;
        continue;
      }
      Request req{name, write, r.location};
      unsigned pos = resolver.getOrder().position(r.location);
      if (latest && pos < latestPos) {
        InFlightDiagnostic diag =
            model.emitError()
            << "nnx-insert-probes: '" << name << "' (" << r.location.describe()
            << ") is computed before '" << latest->name << "' ("
            << latest->location.describe() << "), which comes first in '"
            << option << "': list values in execution order";
        diag.attachNote(r.location.op->getLoc())
            << "'" << name << "' is computed here";
        diag.attachNote(latest->location.op->getLoc())
            << "'" << latest->name << "' is computed here";
        ok = false;
        continue;
      }
      if (!latest || pos >= latestPos) {
        latest = req;
        latestPos = pos;
      }
      out.push_back(std::move(req));
    }
    return ok;
  }

  void runOnOperation() override {
    if (reads.empty() && writes.empty())
      return markAllAnalysesPreserved();
    std::string error;
    std::optional<Family> fam =
        loadFamily(family, getFamiliesDir(familiesDir), error);
    if (!fam) {
      auto models = getOperation().getOps<ModelOp>();
      Location loc =
          models.empty() ? getOperation().getLoc() : (*models.begin()).getLoc();
      emitError(loc) << "nnx-insert-probes: " << error;
      return signalPassFailure();
    }
    SmallVector<Request> requests;
    bool ok = true, anyModel = false;
    for (ModelOp model : getOperation().getOps<ModelOp>()) {
      anyModel = true;
      Resolver resolver(*fam, model);
      ok &= resolveList(resolver, model, *fam, reads, false, writes, requests);
      ok &= resolveList(resolver, model, *fam, writes, true, {}, requests);
    }
    if (!anyModel) {
      emitError(getOperation().getLoc())
          << "nnx-insert-probes: no 'nnx.model' to trace";
      return signalPassFailure();
    }
    if (!ok)
      return signalPassFailure();

    // Everything resolved: only now change the IR. Reads come first in each
    // op's list, so a read and a write of one value (one name, or two at one
    // location) see the original.
    MLIRContext *ctx = &getContext();
    Builder b(ctx);
    for (const Request &req : requests) {
      Operation *op = req.location.op;
      SmallVector<Attribute> probes;
      if (auto existing = op->getAttrOfType<ArrayAttr>(kProbesAttrName))
        probes.append(existing.begin(), existing.end());
      probes.push_back(ProbeAttr::get(
          ctx, b.getStringAttr(req.name),
          req.location.output ? ProbePoint::output : ProbePoint::input,
          req.location.index, req.write ? ProbeKind::write : ProbeKind::read));
      op->setAttr(kProbesAttrName, b.getArrayAttr(probes));
    }
  }
};
} // namespace
