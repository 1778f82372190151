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
SD = ("torchvision's StochasticDepth (the identity in eval mode) is never "
      "called, and a custom module never called has no forward types")
AUX = ("the auxiliary classifiers (InceptionAux), run in train mode only, are "
       "never called, and a custom module never called has no forward types")
HARDSIGMOID = "F.hardsigmoid (SqueezeExcitation's scale_activation) has no nnx form"
PAD = "F.pad (the shifted windows' padding) has no nnx form"
INTERPOLATE = ("F.interpolate (bilinear, the head's upsampling to the input "
               "size) has no nnx form")
PIXEL_SHUFFLE = "nn.PixelShuffle has no nnx form"
CHAIN = ("nnx's verifier checks an nnx.sequential's children as a chain of "
         "features, which a block that is not a chain (a residual, a "
         "concatenation, a squeeze-excitation gate) breaks: \"child 'b' takes "
         "N features but 'a' produces M\"")
ADAPTIVE_UP = ("nnx.adaptive_avg_pool2d needs an input size that is a multiple "
               "of the output size: at the smallest input the features are "
               "1x1, pooled (replicated) up to the classifier's 6x6 / 7x7")
VIT_COMPILE = ("compiling takes longer than the zoo's process timeout (300 s; "
               "600 s in the survey): the patch embedding, a 32x32 / 16x16 convolution of stride "
               "32 / 16")

def edge(nnx_torch, torch_f64, nnx_f64):
    """The criterion's edge: PyTorch within the contract of float64, so the
    contract against PyTorch applies, though nnx is nearer float64."""
    return (f"the criterion's edge: PyTorch's float32 is {torch_f64} "
            f"contracts from float64, so the contract against PyTorch "
            f"applies; nnx is {nnx_f64} from float64 (nearer than PyTorch) "
            f"but {nnx_torch} from PyTorch")


SLOW_COMPILE = ("compiles in minutes (285 s of wall time on the loaded "
                "2-core machine, 2026-12-06): past the 60 s limit")


def less_accurate(nnx, torch):
    return (f"less accurate than PyTorch: {nnx} contracts from float64 "
            f"against PyTorch's {torch} (at most 1.5x allowed)")


EXPECTED = {
    "convnext_base": Expected("compile", CHAIN),
    "densenet121": Expected("compare", edge(1.11, 0.99, 0.69)),
    "maxvit_t": Expected("compile-time", SLOW_COMPILE),
    "densenet169": Expected("compile-time", (
        "compiles in 102 CPU s (2026-12-06): 169 layers, each compiled on "
        "its own; past the 60 s limit")),
    "mnasnet0_75": Expected("compile", CHAIN),
    "mnasnet1_0": Expected("compile", CHAIN),
    "mnasnet1_3": Expected("compile", CHAIN),
    "regnet_y_400mf": Expected("compile", CHAIN),
    "regnet_y_800mf": Expected("compile", CHAIN),
    "regnet_y_1_6gf": Expected("compile", CHAIN),
    "squeezenet1_0": Expected("compile", CHAIN),
    "convnext_large": Expected("compile", CHAIN),
    "densenet161": Expected("compile", CHAIN),
    "densenet201": Expected("compile", CHAIN),
    "regnet_y_3_2gf": Expected("compile", CHAIN),
    "regnet_y_8gf": Expected("compile", CHAIN),
    "regnet_y_16gf": Expected("compile", CHAIN),
    "regnet_y_32gf": Expected("compile", CHAIN),

    "vgg11_bn": Expected("compile", ADAPTIVE_UP),
    "vgg13": Expected("compile", ADAPTIVE_UP),
    "vgg13_bn": Expected("compile", ADAPTIVE_UP),
    "vgg16": Expected("compile", ADAPTIVE_UP),
    "vgg16_bn": Expected("compile", ADAPTIVE_UP),
    "vgg19": Expected("compile", ADAPTIVE_UP),
    "vgg19_bn": Expected("compile", ADAPTIVE_UP),

    "efficientnet_b2": Expected("export", SD),
    "efficientnet_b3": Expected("export", SD),
    "efficientnet_b4": Expected("export", SD),
    "efficientnet_b5": Expected("export", SD),
    "efficientnet_b6": Expected("export", SD),
    "efficientnet_b7": Expected("export", SD),
    "efficientnet_v2_l": Expected("export", SD),
    "efficientnet_v2_m": Expected("export", SD),
    "efficientnet_v2_s": Expected("compare", edge(1.10, 0.76, 0.52)),


    "deeplabv3_mobilenet_v3_large": Expected("export", HARDSIGMOID),
    "mobilenet_v3_large": Expected("export", HARDSIGMOID),

    "swin_b": Expected("export", PAD),
    "swin_s": Expected("export", PAD),
    "swin_v2_b": Expected("export", PAD),
    "swin_v2_s": Expected("export", PAD),
    "swin_v2_t": Expected("export", PAD),

    "deeplabv3_resnet101": Expected("export", INTERPOLATE),
    "deeplabv3_resnet50": Expected("export", INTERPOLATE),
    "fcn_resnet101": Expected("export", INTERPOLATE),
    "fcn_resnet50": Expected("export", INTERPOLATE),




    "resnet18": Expected("compare", edge(1.18, 0.97, 0.47)),

    "shufflenet_v2_x1_0": Expected("compare", less_accurate(1.90, 1.26)),
    "wide_resnet101_2": Expected("compare", less_accurate(97.2, 55.4)),
    "regnet_x_3_2gf": Expected("compare", less_accurate(10.9, 7.24)),
    "regnet_x_8gf": Expected("compare", less_accurate(9.88, 6.11)),
    "regnet_x_16gf": Expected("compare", less_accurate(11.1, 7.18)),
    "regnet_x_32gf": Expected("compare", less_accurate(14.2, 9.35)),
}
