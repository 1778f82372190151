"""The model zoo (python/tests/test_zoo.py): every torchvision
classification model, the segmentation models, and pytorch/examples'
word-language-model, super-resolution net, DCGAN and VAE (written here in
their authors' style), each built unmodified with random weights.

Each :class:`Case` builds a calibrated eval-mode model (:func:`calibrate`:
every BatchNorm's running statistics are those of the model's own
activations on random data, so its outputs stay O(1) as in a trained net),
gives the export's input spec (the batch dynamic) and concrete inputs at
any batch. torchvision models run at :data:`SIZES`: the smallest square
image of the grid 32, 64, ..., 224, 256, 299 at which both its calibration
(train mode) and its forward run (``python3 -m zoo.sizes`` finds them
again). inception_v3 runs in eval mode from 75 pixels, but its auxiliary
classifier, which runs in train mode, needs 299.

:data:`SUBSET` is what ``make test`` runs, one model per torchvision family
(the cheapest to run) plus one segmentation model and the examples;
``NNX_ZOO=all`` (``make test-zoo``) runs them all.
"""

import dataclasses
import importlib
import math
import os
import re
from typing import Callable, Sequence

import torch
from torch import nn

#: The image sizes tried, smallest first.
GRID = [32, 64, 96, 128, 160, 192, 224, 256, 299]
#: The smallest accepted image size of the torchvision models that need
#: more than the grid's first (python -m zoo.sizes). The ViTs and MaxViT
#: are built for exactly 224 (their image_size / input_size).
SIZES = {
    "alexnet": 64, "inception_v3": 299, "maxvit_t": 224,
    "vit_b_16": 224, "vit_b_32": 224, "vit_h_14": 224, "vit_l_16": 224,
    "vit_l_32": 224,
}
#: Every other torchvision model accepts the grid's smallest size,
#: the segmentation models (their output: a dict, 'out' and 'aux') too.
DEFAULT_SIZE = 32

#: One model per family: what ``make test`` runs (by cost: the fewest
#: multiply-adds at its size, then the fewest parameters).
SUBSET = {
    "alexnet", "convnext_tiny", "densenet121", "efficientnet_b0",
    "efficientnet_v2_s", "googlenet", "inception_v3",
    "mnasnet0_5", "mobilenet_v2", "mobilenet_v3_small", "regnet_x_400mf",
    "resnet18", "resnext50_32x4d", "shufflenet_v2_x0_5", "squeezenet1_1",
    "swin_t", "vgg11", "vit_b_32", "wide_resnet50_2",
    "lraspp_mobilenet_v3_large",
    "word_language_model_transformer", "word_language_model_lstm",
    "super_resolution", "dcgan_generator", "dcgan_discriminator", "vae",
}

#: Families too costly for ``make test``'s budget: maxvit_t compiles in
#: about 30 CPU s and runs a 224 x 224 image in float32 and float64
#: (2026-12-06; it took 154 CPU s to compile before the size proofs were
#: bounded, 45 before the optnone glue). ``make test-zoo`` runs it.
SLOW_FAMILIES = {"maxvit"}

#: torchvision family of a model name: the first prefix that matches.
FAMILIES = [
    ("efficientnet_v2", "efficientnet_v2"), ("efficientnet", "efficientnet"),
    ("mobilenet_v2", "mobilenet_v2"), ("mobilenet_v3", "mobilenet_v3"),
    ("wide_resnet", "wide_resnet"), ("resnext", "resnext"),
    ("resnet", "resnet"), ("inception", "inception"),
    ("shufflenet", "shufflenet"), ("squeezenet", "squeezenet"),
    ("fcn_", "segmentation"), ("deeplabv3", "segmentation"),
    ("lraspp", "segmentation"),
]


def family(name):
    for prefix, fam in FAMILIES:
        if name.startswith(prefix):
            return fam
    return re.match(r"[a-z]+", name).group(0)


@dataclasses.dataclass
class Case:
    """One zoo model. ``build(seed)``: the calibrated eval-mode model;
    ``inputs``: the export's input spec (one per forward argument, the
    batch ``None``); ``example(batch, seed)``: a tuple of input tensors."""

    name: str
    build: Callable
    inputs: Sequence
    example: Callable
    family: str = ""
    size: int = 0

    @property
    def subset(self):
        return self.name in SUBSET


def draw_zero_weights(model, seed):
    """Draws every weight matrix or kernel the builder initialised to zero
    as PyTorch's default for a layer does, uniform in +-1/sqrt(fan in):
    torchvision zeroes the ViTs' head, so every output would be 0 and no
    comparison of one could fail. Returns the model."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2 and not p.any():
                bound = 1.0 / math.sqrt(p[0].numel())
                p.copy_((torch.rand(p.shape, generator=g) * 2 - 1) * bound)
    return model


def calibrate(model, example, batch=16, steps=2, seed=1000):
    """Sets every BatchNorm's running statistics from `steps` forward
    passes in train mode on ``example(batch, seed + i)`` (momentum None: the
    plain average over the passes), then switches the model to eval mode
    (dropout off). Each BatchNorm's momentum is then put back: the model
    is as it was built, with other statistics. Returns the model."""
    bns = [m for m in model.modules()
           if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    momenta = [bn.momentum for bn in bns]
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None
    if bns:
        model.train()
        with torch.no_grad():
            for i in range(steps):
                model(*example(batch, seed + i))
    for bn, momentum in zip(bns, momenta):
        bn.momentum = momentum
    return model.eval()


def images(channels, size):
    """``example(batch, seed)`` of normal random images."""
    def example(batch, seed=0):
        g = torch.Generator().manual_seed(seed)
        return (torch.randn(batch, channels, size, size, generator=g),)
    return example


def _torchvision_case(name, segmentation):
    from torchvision import models
    size = SIZES.get(name, DEFAULT_SIZE)
    example = images(3, size)

    def build_uncalibrated(seed=0):
        torch.manual_seed(seed)
        kwargs = {}
        if segmentation:
            # No pretrained backbone either (its default downloads one).
            kwargs["weights_backbone"] = None
            if not name.startswith("lraspp"):
                # As torchvision's pretrained weights are configured: the
                # auxiliary classifier too ('aux' beside 'out').
                kwargs["aux_loss"] = True
        return models.get_model(name, weights=None, **kwargs)

    def build(seed=0):
        # 32 images: at 32 pixels the last stages' maps are 1x1, and fewer
        # samples leave some channels' variance small (resnet18's logits
        # twice as large, resnet152's 5x). At 224 the maps give plenty.
        batch = 4 if size >= 224 else 16
        model = draw_zero_weights(build_uncalibrated(seed), seed)
        return calibrate(model, example, batch=batch)

    case = Case(name, build, [(None, 3, size, size)], example, family(name),
                size)
    case.build_uncalibrated = build_uncalibrated
    return case


#: The pytorch/examples modules of this package, each with ``CASES``
#: (their family: the module's name).
EXAMPLES = ["word_language_model", "super_resolution", "dcgan", "vae"]
EXAMPLE_FAMILIES = EXAMPLES


def torchvision_names():
    """(name, is_segmentation) of every torchvision model of the zoo."""
    from torchvision import models
    return ([(n, False) for n in models.list_models(module=models)]
            + [(n, True) for n in models.list_models(
                module=models.segmentation)])


def cases():
    """Every zoo model, as :class:`Case` objects."""
    out = [_torchvision_case(n, seg) for n, seg in torchvision_names()]
    for mod in EXAMPLES:
        out.extend(importlib.import_module(f"{__name__}.{mod}").CASES)
    return out


def selected():
    """The cases to run: all with ``NNX_ZOO=all``, else :data:`SUBSET`;
    ``NNX_ZOO=name,name`` picks models by name."""
    which = os.environ.get("NNX_ZOO", "")
    every = cases()
    if which == "all":
        return every
    if which:
        names = set(which.split(","))
        return [c for c in every if c.name in names]
    return [c for c in every if c.subset]


def by_name(name):
    for c in cases():
        if c.name == name:
            return c
    raise KeyError(f"no zoo model named {name!r}")
