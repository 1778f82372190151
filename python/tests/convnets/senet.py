"""SENet-18 (Hu et al., squeeze-and-excitation) for CIFAR-10 in
kuangliu/pytorch-cifar's style: a residual BasicBlock whose SE layers are
1x1 ``nn.Conv2d`` s ("Use nn.Conv2d instead of nn.Linear"), the squeeze
``F.avg_pool2d(out, out.size(2))``, ``F.relu`` then ``torch.sigmoid``
gates, the excitation ``out = out * w`` by broadcasting, ``out +=
self.shortcut(x)``. The network around the blocks is the authors' ResNet
(resnet.py: a 3x3 stem, ``_make_layer``, ``F.avg_pool2d(out, 4)``)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import cifar_case
from .resnet import ResNet as SENet


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, in_planes, planes, stride=1):
        super(BasicBlock, self).__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)

        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != planes:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_planes, planes, kernel_size=1, stride=stride, bias=False),
                nn.BatchNorm2d(planes)
            )

        # SE layers
        self.fc1 = nn.Conv2d(planes, planes//16, kernel_size=1)  # Use nn.Conv2d instead of nn.Linear
        self.fc2 = nn.Conv2d(planes//16, planes, kernel_size=1)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))

        # Squeeze
        w = F.avg_pool2d(out, out.size(2))
        w = F.relu(self.fc1(w))
        w = torch.sigmoid(self.fc2(w))
        # Excitation
        out = out * w  # New broadcasting feature from v0.2!

        out += self.shortcut(x)
        out = F.relu(out)
        return out


def SENet18():
    return SENet(BasicBlock, [2, 2, 2, 2])


# Until the pooling layers land.
CASES = [cifar_case("senet18", SENet18)]
