//===- AxisEdit.cpp - resize axes: check, then rewrite ----------*- C++ -*-===//
//
// The second half of AxisAnalysis: an edit gives axes new sizes. The check
// refuses an edit that an op of the forwards could not follow; the rewrite
// gathers every tensor, retypes every value and recomputes every static
// size and slice offset.
//
//===----------------------------------------------------------------------===//
#include "AxisAnalysis.h"

#include "nnx/Dialect/NNX/IR/NNXFnOps.h"
#include "nnx/Dialect/NNX/IR/TensorUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <numeric>
#include <set>

using namespace mlir;
using namespace mlir::nnx;
using namespace mlir::nnx::surgery;

using ResizeMap = std::map<Axis, AxisResize>;

int64_t AxisAnalysis::newSize(Axis a, const ResizeMap &resize) {
  auto it = resize.find(find(a));
  if (it != resize.end())
    return it->second.size;
  if (auto segs = tiling(a)) {
    int64_t n = 0;
    for (const Segment &seg : *segs) {
      int64_t m = seg.axes.empty() ? seg.size : 1;
      for (Axis x : leaves(seg.axes))
        m = mulSizes(m, newSize(x, resize));
      int64_t sum;
      n = llvm::AddOverflow(n, m, sum) ? std::numeric_limits<int64_t>::max()
                                       : sum;
    }
    return n;
  }
  return size(a);
}

bool AxisAnalysis::isResized(Axis a, const ResizeMap &resize) {
  if (resize.count(find(a)))
    return true;
  if (auto segs = tiling(a))
    for (const Segment &seg : *segs)
      for (Axis x : leaves(seg.axes))
        if (isResized(x, resize))
          return true;
  return false;
}

std::optional<std::pair<int64_t, int64_t>>
AxisAnalysis::segmentRange(Axis a, int64_t offset, const ResizeMap &resize) {
  auto segs = tiling(a);
  if (!segs)
    return std::nullopt;
  int64_t at = 0;
  for (const Segment &seg : *segs) {
    int64_t n = 1;
    for (Axis x : leaves(seg.axes))
      n *= newSize(x, resize);
    if (seg.axes.empty())
      n = seg.size;
    if (seg.offset == offset)
      return std::make_pair(at, n);
    at += n;
  }
  return std::nullopt;
}

int64_t AxisAnalysis::leafSource(Axis a, int64_t digit,
                                 const ResizeMap &resize) {
  auto it = resize.find(find(a));
  if (it != resize.end()) {
    if (it->second.source.empty())
      return digit < size(a) ? digit : -1;
    return it->second.source[digit];
  }
  if (auto segs = tiling(a)) {
    int64_t at = 0;
    for (const Segment &seg : *segs) {
      auto range = segmentRange(a, seg.offset, resize);
      if (digit < at + range->second) {
        if (seg.axes.empty())
          return seg.offset + (digit - at);
        int64_t src = dimSource(seg.axes, resize)[digit - at];
        return src < 0 ? -1 : seg.offset + src;
      }
      at += range->second;
    }
  }
  return digit;
}

SmallVector<int64_t> AxisAnalysis::digits(ArrayRef<Axis> list, int64_t index,
                                          const ResizeMap *resize) {
  AxisList l = leaves(list);
  SmallVector<int64_t> out(l.size());
  for (int64_t i = l.size() - 1; i >= 0; --i) {
    int64_t radix = resize ? newSize(l[i], *resize) : size(l[i]);
    if (radix <= 0)
      continue; // an empty dim has no index
    out[i] = index % radix;
    index /= radix;
  }
  return out;
}

SmallVector<int64_t> AxisAnalysis::dimSource(ArrayRef<Axis> list,
                                             const ResizeMap &resize) {
  AxisList l = leaves(list);
  int64_t total = 1;
  for (Axis a : l)
    total = mulSizes(total, newSize(a, resize));
  SmallVector<int64_t> out(total);
  for (int64_t j = 0; j < total; ++j) {
    SmallVector<int64_t> d = digits(l, j, &resize);
    int64_t old = 0;
    for (auto [a, digit] : llvm::zip(l, d)) {
      int64_t src = leafSource(a, digit, resize);
      if (src < 0) {
        old = -1;
        break;
      }
      old = old * size(a) + src;
    }
    out[j] = old;
  }
  return out;
}

std::optional<int64_t> AxisAnalysis::offsetOf(Axis a, Axis part) {
  if (find(a) == find(part))
    return 0;
  auto segs = tiling(a);
  if (!segs)
    return std::nullopt;
  for (const Segment &seg : *segs) {
    AxisList l = leaves(seg.axes);
    if (l.size() != 1)
      continue;
    if (std::optional<int64_t> inner = offsetOf(l[0], part))
      return seg.offset + *inner;
  }
  return std::nullopt;
}

/// True if any leaf of `list` is resized.
static bool touches(AxisAnalysis &a, ArrayRef<Axis> list,
                    const ResizeMap &resize) {
  return llvm::any_of(a.leaves(list),
                      [&](Axis x) { return a.isResized(x, resize); });
}

//===----------------------------------------------------------------------===//
// Check
//===----------------------------------------------------------------------===//

SmallVector<Operation *> AxisAnalysis::reductionsOver(const ResizeMap &resize) {
  SmallVector<Operation *> out;
  for (auto &[op, dims] : reductions)
    if (llvm::any_of(
            dims, [&](const AxisList &d) { return touches(*this, d, resize); }))
      out.push_back(op);
  return out;
}

LogicalResult AxisAnalysis::checkEdit(const ResizeMap &resize, CallOp rootCall,
                                      Operation *target) {
  auto refuseAt = [&](Operation *at, const Twine &why) {
    InFlightDiagnostic diag = refuse(target, pass, "target") << why;
    diag.attachNote(at->getLoc()) << "the op is here";
    return diag;
  };
  for (const auto &[axis, r] : resize)
    if (Operation *p = nodes[find(axis)].pin)
      return refuseAt(p, "would resize a dim (size " + Twine(size(axis)) +
                             ") that '" + p->getName().getStringRef() +
                             "' uses in a way the pass cannot rewrite");
  for (Node &node : nodes)
    if (!node.segments.empty() && node.parent == &node - nodes.data() &&
        !tiling(&node - nodes.data()) &&
        llvm::any_of(node.segments, [&](const Segment &seg) {
          return touches(*this, seg.axes, resize);
        }))
      return refuseAt(node.segments.front().op,
                      "would resize part of a dim whose slices do not tile "
                      "it: the pass cannot place the new indices");
  for (auto &[op, list] : dimReads)
    if (touches(*this, list, resize))
      return refuseAt(op, "would resize a dim whose size the forward reads "
                          "with 'tensor.dim': it computes with the number "
                          "the edit changes");
  for (Operation *op : reductionsOver(resize))
    if (!allowedReductions.contains(op))
      return refuseAt(op, "would resize a dim that '" +
                              op->getName().getStringRef() +
                              "' reduces over: its result depends on "
                              "every index of it");
  for (ForwardOp forward : forwards) {
    WalkResult res = forward.walk([&](arith::ConstantOp c) {
      auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
      if (!dense || dense.isSplat())
        return WalkResult::advance();
      for (AxisList &d : dimsOf(c.getResult()))
        if (touches(*this, d, resize)) {
          (void)refuseAt(c, "would resize a dense constant that is not a "
                            "splat: its new entries are unknown");
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    if (res.wasInterrupted())
      return failure();
  }
  ForwardOp root = forwards.front();
  for (BlockArgument arg : root.getArguments())
    if (isa<RankedTensorType>(arg.getType()))
      for (AxisList &d : dimsOf(arg))
        if (touches(*this, d, resize))
          return refuseAt(rootCall ? rootCall.getOperation() : root,
                          "would resize a dim of its forward's argument #" +
                              Twine(arg.getArgNumber()) +
                              ", which comes from outside the module");
  Operation *ret = root.getBodyBlock().getTerminator();
  for (auto [i, v] : llvm::enumerate(ret->getOperands()))
    if (isa<RankedTensorType>(v.getType()))
      for (AxisList &d : dimsOf(v))
        if (touches(*this, d, resize) &&
            (!rootCall || !rootCall->getResult(i).use_empty())) {
          if (!rootCall)
            return refuseAt(ret, "would resize a dim of the model's output #" +
                                     Twine(i));
          Operation *user = *rootCall->getResult(i).getUsers().begin();
          return refuseAt(user, "would resize a dim of its forward's result #" +
                                    Twine(i) +
                                    ", which is used outside the "
                                    "module");
        }
  for (const TensorSite &t : tensors) {
    bool changed = llvm::any_of(
        t.dims, [&](const AxisList &d) { return touches(*this, d, resize); });
    if (!changed)
      continue;
    SmallVector<int64_t> shape;
    for (const AxisList &d : t.dims) {
      int64_t n = 1;
      for (Axis x : leaves(d))
        n = mulSizes(n, newSize(x, resize));
      shape.push_back(n);
    }
    if (failed(checkHoldable(t.op, shape, pass, "edited layer",
                             "would grow its '" + t.name + "' to")))
      return failure();
    if (t.isState)
      continue;
    if (failed(
            checkRefusable(t.op, AllRebuildProperties, pass, "edited layer")))
      return failure();
    if (!allRunsRelated && failed(getOnlyCall(t.op, pass, "edited layer")))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Rewrite
//===----------------------------------------------------------------------===//

void surgery::setStateTensor(Operation *module, StringRef name,
                             ElementsAttr value) {
  NamedAttrList entries(module->getAttrOfType<DictionaryAttr>("state"));
  entries.set(name, value);
  module->setAttr("state", entries.getDictionary(module->getContext()));
}

double WeightDraws::draw(Operation *layer) {
  auto [it, inserted] = scale.try_emplace(layer, 0.0);
  if (inserted) {
    std::vector<double> v =
        *readTensor(layer->getAttrOfType<ElementsAttr>("weight"));
    double sumsq = 0;
    for (double x : v)
      sumsq += x * x;
    it->second = v.empty() ? 0.0 : std::sqrt(sumsq / v.size());
  }
  return std::normal_distribution<double>(0.0, it->second)(rng);
}

/// The tensor of `t` gathered under `resize`, new entries from `fill`.
static ElementsAttr gatherTensor(AxisAnalysis &a, const TensorSite &t,
                                 ElementsAttr attr, const ResizeMap &resize,
                                 const AxisAnalysis::FillFn &fill) {
  auto type = cast<ShapedType>(attr.getType());
  std::vector<double> old = *readTensor(attr);
  int64_t rank = type.getRank();
  SmallVector<SmallVector<int64_t>> src;
  SmallVector<int64_t> shape, oldStride(rank, 1);
  for (int64_t d = rank - 1; d >= 0; --d)
    oldStride[d] = d + 1 < rank ? oldStride[d + 1] * type.getDimSize(d + 1) : 1;
  for (int64_t d = 0; d < rank; ++d) {
    src.push_back(a.dimSource(t.dims[d], resize));
    shape.push_back(src.back().size());
  }
  int64_t total = 1;
  for (int64_t n : shape)
    total *= n;
  std::vector<double> out(total);
  SmallVector<int64_t> index(rank, 0);
  SmallVector<bool> isNew(rank);
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rest = flat, oldFlat = 0;
    bool anyNew = false;
    for (int64_t d = rank - 1; d >= 0; --d) {
      index[d] = rest % shape[d];
      rest /= shape[d];
    }
    for (int64_t d = 0; d < rank; ++d) {
      int64_t s = src[d][index[d]];
      isNew[d] = s < 0;
      anyNew |= isNew[d];
      oldFlat += (s < 0 ? 0 : s) * oldStride[d];
    }
    if (!anyNew) {
      out[flat] = old[oldFlat];
      continue;
    }
    if (std::optional<double> v = fill(t, index, isNew)) {
      out[flat] = *v;
      continue;
    }
    // Wrap each new index into the old range.
    oldFlat = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t s = src[d][index[d]];
      oldFlat += (s < 0 ? index[d] % type.getDimSize(d) : s) * oldStride[d];
    }
    out[flat] = old[oldFlat];
  }
  return makeTensor(type.clone(shape), out);
}

/// The new type of `v`: each static dim the product of its axes' sizes.
static Type newType(AxisAnalysis &a, Value v, const ResizeMap &resize) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type)
    return v.getType();
  SmallVector<int64_t> shape(type.getShape());
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (type.isDynamicDim(d))
      continue;
    int64_t n = 1;
    for (Axis x : a.leaves(v, d))
      n = mulSizes(n, a.newSize(x, resize));
    shape[d] = n;
  }
  return type.clone(shape);
}

/// A slice's new static offsets and sizes (computed on the old types).
static void rewriteSlice(AxisAnalysis &a, tensor::ExtractSliceOp slice,
                         const ResizeMap &resize) {
  auto srcType = slice.getSourceType();
  llvm::SmallBitVector dropped = slice.getDroppedDims();
  SmallVector<int64_t> offsets(slice.getStaticOffsets());
  SmallVector<int64_t> sizes(slice.getStaticSizes());
  unsigned r = 0;
  for (int64_t d = 0; d < srcType.getRank(); ++d) {
    bool keep = !dropped.test(d);
    unsigned rd = keep ? r++ : 0;
    if (srcType.isDynamicDim(d) || ShapedType::isDynamic(sizes[d]))
      continue;
    AxisList src = a.leaves(slice.getSource(), d);
    // A slice of the whole dim stays whole (a segmented leaf's first
    // segment also starts at 0: ViT's class token in its sequence).
    if (offsets[d] == 0 && sizes[d] == srcType.getDimSize(d)) {
      int64_t n = 1;
      for (Axis x : src)
        n = mulSizes(n, a.newSize(x, resize));
      sizes[d] = n;
      continue;
    }
    if (src.size() == 1)
      if (auto range = a.segmentRange(src[0], offsets[d], resize)) {
        offsets[d] = range->first;
        sizes[d] = range->second;
        continue;
      }
    AxisList sel = keep ? a.leaves(slice.getResult(), rd) : AxisList();
    AxisList prefix(src.begin(), src.end() - sel.size());
    int64_t oldSel = 1, newSel = 1;
    for (Axis x : sel) {
      oldSel *= a.size(x);
      newSel *= a.newSize(x, resize);
    }
    SmallVector<int64_t> dig = a.digits(prefix, offsets[d] / oldSel, nullptr);
    int64_t off = 0;
    for (auto [x, digit] : llvm::zip(prefix, dig)) {
      auto it = resize.find(a.find(x));
      int64_t n = a.newSize(x, resize);
      int64_t nd = digit;
      if (it != resize.end() && !it->second.source.empty())
        nd = llvm::find(it->second.source, digit) - it->second.source.begin();
      off = off * n + nd;
    }
    offsets[d] = off * newSel;
    sizes[d] = newSel;
  }
  slice.setStaticOffsets(offsets);
  slice.setStaticSizes(sizes);
}

void AxisAnalysis::applyEdit(const ResizeMap &resize, CallOp rootCall,
                             const FillFn &fill) {
  rewriteTensors(resize, [&](const TensorSite &t, ElementsAttr attr,
                             ArrayRef<SmallVector<int64_t>>) {
    return gatherTensor(*this, t, attr, resize, fill);
  });
  rewriteForwards(resize, rootCall);
}

void AxisAnalysis::applyKeepEdit(const ResizeMap &resize, CallOp rootCall,
                                 const TensorEditFn &edit) {
  rewriteTensors(resize, edit);
  rewriteForwards(resize, rootCall);
}

void AxisAnalysis::rewriteTensors(const ResizeMap &resize,
                                  const TensorEditFn &edit) {
  for (const TensorSite &t : tensors) {
    if (!llvm::any_of(t.dims, [&](const AxisList &d) {
          return touches(*this, d, resize);
        }))
      continue;
    ElementsAttr attr = t.isState ? cast<CustomModuleOp>(t.op).getTensor(t.name)
                                  : t.op->getAttrOfType<ElementsAttr>(t.name);
    SmallVector<SmallVector<int64_t>> source;
    for (const AxisList &d : t.dims)
      source.push_back(dimSource(d, resize));
    ElementsAttr value = edit(t, attr, source);
    if (t.isState)
      setStateTensor(t.op, t.name, value);
    else
      replaceTensor(t.op, t.name, value);
    if (auto lin = dyn_cast<LinearOp>(t.op); lin && lin.getOutFeatures())
      lin.setOutFeatures(cast<ShapedType>(value.getType()).getDimSize(0));
    if (auto conv = dyn_cast<ConvLayerOpInterface>(t.op); conv) {
      int64_t groups = 1;
      if (std::optional<Axis> g = groupsAxis(t.op))
        groups = newSize(*g, resize);
      if (groups != conv.getGroupCount())
        t.op->setAttr(
            "groups",
            IntegerAttr::get(IntegerType::get(t.op->getContext(), 64), groups));
      auto w = cast<ShapedType>(conv.getWeightTensor().getType());
      conv.setChannelCounts(w.getDimSize(1) * groups, w.getDimSize(0));
    }
  }
}

void AxisAnalysis::rewriteForwards(const ResizeMap &resize, CallOp rootCall) {
  // Static sizes and offsets first (they read the old sizes), then types.
  SmallVector<std::pair<Value, Type>> types;
  for (ForwardOp forward : forwards) {
    forward.walk([&](Operation *op) {
      if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op))
        rewriteSlice(*this, slice, resize);
      for (Value v : op->getResults())
        types.push_back({v, newType(*this, v, resize)});
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            types.push_back({arg, newType(*this, arg, resize)});
    });
  }
  for (auto [v, t] : types)
    v.setType(t);
  for (ForwardOp forward : forwards) {
    forward.walk([&](Operation *op) {
      if (isa<FnReshapeOp, FnExpandOp>(op)) {
        auto rt = cast<RankedTensorType>(op->getResult(0).getType());
        auto attr = op->getAttrOfType<DenseI64ArrayAttr>("static_shape");
        SmallVector<int64_t> shape(attr.asArrayRef());
        for (auto [d, n] : llvm::enumerate(shape))
          if (!ShapedType::isDynamic(n))
            n = rt.getDimSize(d);
        op->setAttr("static_shape",
                    DenseI64ArrayAttr::get(op->getContext(), shape));
      }
      if (auto c = dyn_cast<arith::ConstantOp>(op))
        if (auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
            dense && dense.getType() != c.getType())
          c.setValueAttr(dense.resizeSplat(cast<ShapedType>(c.getType())));
    });
    Operation *ret = forward.getBodyBlock().getTerminator();
    forward.setFunctionType(FunctionType::get(
        forward.getContext(), forward.getBodyBlock().getArgumentTypes(),
        ret->getOperandTypes()));
  }
  ForwardOp root = forwards.front();
  Operation *ret = root.getBodyBlock().getTerminator();
  if (rootCall)
    for (auto [res, v] : llvm::zip(rootCall->getResults(), ret->getOperands()))
      res.setType(v.getType());
}

//===----------------------------------------------------------------------===//
// Kept indices
//===----------------------------------------------------------------------===//

/// `start, length` pairs of the consecutive runs of `indices`.
static SmallVector<int64_t> toRuns(ArrayRef<int64_t> indices) {
  SmallVector<int64_t> runs;
  for (int64_t i : indices) {
    if (!runs.empty() && runs[runs.size() - 2] + runs.back() == i) {
      ++runs.back();
      continue;
    }
    runs.push_back(i);
    runs.push_back(1);
  }
  return runs;
}

/// The stored indices that dim `d` of `ext` reads, in order.
static SmallVector<int64_t> storedIndices(ExternalTensorAttr ext, unsigned d) {
  int64_t size = ext.getType().getDimSize(d);
  SmallVector<int64_t> out;
  ArrayRef<int64_t> runs;
  if (ArrayAttr slices = ext.getSlices())
    runs = cast<DenseI64ArrayAttr>(slices[d]).asArrayRef();
  if (runs.empty()) {
    out.resize(size);
    std::iota(out.begin(), out.end(), 0);
    return out;
  }
  for (size_t i = 0; i + 1 < runs.size(); i += 2)
    for (int64_t k = 0; k < runs[i + 1]; ++k)
      out.push_back(runs[i] + k);
  return out;
}

/// `attr` with, per dim, the old indices `source[d]`: a file's tensor as
/// the slice of the stored tensor (composed with the slices it has), an
/// inline one gathered.
ElementsAttr surgery::keepIndices(ElementsAttr attr,
                                  ArrayRef<SmallVector<int64_t>> source) {
  auto type = cast<ShapedType>(attr.getType());
  SmallVector<int64_t> shape;
  for (const SmallVector<int64_t> &s : source)
    shape.push_back(s.size());
  MLIRContext *ctx = type.getContext();
  if (auto ext = dyn_cast<ExternalTensorAttr>(attr)) {
    SmallVector<Attribute> slices;
    for (auto [d, s] : llvm::enumerate(source)) {
      SmallVector<int64_t> stored = storedIndices(ext, d), kept;
      for (int64_t i : s)
        kept.push_back(stored[i]);
      bool whole = !ext.getSlices() && kept.size() == stored.size() &&
                   llvm::equal(kept, stored);
      slices.push_back(DenseI64ArrayAttr::get(
          ctx, whole ? SmallVector<int64_t>() : toRuns(kept)));
    }
    return ExternalTensorAttr::get(ctx, type.clone(shape), ext.getKey(),
                                   ArrayAttr::get(ctx, slices));
  }
  std::vector<double> old = *readTensor(attr);
  int64_t rank = type.getRank(), total = 1;
  for (int64_t n : shape)
    total *= n;
  SmallVector<int64_t> stride(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    stride[d] = stride[d + 1] * type.getDimSize(d + 1);
  std::vector<double> out(total);
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rest = flat, oldFlat = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      oldFlat += source[d][rest % shape[d]] * stride[d];
      rest /= shape[d];
    }
    out[flat] = old[oldFlat];
  }
  return makeTensor(type.clone(shape), out);
}

//===----------------------------------------------------------------------===//
// Sources
//===----------------------------------------------------------------------===//

SmallVector<AxisAnalysis::Source> AxisAnalysis::linearSources(Value start) {
  SmallVector<Source> out;
  std::set<std::pair<void *, std::map<Axis, int64_t>>> seen;
  std::function<void(Value, std::map<Axis, int64_t>)> walk =
      [&](Value v, std::map<Axis, int64_t> sel) {
        if (!isa<RankedTensorType>(v.getType()) ||
            !seen.insert({v.getAsOpaquePointer(), sel}).second)
          return;
        if (auto arg = dyn_cast<BlockArgument>(v)) {
          auto forward = dyn_cast<ForwardOp>(arg.getOwner()->getParentOp());
          if (!forward || forward == forwards.front())
            return;
          for (ForwardOp f : forwards)
            f.walk([&](CallOp call) {
              auto m = dyn_cast_or_null<CustomModuleOp>(
                  call.resolveCalleeModule().getOperation());
              if (m && m.getForward() == forward)
                walk(call->getOperand(arg.getArgNumber()), sel);
            });
          return;
        }
        Operation *def = v.getDefiningOp();
        if (auto call = dyn_cast<CallOp>(def)) {
          Operation *m = call.resolveCalleeModule().getOperation();
          if (isa<LinearOp>(m))
            out.push_back(Source{call, sel});
          else if (auto custom = dyn_cast<CustomModuleOp>(m)) {
            if (ForwardOp f = custom.getForward())
              walk(f.getBodyBlock().getTerminator()->getOperand(
                       cast<OpResult>(v).getResultNumber()),
                   sel);
          } else if (call->getNumOperands() == 1) {
            walk(call->getOperand(0), sel);
          }
          return;
        }
        if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
          llvm::SmallBitVector dropped = slice.getDroppedDims();
          unsigned r = 0;
          for (int64_t d = 0; d < slice.getSourceType().getRank(); ++d) {
            bool keep = !dropped.test(d);
            unsigned rd = keep ? r++ : 0;
            if (slice.getSourceType().isDynamicDim(d))
              continue;
            AxisList src = leaves(slice.getSource(), d);
            int64_t offset = slice.getStaticOffsets()[d];
            if (src.size() == 1 && segmentRange(src[0], offset, {})) {
              sel[find(src[0])] = -(offset + 1); // a segment, by old offset
              continue;
            }
            AxisList kept = keep ? leaves(slice.getResult(), rd) : AxisList();
            AxisList prefix(src.begin(), src.end() - kept.size());
            int64_t s = 1;
            for (Axis x : kept)
              s *= size(x);
            SmallVector<int64_t> dig =
                digits(prefix, slice.getStaticOffsets()[d] / s, nullptr);
            for (auto [x, digit] : llvm::zip(prefix, dig))
              sel[find(x)] = digit;
          }
          return walk(slice.getSource(), sel);
        }
        if (isa<StateOp, arith::ConstantOp, tensor::SplatOp, FnArangeOp>(def))
          return;
        for (Value operand : def->getOperands())
          walk(operand, sel);
      };
  walk(start, {});
  return out;
}
