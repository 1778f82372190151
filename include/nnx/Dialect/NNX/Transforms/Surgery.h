//===- Surgery.h - the five surgery primitives as C++ functions -*- C++ -*-===//
//
// The entry points behind nnx-widen, nnx-deepen, nnx-drop-layer, nnx-low-rank
// and nnx-expand-embedding, callable without the pass manager. Each checks
// everything first and only then edits `model` in place: on failure it has
// emitted an error diagnostic on the offending op (naming op, dotted path and
// reason) and left the IR untouched.
//
//===----------------------------------------------------------------------===//
#ifndef NNX_DIALECT_NNX_TRANSFORMS_SURGERY_H
#define NNX_DIALECT_NNX_TRANSFORMS_SURGERY_H

#include "nnx/Dialect/NNX/IR/NNXOps.h"

namespace mlir::nnx {

/// How widen initializes the new units.
enum class WidenInit {
  /// Net2Net: new units copy chosen old ones, the consumer's columns of every
  /// replicated unit are divided by its replication count.
  Copy,
  /// Gesmundo & Maile: new units copy chosen old ones, their consumer
  /// columns are zero and the old columns are kept.
  Zero,
};

/// Parses "copy" / "zero".
std::optional<WidenInit> parseWidenInit(llvm::StringRef name);

/// Net2WiderNet: grows the Linear (out_features) or convolution
/// (out_channels) at `layer` to `width` units, replicating units chosen by
/// std::mt19937_64(`seed`), and rescales the consumer's incoming columns (or,
/// with WidenInit::Zero, zeroes the new ones) so the forward output is
/// unchanged. `throughBatchNorm` lets a convolution's chain pass eval-mode
/// batch norms, whose statistics follow the units. A Linear in a custom
/// module is proven on its forward (findForwardConsumer), siblings included.
LogicalResult widen(ModelOp model, llvm::StringRef layer, int64_t width,
                    uint64_t seed = 0, bool throughBatchNorm = false,
                    WidenInit init = WidenInit::Copy);

/// Structured pruning: keeps the `keep` units of the Linear or convolution
/// at `layer` with the largest importance (the product of the L2 norms of
/// each unit's rows in the target and its siblings and of its consumer
/// columns), in their order, and the consumer's matching columns. Found as
/// widen finds its consumer; `importanceFile`, if set, is an .npy of one
/// float per unit that replaces the norms. Chain-preserving, not
/// function-preserving.
LogicalResult prune(ModelOp model, llvm::StringRef layer, int64_t keep,
                    llvm::StringRef importanceFile = "");

/// Head pruning: keeps `heads` query heads of the attention module at
/// `layer` - whole kv groups under grouped-query attention - ranked by the
/// L2 norms of their projections' entries or by `importanceFile` (one float
/// per kv head, or per head without GQA). Chain-preserving.
LogicalResult pruneHeads(ModelOp model, llvm::StringRef layer, int64_t heads,
                         llvm::StringRef importanceFile = "");

/// Grows the attention module at `layer`: `heads` query heads, `kvHeads`
/// kv heads, `headDim` per-head dim (each 0: keep), function-preserving
/// (the output projection's new columns and the query's new head-dim rows
/// are zero; other new rows are normal draws from `seed`).
LogicalResult growAttention(ModelOp model, llvm::StringRef layer, int64_t heads,
                            int64_t kvHeads, int64_t headDim,
                            uint64_t seed = 0);

/// Megatron-style tensor parallelism, rank `rank` of `ranks`: every
/// attention module keeps heads [rank * h / ranks, (rank + 1) * h / ranks)
/// (whole kv groups under GQA; with one kv head, k and v stay whole) and
/// every MLP pair (a Linear and the Linear its units feed) keeps the same
/// block of units, as nnx-prune edits them; norms, embeddings and other
/// Linears stay whole. The Linears that now read a split input (output and
/// down projections) get `nnx.partial_sum = {ranks = N}`: their matmul is
/// summed over the ranks before the bias is added. A weight of the file
/// becomes the slice of it this rank binds (#nnx.external slices); an
/// inline one is gathered. The model records `nnx.tensor_parallel =
/// {ranks, rank}`. Refused before anything changes: heads or kv heads, or
/// an MLP's units, not divisible by `ranks`, a split value used by anything
/// but its consumer, a forward the dim analysis cannot follow.
LogicalResult shardTensorParallel(ModelOp model, int64_t ranks, int64_t rank);

/// Keeps `keep` channels of the channel group of the convolution or Linear
/// at `layer` (every producer, norm and consumer the forward ties to its
/// output channels), ranked by the L2 norm of the group's parameters or by
/// `importanceFile`. Chain-preserving.
LogicalResult pruneChannels(ModelOp model, llvm::StringRef layer, int64_t keep,
                            llvm::StringRef importanceFile = "");

/// Net2WiderNet on the channel group of `layer`: `width` channels, copies
/// of chosen ones, consumers' columns divided. Function-preserving.
LogicalResult widenChannels(ModelOp model, llvm::StringRef layer, int64_t width,
                            uint64_t seed = 0);

/// Grows the residual stream of the model's transformer to `width`:
/// embeddings, projections and RMSNorms (eps and gains rescaled), with the
/// new coordinates zero in the stream. Refuses LayerNorms over the stream.
LogicalResult widenResidual(ModelOp model, int64_t width, uint64_t seed = 0);

/// Net2DeeperNet: inserts an identity-initialized Linear and a ReLU after the
/// ReLU site at `after` (a sequential's ReLU, or a feed_fwd's `layers.i`).
/// After a ReLU a convolution feeds, the identity is a convolution whose
/// centre tap is 1, with a `kernelSize` window (odd; 0: 3).
LogicalResult deepen(ModelOp model, llvm::StringRef after,
                     int64_t kernelSize = 0);

/// Inserts after block `after` of an `nnx.module_list` a copy of it whose
/// residual branches end in zero Linears (attention's and the MLP's output
/// projections), so that it returns its input: `x + 0 + 0 = x`. Later
/// blocks shift by one key; the parent's forward calls the copy right after
/// the block. The copy is trainable and in the list's mode.
LogicalResult insertBlock(ModelOp model, llvm::StringRef after);

/// Replaces the module at `layer` by an `nnx.identity` (chain-preserving);
/// with `remove`, takes a block out of its `nnx.module_list` instead, the
/// later blocks one key down and the chain skipping its call.
LogicalResult dropLayer(ModelOp model, llvm::StringRef layer,
                        bool remove = false);

/// Replaces the Linear at `layer` by its rank-`rank` SVD factorization, a
/// positional sequential of two Linears.
LogicalResult lowRank(ModelOp model, llvm::StringRef layer, int64_t rank);

/// How expandEmbedding initializes the new rows.
enum class EmbeddingInit { Zeros, CopyMean };

/// Parses "zeros" / "copy_mean".
std::optional<EmbeddingInit> parseEmbeddingInit(llvm::StringRef name);

/// Grows the embedding table at `layer` to `num` rows, keeping the original
/// rows bit-identical and recording `frozen_rows`.
LogicalResult expandEmbedding(ModelOp model, llvm::StringRef layer, int64_t num,
                              EmbeddingInit init = EmbeddingInit::Zeros);

} // namespace mlir::nnx

#endif // NNX_DIALECT_NNX_TRANSFORMS_SURGERY_H
