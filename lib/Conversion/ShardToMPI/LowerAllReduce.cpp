//===- LowerAllReduce.cpp - nnx-lower-all-reduce ----------------*- C++ -*-===//
//
// shard.all_reduce (a sum over a 1-D grid) on tensors to one MPI_Allreduce
// over MPI_COMM_WORLD, with a separate receive buffer and a run-time check
// of the world's size. Upstream's convert-shard-to-mpi (LLVM 22) indexes
// memref.dim with kDynamic for dynamic dims, splits the communicator on
// every call and passes one buffer as send and receive.
//
//===----------------------------------------------------------------------===//
#include "nnx/Conversion/NNXToLinalg/RuntimeChecks.h"
#include "nnx/Conversion/ShardToMPI/Passes.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"

#include <limits>

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXLOWERALLREDUCEPASS
#include "nnx/Conversion/ShardToMPI/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;
using namespace mlir::nnx;

/// The key of the MPI ABI in the module's `dlti.map`, and the one assumed.
static constexpr llvm::StringLiteral kMPIImplementationKey =
    "MPI:Implementation";
static constexpr llvm::StringLiteral kDefaultMPIImplementation = "OpenMPI";
/// The most elements one MPI_Allreduce sums (its count is an int).
static constexpr int64_t kMaxMPICount = std::numeric_limits<int32_t>::max();

namespace {
/// mpi.allreduce reads its send buffer and writes its receive buffer.
struct AllReduceEffects
    : public MemoryEffectOpInterface::ExternalModel<AllReduceEffects,
                                                    mpi::AllReduceOp> {
  void
  getEffects(Operation *op,
             SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                 &effects) const {
    auto reduce = cast<mpi::AllReduceOp>(op);
    effects.emplace_back(MemoryEffects::Read::get(),
                         &reduce.getSendbufMutable());
    effects.emplace_back(MemoryEffects::Write::get(),
                         &reduce.getRecvbufMutable());
  }
};
} // namespace

void mlir::nnx::registerMPIMemoryEffects(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, mpi::MPIDialect *) {
    mpi::AllReduceOp::attachInterface<AllReduceEffects>(*ctx);
  });
}

namespace {
/// The grid size N of an all_reduce this pass lowers, or a diagnostic.
FailureOr<int64_t> checkAllReduce(shard::AllReduceOp op,
                                  SymbolTableCollection &symbols) {
  shard::GridOp grid = shard::getGrid(op, symbols);
  if (!grid)
    return op.emitOpError("names no shard.grid '") << op.getGrid() << "'";
  if (grid.getRank() != 1 || ShapedType::isDynamic(grid.getShape()[0])) {
    InFlightDiagnostic diag =
        op.emitOpError() << "sums over a grid of shape " << grid.getShapeAttr()
                         << "; nnx lowers only a 1-D grid of static size";
    diag.attachNote(grid.getLoc()) << "grid defined here";
    return diag;
  }
  if (op.getGridAxes() != ArrayRef<shard::GridAxis>{0})
    return op.emitOpError("must reduce over grid axis 0 (all the ranks)");
  if (op.getReduction() != shard::ReductionKind::Sum)
    return op.emitOpError("must be a sum; nnx lowers no other reduction");
  auto type = dyn_cast<RankedTensorType>(op.getInput().getType());
  if (!type || type != op.getResult().getType() || type.getRank() == 0 ||
      !isa<Float64Type, Float32Type, BFloat16Type, Float16Type>(
          type.getElementType()))
    return op.emitOpError("must map a tensor of rank >= 1 of f64, f32, bf16 "
                          "or f16 to the same type, got ")
           << op.getInput().getType() << " -> " << op.getResult().getType();
  if (type.hasStaticShape() && type.getNumElements() > kMaxMPICount)
    return op.emitOpError("sums ")
           << type.getNumElements()
           << " elements in one MPI_Allreduce, more than its int count holds ("
           << kMaxMPICount << ")";
  return grid.getShape()[0];
}

/// The check, at `b`'s insertion point, that MPI_COMM_WORLD holds `ranks`
/// processes.
void emitWorldSizeCheck(OpBuilder &b, Operation *op, Value world,
                        int64_t ranks) {
  Location loc = op->getLoc();
  Value size =
      mpi::CommSizeOp::create(b, loc, Type(), b.getI32Type(), world).getSize();
  Value expected = arith::ConstantIntOp::create(b, loc, ranks, 32);
  std::string message = describeCheckedOp(op) +
                        ": sums over {1} ranks, but MPI runs {0} processes "
                        "(start it with mpirun -np {1})";
  emitRuntimeCheck(b, loc, arith::CmpIPredicate::eq, size, expected, message);
}

/// `op` (checked) as an MPI_Allreduce between two distinct buffers.
void lowerAllReduce(shard::AllReduceOp op, int64_t ranks) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value x = op.getInput();
  auto type = cast<RankedTensorType>(x.getType());
  // MPI has no bf16 / f16: those are summed in f32.
  Type f32 = type.getElementType();
  if (isa<BFloat16Type, Float16Type>(f32))
    f32 = b.getF32Type();
  if (type.getElementType() != f32)
    x = arith::ExtFOp::create(b, loc, type.clone(f32), x);
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, x);
  ReassociationIndices all =
      llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  int64_t count =
      type.hasStaticShape() ? type.getNumElements() : ShapedType::kDynamic;
  auto flatType = RankedTensorType::get({count}, f32);
  Value flat =
      tensor::CollapseShapeOp::create(b, loc, flatType, x, ArrayRef{all});
  auto bufType = MemRefType::get({count}, f32);
  Value send = bufferization::ToBufferOp::create(b, loc, bufType, flat,
                                                 /*read_only=*/true);
  SmallVector<Value> dynSizes;
  if (ShapedType::isDynamic(count)) {
    Value n = tensor::DimOp::create(b, loc, flat, 0);
    dynSizes.push_back(n);
    // MPI_Allreduce counts elements in an int.
    emitRuntimeCheck(b, loc, arith::CmpIPredicate::sle, n,
                     arith::ConstantIndexOp::create(b, loc, kMaxMPICount),
                     describeCheckedOp(op) +
                         ": sums {0} elements in one MPI_Allreduce, "
                         "more than its int count holds ({1})");
  }
  Value recv = memref::AllocOp::create(b, loc, bufType, dynSizes);
  Value world =
      mpi::CommWorldOp::create(b, loc, mpi::CommType::get(b.getContext()))
          .getResult();
  emitWorldSizeCheck(b, op, world, ranks);
  mpi::AllReduceOp::create(b, loc, Type(), send, recv,
                           mpi::MPI_ReductionOpEnum::MPI_SUM, world);
  Value sum = bufferization::ToTensorOp::create(b, loc, flatType, recv,
                                                /*restrict=*/true,
                                                /*writable=*/true);
  Value y = tensor::ExpandShapeOp::create(b, loc, type.clone(f32), sum,
                                          ArrayRef{all}, sizes);
  if (type.getElementType() != f32)
    y = arith::TruncFOp::create(b, loc, type, y);
  op.replaceAllUsesWith(y);
  op.erase();
}

struct NNXLowerAllReducePass
    : public mlir::nnx::impl::NNXLowerAllReducePassBase<NNXLowerAllReducePass> {
  using NNXLowerAllReducePassBase::NNXLowerAllReducePassBase;
  void getDependentDialects(DialectRegistry &registry) const override {
    NNXLowerAllReducePassBase::getDependentDialects(registry);
    registerMPIMemoryEffects(registry);
  }
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!mpi) {
      WalkResult shardOp = module.walk([](Operation *op) {
        if (!isa<shard::ShardDialect>(op->getDialect()) ||
            isa<shard::GridOp>(op))
          return WalkResult::advance();
        op->emitOpError("is tensor parallelism, which this target does not "
                        "run (the CPU pipeline lowers it to MPI)");
        return WalkResult::interrupt();
      });
      if (shardOp.wasInterrupted())
        signalPassFailure();
      return;
    }
    SymbolTableCollection symbols;
    SmallVector<std::pair<shard::AllReduceOp, int64_t>> ops;
    WalkResult walk = module.walk([&](shard::AllReduceOp op) {
      FailureOr<int64_t> ranks = checkAllReduce(op, symbols);
      if (failed(ranks))
        return WalkResult::interrupt();
      ops.push_back({op, *ranks});
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    if (ops.empty())
      return;
    for (auto [op, ranks] : ops)
      lowerAllReduce(op, ranks);
    SmallVector<shard::GridOp> grids;
    module.walk([&](shard::GridOp grid) { grids.push_back(grid); });
    for (shard::GridOp grid : grids)
      if (SymbolTable::symbolKnownUseEmpty(grid, module))
        grid.erase();
    // The ABI nnx-convert-mpi-to-llvm targets, unless the module names one.
    if (!module->hasAttr(DLTIDialect::kMapAttrName)) {
      Builder b(module.getContext());
      auto entry =
          DataLayoutEntryAttr::get(b.getStringAttr(kMPIImplementationKey),
                                   b.getStringAttr(kDefaultMPIImplementation));
      module->setAttr(DLTIDialect::kMapAttrName,
                      MapAttr::get(b.getContext(), {entry}));
    }
  }
};
} // namespace
