"""The zoo models that cannot pass yet: name -> (the stage it fails at,
why). test_zoo.py xfails a listed model at that stage only: it fails if
the model fails elsewhere, and fails if it passes (delete its entry).
Stages: zoo.check.STAGES, and 'compile-time' (slower than
test_zoo.COMPILE_LIMIT seconds).

Reasons name the missing piece (the op, the module, the check), as the
survey of docs/Python.md ("The model zoo") found it."""

import collections

Expected = collections.namedtuple("Expected", "stage reason")

# The reasons, one per missing piece.
def edge(nnx_torch, torch_f64, nnx_f64):
    """The criterion's edge: PyTorch within the contract of float64, so the
    contract against PyTorch applies, though nnx is about as near float64
    (two float32 runs each ~1 contract from float64 may be 2 apart)."""
    nearer = ("nearer than PyTorch" if nnx_f64 <= torch_f64 else
              f"{nnx_f64 / torch_f64:.2f}x PyTorch's distance")
    return (f"the criterion's edge: PyTorch's float32 is {torch_f64} "
            f"contracts from float64, so the contract against PyTorch "
            f"applies; nnx is {nnx_f64} from float64 ({nearer}) "
            f"but {nnx_torch} from PyTorch")


def less_accurate(nnx, torch):
    return (f"less accurate than PyTorch: {nnx} contracts from float64 "
            f"against PyTorch's {torch} (at most 1.5x allowed)")


EXPECTED = {
    # Measured by the zoo tests of `make test-zoo` on the 2-core AMD EPYC
    # VM, 2026-12-06 at d58a2a6 (the first failing batch's figures). The
    # edge is the data's, not nnx's: PyTorch's own float32 is 0.76-0.99
    # contracts from float64 on these random nets, and more calibration
    # samples (512 per channel) leave it at 0.65-1.06.
    # swin_v2's cosine attention, scaled by up to 100, makes batch 1 an
    # edge case (swin_v2_b passes).
    "swin_v2_t": Expected("compare", edge(1.15, 0.84, 0.67)),
    "swin_v2_s": Expected("compare", edge(1.72, 0.99, 1.12)),
    "densenet121": Expected("compare", edge(1.11, 0.99, 0.69)),
    "efficientnet_v2_s": Expected("compare", edge(1.04, 0.76, 0.56)),
    "resnet18": Expected("compare", edge(1.18, 0.97, 0.47)),
    # efficientnet_v2_l's random net is chaotic at 32 pixels: on batch 1's
    # image its logits reach 1.8e5 and PyTorch's own float32 is 2e7
    # contracts from float64 (float32 carries no digits there); batch 2
    # passes the 1.5x rule (nnx 73, PyTorch 62 contracts).
    "efficientnet_v2_l": Expected("compare", less_accurate("4.8e7",
                                                           "1.96e7")),
    # Measured on an AMD EPYC Zen 5 VM (family 26), 2026-12-07 at 1adfe4b's
    # code (it passes on Zen 4: the CI of 2026-12-06). ShuffleNetV2 at 32
    # pixels amplifies rounding ~50x between its stem and its logits; each
    # block alone, from float64's input, nnx is as near float64 as PyTorch
    # (0.04-0.09 contracts both), so where the two end is a draw: batch 2
    # passes (nnx 2.18, PyTorch 1.85). Fusing every a * b + c into an FMA
    # (LLVM's AllowFPOpFusion) brings batch 1 to 1.15, but makes a probed
    # model's numbers differ from the plain one's and moves mobilenet_v2
    # 1.34 contracts from PyTorch: not taken.
    "shufflenet_v2_x1_0": Expected("compare", less_accurate("1.80", "1.08")),
    # The same Zen 5 VM: batch 2 at the edge (batch 1 passes: 0.84 from
    # PyTorch), nnx 1.48x PyTorch's distance from float64, which the 1.5x
    # rule would pass.
    "mobilenet_v2": Expected("compare", edge(1.13, 0.82, 1.21)),
}
