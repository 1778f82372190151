//===- LinalgToGPU.cpp - linalg ops on buffers to gpu.launch ----*- C++ -*-===//
//
// Contractions get a shared-memory tiled kernel with a register tile per
// thread; every other structured op gets one thread per parallel point.
//
//===----------------------------------------------------------------------===//
#include "nnx/Conversion/LinalgToGPU/Passes.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXLINALGTOGPUPASS
#include "nnx/Conversion/LinalgToGPU/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;

namespace {

/// Threads per block dimension of the contraction kernel (16x16).
constexpr int64_t kThreads = 16;

struct KernelBuilder {
  OpBuilder &b;
  Location loc;

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivUIOp::create(b, loc, x, y); }
  Value rem(Value x, Value y) { return arith::RemUIOp::create(b, loc, x, y); }
  Value ult(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  }
  Value land(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  /// max(ceil(x / d), 1): a grid size that is never zero.
  Value gridSize(Value x, int64_t d) {
    Value q = arith::CeilDivUIOp::create(b, loc, x, idx(d));
    return arith::MaxUIOp::create(b, loc, q, idx(1));
  }

  /// The indices of an operand at the loop point `ivs`.
  SmallVector<Value> indices(AffineMap map, ValueRange ivs) {
    SmallVector<Value> result;
    for (AffineExpr e : map.getResults()) {
      if (auto d = dyn_cast<AffineDimExpr>(e)) {
        result.push_back(ivs[d.getPosition()]);
        continue;
      }
      result.push_back(affine::expandAffineExpr(b, loc, e, ivs, {}));
    }
    return result;
  }

  /// Clones the payload of `op` with its block arguments bound to `args`
  /// and `linalg.index` bound to `ivs`; returns the yielded values.
  SmallVector<Value> payload(linalg::LinalgOp op, ValueRange args,
                             ValueRange ivs, bool contract = false) {
    Block *body = op.getBlock();
    IRMapping map;
    map.map(body->getArguments(), args);
    for (Operation &inner : body->without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        map.map(index.getResult(), ivs[index.getDim()]);
        continue;
      }
      Operation *clone = b.clone(inner, map);
      // Multiply-add chains of a contraction may fuse into FMAs.
      if (auto fm = dyn_cast<arith::ArithFastMathInterface>(clone);
          fm && contract) {
        arith::FastMathFlags flags = fm.getFastMathFlagsAttr().getValue();
        clone->setAttr(
            fm.getFastMathAttrName(),
            arith::FastMathFlagsAttr::get(
                clone->getContext(), flags | arith::FastMathFlags::contract));
      }
    }
    return llvm::map_to_vector(body->getTerminator()->getOperands(),
                               [&](Value v) { return map.lookupOrDefault(v); });
  }

  /// A gpu.launch with a terminator; the builder is left at its start.
  gpu::LaunchOp launch(Value gx, Value gy, Value gz, Value tx, Value ty,
                       Value tz, TypeRange workgroup = {}) {
    auto launch = gpu::LaunchOp::create(b, loc, gx, gy, gz, tx, ty, tz,
                                        /*dynamicSharedMemorySize=*/nullptr,
                                        /*asyncTokenType=*/nullptr,
                                        /*asyncDependencies=*/{}, workgroup);
    Block &body = launch.getBody().front();
    b.setInsertionPointToEnd(&body);
    gpu::TerminatorOp::create(b, loc);
    b.setInsertionPointToStart(&body);
    return launch;
  }
};

bool nestedIndexOps(linalg::LinalgOp op) {
  for (Operation &inner : op.getBlock()->without_terminator()) {
    bool found = false;
    inner.walk([&](linalg::IndexOp) { found = true; });
    if (found && !isa<linalg::IndexOp>(inner))
      return true;
  }
  return false;
}

/// One thread per point of the parallel iteration space (linearized), with
/// scf.for loops over the reduction dimensions.
LogicalResult lowerPointwise(linalg::LinalgOp op, int64_t blockSize) {
  if (nestedIndexOps(op))
    return op.emitOpError("nnx-linalg-to-gpu: linalg.index inside a nested "
                          "region of the payload is not supported");
  OpBuilder b(op);
  KernelBuilder kb{b, op.getLoc()};
  Location loc = op.getLoc();
  SmallVector<Value> sizes;
  for (Range r : op.createLoopRanges(b, loc))
    sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, r.size));
  SmallVector<unsigned> parallel, reduction;
  for (auto [i, it] : llvm::enumerate(op.getIteratorTypesArray()))
    (it == utils::IteratorType::parallel ? parallel : reduction).push_back(i);
  Value total = kb.idx(1);
  for (unsigned p : parallel)
    total = kb.mul(total, sizes[p]);
  Value c1 = kb.idx(1);
  Value threads = kb.idx(blockSize);
  gpu::LaunchOp launch =
      kb.launch(kb.gridSize(total, blockSize), c1, c1, threads, c1, c1);
  Value linear =
      kb.add(kb.mul(launch.getBlockIds().x, threads), launch.getThreadIds().x);
  auto inRange = scf::IfOp::create(b, loc, kb.ult(linear, total),
                                   /*withElseRegion=*/false);
  b.setInsertionPoint(inRange.thenBlock()->getTerminator());
  SmallVector<Value> ivs(op.getNumLoops());
  Value rest = linear;
  for (unsigned p : llvm::reverse(parallel)) {
    ivs[p] = kb.rem(rest, sizes[p]);
    rest = kb.div(rest, sizes[p]);
  }
  SmallVector<Value> lbs(reduction.size(), kb.idx(0));
  SmallVector<Value> ubs, steps(reduction.size(), kb.idx(1));
  for (unsigned r : reduction)
    ubs.push_back(sizes[r]);
  scf::buildLoopNest(
      b, loc, lbs, ubs, steps,
      [&](OpBuilder &nb, Location nloc, ValueRange redIvs) {
        KernelBuilder inner{nb, nloc};
        for (auto [r, iv] : llvm::zip(reduction, redIvs))
          ivs[r] = iv;
        SmallVector<Value> args;
        for (OpOperand &operand : op->getOpOperands()) {
          Value v = operand.get();
          if (!isa<MemRefType>(v.getType())) {
            args.push_back(v);
            continue;
          }
          BlockArgument arg = op.getMatchingBlockArgument(&operand);
          if (op.isDpsInit(&operand) && arg.use_empty()) {
            // The payload does not read the output: no load.
            args.push_back(arith::ConstantOp::create(
                nb, nloc, nb.getZeroAttr(arg.getType())));
            continue;
          }
          args.push_back(memref::LoadOp::create(
              nb, nloc, v,
              inner.indices(op.getMatchingIndexingMap(&operand), ivs)));
        }
        SmallVector<Value> results = inner.payload(op, args, ivs);
        for (auto [init, result] : llvm::zip(op.getDpsInitsMutable(), results))
          memref::StoreOp::create(
              nb, nloc, result, init.get(),
              inner.indices(op.getMatchingIndexingMap(&init), ivs));
      });
  return success();
}

/// One side of an operand tile to stage: the loop dimensions that form one
/// logical dimension, their total size, the tile's first index along it and
/// the tile's extent.
struct TileSide {
  ArrayRef<unsigned> dims;
  Value size;
  Value start;
  int64_t extent;
};

/// Emits the shared-memory tiled kernel of a contraction C[b,m,n] +=
/// A[b,m,k] * B[b,k,n] (operand layouts as the indexing maps say) in place of
/// `op`: a 16x16 thread block per tileM x tileN output tile, a grid z per
/// batch point, and a register tile of (tileM/16) x (tileN/16) accumulators
/// per thread. Several M (or N) dimensions form one logical M (N) dimension,
/// e.g. batch and sequence of a Linear on 3-D activations.
class ContractionKernel {
public:
  ContractionKernel(linalg::LinalgOp op,
                    const linalg::ContractionDimensions &dims, int64_t tileM,
                    int64_t tileN, int64_t tileK)
      : op(op), b(op), loc(op.getLoc()), kb{b, loc}, mDims(dims.m),
        nDims(dims.n), batchDims(dims.batch), dk(dims.k.front()), tileM(tileM),
        tileN(tileN), tileK(tileK), opA(op.getDpsInputOperand(0)),
        opB(op.getDpsInputOperand(1)), opC(op.getDpsInitOperand(0)),
        elemA(getElementTypeOrSelf(opA->get().getType())),
        elemB(getElementTypeOrSelf(opB->get().getType())),
        elemC(getElementTypeOrSelf(opC->get().getType())), rm(tileM / kThreads),
        rn(tileN / kThreads) {}
  ContractionKernel(const ContractionKernel &) = delete;
  ContractionKernel &operator=(const ContractionKernel &) = delete;

  void emit() {
    computeSizes();
    gpu::LaunchOp launch = createLaunch();
    setUpKernel(launch);
    SmallVector<Value> acc = loadAccumulators();
    scf::ForOp kLoop = emitKLoop(acc);
    storeAccumulators(kLoop);
  }

private:
  // Host side.
  void computeSizes();
  gpu::LaunchOp createLaunch();
  // Kernel side.
  void setUpKernel(gpu::LaunchOp launch);
  void setDims(SmallVectorImpl<Value> &p, ArrayRef<unsigned> ds, Value linear);
  std::pair<SmallVector<Value>, Value> outPoint(int64_t i, int64_t j);
  Value guardedLoad(Value ok, Value memref, ValueRange indices, Value zero);
  SmallVector<Value> loadAccumulators();
  void stage(OpOperand *operand, Value tile, const TileSide &rows,
             const TileSide &cols, Value zero);
  scf::ForOp emitKLoop(ValueRange acc);
  void emitKTile(Value kt, ValueRange accIn);
  SmallVector<Value> multiplyTiles(Value k0, Value kk, ValueRange accK);
  void storeAccumulators(scf::ForOp kLoop);

  linalg::LinalgOp op;
  OpBuilder b;
  Location loc;
  KernelBuilder kb;
  ArrayRef<unsigned> mDims, nDims, batchDims;
  unsigned dk;
  int64_t tileM, tileN, tileK;
  OpOperand *opA, *opB, *opC;
  Type elemA, elemB, elemC;
  /// Accumulators per thread along M and N.
  int64_t rm, rn;

  // Host values: the loop sizes, the logical M and N sizes, the batch size.
  SmallVector<Value> sizes;
  Value sizeM, sizeN, batch;

  // Kernel values.
  Value c1, tileA, tileB, tx, ty, tid, m0, n0;
  /// The loop point of this block: batch dimensions set, the others 0.
  SmallVector<Value> ivs;
  Value zeroA, zeroB, zeroC;
};

void ContractionKernel::computeSizes() {
  for (Range r : op.createLoopRanges(b, loc))
    sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, r.size));
  auto product = [&](ArrayRef<unsigned> ds) {
    Value v = kb.idx(1);
    for (unsigned d : ds)
      v = kb.mul(v, sizes[d]);
    return v;
  };
  sizeM = mDims.size() == 1 ? sizes[mDims[0]] : product(mDims);
  sizeN = nDims.size() == 1 ? sizes[nDims[0]] : product(nDims);
  batch = kb.idx(1);
  for (unsigned d : batchDims)
    batch = kb.mul(batch, sizes[d]);
}

/// The launch, with the two operand tiles in workgroup memory. One padding
/// column keeps both the staging stores and the compute loads free of bank
/// conflicts whichever operand dimension is contiguous.
gpu::LaunchOp ContractionKernel::createLaunch() {
  auto workgroup = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  auto tileAType =
      MemRefType::get({tileM, tileK + 1}, elemA, AffineMap(), workgroup);
  auto tileBType =
      MemRefType::get({tileK, tileN + 1}, elemB, AffineMap(), workgroup);
  Value one = kb.idx(1);
  Value threads = kb.idx(kThreads);
  return kb.launch(kb.gridSize(sizeN, tileN), kb.gridSize(sizeM, tileM),
                   arith::MaxUIOp::create(b, loc, batch, one), threads, threads,
                   one, {tileAType, tileBType});
}

/// The kernel's own constants (not captured as kernel arguments), the thread
/// and tile indices, and the batch point of the block.
void ContractionKernel::setUpKernel(gpu::LaunchOp launch) {
  c1 = kb.idx(1);
  Value t16 = kb.idx(kThreads);
  tileA = launch.getWorkgroupAttributions()[0];
  tileB = launch.getWorkgroupAttributions()[1];

  tx = launch.getThreadIds().x;
  ty = launch.getThreadIds().y;
  tid = kb.add(kb.mul(ty, t16), tx);
  m0 = kb.mul(launch.getBlockIds().y, kb.idx(tileM));
  n0 = kb.mul(launch.getBlockIds().x, kb.idx(tileN));
  ivs.assign(op.getNumLoops(), kb.idx(0));
  Value rest = launch.getBlockIds().z;
  for (unsigned d : llvm::reverse(batchDims)) {
    ivs[d] = kb.rem(rest, sizes[d]);
    rest = kb.div(rest, sizes[d]);
  }
  zeroA = arith::ConstantOp::create(b, loc, b.getZeroAttr(elemA));
  zeroB = arith::ConstantOp::create(b, loc, b.getZeroAttr(elemB));
  zeroC = arith::ConstantOp::create(b, loc, b.getZeroAttr(elemC));
}

/// Sets the loop indices of `ds` in `p` from a logical index over them.
void ContractionKernel::setDims(SmallVectorImpl<Value> &p,
                                ArrayRef<unsigned> ds, Value linear) {
  if (ds.size() == 1) {
    p[ds[0]] = linear;
    return;
  }
  for (unsigned d : llvm::reverse(ds)) {
    p[d] = kb.rem(linear, sizes[d]);
    linear = kb.div(linear, sizes[d]);
  }
}

/// The output point of accumulator (i, j) and whether it is in bounds.
std::pair<SmallVector<Value>, Value> ContractionKernel::outPoint(int64_t i,
                                                                 int64_t j) {
  SmallVector<Value> p = ivs;
  Value m = kb.add(m0, kb.add(ty, kb.idx(i * kThreads)));
  Value n = kb.add(n0, kb.add(tx, kb.idx(j * kThreads)));
  setDims(p, mDims, m);
  setDims(p, nDims, n);
  Value ok = kb.land(kb.ult(m, sizeM), kb.ult(n, sizeN));
  return std::make_pair(p, ok);
}

/// A guarded load: `zero` outside the operand.
Value ContractionKernel::guardedLoad(Value ok, Value memref, ValueRange indices,
                                     Value zero) {
  auto ifOp = scf::IfOp::create(
      b, loc, ok,
      [&](OpBuilder &nb, Location nloc) {
        Value v = memref::LoadOp::create(nb, nloc, memref, indices);
        scf::YieldOp::create(nb, nloc, v);
      },
      [&](OpBuilder &nb, Location nloc) {
        scf::YieldOp::create(nb, nloc, zero);
      });
  return ifOp.getResult(0);
}

/// The thread's accumulators, loaded from C.
SmallVector<Value> ContractionKernel::loadAccumulators() {
  SmallVector<Value> acc;
  for (int64_t i = 0; i < rm; ++i)
    for (int64_t j = 0; j < rn; ++j) {
      auto [p, ok] = outPoint(i, j);
      acc.push_back(guardedLoad(ok, opC->get(),
                                kb.indices(op.getMatchingIndexingMap(opC), p),
                                zeroC));
    }
  return acc;
}

/// Stages one operand tile: `rows.extent` x `cols.extent` elements of the
/// operand at (rows.dims = rows.start + row, cols.dims = cols.start + col),
/// spread over the 256 threads so that consecutive threads read consecutive
/// addresses of the operand.
void ContractionKernel::stage(OpOperand *operand, Value tile,
                              const TileSide &rows, const TileSide &cols,
                              Value zero) {
  AffineMap map = op.getMatchingIndexingMap(operand);
  // Contiguous in memory: the dimension of the operand's last index.
  bool colFast = true;
  if (auto last = dyn_cast<AffineDimExpr>(map.getResults().back()))
    colFast = !llvm::is_contained(rows.dims, last.getPosition());
  int64_t perThread = rows.extent * cols.extent / (kThreads * kThreads);
  for (int64_t s = 0; s < perThread; ++s) {
    Value e = kb.add(tid, kb.idx(s * kThreads * kThreads));
    Value row = colFast ? kb.div(e, kb.idx(cols.extent))
                        : kb.rem(e, kb.idx(rows.extent));
    Value col = colFast ? kb.rem(e, kb.idx(cols.extent))
                        : kb.div(e, kb.idx(rows.extent));
    SmallVector<Value> p = ivs;
    Value r = kb.add(rows.start, row), c = kb.add(cols.start, col);
    setDims(p, rows.dims, r);
    setDims(p, cols.dims, c);
    Value ok = kb.land(kb.ult(r, rows.size), kb.ult(c, cols.size));
    Value v = guardedLoad(ok, operand->get(), kb.indices(map, p), zero);
    memref::StoreOp::create(b, loc, v, tile, ValueRange{row, col});
  }
}

/// The loop over K tiles, carrying the accumulators.
scf::ForOp ContractionKernel::emitKLoop(ValueRange acc) {
  Value numKTiles =
      arith::CeilDivUIOp::create(b, loc, sizes[dk], kb.idx(tileK));
  return scf::ForOp::create(
      b, loc, kb.idx(0), numKTiles, c1, acc,
      [&](OpBuilder &nb, Location nloc, Value kt, ValueRange accIn) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        emitKTile(kt, accIn);
      });
}

/// One K tile: both operand tiles staged in workgroup memory, then a loop
/// over its K that updates the accumulators.
void ContractionKernel::emitKTile(Value kt, ValueRange accIn) {
  Value k0 = kb.mul(kt, kb.idx(tileK));
  stage(opA, tileA, {mDims, sizeM, m0, tileM}, {dk, sizes[dk], k0, tileK},
        zeroA);
  stage(opB, tileB, {dk, sizes[dk], k0, tileK}, {nDims, sizeN, n0, tileN},
        zeroB);
  gpu::BarrierOp::create(b, loc);
  auto inner = scf::ForOp::create(
      b, loc, kb.idx(0), kb.idx(tileK), c1, accIn,
      [&](OpBuilder &ib, Location iloc, Value kk, ValueRange accK) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(ib.getInsertionBlock(), ib.getInsertionPoint());
        scf::YieldOp::create(b, loc, multiplyTiles(k0, kk, accK));
      });
  gpu::BarrierOp::create(b, loc);
  scf::YieldOp::create(b, loc, inner.getResults());
}

/// One step `kk` of a K tile: the thread's column of A and row of B from
/// workgroup memory, and the payload applied to every accumulator.
SmallVector<Value> ContractionKernel::multiplyTiles(Value k0, Value kk,
                                                    ValueRange accK) {
  SmallVector<Value> a, bv, next;
  for (int64_t i = 0; i < rm; ++i)
    a.push_back(memref::LoadOp::create(
        b, loc, tileA, ValueRange{kb.add(ty, kb.idx(i * kThreads)), kk}));
  for (int64_t j = 0; j < rn; ++j)
    bv.push_back(memref::LoadOp::create(
        b, loc, tileB, ValueRange{kk, kb.add(tx, kb.idx(j * kThreads))}));
  SmallVector<Value> point = ivs;
  point[dk] = kb.add(k0, kk);
  for (int64_t i = 0; i < rm; ++i)
    for (int64_t j = 0; j < rn; ++j)
      next.push_back(kb.payload(op, {a[i], bv[j], accK[i * rn + j]}, point,
                                /*contract=*/true)[0]);
  return next;
}

/// The accumulators, stored back to C where in bounds.
void ContractionKernel::storeAccumulators(scf::ForOp kLoop) {
  for (int64_t i = 0; i < rm; ++i)
    for (int64_t j = 0; j < rn; ++j) {
      auto [p, ok] = outPoint(i, j);
      auto ifOp = scf::IfOp::create(b, loc, ok, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
      memref::StoreOp::create(b, loc, kLoop.getResult(i * rn + j), opC->get(),
                              kb.indices(op.getMatchingIndexingMap(opC), p));
    }
}

/// The shared-memory tiled kernel of a contraction (ContractionKernel).
LogicalResult lowerContraction(linalg::LinalgOp op,
                               const linalg::ContractionDimensions &dims,
                               int64_t tileM, int64_t tileN, int64_t tileK) {
  ContractionKernel(op, dims, tileM, tileN, tileK).emit();
  return success();
}

/// The M, N, K dimensions when `op` is a contraction the tiled kernel
/// handles: two inputs, one output, one K dimension (M and N may span
/// several dimensions each).
std::optional<linalg::ContractionDimensions>
tiledContraction(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  for (OpOperand &operand : op->getOpOperands())
    if (!isa<MemRefType>(operand.get().getType()))
      return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.size() != 1)
    return std::nullopt;
  if (op.getBlock()->getTerminator()->getNumOperands() != 1)
    return std::nullopt;
  return *dims;
}

struct NNXLinalgToGPUPass
    : public mlir::nnx::impl::NNXLinalgToGPUPassBase<NNXLinalgToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (tileM <= 0 || tileN <= 0 || tileK <= 0 || tileM % kThreads ||
        tileN % kThreads || (tileM * tileK) % (kThreads * kThreads) ||
        (tileK * tileN) % (kThreads * kThreads)) {
      func.emitError("nnx-linalg-to-gpu: tile-m and tile-n must be positive "
                     "multiples of 16 and tile-m*tile-k, tile-k*tile-n "
                     "multiples of 256; got tile-m=")
          << tileM.getValue() << " tile-n=" << tileN.getValue()
          << " tile-k=" << tileK.getValue();
      return signalPassFailure();
    }
    if (blockSize <= 0 || blockSize > 1024) {
      func.emitError("nnx-linalg-to-gpu: block-size must be in [1, 1024], "
                     "got ")
          << blockSize.getValue();
      return signalPassFailure();
    }
    // memref.copy is a kernel like any other copy.
    SmallVector<memref::CopyOp> copies;
    func.walk([&](memref::CopyOp copy) {
      if (!copy->getParentOfType<gpu::LaunchOp>())
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies) {
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    }

    SmallVector<linalg::LinalgOp> ops;
    func.walk([&](linalg::LinalgOp op) {
      if (!op->getParentOfType<gpu::LaunchOp>())
        ops.push_back(op);
    });
    for (linalg::LinalgOp op : ops) {
      if (!op.hasPureBufferSemantics()) {
        op.emitOpError("nnx-linalg-to-gpu: expected an op on buffers "
                       "(run one-shot-bufferize first)");
        return signalPassFailure();
      }
      LogicalResult done = failure();
      if (auto dims = tiledContraction(op))
        done = lowerContraction(op, *dims, tileM, tileN, tileK);
      else
        done = lowerPointwise(op, blockSize);
      if (failed(done))
        return signalPassFailure();
      op->erase();
    }
  }
};

} // namespace
