//===- LowerRecurrent.cpp - LSTM, GRU, RNN and their cells ------*- C++ -*-===//
//
// A recurrent layer lowers to one `scf.for` per layer and direction over the
// run-time sequence length. The input projection of every step is hoisted
// out of the loop as one matmul (x W_ih^T + b_ih for all t at once); the
// loop body slices step t of it, projects the hidden state (h W_hh^T +
// b_hh, one matmul), and applies the gates in one `linalg.generic` over
// (batch, hidden) that reads each gate block of the projections through its
// own indexing map. The reverse direction runs the same loop from t = T - 1
// down; the directions' outputs are concatenated, and the layers chain.
// A cell is one step without the loop. Unbatched input gets a unit batch
// dim and loses it again.
//
//===----------------------------------------------------------------------===//
#include "nnx/Conversion/NNXToLinalg/NNXToLinalg.h"
#include "nnx/Conversion/NNXToLinalg/RecurrentLowering.h"
#include "nnx/Conversion/NNXToLinalg/RuntimeChecks.h"
#include "nnx/Dialect/NNX/IR/ModuleTree.h"
#include "nnx/Dialect/NNX/IR/NNXRecurrentOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::nnx;
using IT = utils::IteratorType;
using Kind = RecurrentSpec::Kind;

namespace {

/// The (batch, hidden) state of one direction after a step.
struct State {
  Value h, c;
};

/// Where the time and batch dims are in a batched 3-D sequence.
struct Layout {
  int64_t time, batch;
  explicit Layout(const RecurrentSpec &spec)
      : time(spec.batchFirst ? 1 : 0), batch(spec.batchFirst ? 0 : 1) {}
};

Value sigmoid(OpBuilder &b, Location l, Value v) {
  Type t = v.getType();
  Value one = LayerEmitter::scalar(b, l, t, 1.0);
  Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, v));
  return arith::DivFOp::create(b, l, one, arith::AddFOp::create(b, l, one, e));
}

/// The scalar update of one hidden unit: `p` and `r` hold the gate blocks
/// of the input and hidden projections, `h` and `c` the state.
State cellScalar(OpBuilder &b, Location l, const RecurrentSpec &spec,
                 ArrayRef<Value> p, ArrayRef<Value> r, Value h, Value c) {
  auto add = [&](Value x, Value y) {
    return arith::AddFOp::create(b, l, x, y);
  };
  auto mul = [&](Value x, Value y) {
    return arith::MulFOp::create(b, l, x, y);
  };
  auto tanh = [&](Value x) { return math::TanhOp::create(b, l, x); };
  switch (spec.kind) {
  case Kind::LSTM: {
    Value i = sigmoid(b, l, add(p[0], r[0]));
    Value f = sigmoid(b, l, add(p[1], r[1]));
    Value g = tanh(add(p[2], r[2]));
    Value o = sigmoid(b, l, add(p[3], r[3]));
    Value c2 = add(mul(f, c), mul(i, g));
    return {mul(o, tanh(c2)), c2};
  }
  case Kind::GRU: {
    Value reset = sigmoid(b, l, add(p[0], r[0]));
    Value z = sigmoid(b, l, add(p[1], r[1]));
    Value n = tanh(add(p[2], mul(reset, r[2])));
    // (1 - z) n + z h
    Value one = LayerEmitter::scalar(b, l, h.getType(), 1.0);
    return {add(mul(arith::SubFOp::create(b, l, one, z), n), mul(z, h)), {}};
  }
  case Kind::RNN: {
    Value pre = add(p[0], r[0]);
    if (spec.nonlinearity == ActivationKind::relu)
      return {arith::MaximumFOp::create(
                  b, l, pre, LayerEmitter::scalar(b, l, pre.getType(), 0.0)),
              {}};
    return {tanh(pre), {}};
  }
  }
  llvm_unreachable("a recurrent kind");
}

/// The gates of one step: a `linalg.generic` over (batch, hidden) reading
/// gate block k of `p` and `r` (batch x gates*hidden: columns k * hidden
/// on, sliced out, so every operand has the iteration space's shape),
/// written into the state `s` itself (its elements read as the body's
/// outputs), so that a loop's new state bufferizes in place of the old one.
State emitCellUpdate(LayerEmitter &e, const RecurrentSpec &spec, Value p,
                     Value r, State s) {
  OpBuilder &b = e.getBuilder();
  int64_t gates = spec.gates(), hidden = spec.hiddenSize;
  bool lstm = spec.kind == Kind::LSTM;
  auto stateType = cast<RankedTensorType>(s.h.getType());
  OpFoldResult batch = tensor::getMixedSize(b, e.getLoc(), s.h, 0);
  SmallVector<Value> ins;
  for (Value proj : {p, r})
    for (int64_t k = 0; k < gates; ++k)
      ins.push_back(tensor::ExtractSliceOp::create(
          b, e.getLoc(), stateType, proj,
          ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(k * hidden)},
          ArrayRef<OpFoldResult>{batch, b.getIndexAttr(hidden)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)}));
  SmallVector<AffineMap> maps(ins.size(), b.getMultiDimIdentityMap(2));
  // An LSTM's h' does not read h: a fresh tensor (also when h and c are
  // one zero-filled value).
  SmallVector<Value> outs{s.h};
  if (lstm)
    outs = {e.empty(e.sizesOf(s.h), stateType.getElementType()), s.c};
  maps.append(outs.size(), b.getMultiDimIdentityMap(2));
  auto g = linalg::GenericOp::create(
      b, e.getLoc(), TypeRange(ValueRange(outs)), ins, outs, maps,
      SmallVector<IT>(2, IT::parallel),
      [&](OpBuilder &nb, Location l, ValueRange a) {
        SmallVector<Value> block(a);
        ArrayRef<Value> args(block);
        State n = cellScalar(nb, l, spec, args.take_front(gates),
                             args.slice(gates, gates), args[2 * gates],
                             lstm ? args[2 * gates + 1] : Value());
        SmallVector<Value> yields{n.h};
        if (lstm)
          yields.push_back(n.c);
        linalg::YieldOp::create(nb, l, yields);
      });
  return {g.getResult(0), lstm ? g.getResult(1) : Value()};
}

/// The tensors of one layer and direction.
struct Weights {
  Value ih, hh, biasIh, biasHh;
};

FailureOr<Weights> getWeights(LayerEmitter &e, Operation *layer,
                              const RecurrentSpec &spec, int64_t l, int64_t d) {
  FailureOr<Value> ih = e.getTensor(layer, spec.tensorName("weight_ih", l, d));
  FailureOr<Value> hh = e.getTensor(layer, spec.tensorName("weight_hh", l, d));
  FailureOr<Value> bih =
      e.getOptionalTensor(layer, spec.tensorName("bias_ih", l, d));
  FailureOr<Value> bhh =
      e.getOptionalTensor(layer, spec.tensorName("bias_hh", l, d));
  if (failed(ih) || failed(hh) || failed(bih) || failed(bhh))
    return failure();
  return Weights{*ih, *hh, *bih, *bhh};
}

/// One step: the hidden projection of `s` and the gates, given the input
/// projection `p` of the step.
FailureOr<State> emitStep(LayerEmitter &e, Operation *layer,
                          const RecurrentSpec &spec, const Weights &w, Value p,
                          State s) {
  FailureOr<Value> r = emitLinearProjection(e, layer, s.h, w.hh, w.biasHh);
  if (failed(r))
    return failure();
  return emitCellUpdate(e, spec, p, *r, s);
}

/// One direction of layer `l` over `x` (a batched sequence): the outputs
/// (x's layout, hidden features) and the final state.
FailureOr<std::pair<Value, State>>
emitDirection(LayerEmitter &e, Operation *layer, const RecurrentSpec &spec,
              Value x, int64_t l, int64_t d, State init) {
  OpBuilder &b = e.getBuilder();
  Location loc = e.getLoc();
  Layout lay(spec);
  FailureOr<Weights> w = getWeights(e, layer, spec, l, d);
  if (failed(w))
    return failure();
  FailureOr<Value> proj = emitLinearProjection(e, layer, x, w->ih, w->biasIh);
  if (failed(proj))
    return failure();
  auto projType = cast<RankedTensorType>(proj->getType());
  auto stateType = cast<RankedTensorType>(init.h.getType());
  Type elt = stateType.getElementType();
  SmallVector<OpFoldResult> seqSizes = e.sizesOf(x);
  seqSizes.back() = b.getIndexAttr(spec.hiddenSize);
  Value out = e.empty(seqSizes, elt);
  Value steps = getValueOrCreateConstantIndexOp(b, loc, seqSizes[lay.time]);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> carried{init.h};
  if (init.c)
    carried.push_back(init.c);
  carried.push_back(out);
  auto loop = scf::ForOp::create(b, loc, zero, steps, one, carried);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    if (d == 1)
      t = arith::SubIOp::create(b, loc,
                                arith::SubIOp::create(b, loc, steps, one), t);
    ValueRange iter = loop.getRegionIterArgs();
    State s{iter[0], init.c ? iter[1] : Value()};
    Value outIter = iter.back();
    // Step t of the input projection: batch x gates*hidden.
    SmallVector<OpFoldResult> offsets(3, b.getIndexAttr(0)),
        sizes = e.sizesOf(*proj), strides(3, b.getIndexAttr(1));
    offsets[lay.time] = t;
    sizes[lay.time] = b.getIndexAttr(1);
    sizes[lay.batch] = tensor::getMixedSize(b, loc, s.h, 0);
    auto sliceType = RankedTensorType::get(
        {stateType.getDimSize(0), projType.getDimSize(2)}, elt);
    Value p = tensor::ExtractSliceOp::create(b, loc, sliceType, *proj, offsets,
                                             sizes, strides);
    FailureOr<State> next = emitStep(e, layer, spec, *w, p, s);
    if (failed(next))
      return failure();
    sizes.back() = b.getIndexAttr(spec.hiddenSize);
    Value written = tensor::InsertSliceOp::create(b, loc, next->h, outIter,
                                                  offsets, sizes, strides);
    // The new state goes into the old one's buffer: bufferization wants a
    // loop's yielded tensors equivalent to its iteration arguments, and an
    // LSTM's h' (not read back by the gates) is computed into a new tensor
    // once canonicalization drops the generic's unused `outs` operand.
    auto inPlace = [&](Value v, Value dest) {
      return bufferization::MaterializeInDestinationOp::create(b, loc, v, dest)
          .getResult();
    };
    SmallVector<Value> yields{inPlace(next->h, s.h)};
    if (next->c)
      yields.push_back(inPlace(next->c, s.c));
    yields.push_back(written);
    scf::YieldOp::create(b, loc, yields);
  }
  ValueRange res = loop.getResults();
  return std::make_pair(res.back(), State{res[0], init.c ? res[1] : Value()});
}

/// Writes `parts` (each with the sizes of `sizes` but `width` in dim
/// `dim`) side by side along `dim` into a new tensor of `sizes`. Its sizes
/// are those of the `tensor.empty`, which the result-shape functions read
/// without running the loops that computed the parts.
Value assemble(LayerEmitter &e, ArrayRef<Value> parts,
               SmallVector<OpFoldResult> sizes, int64_t dim, Type elt) {
  OpBuilder &b = e.getBuilder();
  Value result = e.empty(sizes, elt);
  for (auto [k, part] : llvm::enumerate(parts)) {
    SmallVector<OpFoldResult> offsets(sizes.size(), b.getIndexAttr(0)),
        partSizes = e.sizesOf(part), strides(sizes.size(), b.getIndexAttr(1));
    auto width = cast<RankedTensorType>(part.getType()).getDimSize(dim);
    offsets[dim] = b.getIndexAttr(k * width);
    result = tensor::InsertSliceOp::create(b, e.getLoc(), part, result, offsets,
                                           partSizes, strides);
  }
  return result;
}

/// Fails at run time unless dim `dim` of `v` is `want`.
void checkDim(LayerEmitter &e, Operation *layer, Value v, int64_t dim,
              OpFoldResult want, StringRef what) {
  OpBuilder &b = e.getBuilder();
  Location loc = e.getLoc();
  if (!cast<RankedTensorType>(v.getType()).isDynamicDim(dim) &&
      isa<Attribute>(want))
    return;
  Value got = tensor::DimOp::create(b, loc, v, dim);
  emitRuntimeCheck(b, loc, arith::CmpIPredicate::eq, got,
                   getValueOrCreateConstantIndexOp(b, loc, want),
                   describeCheckedOp(layer) + ": " + what.str() + " has {0} " +
                       "in dim " + std::to_string(dim) + ", expected {1}");
}

/// The initial state of direction `index` (layer * directions + d): a row
/// of `given` (layers*directions x batch x hidden), or zeros.
Value initialState(LayerEmitter &e, Value given, int64_t index,
                   OpFoldResult batch, RankedTensorType type) {
  OpBuilder &b = e.getBuilder();
  if (!given)
    return e.filled({batch, b.getIndexAttr(type.getDimSize(1))},
                    type.getElementType(), 0.0);
  SmallVector<OpFoldResult> offsets(3, b.getIndexAttr(0)), sizes,
      strides(3, b.getIndexAttr(1));
  offsets[0] = b.getIndexAttr(index);
  sizes = {b.getIndexAttr(1), batch, b.getIndexAttr(type.getDimSize(1))};
  return tensor::ExtractSliceOp::create(b, e.getLoc(), type, given, offsets,
                                        sizes, strides);
}

/// nnx.lstm / gru / rnn on a batched sequence `x` with optional stacked
/// states `h0`, `c0`: (output, h_n[, c_n]). `stateType` is the (batch,
/// hidden) type every step state has.
FailureOr<SmallVector<Value>> emitLayers(LayerEmitter &e, Operation *layer,
                                         const RecurrentSpec &spec, Value x,
                                         Value h0, Value c0,
                                         RankedTensorType stateType) {
  OpBuilder &b = e.getBuilder();
  Location loc = e.getLoc();
  Layout lay(spec);
  Type elt = stateType.getElementType();
  OpFoldResult batch = tensor::getMixedSize(b, loc, x, lay.batch);
  if (!stateType.isDynamicDim(0))
    batch = b.getIndexAttr(stateType.getDimSize(0));
  int64_t dirs = spec.directions(), stacked = spec.numLayers * dirs;
  for (auto [v, what] : {std::pair(h0, "h_0"), std::pair(c0, "c_0")}) {
    if (!v)
      continue;
    checkDim(e, layer, v, 0, b.getIndexAttr(stacked), what);
    checkDim(e, layer, v, 1, tensor::getMixedSize(b, loc, x, lay.batch), what);
  }
  Value steps = tensor::DimOp::create(b, loc, x, lay.time);
  emitRuntimeCheck(b, loc, arith::CmpIPredicate::sge, steps,
                   arith::ConstantIndexOp::create(b, loc, 1),
                   describeCheckedOp(layer) +
                       ": the sequence length is {0}, it must be at least {1}");
  SmallVector<Value> hs, cs;
  for (int64_t l = 0; l < spec.numLayers; ++l) {
    SmallVector<Value> outs;
    for (int64_t d = 0; d < dirs; ++d) {
      State init{initialState(e, h0, l * dirs + d, batch, stateType),
                 spec.kind == Kind::LSTM
                     ? initialState(e, c0, l * dirs + d, batch, stateType)
                     : Value()};
      auto dir = emitDirection(e, layer, spec, x, l, d, init);
      if (failed(dir))
        return failure();
      outs.push_back(dir->first);
      hs.push_back(dir->second.h);
      cs.push_back(dir->second.c);
    }
    SmallVector<OpFoldResult> sizes = e.sizesOf(x);
    sizes[lay.batch] = batch;
    sizes.back() = b.getIndexAttr(dirs * spec.hiddenSize);
    x = assemble(e, outs, sizes, 2, elt);
    if (l + 1 < spec.numLayers && spec.dropout > 0.0 &&
        cast<ModuleOpInterface>(layer).getTrain()) {
      FailureOr<Value> dropped = emitDropout(e, x, spec.dropout, l);
      if (failed(dropped))
        return failure();
      x = *dropped;
    }
  }
  auto stack = [&](ArrayRef<Value> states) {
    SmallVector<Value> rows;
    for (Value s : states)
      rows.push_back(tensor::ExpandShapeOp::create(
          b, loc,
          RankedTensorType::get({1, stateType.getDimSize(0), spec.hiddenSize},
                                elt),
          s, ArrayRef<ReassociationIndices>{{0, 1}, {2}},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1), batch,
                                 b.getIndexAttr(spec.hiddenSize)}));
    return assemble(
        e, rows,
        {b.getIndexAttr(stacked), batch, b.getIndexAttr(spec.hiddenSize)}, 0,
        elt);
  };
  SmallVector<Value> results{x, stack(hs)};
  if (spec.kind == Kind::LSTM)
    results.push_back(stack(cs));
  return results;
}

/// A cell's step on batched `x` and optional states.
FailureOr<SmallVector<Value>> emitCell(LayerEmitter &e, Operation *layer,
                                       const RecurrentSpec &spec, Value x,
                                       Value h, Value c,
                                       RankedTensorType stateType) {
  OpBuilder &b = e.getBuilder();
  Location loc = e.getLoc();
  OpFoldResult batch = tensor::getMixedSize(b, loc, x, 0);
  if (!stateType.isDynamicDim(0))
    batch = b.getIndexAttr(stateType.getDimSize(0));
  for (auto [v, what] : {std::pair(h, "h"), std::pair(c, "c")})
    if (v)
      checkDim(e, layer, v, 0, tensor::getMixedSize(b, loc, x, 0), what);
  auto zeros = [&] {
    return e.filled({batch, b.getIndexAttr(spec.hiddenSize)},
                    stateType.getElementType(), 0.0);
  };
  auto cast = [&](Value v) {
    return v.getType() == stateType
               ? v
               : tensor::CastOp::create(b, loc, stateType, v).getResult();
  };
  State s{h ? cast(h) : zeros(),
          spec.kind == Kind::LSTM ? (c ? cast(c) : zeros()) : Value()};
  FailureOr<Weights> w = getWeights(e, layer, spec, 0, 0);
  if (failed(w))
    return failure();
  FailureOr<Value> p = emitLinearProjection(e, layer, x, w->ih, w->biasIh);
  if (failed(p))
    return failure();
  FailureOr<State> next = emitStep(e, layer, spec, *w, *p, s);
  if (failed(next))
    return failure();
  SmallVector<Value> results{next->h};
  if (next->c)
    results.push_back(next->c);
  return results;
}

/// `v` with a unit dim inserted before its last dim (unbatched -> batch
/// of one), or removed there (`expand` false).
Value unitBatch(LayerEmitter &e, Value v, bool expand) {
  OpBuilder &b = e.getBuilder();
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape(t.getShape());
  SmallVector<OpFoldResult> sizes = e.sizesOf(v);
  int64_t rank = expand ? t.getRank() : t.getRank() - 1;
  if (expand) {
    shape.insert(shape.end() - 1, 1);
    sizes.insert(sizes.end() - 1, b.getIndexAttr(1));
  } else {
    shape.erase(shape.end() - 2);
    sizes.erase(sizes.end() - 2);
  }
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d + 1 < rank; ++d)
    groups.push_back({d});
  groups.push_back({rank - 1, rank});
  return reshapeTensor(b, e.getLoc(), v, t.clone(shape), groups, sizes);
}

} // namespace

/// The forward of any recurrent op on `inputs` (x, then the states).
FailureOr<SmallVector<Value>>
mlir::nnx::emitRecurrentForward(LayerEmitter &e, Operation *layer,
                                ValueRange inputs) {
  auto typed = cast<RecurrentLayerOpInterface>(layer);
  RecurrentSpec spec = typed.getSpec();
  FailureOr<SmallVector<Type>> types = typed.inferOutputTypes(
      inputs.getTypes(), ModuleTypeError(layer, layer->getLoc()));
  if (failed(types))
    return failure();
  auto x = cast<RankedTensorType>(inputs.front().getType());
  bool batched = x.getRank() == (spec.cell ? 2 : 3);
  SmallVector<Value> ins(inputs);
  if (!batched) {
    // PyTorch reads unbatched input as (seq, features) whatever
    // batch_first says.
    spec.batchFirst = false;
    for (Value &v : ins)
      v = unitBatch(e, v, /*expand=*/true);
  }
  Type elt = x.getElementType();
  auto stateType = RankedTensorType::get(
      {batched ? cast<RankedTensorType>((*types)[spec.cell ? 0 : 1])
                     .getDimSize(spec.cell ? 0 : 1)
               : 1,
       spec.hiddenSize},
      elt);
  Value h = ins.size() > 1 ? ins[1] : Value();
  Value c = ins.size() > 2 ? ins[2] : Value();
  FailureOr<SmallVector<Value>> outs =
      spec.cell ? emitCell(e, layer, spec, ins[0], h, c, stateType)
                : emitLayers(e, layer, spec, ins[0], h, c, stateType);
  if (failed(outs))
    return failure();
  OpBuilder &b = e.getBuilder();
  for (auto [i, type] : llvm::enumerate(*types)) {
    Value &v = (*outs)[i];
    if (!batched)
      v = unitBatch(e, v, /*expand=*/false);
    if (v.getType() != type)
      v = tensor::CastOp::create(b, e.getLoc(), type, v);
  }
  return outs;
}
