//===- GPUDeviceMemory.cpp - host buffers to device memory ------*- C++ -*-===//
//
// Kernel arguments must be device memory: allocations become gpu.alloc,
// host inputs and constant weights are copied in once per call, results
// are copied out. Parameter arguments (`nnx.parameter`) are already device
// memory: the runtime uploads them once per compiled model.
//
//===----------------------------------------------------------------------===//
#include "nnx/Conversion/LinalgToGPU/Passes.h"
#include "nnx/Dialect/NNX/IR/NNXOps.h"

#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::nnx {
#define GEN_PASS_DEF_NNXGPUDEVICEMEMORYPASS
#include "nnx/Conversion/LinalgToGPU/Passes.h.inc"
} // namespace mlir::nnx

using namespace mlir;

namespace {

/// The buffer a memref value views (through view-like ops).
Value rootOf(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>()) {
    if (view.getViewSource() == v)
      break;
    v = view.getViewSource();
  }
  return v;
}

/// Whether `v` (or a view of it) is an operand of a kernel launch.
bool reachesKernel(Value v) {
  SmallVector<Value> work{v};
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!work.empty()) {
    Value cur = work.pop_back_val();
    for (Operation *user : cur.getUsers()) {
      if (!seen.insert(user).second)
        continue;
      if (isa<gpu::LaunchFuncOp>(user))
        return true;
      if (auto view = dyn_cast<ViewLikeOpInterface>(user))
        if (view.getViewSource() == cur)
          llvm::append_range(work, user->getResults());
    }
  }
  return false;
}

SmallVector<Value> dynamicSizes(OpBuilder &b, Location loc, Value memref) {
  SmallVector<Value> sizes;
  auto type = cast<MemRefType>(memref.getType());
  for (int64_t i = 0, e = type.getRank(); i < e; ++i)
    if (type.isDynamicDim(i))
      sizes.push_back(memref::DimOp::create(b, loc, memref, i));
  return sizes;
}

/// Whether `v` is a parameter argument (nnx-build-forward's
/// `nnx.parameter`): the runtime passes it in device memory, uploaded once
/// per compiled model.
bool isParameterArgument(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg)
    return false;
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  return func && arg.getOwner()->isEntryBlock() &&
         func.getArgAttr(arg.getArgNumber(), nnx::kParameterArgAttrName);
}

/// Whether `v` views a device allocation or a resident parameter.
bool isDeviceMemory(Value v) {
  Value root = rootOf(v);
  return isa_and_nonnull<gpu::AllocOp>(root.getDefiningOp()) ||
         isParameterArgument(root);
}

/// Whether `alloc` only holds the sizes of a `memref.reshape` (the shape
/// operand `tensor.reshape` bufferizes to): written by host stores, read by
/// the reshape and by host loads (a size of the reshaped value, resolved
/// through the shape), it stays in host memory.
bool isHostShapeBuffer(memref::AllocOp alloc) {
  bool shapes = false;
  bool hostOnly = llvm::all_of(alloc->getUses(), [&](OpOperand &use) {
    auto reshape = dyn_cast<memref::ReshapeOp>(use.getOwner());
    if (reshape && &use == &reshape.getShapeMutable())
      return shapes = true;
    return isa<memref::StoreOp, memref::LoadOp, memref::DeallocOp>(
        use.getOwner());
  });
  return shapes && hostOnly;
}

/// Frees the host shape buffer `alloc` at the end of its block when nothing
/// does: bufferization leaves that to the deallocation pipeline, which the
/// CUDA pipeline does not run (every other buffer becomes a device buffer
/// freed at the return). The buffer is only read by host ops of its block
/// or nested in it (the reshapes and loads it dominates), all before the
/// block's terminator.
void freeHostShapeBuffer(OpBuilder &b, memref::AllocOp alloc) {
  if (llvm::any_of(alloc->getUsers(), llvm::IsaPred<memref::DeallocOp>))
    return;
  b.setInsertionPoint(alloc->getBlock()->getTerminator());
  memref::DeallocOp::create(b, alloc.getLoc(), alloc.getMemref());
}

/// Allocations become device allocations, deallocations device
/// deallocations. The entry block's allocations that are not freed are this
/// call's buffers: they are added to `device`. Host shape buffers stay host
/// allocations, freed at the end of their block.
void allocateOnDevice(func::FuncOp func, Block &entry,
                      llvm::SetVector<Value> &device) {
  OpBuilder b(func.getContext());
  SmallVector<memref::AllocOp> allocs, shapeBuffers;
  func.walk([&](memref::AllocOp alloc) {
    (isHostShapeBuffer(alloc) ? shapeBuffers : allocs).push_back(alloc);
  });
  for (memref::AllocOp alloc : shapeBuffers)
    freeHostShapeBuffer(b, alloc);
  for (memref::AllocOp alloc : allocs) {
    b.setInsertionPoint(alloc);
    auto dev = gpu::AllocOp::create(
        b, alloc.getLoc(), alloc.getType(), /*asyncToken=*/Type(),
        /*asyncDependencies=*/ValueRange(), alloc.getDynamicSizes(),
        alloc.getSymbolOperands());
    alloc.replaceAllUsesWith(dev.getMemref());
    alloc.erase();
    if (dev->getBlock() == &entry)
      device.insert(dev.getMemref());
  }
  SmallVector<memref::DeallocOp> deallocs;
  func.walk([&](memref::DeallocOp d) {
    if (!isa_and_nonnull<memref::AllocOp>(d.getMemref().getDefiningOp()))
      deallocs.push_back(d);
  });
  for (memref::DeallocOp d : deallocs) {
    b.setInsertionPoint(d);
    gpu::DeallocOp::create(b, d.getLoc(), /*asyncToken=*/Type(), ValueRange(),
                           d.getMemref());
    device.remove(d.getMemref());
    d.erase();
  }
}

/// The op of `entry` that holds the first use of `host` (memref.dim aside).
Operation *firstUseInEntry(Value host, Block &entry) {
  Operation *first = nullptr;
  for (Operation *user : host.getUsers()) {
    if (isa<memref::DimOp>(user))
      continue;
    Operation *inEntry = entry.findAncestorOpInBlock(*user);
    if (inEntry && (!first || inEntry->isBeforeInBlock(first)))
      first = inEntry;
  }
  return first;
}

/// Host buffers that reach a kernel (memref arguments and globals) are copied
/// into device memory once, right before their first use: host work before
/// it (such as allocating the results) stays ahead of the stream. The copies
/// in the entry block are added to `device`.
LogicalResult copyInputsToDevice(func::FuncOp func, Block &entry,
                                 llvm::SetVector<Value> &device) {
  OpBuilder b(func.getContext());
  SmallVector<Value> hostRoots;
  for (BlockArgument arg : func.getArguments())
    if (isa<MemRefType>(arg.getType()) && !isParameterArgument(arg))
      hostRoots.push_back(arg);
  func.walk([&](memref::GetGlobalOp g) { hostRoots.push_back(g.getResult()); });
  for (Value host : hostRoots) {
    if (!reachesKernel(host))
      continue;
    auto type = cast<MemRefType>(host.getType());
    if (!type.getLayout().isIdentity())
      return emitError(host.getLoc(),
                       "nnx-gpu-device-memory: a host buffer with "
                       "a non-identity layout reaches a kernel: ")
             << type;
    b.setInsertionPoint(firstUseInEntry(host, entry));
    Location loc = host.getLoc();
    auto dev = gpu::AllocOp::create(b, loc, type, Type(), ValueRange(),
                                    dynamicSizes(b, loc, host), ValueRange());
    auto copy = gpu::MemcpyOp::create(b, loc, Type(), ValueRange(),
                                      dev.getMemref(), host);
    host.replaceUsesWithIf(dev.getMemref(), [&](OpOperand &use) {
      Operation *user = use.getOwner();
      return user != copy && !isa<memref::DimOp>(user);
    });
    if (dev->getBlock() == &entry)
      device.insert(dev.getMemref());
  }
  return success();
}

/// Host reads of a 0-d device buffer (a run-time check reading what a
/// kernel found, such as the first bad index of nnx.fn.gather) read a host
/// copy: a stack buffer the device buffer is copied into right before the
/// read (gpu-async-region makes the host wait for the copy). A host read of
/// a larger buffer is still refused (checkNoHostAccess): it would be host
/// code that should have been a kernel.
void copyScalarReadsToHost(func::FuncOp func) {
  SmallVector<memref::LoadOp> loads;
  func.walk([&](memref::LoadOp load) {
    if (load.getMemRefType().getRank() == 0 && isDeviceMemory(load.getMemref()))
      loads.push_back(load);
  });
  OpBuilder b(func.getContext());
  for (memref::LoadOp load : loads) {
    b.setInsertionPoint(load);
    Location loc = load.getLoc();
    Value host = memref::AllocaOp::create(b, loc, load.getMemRefType());
    gpu::MemcpyOp::create(b, loc, Type(), ValueRange(), host, load.getMemref());
    load.getMemrefMutable().assign(host);
  }
}

/// Refuses `op` if it is host code that touches device memory: a call that
/// passes it, or an op that reads or writes it.
LogicalResult checkHostOp(Operation *op) {
  if (isa<CallOpInterface>(op) && llvm::any_of(op->getOperands(), [](Value v) {
        return isa<MemRefType>(v.getType()) && isDeviceMemory(v);
      }))
    return op->emitOpError("nnx-gpu-device-memory: a call from a function "
                           "that launches kernels passes device memory to "
                           "host code");
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return success();
  SmallVector<MemoryEffects::EffectInstance> list;
  effects.getEffects(list);
  for (const MemoryEffects::EffectInstance &e : list) {
    Value v = e.getValue();
    if (!v || !isa<MemRefType>(v.getType()) || !isDeviceMemory(v))
      continue;
    if (!isa<MemoryEffects::Read, MemoryEffects::Write>(e.getEffect()))
      continue;
    return op->emitOpError("nnx-gpu-device-memory: this host op accesses "
                           "device memory; it must run inside a kernel");
  }
  return success();
}

/// No host op may touch device memory: only kernels, gpu ops and the return.
LogicalResult checkNoHostAccess(func::FuncOp func) {
  WalkResult touched = func.walk([](Operation *op) {
    if (isa<gpu::GPUDialect>(op->getDialect()) || isa<func::ReturnOp>(op))
      return WalkResult::advance();
    return failed(checkHostOp(op)) ? WalkResult::interrupt()
                                   : WalkResult::advance();
  });
  return failure(touched.wasInterrupted());
}

/// A host buffer of `type` for the returned device buffer `v`, allocated as
/// early as its sizes allow: a host allocation between kernels would
/// synchronize the stream. `b` is at the return.
Value allocateHostResult(OpBuilder &b, Block &entry, Value v, MemRefType type,
                         Location loc) {
  SmallVector<Value> sizes;
  OpBuilder early(b);
  if (auto dev = v.getDefiningOp<gpu::AllocOp>()) {
    sizes = llvm::to_vector(dev.getDynamicSizes());
    early.setInsertionPointToStart(&entry);
    for (Value size : sizes)
      if (Operation *def = size.getDefiningOp())
        if (def->getBlock() == &entry &&
            (early.getInsertionPoint() == entry.begin() ||
             std::prev(early.getInsertionPoint())->isBeforeInBlock(def)))
          early.setInsertionPointAfter(def);
  } else {
    sizes = dynamicSizes(b, loc, v);
  }
  return memref::AllocOp::create(early, loc, type, sizes,
                                 b.getI64IntegerAttr(64));
}

/// Results in device memory are copied out to host buffers, and this call's
/// `device` buffers are freed, at each return.
LogicalResult copyResultsToHost(func::FuncOp func, Block &entry,
                                ArrayRef<Value> device) {
  OpBuilder b(func.getContext());
  SmallVector<func::ReturnOp> returns;
  func.walk([&](func::ReturnOp r) { returns.push_back(r); });
  for (func::ReturnOp ret : returns) {
    b.setInsertionPoint(ret);
    for (OpOperand &operand : ret->getOpOperands()) {
      Value v = operand.get();
      if (!isa<MemRefType>(v.getType()) || !isDeviceMemory(v))
        continue;
      auto type = cast<MemRefType>(v.getType());
      if (!type.getLayout().isIdentity())
        return ret.emitOpError("nnx-gpu-device-memory: a returned device "
                               "buffer needs an identity layout, got ")
               << type;
      Location loc = ret.getLoc();
      Value host = allocateHostResult(b, entry, v, type, loc);
      gpu::MemcpyOp::create(b, loc, Type(), ValueRange(), host, v);
      operand.set(host);
    }
    for (Value d : device)
      gpu::DeallocOp::create(b, ret.getLoc(), Type(), ValueRange(), d);
  }
  return success();
}

struct NNXGPUDeviceMemoryPass
    : public mlir::nnx::impl::NNXGPUDeviceMemoryPassBase<
          NNXGPUDeviceMemoryPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() ||
        !func.walk([](gpu::LaunchFuncOp) { return WalkResult::interrupt(); })
             .wasInterrupted())
      return;
    if (!func.getBody().hasOneBlock()) {
      func.emitError("nnx-gpu-device-memory: a function that launches "
                     "kernels must have a single block");
      return signalPassFailure();
    }
    Block &entry = func.getBody().front();
    llvm::SetVector<Value> device; // buffers of this call, freed at return
    allocateOnDevice(func, entry, device);
    if (failed(copyInputsToDevice(func, entry, device)))
      return signalPassFailure();
    copyScalarReadsToHost(func);
    if (failed(checkNoHostAccess(func)) ||
        failed(copyResultsToHost(func, entry, device.getArrayRef())))
      return signalPassFailure();
  }
};

} // namespace
