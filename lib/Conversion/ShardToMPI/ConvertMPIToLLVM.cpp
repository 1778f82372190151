//===- ConvertMPIToLLVM.cpp - nnx-convert-mpi-to-llvm -----------*- C++ -*-===//
//
// The mpi dialect to calls of the MPI library: upstream's patterns, plus
// mpi.comm_size (which LLVM 22 does not lower).
//
//===----------------------------------------------------------------------===//
#include "nnx/Conversion/ShardToMPI/Passes.h"

#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MPIToLLVM/MPIToLLVM.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXCONVERTMPITOLLVMPASS
#include "nnx/Conversion/ShardToMPI/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;

namespace {
/// `MPI_Comm_size(comm, &size)`: the communicator (an i64 after conversion)
/// passed as MPICH's int or OpenMPI's pointer, as upstream's MPI_Comm_rank.
struct CommSizeLowering : public ConvertOpToLLVMPattern<mpi::CommSizeOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(mpi::CommSizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getRetval() && !op.getRetval().use_empty())
      return rewriter.notifyMatchFailure(op, "its return code is used");
    Location loc = op.getLoc();
    auto module = op->getParentOfType<ModuleOp>();
    MLIRContext *ctx = rewriter.getContext();
    auto i32 = rewriter.getI32Type();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    FailureOr<Attribute> named =
        dlti::query(module, ArrayRef<StringRef>{"MPI:Implementation"}, false);
    auto impl =
        dyn_cast_or_null<StringAttr>(succeeded(named) ? *named : Attribute());
    bool mpich = impl && impl.getValue() == "MPICH";
    Value comm = adaptor.getComm();
    comm = mpich
               ? LLVM::TruncOp::create(rewriter, loc, i32, comm).getResult()
               : LLVM::IntToPtrOp::create(rewriter, loc, ptr, comm).getResult();
    FailureOr<LLVM::LLVMFuncOp> fn = LLVM::lookupOrCreateFn(
        rewriter, module, "MPI_Comm_size", {comm.getType(), ptr}, i32);
    if (failed(fn))
      return failure();
    Value one = LLVM::ConstantOp::create(rewriter, loc, i32, 1);
    Value out = LLVM::AllocaOp::create(rewriter, loc, ptr, i32, one);
    Value rc = LLVM::CallOp::create(rewriter, loc, *fn, ValueRange{comm, out})
                   .getResult();
    Value size = LLVM::LoadOp::create(rewriter, loc, i32, out);
    SmallVector<Value> results{size};
    if (op.getRetval())
      results.insert(results.begin(), rc);
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// LLVM 22's patterns name OpenMPI's predefined reductions `ompi_mpi_sum`
/// (and so on); OpenMPI's mpi.h defines MPI_SUM as `&ompi_mpi_op_sum`. The
/// globals are renamed to what libmpi exports.
void fixOpenMPIReductionNames(ModuleOp module) {
  static constexpr llvm::StringLiteral ops[] = {
      "sum", "max",  "min",  "prod",   "land",   "band",   "lor",
      "bor", "lxor", "bxor", "maxloc", "minloc", "replace"};
  SmallVector<LLVM::GlobalOp> globals(module.getOps<LLVM::GlobalOp>());
  for (LLVM::GlobalOp global : globals) {
    StringRef name = global.getSymName();
    if (!name.consume_front("ompi_mpi_") || !llvm::is_contained(ops, name))
      continue;
    auto fixed = StringAttr::get(module.getContext(), "ompi_mpi_op_" + name);
    if (failed(SymbolTable::replaceAllSymbolUses(global, fixed, module)))
      continue;
    SymbolTable::setSymbolName(global, fixed);
  }
}

struct NNXConvertMPIToLLVMPass
    : public mlir::nnx::impl::NNXConvertMPIToLLVMPassBase<
          NNXConvertMPIToLLVMPass> {
  using NNXConvertMPIToLLVMPassBase::NNXConvertMPIToLLVMPassBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool any = module
                   ->walk([](Operation *op) {
                     return isa<mpi::MPIDialect>(op->getDialect())
                                ? WalkResult::interrupt()
                                : WalkResult::advance();
                   })
                   .wasInterrupted();
    if (!any)
      return;
    MLIRContext *ctx = &getContext();
    LLVMTypeConverter converter(ctx);
    RewritePatternSet patterns(ctx);
    mpi::populateMPIToLLVMConversionPatterns(converter, patterns);
    patterns.add<CommSizeLowering>(converter);
    ConversionTarget target(*ctx);
    target.addLegalDialect<LLVM::LLVMDialect>();
    target.addIllegalDialect<mpi::MPIDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    FailureOr<Attribute> named =
        dlti::query(module, ArrayRef<StringRef>{"MPI:Implementation"}, false);
    auto impl =
        dyn_cast_or_null<StringAttr>(succeeded(named) ? *named : Attribute());
    if (!impl || impl.getValue() == "OpenMPI")
      fixOpenMPIReductionNames(module);
  }
};
} // namespace
