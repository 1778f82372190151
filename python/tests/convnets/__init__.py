"""A corpus of the standard convolutional network families, written the way
their authors write them (kuangliu/pytorch-cifar style for the CIFAR-sized
ones, torchvision's for the ImageNet-sized ResNet-18), for judging
nnx.torch_export against real-world convnet code
(python/tests/test_convnets.py; README.md lists the constructs each file
exercises).

Each module lists its models as ``CASES`` (:class:`corpus.Case` objects, as
in python/tests/corpus): ``build(seed=0)`` gives an eval-mode model with
deterministic, non-trivial random weights (BatchNorm running statistics and
affine parameters random too, so no BatchNorm is the identity), ``inputs``
the export's input spec (the batch dynamic), ``example(batch, size, seed=0)``
concrete N x 3 x size x size images and ``shapes`` the two ``(batch, size)``
pairs to run at.
"""

import importlib

import torch

from corpus import Case, normal_inputs, randomize

#: The convnet modules, in the order of the README.
MODULES = [
    "lenet", "vgg", "resnet", "preact_resnet", "mobilenet", "mobilenetv2",
    "densenet", "googlenet", "shufflenetv2", "senet", "efficientnet",
    "regnet", "resnet_imagenet",
]

#: CIFAR-10 images.
CIFAR_CHANNELS, CIFAR_SIZE = 3, 32


def images(batch, size, seed=0):
    """One input: (batch, 3, size, size) standard-normal images."""
    return [normal_inputs((batch, CIFAR_CHANNELS, size, size), seed)]


def builder(make):
    """``build(seed=0)``: ``make()`` with every parameter and BatchNorm
    statistic drawn by :func:`corpus.randomize`, in eval mode."""
    def build(seed=0):
        torch.manual_seed(seed)
        return randomize(make(), seed).eval()
    return build


def cifar_case(name, make):
    """A CIFAR-sized model: 3 x 32 x 32 images, the batch dynamic, run at
    batch 1 and 3."""
    return Case(name, builder(make), [(None, CIFAR_CHANNELS, CIFAR_SIZE, CIFAR_SIZE)],
                images, [(1, CIFAR_SIZE), (3, CIFAR_SIZE)])


def cases():
    """Every model of the convnet corpus, as :class:`corpus.Case` objects."""
    out = []
    for name in MODULES:
        out.extend(importlib.import_module(f"{__name__}.{name}").CASES)
    return out
