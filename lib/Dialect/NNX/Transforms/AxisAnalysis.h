//===- AxisAnalysis.h - which factor of which dim is what -------*- C++ -*-===//
//
// The dim provenance that attention surgery needs. Every static dim of every
// tensor in a custom module's forward (and the forwards it calls) is a
// product of *axes*, major to minor: the `32` that `q_proj` writes becomes
// `heads x head_dim` at the `view`, `heads` becomes `kv_heads x group` where
// the repeated keys meet the queries, `head_dim` becomes `2 x half` at the
// rotary slices. Ops relate their operands' and results' dims (a reshape
// refines both sides to one factorization, a matmul ties its contraction,
// a broadcast ties aligned dims), and the axes are merged by union-find.
//
// An edit then gives some axes a new size and, per new index, the old index
// it comes from (or none): every type, every static size and slice offset,
// and every tensor (weights, biases, a module's own state) follows, with
// new entries filled by a policy the pass chooses per tensor. An op the
// analysis does not understand pins the axes it touches; an edit of a
// pinned axis is refused with a note at that op.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_LIB_DIALECT_NNX_TRANSFORMS_AXISANALYSIS_H
#define NNX_LIB_DIALECT_NNX_TRANSFORMS_AXISANALYSIS_H

#include "SurgeryUtils.h"

#include "nnx/Dialect/NNX/IR/NNXFnOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"
#include <functional>
#include <limits>
#include <map>
#include <random>

namespace mlir::nnx::surgery {

/// An axis: a factor of one or more tensor dims.
using Axis = unsigned;
/// A dim: its axes, major to minor (none for a static 1).
using AxisList = llvm::SmallVector<Axis, 4>;
/// A tensor's dims.
using DimList = llvm::SmallVector<AxisList>;

/// `a * b` (sizes, >= 0), or INT64_MAX when it overflows: an edit's size
/// that checkHoldable then refuses.
inline int64_t mulSizes(int64_t a, int64_t b) {
  int64_t r;
  return llvm::MulOverflow(a, b, r) ? std::numeric_limits<int64_t>::max() : r;
}

/// A tensor of the module tree whose dims the analysis relates: a layer's
/// attribute (`weight`, `bias`) or an entry of a custom module's `state`.
struct TensorSite {
  Operation *op;
  std::string name;
  bool isState;
  llvm::SmallVector<AxisList> dims;
};

/// A new size for an axis: new index j is old index `source[j]`, or new
/// (-1); an empty `source` grows the axis (old indices first, then new).
struct AxisResize {
  int64_t size;
  llvm::SmallVector<int64_t> source;
  /// Old indices 0..n-1 in place, then new ones up to `size`.
  static AxisResize grow(int64_t size) { return AxisResize{size, {}}; }
  /// The kept old indices, in order.
  static AxisResize keep(llvm::ArrayRef<int64_t> kept) {
    return AxisResize{static_cast<int64_t>(kept.size()),
                      llvm::SmallVector<int64_t>(kept)};
  }
};

class AxisAnalysis {
public:
  explicit AxisAnalysis(llvm::StringRef pass) : pass(pass) {}

  /// Relates the dims of `root`'s forward and of every forward it calls.
  void run(CustomModuleOp root);
  /// Declares that `run`'s root is the model's top module, so that every
  /// run of every layer is related: `checkEdit` then accepts a layer run
  /// several times, or inside an `nnx.sequential` (no `nnx.call` of its
  /// own).
  void relateAllRuns() { allRunsRelated = true; }

  /// The axis of a grouped convolution's `groups` (its channels are
  /// `groups x per-group`), or nullopt for groups = 1.
  std::optional<Axis> groupsAxis(Operation *conv) {
    auto it = convGroups.find(conv);
    return it == convGroups.end() ? std::nullopt
                                  : std::optional<Axis>(it->second);
  }
  /// The op that pins `a` (an op the analysis does not understand, or an
  /// unequal refinement), or null.
  Operation *pinOf(Axis a) { return nodes[find(a)].pin; }
  /// Where `part` lies in leaf `a`: 0 when it is `a`, the (old) offset of
  /// the concatenation's part that holds it (through nested parts), or
  /// nullopt.
  std::optional<int64_t> offsetOf(Axis a, Axis part);
  /// The op that split axis `a` into parts, or null.
  Operation *splitOf(Axis a) { return nodes[find(a)].splitAt; }
  /// The reductions (norms, means, softmaxes) and the dims they reduce.
  llvm::ArrayRef<std::pair<Operation *, DimList>> getReductions() {
    return reductions;
  }

  /// The axes of dim `dim` of `v` (leaves, major to minor).
  AxisList leaves(Value v, unsigned dim);
  /// The leaves of `list`.
  AxisList leaves(llvm::ArrayRef<Axis> list);
  Axis find(Axis a);
  int64_t size(Axis a) { return nodes[find(a)].size; }
  /// The `nnx.fn.expand` that created `a` from a unit dim, or null.
  Operation *expandOrigin(Axis a) { return nodes[find(a)].expand; }
  /// True for an axis a concatenation created (rotary halves).
  bool isStructural(Axis a) { return nodes[find(a)].structural; }

  /// The forwards analyzed, root first.
  llvm::ArrayRef<ForwardOp> getForwards() { return forwards.getArrayRef(); }
  llvm::ArrayRef<TensorSite> getTensors() { return tensors; }
  /// The tensor of `op` named `name`, or null.
  const TensorSite *lookupTensor(Operation *op, llvm::StringRef name);

  /// The reductions, softmaxes and norms of the forwards over a resized
  /// axis.
  llvm::SmallVector<Operation *>
  reductionsOver(const std::map<Axis, AxisResize> &resize);
  /// Lets `checkEdit` accept reduction `op` over a resized axis (the pass
  /// rewrites it itself).
  void allowReduction(Operation *op) { allowedReductions.insert(op); }

  /// Checks that resizing `resize`'s axes keeps every op of the forwards
  /// valid: every changed tensor can be held (checkHoldable), no pinned axis,
  /// no reduction, softmax or `tensor.dim` over a resized axis, no dense
  /// constant with one, no resized dim of the root forward's arguments, and no
  /// use of a resized result of `rootCall` (null when the root is the model's
  /// top module).
  LogicalResult checkEdit(const std::map<Axis, AxisResize> &resize,
                          CallOp rootCall, Operation *target);

  /// How a tensor's new entries are filled: given the tensor and the new
  /// multi-index (per dim, per leaf: the new index and whether it is new),
  /// returns the value, or nullopt for "copy the entry with every new
  /// index wrapped into the old range".
  using FillFn = std::function<std::optional<double>(
      const TensorSite &, llvm::ArrayRef<int64_t> newIndex,
      llvm::ArrayRef<bool> dimIsNew)>;

  /// Rewrites tensors (with `fill`), types, static sizes and offsets.
  /// `checkEdit` must have succeeded.
  void applyEdit(const std::map<Axis, AxisResize> &resize, CallOp rootCall,
                 const FillFn &fill);

  /// The new value of a changed tensor, given per dim the old index of each
  /// new index (a subset edit: no new indices).
  using TensorEditFn = std::function<ElementsAttr(
      const TensorSite &, ElementsAttr,
      llvm::ArrayRef<llvm::SmallVector<int64_t>> dimSource)>;
  /// applyEdit for an edit that only keeps indices, with the changed tensors
  /// written by `edit` (e.g. a slice of a weights file's tensor).
  void applyKeepEdit(const std::map<Axis, AxisResize> &resize, CallOp rootCall,
                     const TensorEditFn &edit);

  /// For dim `dim` of a tensor with leaves `list`: per new index, the old
  /// index (-1 if new), under `resize`.
  llvm::SmallVector<int64_t>
  dimSource(llvm::ArrayRef<Axis> list,
            const std::map<Axis, AxisResize> &resize);
  /// The digits of `index` in the radices of `list`'s leaf sizes (old sizes,
  /// or new ones under `resize`).
  llvm::SmallVector<int64_t> digits(llvm::ArrayRef<Axis> list, int64_t index,
                                    const std::map<Axis, AxisResize> *resize);
  int64_t newSize(Axis a, const std::map<Axis, AxisResize> &resize);
  /// True if `a` is resized, directly or through one of its segments.
  bool isResized(Axis a, const std::map<Axis, AxisResize> &resize);
  /// The old index of new index `digit` of leaf `a` (-1: new).
  int64_t leafSource(Axis a, int64_t digit,
                     const std::map<Axis, AxisResize> &resize);
  /// For a segmented leaf `a` (an extent sliced into parts of different
  /// sizes: Falcon's 4 query, 1 key, 1 value heads), the new offset and size
  /// of the segment at old offset `offset`, or nullopt.
  std::optional<std::pair<int64_t, int64_t>>
  segmentRange(Axis a, int64_t offset,
               const std::map<Axis, AxisResize> &resize);

  /// Every Linear call, state read and slice that defines `v` (walking back
  /// through elementwise ops, reshapes, calls and arguments), each with the
  /// slice selections on the way: axis -> selected index.
  struct Source {
    CallOp call;
    std::map<Axis, int64_t> selection;
  };
  llvm::SmallVector<Source> linearSources(Value v);

private:
  void rewriteTensors(const std::map<Axis, AxisResize> &resize,
                      const TensorEditFn &edit);
  void rewriteForwards(const std::map<Axis, AxisResize> &resize,
                       CallOp rootCall);

  /// A contiguous part [offset, offset + size) of a leaf that slices of
  /// different sizes read, with the axes of the slices' dim.
  struct Segment {
    int64_t offset, size;
    AxisList axes;
    Operation *op;
  };
  struct Node {
    int64_t size;
    Axis parent;
    llvm::SmallVector<Axis, 2> parts;
    llvm::SmallVector<Segment, 3> segments;
    Operation *pin = nullptr;
    Operation *expand = nullptr;
    bool structural = false;
    /// The op whose refinement split the axis into parts.
    Operation *splitAt = nullptr;
  };
  Axis make(int64_t size);
  llvm::SmallVector<AxisList> &dimsOf(Value v);
  llvm::SmallVector<AxisList> &tensorDims(Operation *op, llvm::StringRef name,
                                          ShapedType type, bool isState);
  void unify(llvm::ArrayRef<Axis> a, llvm::ArrayRef<Axis> b, Operation *at);
  void unite(Axis a, Axis b);
  void split(Axis a, int64_t major, Operation *at);
  void pin(llvm::ArrayRef<Axis> list, Operation *at);
  void pinValue(Value v, Operation *at);
  void broadcast(Operation *op, llvm::ArrayRef<Value> operands, Value result,
                 unsigned skipTrailing);

  void visitForward(ForwardOp forward);
  void visitOp(Operation *op);
  void visitCall(CallOp call);
  /// Relates module `m` run on `ins` (types `inTypes`) to `outs`; false for
  /// a module whose dims it does not know. `at` pins what does not pair up.
  bool relateModule(Operation *m, llvm::ArrayRef<DimList> ins,
                    TypeRange inTypes, llvm::ArrayRef<DimList> outs,
                    TypeRange outTypes, Operation *at);
  bool relateLinear(Operation *m, const DimList &in, const DimList &out,
                    Operation *at);
  bool relateConv(ConvLayerOpInterface conv, const DimList &in,
                  const DimList &out, Operation *at);
  bool relateNorm(Operation *m, const DimList &in, const DimList &out,
                  Operation *at);
  bool relateSequential(SequentialOp seq, const DimList &in, Type inType,
                        const DimList &out, Operation *at);
  bool relateCustom(CustomModuleOp custom, llvm::ArrayRef<DimList> ins,
                    llvm::ArrayRef<DimList> outs, Operation *at);
  /// Unifies equal-rank `a` and `b` dim by dim, from `from` on.
  void tieDims(const DimList &a, const DimList &b, Operation *at,
               unsigned from = 0, unsigned count = ~0u);
  void visitSlice(Operation *op);
  void visitMatmul(FnMatmulOp mm);
  void visitExpand(FnExpandOp expand);
  void visitConcat(tensor::ConcatOp cat);
  void visitReduction(Operation *op);
  void visitReshape(Operation *op, Value input, Value result);
  bool addSegment(Operation *op, llvm::ArrayRef<Axis> src, int64_t offset,
                  int64_t size, std::optional<AxisList> result);
  /// The segments of `a` sorted by offset, if they tile it exactly.
  std::optional<llvm::SmallVector<Segment, 3>> tiling(Axis a);

  llvm::StringRef pass;
  std::vector<Node> nodes;
  llvm::DenseMap<Value, llvm::SmallVector<AxisList>> valueDims;
  std::vector<TensorSite> tensors;
  llvm::SetVector<ForwardOp> forwards;
  /// Ops whose result depends on every index of some dims: (op, the
  /// reduced dims).
  llvm::SmallVector<std::pair<Operation *, DimList>> reductions;
  llvm::DenseMap<Operation *, Axis> convGroups;
  bool allRunsRelated = false;
  llvm::DenseSet<Operation *> allowedReductions;
  /// `tensor.dim`s of static dims.
  llvm::SmallVector<std::pair<Operation *, AxisList>> dimReads;
};

/// Normal draws from one seeded generator with each layer's weight
/// root-mean-square as the deviation: the new rows and columns of an edit
/// that should train (their old neighbours' scale, not zero).
class WeightDraws {
public:
  explicit WeightDraws(uint64_t seed) : rng(seed) {}
  /// A draw for a new entry of `layer`'s weight.
  double draw(Operation *layer);

private:
  std::mt19937_64 rng;
  llvm::DenseMap<Operation *, double> scale;
};

/// `attr` with, per dim, the old indices `source[d]`: a weights file's
/// tensor as the slice of the stored tensor (composed with the slices it
/// has), an inline one gathered.
ElementsAttr keepIndices(ElementsAttr attr,
                         llvm::ArrayRef<llvm::SmallVector<int64_t>> source);

/// Replaces `state` entry `name` of `module` (a container) with `value`.
void setStateTensor(Operation *module, llvm::StringRef name,
                    ElementsAttr value);

} // namespace mlir::nnx::surgery

#endif // NNX_LIB_DIALECT_NNX_TRANSFORMS_AXISANALYSIS_H
