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
    contract against PyTorch applies, though nnx is nearer float64."""
    return (f"the criterion's edge: PyTorch's float32 is {torch_f64} "
            f"contracts from float64, so the contract against PyTorch "
            f"applies; nnx is {nnx_f64} from float64 (nearer than PyTorch) "
            f"but {nnx_torch} from PyTorch")


def less_accurate(nnx, torch):
    return (f"less accurate than PyTorch: {nnx} contracts from float64 "
            f"against PyTorch's {torch} (at most 1.5x allowed)")


EXPECTED = {
    # Measured by `make test-zoo` on the loaded 2-core AMD EPYC VM,
    # 2026-12-06 (compile CPU seconds include the waits of a contended core).
    # swin_v2 exports since its in-place write into a slice of the qkv bias
    # is functionalized (2026-12-06; the same machine): its cosine
    # attention, scaled by up to 100, makes batch 1 an edge case
    # (swin_v2_b passes on this stop's compiler: 0.93 contracts from
    # float64 against PyTorch's 1.09).
    "swin_v2_t": Expected("compare", edge(1.14, 0.84, 0.76)),
    "swin_v2_s": Expected("compare", edge(1.09, 0.99, 0.96)),
    "densenet121": Expected("compare", edge(1.11, 0.99, 0.69)),
    "efficientnet_v2_s": Expected("compare", edge(1.10, 0.76, 0.52)),
    "resnet18": Expected("compare", edge(1.18, 0.97, 0.47)),
    # The largest models, run once this session (wt-zoorun2 at dd333f1):
    # every other one passes. efficientnet_v2_l's random net stays
    # chaotic after calibration at 32 pixels: PyTorch's own float32 is
    # 2e7 contracts from float64.
    "efficientnet_v2_l": Expected("compare", less_accurate("4.8e7",
                                                           "1.96e7")),
}
