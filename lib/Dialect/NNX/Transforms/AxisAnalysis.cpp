//===- AxisAnalysis.cpp - which factor of which dim is what -----*- C++ -*-===//
#include "AxisAnalysis.h"
#include "SurgeryUtils.h"

#include "nnx/Dialect/NNX/IR/ModuleTree.h"
#include "nnx/Dialect/NNX/IR/NNXFnOps.h"
#include "nnx/Dialect/NNX/IR/StateRead.h"
#include "nnx/Dialect/NNX/IR/TensorUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::surgery;

//===----------------------------------------------------------------------===//
// Axes
//===----------------------------------------------------------------------===//

Axis AxisAnalysis::make(int64_t size) {
  Axis a = nodes.size();
  nodes.push_back(Node{size, a, {}, {}, nullptr, nullptr, false, nullptr});
  return a;
}

Axis AxisAnalysis::find(Axis a) {
  while (nodes[a].parent != a) {
    nodes[a].parent = nodes[nodes[a].parent].parent;
    a = nodes[a].parent;
  }
  return a;
}

AxisList AxisAnalysis::leaves(ArrayRef<Axis> list) {
  AxisList out;
  for (Axis a : list) {
    Axis r = find(a);
    if (nodes[r].parts.empty()) {
      out.push_back(r);
      continue;
    }
    AxisList parts(nodes[r].parts.begin(), nodes[r].parts.end());
    out.append(leaves(parts));
  }
  return out;
}

AxisList AxisAnalysis::leaves(Value v, unsigned dim) {
  return leaves(dimsOf(v)[dim]);
}

/// Unites two leaves of the same size, merging what is known about them.
void AxisAnalysis::unite(Axis a, Axis b) {
  a = find(a);
  b = find(b);
  if (a == b)
    return;
  Node &na = nodes[a], &nb = nodes[b];
  if (!na.pin)
    na.pin = nb.pin;
  if (!na.expand)
    na.expand = nb.expand;
  na.structural |= nb.structural;
  na.segments.append(nb.segments.begin(), nb.segments.end());
  nb.parent = a;
}

/// Splits leaf `a` into `major x (size / major)`.
void AxisAnalysis::split(Axis a, int64_t major, Operation *at) {
  a = find(a);
  int64_t n = nodes[a].size;
  Axis hi = make(major), lo = make(n / major);
  for (Axis p : {hi, lo}) {
    nodes[p].pin = nodes[a].pin;
    nodes[p].expand = nodes[a].expand;
  }
  nodes[a].parts = {hi, lo};
  nodes[a].splitAt = at;
}

void AxisAnalysis::pin(ArrayRef<Axis> list, Operation *at) {
  for (Axis a : leaves(list))
    if (!nodes[a].pin)
      nodes[a].pin = at;
}

void AxisAnalysis::pinValue(Value v, Operation *at) {
  if (!isa<RankedTensorType>(v.getType()))
    return;
  for (AxisList &d : dimsOf(v))
    pin(d, at);
}

/// Refines `a` and `b` (two factorizations of one extent) to their common
/// factorization, from the minor end; dynamic axes pair with dynamic ones.
/// Whatever does not pair up is pinned at `at`.
void AxisAnalysis::unify(ArrayRef<Axis> a, ArrayRef<Axis> b, Operation *at) {
  AxisList x = leaves(a), y = leaves(b);
  while (!x.empty() && !y.empty()) {
    Axis p = find(x.back()), q = find(y.back());
    int64_t sp = nodes[p].size, sq = nodes[q].size;
    if (p == q || (sp < 0 && sq < 0)) {
      unite(p, q);
      x.pop_back();
      y.pop_back();
      continue;
    }
    if (sp <= 0 || sq <= 0)
      break; // a dynamic dim against a static one, or an empty dim
    if (sp == sq) {
      unite(p, q);
      x.pop_back();
      y.pop_back();
    } else if (sp > sq && sp % sq == 0) {
      split(p, sp / sq, at);
      x.pop_back();
      x.append(leaves(ArrayRef<Axis>{p}));
    } else if (sq > sp && sq % sp == 0) {
      split(q, sq / sp, at);
      y.pop_back();
      y.append(leaves(ArrayRef<Axis>{q}));
    } else {
      break;
    }
  }
  pin(x, at);
  pin(y, at);
}

//===----------------------------------------------------------------------===//
// Dims of values and tensors
//===----------------------------------------------------------------------===//

/// Fresh axes for a shape: a dynamic dim gets a dynamic axis, a 1 none.
static SmallVector<AxisList> freshDims(ArrayRef<int64_t> shape,
                                       llvm::function_ref<Axis(int64_t)> make) {
  SmallVector<AxisList> dims;
  for (int64_t n : shape) {
    AxisList d;
    if (n != 1)
      d.push_back(make(ShapedType::isDynamic(n) ? -1 : n));
    dims.push_back(d);
  }
  return dims;
}

SmallVector<AxisList> &AxisAnalysis::dimsOf(Value v) {
  auto it = valueDims.find(v);
  if (it != valueDims.end())
    return it->second;
  ArrayRef<int64_t> shape;
  if (auto t = dyn_cast<RankedTensorType>(v.getType()))
    shape = t.getShape();
  return valueDims[v] = freshDims(shape, [&](int64_t n) { return make(n); });
}

SmallVector<AxisList> &AxisAnalysis::tensorDims(Operation *op, StringRef name,
                                                ShapedType type, bool isState) {
  for (TensorSite &t : tensors)
    if (t.op == op && t.name == name)
      return t.dims;
  tensors.push_back(TensorSite{
      op, name.str(), isState,
      freshDims(type.getShape(), [&](int64_t n) { return make(n); })});
  return tensors.back().dims;
}

const TensorSite *AxisAnalysis::lookupTensor(Operation *op, StringRef name) {
  for (TensorSite &t : tensors)
    if (t.op == op && t.name == name)
      return &t;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

void AxisAnalysis::run(CustomModuleOp root) {
  if (ForwardOp forward = root.getForward())
    visitForward(forward);
}

void AxisAnalysis::visitForward(ForwardOp forward) {
  if (!forwards.insert(forward))
    return;
  forward.getBodyBlock().walk([&](Operation *op) { visitOp(op); });
}

/// Right-aligned broadcasting of `operands` into `result`, leaving out the
/// last `skipTrailing` dims (a matmul's matrix dims).
void AxisAnalysis::broadcast(Operation *op, ArrayRef<Value> operands,
                             Value result, unsigned skipTrailing) {
  auto rt = cast<RankedTensorType>(result.getType());
  for (Value v : operands) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t)
      continue;
    int64_t offset = rt.getRank() - t.getRank();
    for (int64_t d = 0; d + skipTrailing < t.getRank(); ++d) {
      if (t.getDimSize(d) == 1 || offset + d < 0)
        continue;
      AxisList a = dimsOf(v)[d], r = dimsOf(result)[offset + d];
      unify(a, r, op);
    }
  }
}

/// Records `[offset, offset + size)` of the one static leaf of `src` as a
/// segment with the axes `result` (none: a dropped unit dim); false if `src`
/// is not one static leaf.
bool AxisAnalysis::addSegment(Operation *op, ArrayRef<Axis> src, int64_t offset,
                              int64_t size, std::optional<AxisList> result) {
  AxisList l = leaves(src);
  if (l.size() != 1 || nodes[find(l[0])].size < 0 || !nodes[l[0]].parts.empty())
    return false;
  Node &x = nodes[find(l[0])];
  AxisList axes = result ? *result : AxisList();
  for (Segment &seg : x.segments)
    if (seg.offset == offset && seg.size == size) {
      AxisList old = seg.axes;
      unify(old, axes, op);
      return true;
    }
  x.segments.push_back(Segment{offset, size, axes, op});
  return true;
}

std::optional<SmallVector<AxisAnalysis::Segment, 3>>
AxisAnalysis::tiling(Axis a) {
  Node &x = nodes[find(a)];
  if (x.segments.empty() || !x.parts.empty())
    return std::nullopt;
  SmallVector<Segment, 3> segs(x.segments);
  llvm::sort(segs, [](const Segment &p, const Segment &q) {
    return p.offset < q.offset;
  });
  int64_t at = 0;
  for (const Segment &seg : segs) {
    if (seg.offset != at)
      return std::nullopt;
    at += seg.size;
  }
  if (at != x.size)
    return std::nullopt;
  return segs;
}

/// A reshape refines its input's and result's factorizations to one.
void AxisAnalysis::visitReshape(Operation *op, Value input, Value result) {
  AxisList in, out;
  for (AxisList &d : dimsOf(input))
    in.append(d);
  for (AxisList &d : dimsOf(result))
    out.append(d);
  unify(in, out, op);
}

/// A slice of a static extent `n` to `s`: the selected range is the minor
/// factors of product `s` (split off as needed), at a multiple of `s`.
void AxisAnalysis::visitSlice(Operation *op) {
  auto slice = cast<tensor::ExtractSliceOp>(op);
  auto srcType = slice.getSourceType();
  llvm::SmallBitVector dropped = slice.getDroppedDims();
  ArrayRef<int64_t> sizes = slice.getStaticSizes();
  ArrayRef<int64_t> offsets = slice.getStaticOffsets();
  ArrayRef<int64_t> strides = slice.getStaticStrides();
  unsigned r = 0;
  for (int64_t d = 0; d < srcType.getRank(); ++d) {
    AxisList src = dimsOf(slice.getSource())[d];
    bool keep = !dropped.test(d);
    int64_t n = srcType.getDimSize(d), s = sizes[d];
    if (strides[d] != 1 || ShapedType::isDynamic(offsets[d])) {
      pin(src, op);
      if (keep)
        pin(dimsOf(slice.getResult())[r++], op);
      continue;
    }
    if (s == n || ShapedType::isDynamic(n)) {
      if (keep)
        unify(src, dimsOf(slice.getResult())[r++], op);
      continue;
    }
    // Split off minor factors until they multiply to s.
    int64_t acc = 1;
    AxisList suffix;
    for (bool progress = true; acc < s && progress;) {
      progress = false;
      AxisList l = leaves(src);
      if (l.size() <= suffix.size())
        break;
      Axis x = l[l.size() - 1 - suffix.size()];
      int64_t m = size(x);
      if (m > 0 && s % (acc * m) == 0) {
        suffix.insert(suffix.begin(), x);
        acc *= m;
        progress = true;
      } else if (m > 0 && m % (s / acc) == 0 && s % acc == 0) {
        split(x, m / (s / acc), op);
        progress = true;
      }
    }
    if (acc != s || offsets[d] % s != 0) {
      std::optional<AxisList> res;
      if (keep)
        res = dimsOf(slice.getResult())[r];
      if (addSegment(op, src, offsets[d], s, res)) {
        r += keep;
        continue;
      }
      pin(src, op);
      if (keep)
        pin(dimsOf(slice.getResult())[r++], op);
      continue;
    }
    // One index of a single axis is also a unit segment of it, so that
    // Falcon's [q heads | k | v] split tiles with its unit parts.
    if (suffix.empty())
      (void)addSegment(op, src, offsets[d], 1, std::nullopt);
    if (keep)
      unify(suffix, dimsOf(slice.getResult())[r++], op);
  }
}

void AxisAnalysis::visitMatmul(FnMatmulOp mm) {
  Operation *op = mm;
  auto lt = cast<RankedTensorType>(mm.getLhs().getType());
  auto rt = cast<RankedTensorType>(mm.getRhs().getType());
  if (lt.getRank() < 2 || rt.getRank() < 2) {
    for (Value v : op->getOperands())
      pinValue(v, op);
    return pinValue(op->getResult(0), op);
  }
  Value res = mm.getResult();
  int64_t rr = cast<RankedTensorType>(res.getType()).getRank();
  broadcast(op, {mm.getLhs(), mm.getRhs()}, res, 2);
  AxisList lk = dimsOf(mm.getLhs())[lt.getRank() - 1];
  AxisList rk = dimsOf(mm.getRhs())[rt.getRank() - 2];
  unify(lk, rk, op);
  AxisList lm = dimsOf(mm.getLhs())[lt.getRank() - 2];
  AxisList rm = dimsOf(res)[rr - 2];
  unify(lm, rm, op);
  AxisList rn = dimsOf(mm.getRhs())[rt.getRank() - 1];
  AxisList resn = dimsOf(res)[rr - 1];
  unify(rn, resn, op);
  return;
}

void AxisAnalysis::visitExpand(FnExpandOp expand) {
  Operation *op = expand;
  auto it = cast<RankedTensorType>(expand.getInput().getType());
  auto rt = cast<RankedTensorType>(expand.getType());
  int64_t offset = rt.getRank() - it.getRank();
  for (int64_t d = 0; d < rt.getRank(); ++d) {
    AxisList r = dimsOf(expand.getResult())[d];
    if (d < offset || it.getDimSize(d - offset) == 1) {
      for (Axis a : leaves(r))
        if (!nodes[a].expand)
          nodes[a].expand = op;
      continue;
    }
    AxisList i = dimsOf(expand.getInput())[d - offset];
    unify(i, r, op);
  }
  return;
}

void AxisAnalysis::visitConcat(tensor::ConcatOp cat) {
  Operation *op = cat;
  int64_t dim = cat.getDim();
  Value first = cat.getInputs().front();
  bool same = true;
  for (Value in : cat.getInputs()) {
    for (int64_t d = 0; d < cat.getRank(); ++d) {
      AxisList a = dimsOf(in)[d], b = dimsOf(first)[d];
      if (d != dim)
        unify(a, dimsOf(cat.getResult())[d], op);
      else if (cast<RankedTensorType>(in.getType()).getDimSize(d) ==
               cast<RankedTensorType>(first.getType()).getDimSize(d))
        unify(a, b, op);
      else
        same = false;
    }
  }
  if (!same) {
    // Inputs of different sizes: each is a part of the result's extent, at
    // its offset (DenseNet's features).
    AxisList r = dimsOf(cat.getResult())[dim];
    int64_t offset = 0;
    bool parts = true;
    for (Value in : cat.getInputs()) {
      int64_t n = cast<RankedTensorType>(in.getType()).getDimSize(dim);
      parts &= !ShapedType::isDynamic(n) &&
               addSegment(op, r, offset, n, dimsOf(in)[dim]);
      offset += ShapedType::isDynamic(n) ? 0 : n;
    }
    if (parts)
      return;
    for (Value in : cat.getInputs())
      pin(dimsOf(in)[dim], op);
    return pin(dimsOf(cat.getResult())[dim], op);
  }
  // The result's dim is `inputs x the inputs' dim`.
  AxisList whole{make(cat.getInputs().size())};
  nodes[whole[0]].structural = true;
  whole.append(dimsOf(first)[dim]);
  AxisList r = dimsOf(cat.getResult())[dim];
  unify(whole, r, op);
  return;
}

void AxisAnalysis::visitReduction(Operation *op) {
  auto dims = op->getAttrOfType<DenseI64ArrayAttr>("dims").asArrayRef();
  bool keepdim = op->hasAttr("keepdim");
  SmallVector<bool> kept = getReductionKeptDims(
      dims, cast<RankedTensorType>(op->getOperand(0).getType()).getRank());
  DimList reduced;
  unsigned r = 0;
  for (auto [d, k] : llvm::enumerate(kept)) {
    if (!k) {
      reduced.push_back(dimsOf(op->getOperand(0))[d]);
      r += keepdim;
      continue;
    }
    AxisList a = dimsOf(op->getOperand(0))[d];
    AxisList b = dimsOf(op->getResult(0))[r++];
    unify(a, b, op);
  }
  reductions.push_back({op, reduced});
  return;
}

void AxisAnalysis::visitOp(Operation *op) {
  if (auto call = dyn_cast<CallOp>(op))
    return visitCall(call);
  // Ops without results have no dims of their own; `nnx.return` is related
  // to the forward's calls in visitCall.
  if (op->getNumResults() == 0)
    return;
  auto hasTensor = [](TypeRange types) {
    return llvm::any_of(types, [](Type t) { return isa<RankedTensorType>(t); });
  };
  if (!hasTensor(op->getOperandTypes()) && !hasTensor(op->getResultTypes()))
    return; // index arithmetic
  if (auto dim = dyn_cast<tensor::DimOp>(op)) {
    std::optional<int64_t> index = dim.getConstantIndex();
    auto type = cast<RankedTensorType>(dim.getSource().getType());
    if (!index)
      pinValue(dim.getSource(), op);
    else if (!type.isDynamicDim(*index))
      dimReads.push_back({op, dimsOf(dim.getSource())[*index]});
    return;
  }
  if (auto state = dyn_cast<StateOp>(op)) {
    SmallVector<AxisList> &t =
        tensorDims(getStateOwner(state), state.getName(),
                   cast<ShapedType>(state.getType()), true);
    SmallVector<AxisList> t2 = t;
    for (auto [a, b] : llvm::zip(t2, dimsOf(state.getResult())))
      unify(a, b, op);
    return;
  }
  if (isa<arith::ConstantOp, tensor::SplatOp, FnArangeOp>(op)) {
    (void)dimsOf(op->getResult(0));
    return;
  }
  if (isa<FnBinaryOpInterface, FnWhereOp>(op))
    return broadcast(op, SmallVector<Value>(op->getOperands()),
                     op->getResult(0), 0);
  if (auto mm = dyn_cast<FnMatmulOp>(op))
    return visitMatmul(mm);
  if (auto expand = dyn_cast<FnExpandOp>(op))
    return visitExpand(expand);
  if (auto cat = dyn_cast<tensor::ConcatOp>(op))
    return visitConcat(cat);
  if (isa<FnMeanOp, FnSumOp, FnAmaxOp, FnAminOp>(op))
    return visitReduction(op);
  if (isa<FnReshapeOp>(op))
    return visitReshape(op, op->getOperand(0), op->getResult(0));
  if (auto perm = dyn_cast<FnPermuteOp>(op)) {
    for (auto [i, p] : llvm::enumerate(perm.getPermutation())) {
      AxisList a = dimsOf(perm.getInput())[p], b = dimsOf(perm.getResult())[i];
      unify(a, b, op);
    }
    return;
  }
  if (isa<tensor::ExtractSliceOp>(op))
    return visitSlice(op);
  if (isa<FnMaxPool2dOp, FnAvgPool2dOp, FnAdaptiveAvgPool2dOp>(op)) {
    // Per channel: batch and channels pass, the window mixes positions.
    DimList in = dimsOf(op->getOperand(0)), out = dimsOf(op->getResult(0));
    return tieDims(in, out, op, 0, 2);
  }
  if (isa<FnSoftmaxOp, FnCumsumOp>(op)) {
    int64_t rank = cast<RankedTensorType>(op->getResult(0).getType()).getRank();
    int64_t dim = op->getAttrOfType<IntegerAttr>("dim").getInt();
    reductions.push_back(
        {op, DimList{dimsOf(op->getOperand(0))[dim < 0 ? dim + rank : dim]}});
    broadcast(op, {op->getOperand(0)}, op->getResult(0), 0);
    return;
  }
  bool unaryElementwise =
      isa<FnActivationOpInterface, FnDropoutOp>(op) ||
      (op->hasTrait<OpTrait::Elementwise>() && op->getNumResults() == 1 &&
       llvm::all_of(op->getOperandTypes(), [&](Type t) {
         auto a = dyn_cast<RankedTensorType>(t);
         auto b = cast<RankedTensorType>(op->getResult(0).getType());
         return a && a.getShape() == b.getShape();
       }));
  if (unaryElementwise)
    return broadcast(op, SmallVector<Value>(op->getOperands()),
                     op->getResult(0), 0);
  for (Value v : op->getOperands())
    pinValue(v, op);
  for (Value v : op->getResults())
    pinValue(v, op);
}

void AxisAnalysis::tieDims(const DimList &a, const DimList &b, Operation *at,
                           unsigned from, unsigned count) {
  for (unsigned d = from; d < a.size() && d < b.size() && d - from < count; ++d)
    unify(a[d], b[d], at);
}

void AxisAnalysis::visitCall(CallOp call) {
  Operation *m = call.resolveCalleeModule().getOperation();
  SmallVector<DimList> ins, outs;
  for (Value v : call->getOperands())
    ins.push_back(isa<RankedTensorType>(v.getType()) ? dimsOf(v) : DimList());
  for (Value v : call->getResults())
    outs.push_back(isa<RankedTensorType>(v.getType()) ? dimsOf(v) : DimList());
  if (m && relateModule(m, ins, call->getOperandTypes(), outs,
                        call->getResultTypes(), call))
    return;
  for (Value v : call->getOperands())
    pinValue(v, call);
  for (Value v : call->getResults())
    pinValue(v, call);
}

/// A Linear or an Embedding: the batch dims pass, the weight relates the
/// features.
bool AxisAnalysis::relateLinear(Operation *m, const DimList &in,
                                const DimList &out, Operation *at) {
  if (auto lin = dyn_cast<LinearOp>(m)) {
    if (!lin.getWeight() || in.size() != out.size() || in.empty())
      return false;
    tieDims(in, out, at, 0, in.size() - 1);
    auto wt = cast<ShapedType>(lin.getWeight()->getType());
    DimList w = tensorDims(lin, "weight", wt, false);
    unify(w[1], in.back(), at);
    unify(w[0], out.back(), at);
    if (auto bias = lin.getBias()) {
      DimList bd =
          tensorDims(lin, "bias", cast<ShapedType>(bias->getType()), false);
      unify(bd[0], w[0], at);
    }
    return true;
  }
  auto emb = dyn_cast<EmbeddingOp>(m);
  if (!emb || !emb.getWeight() || out.size() != in.size() + 1)
    return false;
  tieDims(in, out, at);
  auto wt = cast<ShapedType>(emb.getWeight().getType());
  DimList w = tensorDims(emb, "weight", wt, false);
  unify(w[1], out.back(), at);
  return true;
}

/// A convolution: batch passes, the weight's dim 0 is the output channels,
/// its dim 1 the input channels per group; with groups > 1 both channel
/// dims are `groups x per-group`.
bool AxisAnalysis::relateConv(ConvLayerOpInterface conv, const DimList &in,
                              const DimList &out, Operation *at) {
  unsigned rank = conv.getSpatialRank() + 2;
  if (in.size() != rank || out.size() != rank)
    return false;
  Operation *m = conv;
  DimList w = tensorDims(
      m, "weight", cast<ShapedType>(conv.getWeightTensor().getType()), false);
  unify(in[0], out[0], at);
  unify(w[0], out[1], at);
  if (ElementsAttr bias = conv.getBiasTensor()) {
    DimList b = tensorDims(m, "bias", cast<ShapedType>(bias.getType()), false);
    unify(b[0], w[0], at);
  }
  int64_t groups = conv.getGroupCount();
  if (groups == 1) {
    unify(w[1], in[1], at);
    return true;
  }
  auto [it, inserted] = convGroups.try_emplace(m, 0);
  if (inserted)
    it->second = make(groups);
  AxisList inSplit{it->second}, outSplit{it->second};
  inSplit.append(w[1]);
  if (int64_t per = conv.getOutChannelCount() / groups; per != 1)
    outSplit.push_back(make(per));
  unify(inSplit, in[1], at);
  unify(outSplit, w[0], at);
  return true;
}

/// A norm: the shape passes; a batch norm's tensors are per channel (dim
/// 1), a layer or RMS norm's tensors are the last dims, which it reduces.
bool AxisAnalysis::relateNorm(Operation *m, const DimList &in,
                              const DimList &out, Operation *at) {
  if (in.size() != out.size() || in.empty())
    return false;
  tieDims(in, out, at);
  if (isa<BatchNormOp>(m)) {
    if (in.size() < 2)
      return false;
    for (StringRef name : {"weight", "bias", "running_mean", "running_var"})
      if (auto t = m->getAttrOfType<ElementsAttr>(name)) {
        DimList td = tensorDims(m, name, cast<ShapedType>(t.getType()), false);
        unify(td[0], in[1], at);
      }
    return true;
  }
  int64_t rank = in.size(), k = 1;
  for (StringRef name : {"weight", "bias"})
    if (auto t = m->getAttrOfType<ElementsAttr>(name)) {
      auto type = cast<ShapedType>(t.getType());
      k = type.getRank();
      DimList td = tensorDims(m, name, type, false);
      for (int64_t d = 0; d < k && rank - k + d >= 0; ++d)
        unify(td[d], in[rank - k + d], at);
    }
  DimList reduced;
  for (int64_t d = std::max<int64_t>(rank - k, 0); d < rank; ++d)
    reduced.push_back(in[d]);
  reductions.push_back({at, reduced});
  return true;
}

/// A sequential: its children in order, each on the previous one's output
/// (the types from the forward type function).
bool AxisAnalysis::relateSequential(SequentialOp seq, const DimList &in,
                                    Type inType, const DimList &out,
                                    Operation *at) {
  SmallVector<Operation *> children;
  for (Operation &child : seq.getBody().front())
    children.push_back(&child);
  DimList current = in;
  Type currentType = inType;
  for (auto [i, child] : llvm::enumerate(children)) {
    FailureOr<SmallVector<Type>> next =
        inferForwardTypes(child, TypeRange{currentType}, std::nullopt);
    if (failed(next) || next->size() != 1 ||
        !isa<RankedTensorType>(next->front()))
      return false;
    DimList nextDims =
        i + 1 == children.size()
            ? out
            : freshDims(cast<RankedTensorType>(next->front()).getShape(),
                        [&](int64_t n) { return make(n); });
    auto *module = isa<ModuleOpInterface>(child) ? child : nullptr;
    if (!module || !relateModule(module, {current}, {currentType}, {nextDims},
                                 {next->front()}, child)) {
      for (const DimList *dims : {&current, &nextDims})
        for (const AxisList &d : *dims)
          pin(d, child);
    }
    current = std::move(nextDims);
    currentType = next->front();
  }
  if (children.empty())
    tieDims(in, out, at);
  return true;
}

/// A custom module: its forward, with the arguments and results tied.
bool AxisAnalysis::relateCustom(CustomModuleOp custom, ArrayRef<DimList> ins,
                                ArrayRef<DimList> outs, Operation *at) {
  ForwardOp forward = custom.getForward();
  if (!forward || forward.getNumArguments() != ins.size())
    return false;
  visitForward(forward);
  for (auto [arg, dims] : llvm::zip(forward.getArguments(), ins))
    if (isa<RankedTensorType>(arg.getType()))
      for (auto [a, b] : llvm::zip(dimsOf(arg), dims))
        unify(a, b, at);
  Operation *ret = forward.getBodyBlock().getTerminator();
  for (auto [r, dims] : llvm::zip(ret->getOperands(), outs))
    if (isa<RankedTensorType>(r.getType()))
      for (auto [a, b] : llvm::zip(dimsOf(r), dims))
        unify(a, b, at);
  return true;
}

bool AxisAnalysis::relateModule(Operation *m, ArrayRef<DimList> ins,
                                TypeRange inTypes, ArrayRef<DimList> outs,
                                TypeRange outTypes, Operation *at) {
  if (auto custom = dyn_cast<CustomModuleOp>(m))
    return relateCustom(custom, ins, outs, at);
  bool single = ins.size() == 1 && outs.size() == 1 &&
                isa<RankedTensorType>(inTypes[0]) &&
                isa<RankedTensorType>(outTypes[0]);
  if (!single)
    return false;
  const DimList &in = ins[0], &out = outs[0];
  if (isa<LinearOp, EmbeddingOp>(m))
    return relateLinear(m, in, out, at);
  if (auto conv = dyn_cast<ConvLayerOpInterface>(m))
    return relateConv(conv, in, out, at);
  if (surgery::isNormModule(m))
    return relateNorm(m, in, out, at);
  if (auto seq = dyn_cast<SequentialOp>(m))
    return relateSequential(seq, in, inTypes[0], out, at);
  if (isa<FlattenOp>(m)) {
    AxisList a, b;
    for (const AxisList &d : in)
      a.append(d);
    for (const AxisList &d : out)
      b.append(d);
    unify(a, b, at);
    return true;
  }
  std::optional<FeatureDependence> dep = getFeatureDependence(m);
  if (dep == FeatureDependence::Elementwise && in.size() == out.size()) {
    tieDims(in, out, at);
    return true;
  }
  if (dep == FeatureDependence::PerChannel && in.size() == out.size() &&
      in.size() >= 2) {
    tieDims(in, out, at, 0, 2);
    return true;
  }
  return false;
}
