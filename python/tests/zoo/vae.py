"""pytorch/examples' VAE (vae/main.py), written in its authors' style: an
MLP encoder of 28x28 MNIST images to the mean and log-variance of a 20-d
latent, the reparameterization, an MLP decoder back to the image.

One departure: the example draws ``eps`` in every mode; here eval mode
decodes the mean (``z = mu``), the usual deterministic reconstruction, so
that the output can be compared (a sampled one cannot)."""

import torch
import torch.nn.functional as F
from torch import nn

from . import Case, calibrate, images


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()

        self.fc1 = nn.Linear(784, 400)
        self.fc21 = nn.Linear(400, 20)
        self.fc22 = nn.Linear(400, 20)
        self.fc3 = nn.Linear(20, 400)
        self.fc4 = nn.Linear(400, 784)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        if not self.training:
            return mu
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        # Clamped away from 0 and 1 for the continuous Bernoulli's log
        # normalizing constant in the loss.
        return torch.clamp(torch.sigmoid(self.fc4(h3)), min=1e-4, max=1.0 - 1e-4)

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


example = images(1, 28)


def build(seed=0):
    torch.manual_seed(seed)
    return calibrate(VAE(), example)


CASES = [Case("vae", build, [(None, 1, 28, 28)], example, "vae", 28)]
