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
CONV_TRANSPOSE = "nn.ConvTranspose2d has no nnx form"
TUPLE_ARG = ("the exporter takes tensor arguments only: RNNModel.forward's "
             "hidden state is an LSTM's (h, c) tuple")

EXPECTED = {
    "efficientnet_b0": Expected("export", SD),
    "efficientnet_b1": Expected("export", SD),
    "efficientnet_b2": Expected("export", SD),
    "efficientnet_b3": Expected("export", SD),
    "efficientnet_b4": Expected("export", SD),
    "efficientnet_b5": Expected("export", SD),
    "efficientnet_b6": Expected("export", SD),
    "efficientnet_b7": Expected("export", SD),
    "efficientnet_v2_s": Expected("export", SD),
    "efficientnet_v2_m": Expected("export", SD),
    "efficientnet_v2_l": Expected("export", SD),
    "googlenet": Expected("export", AUX),
    "mobilenet_v3_small": Expected("export", HARDSIGMOID),
    "mobilenet_v3_large": Expected("export", HARDSIGMOID),
    "lraspp_mobilenet_v3_large": Expected("export", HARDSIGMOID),
    "deeplabv3_mobilenet_v3_large": Expected("export", HARDSIGMOID),
    "swin_t": Expected("export", PAD),
    "swin_s": Expected("export", PAD),
    "swin_b": Expected("export", PAD),
    "swin_v2_t": Expected("export", PAD),
    "swin_v2_s": Expected("export", PAD),
    "swin_v2_b": Expected("export", PAD),
    "fcn_resnet50": Expected("export", INTERPOLATE),
    "fcn_resnet101": Expected("export", INTERPOLATE),
    "deeplabv3_resnet50": Expected("export", INTERPOLATE),
    "deeplabv3_resnet101": Expected("export", INTERPOLATE),
    "super_resolution": Expected("export", PIXEL_SHUFFLE),
    "dcgan_generator": Expected("export", CONV_TRANSPOSE),
    "word_language_model_lstm": Expected("export", TUPLE_ARG),
}
