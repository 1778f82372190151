"""torchvision's ResNet-18 at ImageNet size: the 7x7 stride-2 stem,
``nn.MaxPool2d(kernel_size=3, stride=2, padding=1)``, four stages of the
torchvision BasicBlock (64-128-256-512, the ``conv3x3`` / ``conv1x1``
helpers, in-place ReLU, ``out += identity``, a strided ``downsample``
Sequential), ``nn.AdaptiveAvgPool2d((1, 1))``, ``torch.flatten(x, 1)`` and
a 1000-way fc. BasicBlock and the helpers are the ones of
python/tests/corpus/resnet.py (torchvision's, shared); the image size is
dynamic (run at 224 and 160)."""

from typing import List, Type

import torch
import torch.nn as nn
from torch import Tensor

from corpus import Case
from corpus.resnet import BasicBlock, conv1x1

from . import builder, images


class ResNet(nn.Module):
    def __init__(self, block: Type[BasicBlock], layers: List[int], num_classes: int = 1000) -> None:
        super().__init__()
        self._norm_layer = nn.BatchNorm2d
        self.inplanes = 64
        self.dilation = 1
        self.groups = 1
        self.base_width = 64
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = self._norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2)
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2)
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)

    def _make_layer(self, block: Type[BasicBlock], planes: int, blocks: int, stride: int = 1) -> nn.Sequential:
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                conv1x1(self.inplanes, planes * block.expansion, stride),
                self._norm_layer(planes * block.expansion),
            )
        layers = [block(self.inplanes, planes, stride, downsample, norm_layer=self._norm_layer)]
        self.inplanes = planes * block.expansion
        layers += [block(self.inplanes, planes, norm_layer=self._norm_layer) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x: Tensor) -> Tensor:
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        x = self.maxpool(x)

        x = self.layer1(x)
        x = self.layer2(x)
        x = self.layer3(x)
        x = self.layer4(x)

        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        x = self.fc(x)
        return x


def resnet18(num_classes: int = 1000) -> ResNet:
    return ResNet(BasicBlock, [2, 2, 2, 2], num_classes=num_classes)


# Dynamic image size: the export must keep the sizes dynamic through the
# stride-32 downsampling (its example runs use a large second size).
CASES = [Case("resnet18_224", builder(resnet18), [(None, 3, None, None)],
              images, [(1, 224), (3, 160)])]
