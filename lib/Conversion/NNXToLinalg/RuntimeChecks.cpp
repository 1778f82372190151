//===- RuntimeChecks.cpp - checks the compiled code makes at run time -----===//
//
// emitRuntimeCheck (RuntimeChecks.h) and the checks nnx-lower-functional
// emits with it (FunctionalLowering.h): dims a linalg op's loops assume
// equal, reshape sizes, concat operands, slices inside their sources.
//
//===----------------------------------------------------------------------===//
#include "nnx/Conversion/NNXToLinalg/RuntimeChecks.h"
#include "FunctionalLowering.h"
#include "nnx/Dialect/NNX/IR/NNXOps.h"
#include "nnx/Support/ResolveDims.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/xxhash.h"

#include <limits>

using namespace mlir;
using namespace mlir::nnx;

/// Marks the `scf.if` of a run-time check (simplifyRuntimeChecks).
static constexpr llvm::StringLiteral kCheckAttrName = "nnx_runtime_check";

std::string mlir::nnx::describeCheckedOp(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "'" << op->getName() << "'";
  if (auto label = op->getAttrOfType<StringAttr>(kSourceAttrName))
    os << " (" << label.getValue() << ")";
  else if (auto name = op->getLoc()->findInstanceOf<NameLoc>())
    os << " (" << name.getName().getValue() << ")";
  if (auto file = op->getLoc()->findInstanceOf<FileLineColLoc>())
    os << " at " << file.getFilename().getValue() << ":" << file.getLine()
       << ":" << file.getColumn();
  return text;
}

/// The declaration of kRuntimeFailFuncName in `module`.
static void declareFailFunction(ModuleOp module, Location loc) {
  if (module.lookupSymbol(kRuntimeFailFuncName))
    return;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  MLIRContext *ctx = module.getContext();
  auto type = FunctionType::get(
      ctx, {LLVM::LLVMPointerType::get(ctx), b.getI64Type(), b.getI64Type()},
      {});
  auto fn = func::FuncOp::create(b, loc, kRuntimeFailFuncName, type);
  fn.setPrivate();
}

/// The address of a NUL-terminated global holding `message` in `module`
/// (one per distinct message).
static Value messageAddress(OpBuilder &b, Location loc, ModuleOp module,
                            StringRef message) {
  std::string name =
      "__nnx_check_" + llvm::utohexstr(llvm::xxh3_64bits(message), true);
  MLIRContext *ctx = module.getContext();
  auto global = module.lookupSymbol<LLVM::GlobalOp>(name);
  if (!global) {
    OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
    std::string value = (message + Twine('\0')).str();
    auto type =
        LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), value.size());
    global = LLVM::GlobalOp::create(mb, loc, type, /*isConstant=*/true,
                                    LLVM::Linkage::Internal, name,
                                    mb.getStringAttr(value));
  }
  return LLVM::AddressOfOp::create(b, loc, global);
}

/// Whether `pred` holds for the constants `lhs` and `rhs`, if both are.
static bool holdsStatically(arith::CmpIPredicate pred, Value lhs, Value rhs) {
  APInt x, y;
  if (!matchPattern(lhs, m_ConstantInt(&x)) ||
      !matchPattern(rhs, m_ConstantInt(&y)))
    return false;
  unsigned width = std::max(x.getBitWidth(), y.getBitWidth());
  return arith::applyCmpPredicate(pred, x.sextOrTrunc(width),
                                  y.sextOrTrunc(width));
}

void mlir::nnx::emitRuntimeCheck(OpBuilder &b, Location loc,
                                 arith::CmpIPredicate pred, Value lhs,
                                 Value rhs, StringRef message) {
  if (holdsStatically(pred, lhs, rhs))
    return;
  Value bad =
      arith::CmpIOp::create(b, loc, arith::invertPredicate(pred), lhs, rhs);
  emitRuntimeFailureIf(b, loc, bad, lhs, rhs, message);
}

void mlir::nnx::emitRuntimeFailureIf(OpBuilder &b, Location loc, Value bad,
                                     Value lhs, Value rhs, StringRef message) {
  Operation *parent = b.getInsertionBlock()->getParentOp();
  auto module = isa<ModuleOp>(parent) ? cast<ModuleOp>(parent)
                                      : parent->getParentOfType<ModuleOp>();
  declareFailFunction(module, loc);
  auto check = scf::IfOp::create(b, loc, bad, /*withElseRegion=*/false);
  check->setAttr(kCheckAttrName, b.getUnitAttr());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(check.thenBlock());
  auto toI64 = [&](Value v) -> Value {
    if (v.getType().isIndex())
      return arith::IndexCastOp::create(b, loc, b.getI64Type(), v);
    if (v.getType().getIntOrFloatBitWidth() < 64)
      return arith::ExtSIOp::create(b, loc, b.getI64Type(), v);
    return v;
  };
  func::CallOp::create(b, loc, kRuntimeFailFuncName, TypeRange(),
                       ValueRange{messageAddress(b, loc, module, message),
                                  toI64(lhs), toI64(rhs)});
}

//===----------------------------------------------------------------------===//
// The checks of nnx-lower-functional
//===----------------------------------------------------------------------===//

/// Size `d` of `v` as an index value.
static Value sizeOf(OpBuilder &b, Location loc, Value v, int64_t d) {
  return getValueOrCreateConstantIndexOp(b, loc,
                                         tensor::getMixedSize(b, loc, v, d));
}

static std::string operandName(ArrayRef<StringRef> names, unsigned i) {
  if (i < names.size())
    return names[i].str();
  return "operand " + std::to_string(i);
}

void mlir::nnx::emitLoopChecks(OpBuilder &b, linalg::LinalgOp lowered,
                               Operation *source,
                               ArrayRef<StringRef> operandNames) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(lowered);
  Location loc = lowered.getLoc();
  std::string where = describeCheckedOp(source);
  // The first operand dim that indexes each loop.
  llvm::DenseMap<unsigned, std::pair<unsigned, unsigned>> firsts;
  for (OpOperand &operand : lowered->getOpOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!type)
      continue;
    unsigned i = operand.getOperandNumber();
    AffineMap map = lowered.getMatchingIndexingMap(&operand);
    for (auto [d, expr] : llvm::enumerate(map.getResults())) {
      auto loop = dyn_cast<AffineDimExpr>(expr);
      if (!loop)
        continue;
      auto [it, inserted] =
          firsts.try_emplace(loop.getPosition(), i, static_cast<unsigned>(d));
      if (inserted)
        continue;
      auto [j, e] = it->second;
      Value other = lowered->getOperand(j);
      auto otherType = cast<RankedTensorType>(other.getType());
      if (!type.isDynamicDim(d) && !otherType.isDynamicDim(e))
        continue;
      std::string message =
          (where + ": dimension " + Twine(e) + " of the " +
           operandName(operandNames, j) + " is {0} and dimension " + Twine(d) +
           " of the " + operandName(operandNames, i) +
           " is {1}; they must be equal")
              .str();
      // One op per statement: the IR's order is not the compiler's order
      // of evaluating arguments.
      Value lhs = sizeOf(b, loc, other, e);
      Value rhs = sizeOf(b, loc, operand.get(), d);
      emitRuntimeCheck(b, loc, arith::CmpIPredicate::eq, lhs, rhs, message);
    }
  }
}

/// The product of `sizes`.
static Value product(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes) {
  Value result = arith::ConstantIndexOp::create(b, loc, 1);
  for (OpFoldResult size : sizes)
    result = arith::MulIOp::create(
        b, loc, result, getValueOrCreateConstantIndexOp(b, loc, size));
  return result;
}

static std::string formatDims(ArrayRef<int64_t> dims) {
  return "[" +
         llvm::join(
             llvm::map_range(dims, [](int64_t d) { return std::to_string(d); }),
             ", ") +
         "]";
}

void mlir::nnx::emitElementCountCheck(OpBuilder &b, Location loc,
                                      Operation *source, Value input,
                                      ArrayRef<OpFoldResult> sizes) {
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  SmallVector<OpFoldResult> inputSizes;
  for (int64_t d = 0; d < rank; ++d)
    inputSizes.push_back(tensor::getMixedSize(b, loc, input, d));
  Value given = product(b, loc, sizes);
  Value held = product(b, loc, inputSizes);
  emitRuntimeCheck(b, loc, arith::CmpIPredicate::eq, given, held,
                   describeCheckedOp(source) +
                       ": the sizes given hold {0} elements, the input {1}");
}

void mlir::nnx::emitReshapeGroupChecks(OpBuilder &b, Location loc,
                                       Operation *source,
                                       ArrayRef<OpFoldResult> longer,
                                       ArrayRef<OpFoldResult> shorter,
                                       ArrayRef<ReassociationIndices> groups,
                                       bool resultIsLonger) {
  auto isStatic = [](OpFoldResult s) {
    return getConstantIntValue(s).has_value();
  };
  StringRef longName = resultIsLonger ? "result" : "input";
  StringRef shortName = resultIsLonger ? "input" : "result";
  for (auto [d, group] : llvm::enumerate(groups)) {
    SmallVector<OpFoldResult> groupSizes;
    for (int64_t i : group)
      groupSizes.push_back(longer[i]);
    if (isStatic(shorter[d]) && llvm::all_of(groupSizes, isStatic))
      continue;
    SmallVector<int64_t> dims(group.begin(), group.end());
    Value grouped = product(b, loc, groupSizes);
    Value single = getValueOrCreateConstantIndexOp(b, loc, shorter[d]);
    emitRuntimeCheck(b, loc, arith::CmpIPredicate::eq, grouped, single,
                     (describeCheckedOp(source) + ": dimensions " +
                      formatDims(dims) + " of the " + longName +
                      " hold {0} elements, dimension " + Twine(d) + " of the " +
                      shortName +
                      " {1} (this reshape splits or merges whole dimensions)")
                         .str());
  }
}

void mlir::nnx::emitConcatChecks(OpBuilder &b, tensor::ConcatOp op) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op);
  Location loc = op.getLoc();
  std::string where = describeCheckedOp(op);
  Value first = op.getInputs().front();
  auto firstType = cast<RankedTensorType>(first.getType());
  for (auto [i, input] : llvm::enumerate(op.getInputs().drop_front())) {
    auto type = cast<RankedTensorType>(input.getType());
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (d == static_cast<int64_t>(op.getDim()) ||
          (!type.isDynamicDim(d) && !firstType.isDynamicDim(d)))
        continue;
      Value lhs = sizeOf(b, loc, first, d);
      Value rhs = sizeOf(b, loc, input, d);
      emitRuntimeCheck(b, loc, arith::CmpIPredicate::eq, lhs, rhs,
                       where + ": dimension " + std::to_string(d) +
                           " of operand 0 is {0} and of operand " +
                           std::to_string(i + 1) +
                           " {1}; all but the concatenated dimension must "
                           "be equal");
    }
  }
}

void mlir::nnx::emitSliceChecks(OpBuilder &b, OffsetSizeAndStrideOpInterface op,
                                Value source) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op);
  Location loc = op->getLoc();
  std::string where = describeCheckedOp(op);
  auto type = cast<RankedTensorType>(source.getType());
  SmallVector<OpFoldResult> offsets = op.getMixedOffsets(),
                            sizes = op.getMixedSizes(),
                            strides = op.getMixedStrides();
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!type.isDynamicDim(d) && getConstantIntValue(offsets[d]) &&
        getConstantIntValue(sizes[d]) && getConstantIntValue(strides[d]))
      continue;
    std::string dim = " in dimension " + std::to_string(d);
    Value offset = getValueOrCreateConstantIndexOp(b, loc, offsets[d]);
    Value size = getValueOrCreateConstantIndexOp(b, loc, sizes[d]);
    Value stride = getValueOrCreateConstantIndexOp(b, loc, strides[d]);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    emitRuntimeCheck(b, loc, arith::CmpIPredicate::sge, offset, zero,
                     where + ": the offset {0}" + dim + " is negative");
    emitRuntimeCheck(b, loc, arith::CmpIPredicate::sge, size, zero,
                     where + ": the size {0}" + dim + " is negative");
    // The elements the slice spans from its offset: 0, or (size - 1) *
    // stride + 1; offset + span must not pass the source's size (unsigned:
    // both are non-negative here, so the sum does not wrap).
    Value last = arith::MulIOp::create(
        b, loc, arith::SubIOp::create(b, loc, size, one), stride);
    Value isEmpty =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, size, zero);
    Value span = arith::SelectOp::create(
        b, loc, isEmpty, zero, arith::AddIOp::create(b, loc, last, one));
    Value end = arith::AddIOp::create(b, loc, offset, span);
    emitRuntimeCheck(b, loc, arith::CmpIPredicate::ule, end,
                     sizeOf(b, loc, source, d),
                     where + ": the slice" + dim +
                         " ends at {0}, past the "
                         "source's size {1}");
  }
}

void mlir::nnx::emitIndexRangeCheck(OpBuilder &b, Location loc,
                                    Operation *source, Value indices,
                                    Value bound, int64_t dim) {
  auto type = cast<RankedTensorType>(indices.getType());
  unsigned rank = type.getRank();
  Type i64 = b.getI64Type();
  SmallVector<Value> dims;
  for (unsigned d = 0; d < rank; ++d)
    dims.push_back(sizeOf(b, loc, indices, d));
  Value bound64 = arith::IndexCastOp::create(b, loc, i64, bound);
  Value zero = arith::ConstantIntOp::create(b, loc, i64, 0);
  // Two accumulators, each its own buffer.
  auto none = [&]() {
    Value init = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, i64);
    return linalg::FillOp::create(b, loc, zero, init).getResult(0);
  };
  Value position = none(), found = none();
  AffineMap scalarMap = AffineMap::get(rank, 0, {}, b.getContext());
  // The first bad element in row-major order p, encoded INT64_MAX - p (0:
  // none), and its index: a max reduction, as LayerEmitter::checkIndices.
  auto first = linalg::GenericOp::create(
      b, loc, TypeRange{position.getType(), found.getType()},
      ValueRange{indices}, ValueRange{position, found},
      ArrayRef<AffineMap>{b.getMultiDimIdentityMap(rank), scalarMap, scalarMap},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::reduction),
      [&](OpBuilder &nb, Location l, ValueRange a) {
        Value v = a[0];
        if (v.getType() != i64)
          v = arith::ExtSIOp::create(nb, l, i64, v);
        Value flat = arith::ConstantIndexOp::create(nb, l, 0);
        for (unsigned d = 0; d < rank; ++d)
          flat = arith::AddIOp::create(
              nb, l, arith::MulIOp::create(nb, l, flat, dims[d]),
              linalg::IndexOp::create(nb, l, d));
        flat = arith::IndexCastOp::create(nb, l, i64, flat);
        Value c0 = arith::ConstantIntOp::create(nb, l, i64, 0);
        Value low =
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, v, c0);
        Value high =
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, v, bound64);
        Value bad = arith::OrIOp::create(nb, l, low, high);
        Value max = arith::ConstantIntOp::create(
            nb, l, i64, std::numeric_limits<int64_t>::max());
        Value code = arith::SelectOp::create(
            nb, l, bad, arith::SubIOp::create(nb, l, max, flat), c0);
        Value isFirst =
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sgt, code, a[1]);
        Value pos = arith::SelectOp::create(nb, l, isFirst, code, a[1]);
        Value idx = arith::SelectOp::create(nb, l, isFirst, v, a[2]);
        linalg::YieldOp::create(nb, l, ValueRange{pos, idx});
      });
  Value code = tensor::ExtractOp::create(b, loc, first.getResult(0));
  Value index = tensor::ExtractOp::create(b, loc, first.getResult(1));
  Value bad =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, code, zero);
  emitRuntimeFailureIf(b, loc, bad, index, bound64,
                       describeCheckedOp(source) +
                           ": index {0} is out of bounds for dimension " +
                           std::to_string(dim) + " of the input, of size {1}");
}

/// A size as (a value, -1) or (a tensor, the dim of it): `size` seen
/// through `tensor.dim` of destination-style results (their inits' dims)
/// and of `tensor.empty` (its size operands).
static std::pair<Value, int64_t> resolveSize(Value size) {
  std::pair<Value, int64_t> key{size, -1};
  for (;;) {
    if (key.second < 0) {
      auto dim = key.first.getDefiningOp<tensor::DimOp>();
      std::optional<int64_t> d = dim ? dim.getConstantIndex() : std::nullopt;
      auto type = dim ? cast<RankedTensorType>(dim.getSource().getType())
                      : RankedTensorType();
      if (!d || *d < 0 || *d >= type.getRank() || !type.isDynamicDim(*d))
        return key;
      key = {dim.getSource(), *d};
    }
    // Through destination-style results to their inits.
    while (auto result = dyn_cast<OpResult>(key.first)) {
      auto dps = dyn_cast<DestinationStyleOpInterface>(result.getOwner());
      if (!dps || !dps.hasPureTensorSemantics())
        break;
      key.first = dps.getTiedOpOperand(result)->get();
    }
    auto empty = key.first.getDefiningOp<tensor::EmptyOp>();
    if (!empty)
      return key;
    key = {empty.getDynamicSize(key.second), -1};
  }
}

/// Whether `a` and `b` are provably the same size: one value or dim, equal
/// constants, or the same pure op (no regions) on the same sizes.
static bool isSameSize(Value a, Value b) {
  std::pair<Value, int64_t> x = resolveSize(a), y = resolveSize(b);
  if (x == y)
    return true;
  if (x.second >= 0 || y.second >= 0)
    return false;
  a = x.first;
  b = y.first;
  APInt p, q;
  if (matchPattern(a, m_ConstantInt(&p)) && matchPattern(b, m_ConstantInt(&q)))
    return p == q;
  Operation *opA = a.getDefiningOp(), *opB = b.getDefiningOp();
  if (!opA || !opB || opA->getName() != opB->getName() ||
      opA->getAttrDictionary() != opB->getAttrDictionary() ||
      opA->getNumRegions() != 0 || !isPure(opA) ||
      opA->getNumOperands() != opB->getNumOperands() ||
      cast<OpResult>(a).getResultNumber() !=
          cast<OpResult>(b).getResultNumber())
    return false;
  for (auto [u, v] : llvm::zip_equal(opA->getOperands(), opB->getOperands()))
    if (!isSameSize(u, v))
      return false;
  return true;
}

/// Erases `v`'s defining op and, in turn, its operands' when nothing else
/// uses them.
static void eraseDeadSizes(Value v) {
  SmallVector<Operation *> worklist;
  llvm::SmallPtrSet<Operation *, 8> erased;
  if (Operation *op = v.getDefiningOp())
    worklist.push_back(op);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (erased.contains(op) || !isOpTriviallyDead(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        worklist.push_back(def);
    erased.insert(op);
    op->erase();
  }
}

/// Erases the messages no check uses any more, and the declaration of
/// kRuntimeFailFuncName when nothing calls it.
static void eraseUnusedCheckSymbols(Operation *root) {
  auto module = isa<ModuleOp>(root) ? cast<ModuleOp>(root)
                                    : root->getParentOfType<ModuleOp>();
  if (!module)
    return;
  llvm::StringSet<> used;
  bool called = false;
  module.walk([&](Operation *op) {
    if (auto address = dyn_cast<LLVM::AddressOfOp>(op))
      used.insert(address.getGlobalName());
    else if (auto call = dyn_cast<func::CallOp>(op))
      called |= call.getCallee() == kRuntimeFailFuncName;
  });
  for (auto global :
       llvm::make_early_inc_range(module.getOps<LLVM::GlobalOp>()))
    if (global.getSymName().starts_with("__nnx_check_") &&
        !used.contains(global.getSymName()))
      global.erase();
  if (!called)
    if (Operation *fn = module.lookupSymbol(kRuntimeFailFuncName))
      fn->erase();
}

/// The size arithmetic (tensor.dim and arith ops) that the conditions of
/// the run-time checks under `root` read, and the checks.
static llvm::SetVector<Operation *> getCheckSlices(Operation *root) {
  llvm::SetVector<Operation *> ops;
  BackwardSliceOptions options;
  options.omitBlockArguments = true;
  // Size arithmetic only (not the tensors whose sizes it reads).
  options.filter = [](Operation *op) {
    return isa<tensor::DimOp>(op) || isa<arith::ArithDialect>(op->getDialect());
  };
  root->walk([&](scf::IfOp check) {
    if (!check->hasAttr(kCheckAttrName))
      return;
    SetVector<Operation *> slice;
    if (succeeded(getBackwardSlice(check.getCondition(), &slice, options)))
      ops.insert(slice.begin(), slice.end());
    ops.insert(check);
  });
  return ops;
}

/// Replaces each size of a result that the checks read by the size it
/// derives from (DimResolver: each op's shapes reified once, where the
/// greedy patterns below would walk back through every layer per size).
static void resolveCheckedDims(Operation *root) {
  SmallVector<Operation *> dims;
  for (Operation *op : getCheckSlices(root))
    if (isa<tensor::DimOp>(op))
      dims.push_back(op);
  llvm::DenseMap<Block *, std::unique_ptr<DimResolver>> resolvers;
  for (Operation *dim : dims) {
    std::unique_ptr<DimResolver> &resolver = resolvers[dim->getBlock()];
    if (!resolver)
      resolver = std::make_unique<DimResolver>(*dim->getBlock());
    (void)resolver->replace(dim);
  }
}

void mlir::nnx::simplifyRuntimeChecks(Operation *root) {
  resolveCheckedDims(root);
  llvm::SetVector<Operation *> ops = getCheckSlices(root);
  if (ops.empty())
    return;
  MLIRContext *ctx = root->getContext();
  // No shape-reification patterns: resolveCheckedDims did that once per
  // op; here they would walk each remaining size back through every layer
  // (quadratic in depth: 0.33 s of ResNet-152's compile, 0.03 s without).
  RewritePatternSet patterns(ctx);
  tensor::DimOp::getCanonicalizationPatterns(patterns, ctx);
  scf::IfOp::getCanonicalizationPatterns(patterns, ctx);
  arith::CmpIOp::getCanonicalizationPatterns(patterns, ctx);
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  // Best effort: what does not simplify stays a check at run time.
  (void)applyOpPatternsGreedily(ops.takeVector(), std::move(patterns), config);
  // What the patterns left as two ops computing one size (CSE's job,
  // without running CSE over the rest of the code).
  SmallVector<scf::IfOp> dead;
  root->walk([&](scf::IfOp check) {
    auto cmp = check.getCondition().getDefiningOp<arith::CmpIOp>();
    if (check->hasAttr(kCheckAttrName) && cmp &&
        cmp.getPredicate() == arith::CmpIPredicate::ne &&
        isSameSize(cmp.getLhs(), cmp.getRhs()))
      dead.push_back(check);
  });
  for (scf::IfOp check : dead) {
    Value condition = check.getCondition();
    check->erase();
    eraseDeadSizes(condition);
  }
  eraseUnusedCheckSymbols(root);
}
