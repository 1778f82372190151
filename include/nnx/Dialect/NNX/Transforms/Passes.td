//===- Passes.td - nnx structure-level passes --------------*- tablegen -*-===//
#ifndef NNX_DIALECT_NNX_TRANSFORMS_PASSES_TD
#define NNX_DIALECT_NNX_TRANSFORMS_PASSES_TD

include "nnx/Support/PassBase.td"

def NNXParamCountPass : NNX_Pass<"nnx-param-count", "::mlir::ModuleOp"> {
  let summary = "Print the parameter count per module and in total";
  let description = [{
    An analysis: prints, for every `nnx.model`, one row per module (its
    dotted path, its op and the parameters it owns, children excluded) and
    the model's total. A module reached through an alias counts once. The IR
    is not changed.

    ```
    $ nnx-opt --nnx-param-count mlp.mlir -o /dev/null
    model @mlp
      path  module          params
      0     nnx.linear          40
      1     nnx.relu             0
      2     nnx.linear          18
      total                     58
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Surgery: the five primitives of the seed's `nnx.surgery`. Each pass is also
// a C++ function (nnx/Dialect/NNX/Transforms/Surgery.h). Every pass checks
// everything first and only then edits: a refused pass leaves the IR
// byte-identical and reports an error on the offending op that names the
// boundary (op, dotted path, reason), with notes on the other ops involved.
//===----------------------------------------------------------------------===//

def NNXWidenPass : NNX_Pass<"nnx-widen", "::mlir::nnx::ModelOp"> {
  let summary = "Net2WiderNet: grow a Linear's out_features or a convolution's out_channels, function-preserving";
  let description = [{
    Grows the `out_features` of the Linear at `layer` to `width`. Units
    `n .. width-1` replicate original units chosen with `std::mt19937_64`
    seeded by `seed` (unit `rng() % n`; deterministic on every platform):
    their weight rows and bias entries are copies. The consumer (the next
    Linear) gets the matching incoming columns, and every column that now
    belongs to a replicated unit - the original one included - is divided by
    that unit's replication count, so the forward output is unchanged (in
    eval mode when dropout is configured).

    The consumer is inferred only where execution order is proven:
    - in an `nnx.sequential`, walking the following siblings over
      elementwise modules (built-in activations except softmax, dropout,
      identity) up to the next `nnx.linear`;
    - in an `nnx.feed_fwd`'s `layers`, through `activation_for(i)` /
      `dropout_for(i)`; `hidden_dims[i]` records the new width and every
      per-layer override is kept;
    - in an `nnx.conv_nn`, block `layers.i` feeds `layers.(i+1)` (through
      its activation, dropout and max pool), the last block feeds `fcs.0`
      (through the global average pool: one column per channel), a hidden
      `fcs.j` feeds `fcs.(j+1)`; `channels` / `hidden_dims` record the width.
    - for a Linear in a custom module (`nnx.module`, e.g. GPT-2's MLP or
      Llama's SwiGLU), on its forward's SSA uses: the forward's only
      `nnx.call` of the target yields the units in the last dim, and every
      use of every value holding them must be an elementwise op (`nnx.fn`
      activations and dropout, unary `math` / `arith` ops), a call of an
      elementwise leaf module, a binary `nnx.fn` op with a value broadcast
      across the units (rank 0 or last dim 1), a binary op with the units of
      a sibling Linear of the same width (SwiGLU's `silu(gate(x)) * up(x)`:
      the sibling replicates the same units, in lockstep), a `tensor.dim` of
      another dim, or the call of exactly one consumer Linear. A second use
      (another Linear, the forward's `nnx.return`), a reduction, a reshape or
      permute, a norm, a call of a custom module (whose forward the proof does
      not follow) or any other op is refused with a note at the use. The
      types of the values on the path are rewritten to the new width.

    `init=zero` (Gesmundo & Maile 2023) keeps every old consumer column as
    it is and gives the new units zero consumer columns instead of dividing
    replicated columns: the output is unchanged as well, and the old units'
    weights are untouched. The new units' rows copy the chosen units either
    way.

    A convolution (`nnx.conv1d`, `nnx.conv2d`, groups = 1) widens its
    `out_channels` the same way: replicated filters and bias entries, and
    the consumer's input channels rescaled. In an `nnx.sequential` the walk
    also passes pooling (`nnx.max_pool2d`, `nnx.avg_pool2d`,
    `nnx.adaptive_avg_pool2d`, which keep each channel apart) and one
    `nnx.flatten` of dims 1 to -1. The consumer is the next convolution
    (groups = 1; its kernel taps follow their channel), or the Linear after
    the flatten, where each channel owns a block of `in_features /
    out_channels` consecutive columns. A batch norm on the path stays a
    refused boundary, as in the seed, unless `through-batchnorm=true`: then
    each eval-mode `nnx.batch_norm` (after a convolution) copies the
    running statistics and affine entries of the channel a new channel
    replicates, which keeps the function (an nnx extension; a train-mode
    batch norm is still refused: its batch statistics change).

    Refused before anything changes: a width-dependent module on the path
    (softmax, layer_norm, rms_norm, batch_norm) or any other non-elementwise
    module; a target in another kind of container (`nnx.module`, a bare
    `nnx.module_list`) or in a container subclass with its own forward;
    hooks on the container, the target, the path or the consumer; no
    consumer; aliased modules; a target or consumer also run by an
    `nnx.call` outside the container's order; `width` not larger than
    `out_features`;
    parametrizations, prune masks, subclasses with their own forward and
    lazy layers (as target, consumer or on the path). Flags: the target's
    weight and bias keep their own `requires_grad`, the consumer keeps its
    own; both modules keep their mode.

    Before (`--nnx-widen="layer=0 width=3 seed=0"`):
    ```mlir
    nnx.sequential @net keying = positional {
      nnx.linear @"0" {weight = dense<[[1.0], [2.0]]> : tensor<2x1xf32>}
      nnx.relu @"1"
      nnx.linear @"2" {weight = dense<[[3.0, 4.0]]> : tensor<1x2xf32>}
    }
    ```
    After (unit 2 replicates unit 0, whose columns are halved):
    ```mlir
    nnx.sequential @net keying = positional {
      nnx.linear @"0" {weight = dense<[[1.0], [2.0], [1.0]]> : tensor<3x1xf32>}
      nnx.relu @"1"
      nnx.linear @"2" {weight = dense<[[1.5, 4.0, 1.5]]> : tensor<1x3xf32>}
    }
    ```
  }];
  let options = [
    Option<"layer", "layer", "std::string", "", "dotted path of the Linear or convolution to widen">,
    Option<"width", "width", "int64_t", "0", "new out_features / out_channels (larger than the old)">,
    Option<"seed", "seed", "uint64_t", "0", "seed of the unit-replication RNG">,
    Option<"throughBatchNorm", "through-batchnorm", "bool", "false",
           "let a convolution's chain pass eval-mode batch norms (beyond the seed)">,
    Option<"init", "init", "std::string", "\"copy\"",
           "new units: 'copy' (Net2Net, replicated columns rescaled) or 'zero' (their consumer columns zero, the old ones kept)">,
  ];
}

def NNXPrunePass : NNX_Pass<"nnx-prune", "::mlir::nnx::ModelOp"> {
  let summary = "Structured pruning: keep a Linear's or convolution's most important units";
  let description = [{
    Keeps the `keep` units (output features, or output channels) of the
    Linear or convolution at `layer` whose importance is largest, in their
    original order, and removes the others together with the consumer's
    matching input columns: the inverse of `nnx-widen`, on the same proven
    consumer (an `nnx.sequential`, a stock net, or a custom module's forward,
    where the units' siblings - SwiGLU's `up_proj` beside `gate_proj` - lose
    the same units). The importance of unit `j` is the product of the L2
    norms of its rows in the target and each sibling (weight row and bias
    entry) and of its columns in the consumer: a unit whose output or
    outgoing weights are zero has importance 0. Ties keep the lower index.
    `importance=<file.npy>` ranks by the user's own scores instead (one
    finite float per unit, e.g. accumulated activation statistics or
    gradients).

    With `heads=N`, `layer` is an attention module and whole heads go: the
    dim provenance of `nnx-grow-attention` finds the heads axis, and the
    query, key and value rows of the removed heads, the output projection's
    columns and per-head state (ALiBi slopes) are removed with every size
    that describes them. Under grouped-query attention a kv head goes with
    all its query heads (N must be a multiple of the group; the note names
    the `repeat_kv` expand), with one kv head query heads leave its group.
    A head's importance is the product over the projections of the L2 norm
    of its entries (or `importance=`, one float per kv head / head).

    Chain-preserving, not function-preserving: the forward still runs and
    every shape after the consumer is unchanged; train afterwards, as after
    `nnx-drop-layer`. The parameter count drops by `(n - keep)` times the
    entries per unit (weight row plus bias of the target and each sibling,
    the consumer's column block, batch-norm entries on the path).

    Refused before anything changes: everything `nnx-widen` refuses about
    the target, its path and its consumer; `keep` not in `1 .. n-1`; an
    importance file that cannot be read, is not a float array of shape
    `(n)`, or holds a non-finite entry.

    Before (`--nnx-prune="layer=0 keep=1"`):
    ```mlir
    nnx.sequential @net keying = positional {
      nnx.linear @"0" {weight = dense<[[1.0], [2.0]]> : tensor<2x1xf32>}
      nnx.relu @"1"
      nnx.linear @"2" {weight = dense<[[3.0, 4.0]]> : tensor<1x2xf32>}
    }
    ```
    After (unit 1 has importance 2 * 4 = 8, unit 0 has 1 * 3 = 3):
    ```mlir
    nnx.sequential @net keying = positional {
      nnx.linear @"0" {weight = dense<2.0> : tensor<1x1xf32>}
      nnx.relu @"1"
      nnx.linear @"2" {weight = dense<4.0> : tensor<1x1xf32>}
    }
    ```
  }];
  let options = [
    Option<"layer", "layer", "std::string", "", "dotted path of the Linear or convolution to prune">,
    Option<"keep", "keep", "int64_t", "0", "units to keep (1 .. out_features - 1)">,
    Option<"heads", "heads", "int64_t", "0", "query heads to keep, for an attention module (1 .. heads - 1)">,
    Option<"importance", "importance", "std::string", "",
           "an .npy file of one float per unit, the importance to rank by instead of the weight norms">,
  ];
}

def NNXChannelGroupsPass : NNX_Pass<"nnx-channel-groups", "::mlir::nnx::ModelOp"> {
  let summary = "Print the channel group of a convolution's or Linear's output channels";
  let description = [{
    An analysis: the dim provenance of `nnx-grow-attention`
    (`AxisAnalysis`), run over the model's top module (an exported
    `nnx.module` with a forward) and every forward, sequential and layer it
    runs, relates every dim of every value and every tensor. The output
    channels of the convolution or Linear at `layer` are one axis; the
    group is everything that carries it, proven by the data flow:
    - residual adds and the branches that meet there (ResNet's downsample);
    - batch norms' affine entries and running statistics, layer norms'
      entries (a LayerNorm2d's state);
    - depthwise and grouped convolutions (`groups x per-group` channels);
    - squeeze-excitation gates (a pooled branch multiplied back);
    - a flatten into a Linear (each channel a block of its columns);
    - concatenations (the channels at their offset in the result).

    Prints one line per tensor dim (`path.tensor dim d`, `(reads)` for a
    contraction: a Linear's or convolution's input columns), one line per
    value dim of a forward (`module:source-label dim d`), and the ops that
    normalize or reduce over the channels, and the model's outputs that
    carry them (`output #i dim d`: an edit would change what the model
    returns). The IR is not changed.

    Without `layer=`, every group of the model from one analysis: per
    convolution and Linear in the module tree's order, its listing, or
    `channel group of 'path' (op): refused: <why>` with the notes that name
    the op breaking the proof.

    Refused, naming the op and its location, where the proof breaks: an op
    the analysis does not follow touches the channels (a call of a module
    it does not know, a reshape that mixes them with a dim of another size,
    a strided slice), the channels are split into factors that no grouped
    conv or per-group norm defines (a reshape mixing them with space;
    attention heads, which `nnx-prune heads=` and `nnx-grow-attention`
    edit), or into parts whose factors are each pinned or reduced over.
    Channels split into parts (a grouped conv's
    `groups x per-group`, a GroupNorm's `view` into groups) are a group
    of the minor-most factor that nothing pins and no reduction covers:
    every part is edited the same way (a grouped conv keeps the same
    positions in every group, a GroupNorm keeps whole groups). Such a
    tensor dim prints `(outer O inner I)`: channel c is index
    `(o * n + c) * I + i`.

    ```
    $ nnx-opt --nnx-channel-groups=layer=block.conv1 m.mlir -o /dev/null
    channel group of 'block.conv1' (nnx.conv2d): 8 channels
      tensor block.conv1.weight dim 0
      tensor block.bn1.weight dim 0
      ...
      tensor block.conv2.weight dim 1 (reads)
      value block:self_conv1_0 dim 1
    ```
  }];
  let options = [
    Option<"layer", "layer", "std::string", "", "dotted path of the convolution or Linear (empty: every group)">,
  ];
}

def NNXPruneChannelsPass : NNX_Pass<"nnx-prune-channels", "::mlir::nnx::ModelOp"> {
  let summary = "Structured pruning of a channel group: every producer and consumer of the channels";
  let description = [{
    Keeps `keep` channels of the channel group of `layer` (see
    `nnx-channel-groups`) and removes the others from every member: the
    output rows of every convolution and Linear that writes them (a
    residual stream has several), the per-channel entries of every norm and
    depthwise convolution, the input columns of every consumer, custom
    modules' per-channel state, and every type and static size in the
    forwards. `in_channels`, `out_channels` and `groups` follow.

    The importance of channel `c` is the L2 norm of the group's parameters
    at `c` (weights and biases of every member, running statistics not
    included); `importance=<file.npy>` ranks by the user's scores instead
    (one finite float per channel). Ties keep the lower index.

    The pruned model computes what the original computes with the removed
    channels' producing parameters zeroed (rows, biases, norms' affine
    entries), wherever the ops between producers and consumers map 0 to 0
    (ReLU, SiLU, GELU, pooling, adds): chain-preserving, train afterwards.

    Refused before anything changes: what `nnx-channel-groups` refuses;
    `keep` not in `1 .. n-1`; a norm, mean or softmax over the channels
    (its statistics would change); a tensor read with `tensor.dim`; the
    model's input or output channels; parametrizations, hooks, prune masks
    on a member; an importance file that cannot be read, is not of shape
    `(n)` or holds a non-finite entry.

    Before (`--nnx-prune-channels="layer=block.conv1 keep=1"`): `conv1`
    writes 2 channels, `bn1` normalizes them, `conv2` reads them; after,
    each keeps the channel of larger importance.
  }];
  let options = [
    Option<"layer", "layer", "std::string", "", "dotted path of the convolution or Linear naming the group">,
    Option<"keep", "keep", "int64_t", "0", "channels to keep (1 .. n - 1)">,
    Option<"importance", "importance", "std::string", "",
           "an .npy file of one float per channel, the importance to rank by instead of the weight norms">,
  ];
}

def NNXWidenChannelsPass : NNX_Pass<"nnx-widen-channels", "::mlir::nnx::ModelOp"> {
  let summary = "Net2WiderNet on a channel group: every producer and consumer, function-preserving";
  let description = [{
    Grows the channel group of `layer` (see `nnx-channel-groups`) to
    `width` channels. Channel `j >= n` replicates channel `rng() % n` of
    `std::mt19937_64(seed)`: every per-channel entry is copied (every
    producer's output rows and biases, a residual stream's producers all
    alike, eval-mode batch norms' statistics and affine entries, depthwise
    filters, per-channel state), and every consumer's input columns of a
    replicated channel (the original included) are divided by its
    replication count, so each consumer sums what it summed before. The
    forward output is unchanged (eval mode; a train-mode batch norm's batch
    statistics of a copy are those of its original as well).

    Refused before anything changes: what `nnx-channel-groups` refuses;
    `width` not larger than the group; a norm, mean or softmax over the
    channels (layer norm over channels; a group norm's per-group factor,
    which is why its group is the groups); a matrix product of the forwards that contracts the channels
    (no weight to divide); a tensor read with `tensor.dim`; the model's
    input or output channels; parametrizations, hooks, prune masks on a
    member.
  }];
  let options = [
    Option<"layer", "layer", "std::string", "", "dotted path of the convolution or Linear naming the group">,
    Option<"width", "width", "int64_t", "0", "channels after the edit (larger than the old)">,
    Option<"seed", "seed", "uint64_t", "0", "seed of the channel-replication RNG">,
  ];
}

def NNXShardTensorParallelPass : NNX_Pass<"nnx-shard-tensor-parallel", "::mlir::nnx::ModelOp"> {
  let summary = "Megatron tensor parallelism: rank R's part of the model";
  let description = [{
    Splits the model for `ranks` processes and keeps the part that rank
    `rank` runs (every rank runs this pass with its own `rank`; the programs
    are the same, the weights differ):

    - every attention module (a custom module whose forward, or the forward
      of a Linear-free module it calls, computes `softmax(q @ k^T) @ v`)
      keeps its heads `[rank * h / ranks, (rank + 1) * h / ranks)`: the rows
      of q/k/v (fused or not), per-head state such as ALiBi slopes, and the
      output projection's columns, found by the dim provenance of
      `nnx-prune heads=`. Under GQA whole kv groups go to a rank; with one
      kv head (MQA) only the query heads split and k/v stay whole;
    - every MLP pair (a Linear and the Linear its units feed, as `nnx-widen`
      proves it: an `nnx.sequential`, a stock net, or a custom forward with
      SwiGLU's siblings) keeps the same block of units;
    - norms, embeddings, the LM head and every other Linear stay whole.

    The Linears that now read a split input (output and down projections)
    get `nnx.partial_sum = {ranks = N}`: nnx-build-forward sums their matmul
    over the ranks with `shard.all_reduce` on a 1-D `shard.grid`, then adds
    the bias once. A parameter in the weights file becomes the slice of the
    stored tensor this rank binds (`#nnx.external<"key", slices = ...>`), so
    a rank maps only its part; an inline parameter is gathered. The model
    records `nnx.tensor_parallel = {ranks = N, rank = R}`.

    Refused before anything changes: `ranks` < 2 or `rank` outside
    `0 .. ranks - 1`; a model already split; heads, kv heads (GQA) or an
    MLP's units not divisible by `ranks`; everything `nnx-prune heads=`
    refuses about an attention module (a forward the dim analysis cannot
    follow, a split dim that a reduction, a `tensor.dim` or the module's
    result reads); a probe on a split value (per-head attention
    probabilities, q/k/v, an MLP's hidden units): gathering it to rank 0
    needs an all_gather, which the lowering does not provide; a model with
    nothing to split.

    `nnx-run --tensor-parallel` under `mpirun -np N` runs this pass on every
    rank with the rank MPI gives it.
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", "2", "number of processes (>= 2)">,
    Option<"rank", "rank", "int64_t", "0", "this process's rank (0 .. ranks - 1)">,
  ];
}

def NNXGrowAttentionPass : NNX_Pass<"nnx-grow-attention", "::mlir::nnx::ModelOp"> {
  let summary = "Add attention heads or widen head dims (function-preserving)";
  let description = [{
    Grows the attention module at `layer` (a custom module such as
    `model.layers.0.self_attn`): `heads=` query heads, `kv-heads=` key/value
    heads (grouped-query attention), `head-dim=` the per-head dim of queries,
    keys and values (Gesmundo & Maile 2023: head addition, heads expansion,
    attention expansion). The module's output is unchanged.

    The proof, checked before anything changes, is a dim provenance over the
    module's forward and the forwards it calls: every static dim is a
    product of axes (`q_proj`'s 32 is `kv_heads x group x 2 x 4` once the
    `view`, `repeat_kv` and the rotary halves are seen); each op relates its
    operands' and results' axes. The one attention core
    (`softmax(q @ k^T ...) @ v`) names the heads (its scores' heads dim;
    the axis a `repeat_kv` expand creates is the group) and the head dims
    (the contraction; its rotary halves stay, the other axis grows). The
    edit appends indices to those axes; every type, reshape and expand size,
    slice offset and size, and every tensor (the projections' rows and
    columns, a module's own state such as BLOOM's ALiBi slopes or the
    rotary `inv_freq`) follows.

    Values: the output projection's new columns are zero, so new heads and
    new value coordinates add nothing; with a growing query/key dim the
    query's new rows are zero too (found by walking back from the scores'
    left operand, through the fused projection's slices), so every `q . k`
    is unchanged and the forward's constant 1/sqrt(d) scale stays right for
    the existing heads. Other new rows are drawn from a normal distribution
    with the weight's root-mean-square (`seed=`), new biases are zero,
    new state entries copy existing ones (index modulo the old size).

    Slices of different sizes of one axis (Falcon's fused projection: 4
    query heads, 1 key and 1 value head) make it a concatenation of
    segments; a segment grows in place and the later ones move. With one
    kv head broadcast by the scores matmul (multi-query attention) every
    query head is in its group. With grouped-query attention, `heads=`
    alone adds query heads to every kv group (`heads` must be a multiple of the kv heads); with `kv-heads=`
    new kv heads come with their groups. Refused before anything changes:
    a slot that is not a custom module run by one call, no or several
    attention cores, a heads ratio that is not an integer (the note names
    the `repeat_kv` expand), fewer heads or a smaller head dim
    (`nnx-prune heads=` removes heads), a head dim that is not one axis
    (after rotary halves), a dim the forward reads with `tensor.dim`
    (e.g. a scale computed from the head dim), reduces over (a norm over
    the head dim), or uses through an op the analysis does not follow, a
    dim of the
    forward's arguments, a used result whose dims change, and a changed
    layer with hooks or aliases or run by several calls.
  }];
  let options = [
    Option<"layer", "layer", "std::string", "", "dotted path of the attention module">,
    Option<"heads", "heads", "int64_t", "0", "query heads after the edit (0: keep)">,
    Option<"kvHeads", "kv-heads", "int64_t", "0", "key/value heads after the edit (0: keep)">,
    Option<"headDim", "head-dim", "int64_t", "0", "per-head dim after the edit (0: keep)">,
    Option<"seed", "seed", "uint64_t", "0", "seed of the new rows' normal draws">,
  ];
}

def NNXWidenResidualPass : NNX_Pass<"nnx-widen-residual", "::mlir::nnx::ModelOp"> {
  let summary = "Grow a transformer's residual width d_model (function-preserving)";
  let description = [{
    Grows the residual stream of an exported transformer (the model's one
    custom module) to `width` coordinates (Gesmundo & Maile 2023, hidden
    dimension expansion). The stream is the embeddings' dim, followed by the
    dim provenance of `nnx-grow-attention` through every forward: the
    blocks, their norms and projections, the final norm and the LM head
    grow together, with every type and static size.

    The new coordinates are zero in the stream: the embeddings' new columns
    and the new rows (and bias entries) of every Linear that writes the
    stream are zero. Linears that read it get new columns drawn from a
    normal distribution with the weight's root-mean-square (`seed=`); they
    multiply zeros. Each RMSNorm over the stream (`x * rsqrt(mean(x*x) +
    eps) * g`, `g` its own tensor or Gemma's `1 + weight`) is rescaled so
    that the old coordinates' normed values are unchanged: the mean over
    `d'` coordinates is `d/d'` times the old one, so eps becomes
    `eps * d/d'` and the gain `g * sqrt(d/d')` (new entries `sqrt(d/d')`).
    The logits are unchanged.

    Refused before anything changes: a model that is not one custom module
    with a forward, no embedding, embeddings of different widths, a width
    not larger than d_model, a norm over the stream that is not an RMSNorm
    (a LayerNorm's mean and variance over `d'` differ from those over `d`,
    and no rescaling of its gain and bias restores them: GPT-2, BLOOM,
    Falcon, Cohere), an RMSNorm without a gain of its own, and everything
    the dim provenance cannot follow (a `tensor.dim` of the stream, a
    non-splat constant over it, an op it does not know, a changed layer
    with hooks or aliases or run by several calls).
  }];
  let options = [
    Option<"width", "width", "int64_t", "0", "d_model after the edit">,
    Option<"seed", "seed", "uint64_t", "0", "seed of the new columns' normal draws">,
  ];
}

def NNXDeepenPass : NNX_Pass<"nnx-deepen", "::mlir::nnx::ModelOp"> {
  let summary = "Net2DeeperNet: insert an identity Linear + ReLU after a ReLU";
  let description = [{
    Inserts a Linear with `weight = I`, `bias = 0` (the width of the Linear
    feeding the site, its element type) and a ReLU right after the ReLU at
    `after`. Since `relu(I * relu(x) + 0) = relu(x)`, the forward is unchanged.
    The new modules are trainable and take the mode of the container they
    join; existing modules keep theirs.

    After a ReLU that a convolution feeds (`nnx.conv1d` / `nnx.conv2d`,
    through elementwise modules, norms and pooling), the identity is a
    convolution of the same spatial rank: `C -> C` channels, a
    `kernel-size` window (odd, default 3) whose centre tap is the identity
    and every other tap 0, "same" padding (`kernel-size / 2`), stride 1,
    dilation 1, groups 1 and bias 0. Since the padding is zero,
    `relu(conv(relu(x))) = relu(x)` at every position, borders included.
    Its key in a named sequential is `_nnx_deepen_conv_N`.

    - Named `nnx.sequential`: the new keys are `_nnx_deepen_linear_N` and
      `_nnx_deepen_relu_N` for the smallest `N >= 0` for which both are
      unused; no retained key changes.
    - Positional `nnx.sequential`: rebuilt by position, the new modules get
      the two keys after the site and later keys shift by two. Aliases and
      `nnx.call`s that named a shifted module are retargeted, so a module
      registered in several slots keeps every slot pointing at one object.
    - `nnx.feed_fwd`: `after = "<net>.layers.i"` names hidden site `i` (the
      activation after `layers.i`). The identity Linear becomes
      `layers.(i+1)` (later layers shift by one), `hidden_dims` gets one
      more entry, an explicit `activations` list gets "relu", and
      `dropout_probs` gets 0.0 at the new site; a nonzero scalar `dropout`
      is materialized into a per-layer list so every old site keeps its
      probability.
    - `nnx.conv_nn`: `after = "layers.i"` (a block: an identity conv2d of
      `kernel-size`, default the net's `kernel_size`, as block `i + 1` with
      no pool) or `"fcs.j"` (a hidden fc: an identity Linear); `channels` /
      `hidden_dims`, `kernel_sizes` (when the kernel differs), `pools` (when
      any pool is set) and the per-site lists stay aligned.

    Refused before anything changes, as "value" errors: a feed_fwd site whose
    effective `activation_for(i)` is not relu (or the output layer); a ReLU
    not fed by a Linear or convolution through elementwise or norm modules
    only (pooling only after a convolution); `kernel-size` even, negative,
    or given for a site a Linear feeds; a container
    subclass with its own forward, a container with its own parameters or
    buffers (`state`) or hooks; a hooked ReLU; a ReLU subclass with its own
    forward; a `nnx.module_list` that is not a stock feed_fwd's `layers` or
    a conv_nn's `layers` / `fcs`; any other container. A non-ReLU site in a sequential is a distinct
    "type" error: its message starts with `nnx-deepen: type error:` (the
    seed's TypeError), all others with `nnx-deepen: ` and no such prefix.

    Before (`--nnx-deepen="after=relu"`):
    ```mlir
    nnx.sequential @body keying = named {
      nnx.linear @fc {weight = dense<1.0> : tensor<8x4xf32>}
      nnx.relu @relu
      nnx.linear @head {weight = dense<1.0> : tensor<2x8xf32>}
    }
    ```
    After:
    ```mlir
    nnx.sequential @body keying = named {
      nnx.linear @fc {weight = dense<1.0> : tensor<8x4xf32>}
      nnx.relu @relu
      nnx.linear @_nnx_deepen_linear_0 {bias = dense<0.0> : tensor<8xf32>,
                                        weight = dense<[[1.0, 0.0, ...], ...]> : tensor<8x8xf32>}
      nnx.relu @_nnx_deepen_relu_0
      nnx.linear @head {weight = dense<1.0> : tensor<2x8xf32>}
    }
    ```
  }];
  let options = [
    Option<"after", "after", "std::string", "", "dotted path of the ReLU site">,
    Option<"kernelSize", "kernel-size", "int64_t", "0",
           "window of the identity convolution after a convolution site (odd; 0: 3)">,
  ];
}

def NNXInsertBlockPass : NNX_Pass<"nnx-insert-block", "::mlir::nnx::ModelOp"> {
  let summary = "Insert an identity copy of a residual block (function-preserving)";
  let description = [{
    Copies block `after` (an `nnx.module` in an `nnx.module_list`, e.g.
    `model.layers.3`, or in a positional `nnx.sequential`, e.g. ResNet's
    `layer2.1`) right after itself and zeroes the weights and biases of the
    affine layers that end its residual branches (attention's output
    projection, the MLP's down projection; a conv block's last batch norm
    or conv), so that the copy computes
    `x + 0 + 0 = x` and the model's output is unchanged (Gesmundo & Maile
    2023, layer addition). Later blocks shift by one key (`3` becomes `4`),
    the parent's forward calls the copy right after the block with the same
    other inputs (a sequential runs it by position), and every call and
    alias follows its module. The copy
    keeps the block's trained norms and input projections, is trainable and
    takes the list's mode.

    The proof, checked before anything changes: the branches are found by
    walking back from the forward's first result through the residual
    `nnx.fn.add`s (entering custom modules' forwards, e.g. BLOOM's
    `dropout_add`); each branch is followed through dropout, reshapes and
    products (a zero factor keeps it zero) and ReLUs to a Linear,
    convolution or affine norm (batch or layer norm with a weight) of the
    block. Then
    the forward is evaluated on the lattice {Zero, Input, Other} with those
    Linears zero - sums with zero keep the input, products and reshapes of
    zero stay zero, a bias-free norm (RMSNorm, Gemma-2's post-norms) of zero
    is zero, a ReLU of Input is Input when the block returns a ReLU's
    output (the copy's input is that output: never negative) - and must
    return Input.

    Refused: a slot that is not a custom module in a positional
    `nnx.module_list` or `nnx.sequential` (a stock net's layers grow with
    `nnx-deepen`); a block or list with hooks; a list's block run by no
    call or by several; a block whose first result does not have its first
    input's type; a branch that ends in no Linear, convolution or affine
    norm of the block; a forward the lattice does not prove the
    identity (e.g. a LayerNorm with a bias after a branch).
  }];
  let options = [
    Option<"after", "after", "std::string", "", "dotted path of the block to copy (e.g. model.layers.3)">,
  ];
}

def NNXDropLayerPass : NNX_Pass<"nnx-drop-layer", "::mlir::nnx::ModelOp"> {
  let summary = "Replace a module by identity (chain-preserving)";
  let description = [{
    Replaces the module registered at `layer` by an `nnx.identity` under the
    same key and in the replaced module's mode. This changes the function
    (unless the module already was the identity on its inputs) but keeps
    the chain: dotted lookup, downstream shapes and the forward still work.

    In an `nnx.feed_fwd`, `layers.i` becomes `nnx.identity @"i"` inside the
    `layers` list; keys and `hidden_dims` stay as they were, and the
    feed_fwd verifier accepts an identity in slot `i` when that slot's
    params in and out sizes are equal. The forward still applies
    `activation_for(i)` / `dropout_for(i)` after a dropped hidden slot. A
    conv_nn's block or fc is dropped the same way.

    Refused before anything changes: a module whose output feature size
    differs from its input's (or that takes integer ids), which would break
    the chain; a module that is, or contains, a layer changing its input's
    spatial size or rank (a convolution or pooling that is not stride 1
    with "same" padding, an adaptive pool, a flatten); a `nnx.module_list` or `nnx.module_dict` (no forward of its
    own); a module
    registered under several paths (the other slot would dangle; drop the
    alias slot instead, which leaves the module in place); a module other
    aliases or `nnx.call`s reach into; a slot called with types an identity
    cannot produce.

    With `remove=true`, a block of a plain positional `nnx.module_list`
    (a transformer's `layers.N`) is taken out instead: its only call leaves
    the parent's forward (its first result replaced by its first input, so
    the residual stream skips it), the later blocks shift one key down (the
    seed's positional rule: `layers.3` becomes `layers.2`) and every call
    and alias follows its module. Refused as well: a slot that is not a
    block of a plain list, a block run by no call or several, one whose
    first result does not have its first input's type, and one whose other
    results are used.

    Before (`--nnx-drop-layer="layer=1"`):
    ```mlir
    nnx.sequential @net keying = positional {
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
      nnx.linear @"1" {weight = dense<1.0> : tensor<8x8xf32>, train}
      nnx.linear @"2" {weight = dense<1.0> : tensor<2x8xf32>}
    }
    ```
    After:
    ```mlir
    nnx.sequential @net keying = positional {
      nnx.linear @"0" {weight = dense<1.0> : tensor<8x4xf32>}
      nnx.identity @"1" {train}
      nnx.linear @"2" {weight = dense<1.0> : tensor<2x8xf32>}
    }
    ```
  }];
  let options = [
    Option<"layer", "layer", "std::string", "", "dotted path of the module to drop">,
    Option<"remove", "remove", "bool", "false",
           "take a block out of its nnx.module_list (later keys shift down, the chain skips its call) instead of an identity">,
  ];
}

def NNXLowRankPass : NNX_Pass<"nnx-low-rank", "::mlir::nnx::ModelOp"> {
  let summary = "SVD-truncate a Linear or convolution into a two-layer sequential";
  let description = [{
    Replaces the Linear `W` (out x in) at `layer` by
    `nnx.sequential keying = positional` under the same key: `@"0"` is
    in -> `rank` without bias, `@"1"` is `rank` -> out with the original bias.
    With the SVD `W = U S V^T` (Eigen's BDCSVD, in double),
    `0.weight = sqrt(S_k) V_k^T` and `1.weight = U_k sqrt(S_k)`. Exact at
    `rank = min(out, in)`; below it the Frobenius error equals the L2 norm
    of the discarded singular values (Eckart-Young).

    A convolution (`nnx.conv1d`, `nnx.conv2d`, groups = 1) is factorized
    over channels and space: its weight, seen as the `C_out x (C_in * taps)`
    matrix, is truncated the same way, and the sequential holds `@"0"`, a
    `C_in -> rank` convolution with the original window (kernel, stride,
    padding, dilation) and no bias, then `@"1"`, a `rank -> C_out` 1x1
    convolution with the original bias. Exact at `rank = min(C_out, C_in *
    taps)`, Eckart-Young below it.

    Flags: both weights take the source weight's `requires_grad`, only
    `1.bias` takes the source bias's; the sequential and both layers take
    the source's mode.

    Refused before anything changes: `rank` outside `1 .. min(out, in)`; a
    grouped convolution (groups > 1, depthwise included);
    parametrizations, prune masks, hooks, a subclass with its own forward,
    a lazy layer; an aliased Linear; a layer of a stock net (a feed_fwd's
    `layers`, a conv_nn's blocks and fcs: the params cannot describe a
    factorization: use a recipe).

    Before (`--nnx-low-rank="layer=fc rank=1"`):
    ```mlir
    nnx.linear @fc {weight = dense<[[3.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf32>,
                    bias = dense<0.5> : tensor<2xf32>}
    ```
    After:
    ```mlir
    nnx.sequential @fc keying = positional {
      nnx.linear @"0" {weight = dense<[[1.73205078, 0.0]]> : tensor<1x2xf32>}
      nnx.linear @"1" {bias = dense<5.000000e-01> : tensor<2xf32>,
                       weight = dense<[[1.73205078], [0.0]]> : tensor<2x1xf32>}
    }
    ```
  }];
  let options = [
    Option<"layer", "layer", "std::string", "", "dotted path of the Linear or convolution">,
    Option<"rank", "rank", "int64_t", "0", "kept rank, 1 <= rank <= min(out, in)">,
  ];
}

def NNXExpandEmbeddingPass : NNX_Pass<"nnx-expand-embedding", "::mlir::nnx::ModelOp"> {
  let summary = "Grow an embedding table, keeping the original rows";
  let description = [{
    Grows the `nnx.embedding` at `layer` to `num` rows. The original rows
    are bit-identical, so every id below the old size looks up the same
    vector. New rows are zeros (`init=zeros`) or the mean of the original
    rows (`init=copy_mean`). `frozen_rows` records the mask (true for
    original rows). The table keeps its `requires_grad` and mode; a negative
    `padding_idx` is rewritten to the same (non-negative) row. The edit is
    in place, so aliases of the table see the new one.

    Refused before anything changes: `num` smaller than the table;
    an unknown `init`; parametrizations, prune masks, hooks, a subclass
    with its own forward.

    Before (`--nnx-expand-embedding="layer=embed num=3 init=copy_mean"`):
    ```mlir
    nnx.embedding @embed {weight = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>}
    ```
    After:
    ```mlir
    nnx.embedding @embed {frozen_rows = array<i1: true, true, false>,
        weight = dense<[[1.0, 2.0], [3.0, 4.0], [2.0, 3.0]]> : tensor<3x2xf32>}
    ```
  }];
  let options = [
    Option<"layer", "layer", "std::string", "", "dotted path of the Embedding">,
    Option<"num", "num", "int64_t", "0", "new num_embeddings (not smaller)">,
    Option<"init", "init", "std::string", "\"zeros\"", "new rows: zeros | copy_mean">,
  ];
}

//===----------------------------------------------------------------------===//
// Weights: where a model's tensors are stored (nnx/Dialect/NNX/IR/Weights.h).
// Both passes read everything first and only then write and edit: a refused
// pass leaves the IR unchanged and writes no file.
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Recipes: surgery recorded as data (the seed's section 8), so that a model's
// weights plus its base descriptor plus its recipe rebuild it. The C++ entry
// points are in nnx/Dialect/NNX/Transforms/Recipes.h; docs/Recipes.md shows
// the workflow.
//===----------------------------------------------------------------------===//

def NNXRecordBasePass : NNX_Pass<"nnx-record-base", "::mlir::nnx::ModelOp"> {
  let summary = "Record a model's structure as its base descriptor";
  let description = [{
    Sets the model's `nnx.base` to a `#nnx.base`: the root module's key and every
    module of the tree in pre-order, each with its attributes and its
    tensors' types (no weights). Recipes need it: it is what
    `nnx-materialize-recipe` (fresh) and `nnx-rebuild` build from, and what
    `nnx-validate-recipe` compares the live tree against.

    Refused, naming each module: a model that already has a base; modules a
    rebuild from a descriptor would drop (forward hooks, parametrizations,
    unbaked prune masks, subclasses with their own forward, an `nnx.module`
    without a class). Use the surgery passes directly on such models.

    ```mlir
    nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.base = #nnx.base<root = "net",
        modules = [#nnx.module_desc<path = "", kind = "nnx.sequential", attributes = {keying = 1 : i32}>,
                   #nnx.module_desc<path = "fc", kind = "nnx.linear", attributes = {weight = tensor<8x4xf32>}>]>} {
    ```
  }];
}

def NNXValidateRecipePass : NNX_Pass<"nnx-validate-recipe", "::mlir::nnx::ModelOp"> {
  let summary = "Check a model's recipe; every problem, nothing mutated";
  let description = [{
    Checks the pending operations of the model's `#nnx.recipe` (those after
    `materialized`) exactly as `nnx-materialize-recipe` would, and reports
    every problem in one failure, one error per problem naming the
    operation's index and target:

    - unknown operation id or version; malformed options (`lora`: `r` a
      positive integer, `alpha` a finite float; `low_rank`: `rank`;
      unknown option names);
    - a target that is not a string, has glob characters `*?[]` or an empty
      path segment; an operation without targets;
    - a missing target; a target that is not exactly an `nnx.linear` (a
      subclass, another kind); an uninitialised lazy Linear; a layer of a
      feed_fwd or conv_nn; a target registered under more than one name;
    - two targets of one operation that are the same or nested; a target
      inside a subtree another operation (or an earlier, materialized one)
      transforms;
    - a rank above min(in, out); a target whose weight type differs from
      the shape the operation recorded (a replay onto a resized target).

    In place, it also refuses a model whose tree differs from base
    descriptor + recorded operations (unrecorded surgery: an added, resized
    or bias-changed layer), one error per differing module. A `fresh`
    recipe is validated against the base the descriptor builds. A model
    without a base descriptor is refused (use the surgery passes directly).
  }];
}

def NNXMaterializeRecipePass
    : NNX_Pass<"nnx-materialize-recipe", "::mlir::ModuleOp"> {
  let summary = "Apply a model's pending recipe operations and record them";
  let description = [{
    For every `nnx.model` with a recipe: validates it (as
    `nnx-validate-recipe`), then applies the pending operations in order and
    records them (each operation's target weight types in `shapes`,
    `materialized` = the number of operations). All or nothing: a refused
    recipe leaves the IR byte-identical.

    - `lora(targets, r, alpha)` replaces each target Linear by an
      `nnx.lora`: the base weight and bias frozen (`requires_grad = false`),
      `lora_A` (r x in) drawn uniformly in +-1/sqrt(in) from
      `std::mt19937_64(seed)`, `lora_B` (out x r) zero, so the function is
      unchanged.
    - `low_rank(targets, rank)` is `nnx-low-rank`'s SVD factorization.

    `in_place` transforms the model itself. `fresh` leaves the model
    untouched and adds a model `@<name>_fresh` after it: the base built from
    the descriptor with seeded random tensors, transformed by every
    operation of the recipe.

    Before (`--nnx-materialize-recipe`):
    ```mlir
    nnx.model @m inputs(tensor<?x2xf32>) attributes {nnx.base = ..., nnx.recipe = #nnx.recipe<
        materialization = in_place, materialized = 0, operations = [#nnx.recipe_op<
          id = "lora", version = 1, targets = ["fc"], config = {alpha = 2.0 : f64, r = 1 : i64}>]>} {
      nnx.linear @fc {weight = dense<1.0> : tensor<3x2xf32>}
    }
    ```
    After:
    ```mlir
    nnx.model @m inputs(tensor<?x2xf32>) attributes {nnx.base = ..., nnx.recipe = #nnx.recipe<
        materialization = in_place, materialized = 1, operations = [#nnx.recipe_op<
          id = "lora", version = 1, targets = ["fc"], config = {alpha = 2.0 : f64, r = 1 : i64},
          shapes = [tensor<3x2xf32>]>]>} {
      nnx.lora @fc {alpha = 2.0 : f64, lora_A = dense<[[...]]> : tensor<1x2xf32>,
                    lora_B = dense<0.0> : tensor<3x1xf32>, requires_grad = {weight = false},
                    weight = dense<1.0> : tensor<3x2xf32>}
    }
    ```
  }];
  let options = [
    Option<"seed", "seed", "uint64_t", "0",
           "seed of the LoRA adapters' and the fresh base's random tensors">,
  ];
}

def NNXRebuildPass : NNX_Pass<"nnx-rebuild", "::mlir::nnx::ModelOp"> {
  let summary = "Rebuild a model from base descriptor + recipe, then load its tensors";
  let description = [{
    Builds the base tree from the model's `#nnx.base`, replays the recorded
    recipe operations as shapes only (LoRA wrappers; the two Linears of a
    low-rank factorization in their recorded shapes: SVD is never rerun),
    then loads the model's own tensors into it (`dense_resource` blobs or
    `#nnx.external` tensors of its weights file, as they are) and replaces
    the tree with the rebuilt one. The rebuilt model's ordered keys, tensor
    types, `requires_grad` flags and outputs equal the saved model's.

    Refused before any tensor is loaded: a model without a base descriptor;
    an unknown operation or version, malformed recorded options, or a
    recorded target the replay does not find as a Linear of the recorded
    shape (naming the operation's index); and a saved tree that base +
    recorded recipe does not explain (weights transformed without their
    recipe), one error per differing module.
  }];
}

def NNXLoraMergePass : NNX_Pass<"nnx-lora-merge", "::mlir::nnx::ModelOp"> {
  let summary = "Fold LoRA adapters into their base weights for inference";
  let description = [{
    For the `nnx.lora` at `layer` (every one when empty): `weight` becomes
    `W + (alpha / r) * B A`, computed in double precision from the stored
    values and rounded once to the weight's element type, and the layer is
    marked `merged` (its forward is then the plain Linear's). Refused: a
    layer that is already merged, a path that is not an `nnx.lora`.
  }];
  let options = [
    Option<"layer", "layer", "std::string", "",
           "dotted path of one nnx.lora (default: every one)">,
  ];
}

def NNXLoraUnmergePass : NNX_Pass<"nnx-lora-unmerge", "::mlir::nnx::ModelOp"> {
  let summary = "Take merged LoRA adapters out of their base weights again";
  let description = [{
    Undoes `nnx-lora-merge` up to rounding: `weight` becomes
    `W - (alpha / r) * B A` (double precision, rounded once) and `merged` is
    removed. It is approximate, not an exact inverse: the merge rounded
    `W + s B A` to the weight's element type, so unmerging computes
    `round(round(W + s B A) - s B A)`, which differs from `W` by at most one
    rounding of that type wherever `W + s B A` was not representable (a
    3-Linear f32 MLP: 42 of 140 entries, at most 4.8e-8). Keep the unmerged
    model when you need the base weights bit for bit. Refused: a layer that
    is not merged, a path that is not an `nnx.lora`.
  }];
  let options = [
    Option<"layer", "layer", "std::string", "",
           "dotted path of one nnx.lora (default: every one)">,
  ];
}

def NNXExternalizeWeightsPass
    : NNX_Pass<"nnx-externalize-weights", "::mlir::ModuleOp"> {
  let summary = "Move a model's tensors into a safetensors file";
  let description = [{
    For every `nnx.model`, every tensor of every module (a leaf's parameters
    and buffers, a container's `state` entries) stored inline (`dense`,
    `dense_resource`) with at least `min-bytes` bytes becomes
    `#nnx.external<"key">` of the same type, and its bytes, exactly as
    stored, go to the safetensors file `file`. Tensors that already are
    `#nnx.external` are copied from the model's old weights file into the
    new one, whatever their size, so the model then references `file` only;
    its `weights` attribute is set to `file` as given.

    Keys are dotted names, as `nnx-build-forward` names parameters: the
    module's path from the root, `.`, the tensor's name (`layers.0.weight`; the root
    module's tensors by name alone). When the IR holds several models, each
    key is prefixed with `<model>/` (`mlp/layers.0.weight`) and every model
    names the same file. Tied tensors stay tied: tensors of one model that
    share a `dense_resource` blob or an external key share the first one's
    key, stored once (equal `dense` values are not tied: MLIR uniques them
    by value). Tensors are written in module pre-order, a leaf's parameters
    then buffers, with the metadata `{"format": "pt"}`. Booleans are stored
    one byte each (safetensors `BOOL`).

    `file` is written relative to the current directory, while a relative
    `weights` attribute is read relative to the IR file: run from the
    directory the IR is written to, or give an absolute path. The file is
    written through a temporary beside it and renamed into place after all
    tensors were read, so `file` may be the model's current weights file.

    Refused, before anything is written or changed: no `file`; a tensor of
    an element type safetensors cannot store; a tensor whose bytes cannot
    be read (an elided `dense_resource`, an external tensor missing from
    the old file or of another dtype or shape); a file that cannot be
    written.

    Before (`--nnx-externalize-weights="file=mlp.safetensors"`):
    ```mlir
    nnx.model @mlp inputs(tensor<?x4xf32>) {
      nnx.sequential @body keying = named {
        nnx.linear @fc {weight = dense<0.5> : tensor<8x4xf32>,
                        bias = dense_resource<fc_bias> : tensor<8xf32>}
        nnx.relu @act
      }
    }
    ```
    After (`mlp.safetensors` holds `fc.weight` and `fc.bias`):
    ```mlir
    nnx.model @mlp inputs(tensor<?x4xf32>) attributes {weights = "mlp.safetensors"} {
      nnx.sequential @body keying = named {
        nnx.linear @fc {bias = #nnx.external<"fc.bias"> : tensor<8xf32>,
                        weight = #nnx.external<"fc.weight"> : tensor<8x4xf32>}
        nnx.relu @act
      }
    }
    ```
  }];
  let options = [
    Option<"file", "file", "std::string", "",
           "the safetensors file to write (required)">,
    Option<"minBytes", "min-bytes", "uint64_t", "0",
           "move only inline tensors of at least this many bytes">,
  ];
}

def NNXInternalizeWeightsPass
    : NNX_Pass<"nnx-internalize-weights", "::mlir::ModuleOp"> {
  let summary = "Bring a model's external tensors back into the IR";
  let description = [{
    The inverse of `nnx-externalize-weights`: every `#nnx.external<"key">`
    tensor of every `nnx.model` becomes a `dense_resource` blob holding the
    bytes of `key` in the model's weights file (its `weights` attribute,
    a relative path taken relative to the IR file), and the `weights`
    attribute is removed. The blob is named after the key (MLIR makes the
    name unique if it is taken), aligned to the element size, and shared by
    the tensors of one model that name the same key. The bytes are copied
    exactly, so externalizing again writes the same file.

    Refused, before anything changes, with an error on the module that
    names the tensor, the key and the file: a model with external tensors
    but no `weights`; a weights file that is missing or malformed; a key
    that is not in the file; a tensor of the file whose dtype or shape
    differs from the attribute's type.

    Before (`mlp.safetensors` holds `fc.weight`):
    ```mlir
    nnx.model @mlp inputs(tensor<?x4xf32>) attributes {weights = "mlp.safetensors"} {
      nnx.linear @fc {weight = #nnx.external<"fc.weight"> : tensor<8x4xf32>}
    }
    ```
    After:
    ```mlir
    nnx.model @mlp inputs(tensor<?x4xf32>) {
      nnx.linear @fc {weight = dense_resource<"fc.weight"> : tensor<8x4xf32>}
    }
    {-#
      dialect_resources: {
        builtin: {
          "fc.weight": "0x04000000..."
        }
      }
    #-}
    ```
  }];
}

def NNXConvertFloatPass : NNX_Pass<"nnx-convert-float", "::mlir::ModuleOp"> {
  let summary = "Change a model's floating-point type, as model.to(dtype)";
  let description = [{
    Every `from` element type in the module becomes `to`: the models' input
    types, the tensors of every layer and module (`state` included), the
    types of forward regions, their constants and scalar attributes, and
    built forwards alike. Tensor values are converted element by element,
    rounded to nearest even (bf16 to f16 is exact within f16's range; a
    value beyond it becomes infinity, as `Tensor.to` makes it). Values the
    forward computes in other types stay: a bf16 model's explicit
    `x.to(torch.float32)` (Llama's RMSNorm) is an f16 model's after
    `from=bf16 to=f16`, as `model.half()` makes it.

    Refused, before anything changes: `from` equal to `to`, a type that is
    not f16, bf16, f32 or f64, and a `from` tensor that lives in the
    weights file (#nnx.external: run nnx-internalize-weights first, or
    convert the checkpoint).

    ```mlir
    nnx.model @mlp inputs(tensor<?x4xbf16>) {
      nnx.linear @fc {weight = dense<5.000000e-01> : tensor<8x4xbf16>}
    }
    ```
    with `--nnx-convert-float="from=bf16 to=f16"`:
    ```mlir
    nnx.model @mlp inputs(tensor<?x4xf16>) {
      nnx.linear @fc {weight = dense<5.000000e-01> : tensor<8x4xf16>}
    }
    ```
  }];
  let options = [
    Option<"from", "from", "std::string", /*default=*/"\"bf16\"",
           "The element type to replace: f16, bf16, f32 or f64">,
    Option<"to", "to", "std::string", /*default=*/"\"f16\"",
           "The element type it becomes: f16, bf16, f32 or f64">
  ];
}

#endif // NNX_DIALECT_NNX_TRANSFORMS_PASSES_TD
