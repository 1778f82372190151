"""pytorch/examples' super_resolution net (model.py), written in its
authors' style: the efficient sub-pixel CNN of Shi et al. 2016, four
convolutions on the luminance channel and a pixel shuffle (upscale factor
3, as its README runs it), orthogonal initialization."""

import torch
import torch.nn as nn
import torch.nn.init as init

from . import Case, calibrate, images


class Net(nn.Module):
    def __init__(self, upscale_factor):
        super(Net, self).__init__()

        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 64, kernel_size=5, stride=1, padding=2)
        self.conv2 = nn.Conv2d(64, 64, kernel_size=3, stride=1, padding=1)
        self.conv3 = nn.Conv2d(64, 32, kernel_size=3, stride=1, padding=1)
        self.conv4 = nn.Conv2d(32, upscale_factor ** 2, kernel_size=3, stride=1, padding=1)
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)

        self._initialize_weights()

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        return self.pixel_shuffle(self.conv4(x))

    def _initialize_weights(self):
        gain = init.calculate_gain('relu')
        for conv in (self.conv1, self.conv2, self.conv3):
            init.orthogonal_(conv.weight, gain)
        init.orthogonal_(self.conv4.weight)


UPSCALE = 3
SIZE = 32
example = images(1, SIZE)


def build(seed=0):
    torch.manual_seed(seed)
    return calibrate(Net(UPSCALE), example)


CASES = [Case("super_resolution", build, [(None, 1, SIZE, SIZE)], example,
              "super_resolution", SIZE)]
