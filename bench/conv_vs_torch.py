#!/usr/bin/python3
"""Convolutional networks through nnx, side by side with PyTorch (oneDNN).

The nets (eval mode, random weights and BatchNorm statistics, as the convnet
corpus builds them: python/tests/convnets):
- `resnet18`: torchvision's ResNet-18 (python/tests/convnets/resnet_imagenet.py)
  at ImageNet size, batch and image size dynamic in one export;
- `mobilenet_block`: a MobileNet-v2 inverted residual (1x1 expand to 96
  channels, depthwise 3x3, linear 1x1 project back to 16, residual add) on
  16 x 56 x 56 feature maps, the depthwise case;
- `resnext_conv`: the grouped 3x3 conv of a ResNeXt-50 32x4d bottleneck
  (layer1: 128 channels in 32 groups of 4, then BatchNorm and ReLU) on
  56 x 56 feature maps, and at stride 2 (layer2's first block, 256 channels
  in 32 groups of 8);
- `regnet_block`: torchvision's RegNetX-3.2GF block (ResBottleneckBlock,
  stage 2: 192 channels, group width 48), 1x1, grouped 3x3, 1x1, residual
  add, on 28 x 28 feature maps; the grouped cases.

For each net and shape, in one run: a fresh `nnx-run --repeat N` process
(compile time, per-forward min and mean, peak RSS) and PyTorch (no_grad, the
same thread count: its oneDNN convolutions), one warm-up then N timed
forwards; the outputs are compared (atol = rtol = 1e-5) before anything is
printed. The ratio is nnx / PyTorch on the minimum (> 1: nnx slower).
"""

import argparse
import os
import resource
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python"))
sys.path.insert(0, os.path.join(HERE, os.pardir, "python", "tests"))

from gpt2_vs_torch import bench_nnx, bench_torch  # noqa: E402
from mlp_vs_torch import configure_environment, cpu_model  # noqa: E402

#: net -> the shapes it runs at by default (batch, channels, H, W).
SHAPES = {
    "resnet18": "1x3x224x224,16x3x224x224",
    "mobilenet_block": "1x16x56x56,16x16x56x56",
    "resnext_conv": "1x128x56x56",
    "resnext_conv_s2": "1x256x56x56",
    "regnet_block": "1x192x28x28",
}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=None,
                   help="the build directory (default: ../build)")
    p.add_argument("--nets", default=",".join(SHAPES),
                   help="comma-separated nets: " + ", ".join(SHAPES))
    p.add_argument("--shapes", default=None,
                   help="comma-separated NxCxHxW shapes for every net "
                   "(default: each net's own)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--workdir", default=None,
                   help="keep the exported model here (default: a temporary "
                   "directory)")
    return p.parse_args(argv)


def mobilenet_block():
    import torch.nn as nn

    class InvertedResidual(nn.Module):
        def __init__(self, planes=16, expansion=6):
            super().__init__()
            hidden = planes * expansion
            self.conv1 = nn.Conv2d(planes, hidden, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(hidden)
            self.conv2 = nn.Conv2d(hidden, hidden, 3, padding=1,
                                   groups=hidden, bias=False)
            self.bn2 = nn.BatchNorm2d(hidden)
            self.conv3 = nn.Conv2d(hidden, planes, 1, bias=False)
            self.bn3 = nn.BatchNorm2d(planes)
            self.relu = nn.ReLU6(inplace=True)

        def forward(self, x):
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.relu(self.bn2(self.conv2(out)))
            return self.bn3(self.conv3(out)) + x

    return InvertedResidual()


def grouped_conv(channels, stride):
    """A ResNeXt-50 32x4d bottleneck's grouped 3x3 conv (32 groups), its
    BatchNorm and ReLU."""
    import torch.nn as nn
    return nn.Sequential(
        nn.Conv2d(channels, channels, 3, stride=stride, padding=1, groups=32,
                  bias=False),
        nn.BatchNorm2d(channels), nn.ReLU(inplace=True))


def regnet_block():
    """torchvision's RegNetX-3.2GF stage-2 block: 192 channels, group width
    48 (4 groups), no squeeze-excitation."""
    import torch.nn as nn
    from torchvision.models.regnet import ResBottleneckBlock
    return ResBottleneckBlock(192, 192, 1, nn.BatchNorm2d, nn.ReLU, 48, 1.0,
                              None)


def build(name):
    from convnets import builder
    if name == "resnet18":
        from convnets.resnet_imagenet import resnet18
        return builder(resnet18)(), (None, 3, None, None)
    if name == "mobilenet_block":
        return builder(mobilenet_block)(), (None, 16, None, None)
    if name == "resnext_conv":
        return builder(lambda: grouped_conv(128, 1))(), (None, 128, None, None)
    if name == "resnext_conv_s2":
        return builder(lambda: grouped_conv(256, 2))(), (None, 256, None, None)
    if name == "regnet_block":
        return builder(regnet_block)(), (None, 192, None, None)
    raise SystemExit(f"conv_vs_torch.py: unknown net '{name}' (one of "
                     f"{', '.join(SHAPES)})")


def run_net(name, shapes, args, workdir):
    import numpy as np
    import torch
    from nnx.torch_export import write
    model, spec = build(name)
    mlir = os.path.join(workdir, name + ".mlir")
    write(model, mlir, [spec], name=name, weights=True)
    rows = []
    for shape in shapes:
        x = np.random.default_rng(sum(shape)).standard_normal(shape).astype(
            np.float32)
        want, t_min, t_mean = bench_torch(model, torch.from_numpy(x),
                                          args.repeat)
        got, c_s, _, n_min, n_mean, rss = bench_nnx(mlir, x, args.repeat,
                                                    workdir, args.threads)
        np.testing.assert_allclose(got, want, atol=1e-5, rtol=1e-5,
                                   err_msg=f"{name} at {shape}")
        rows.append((name, shape, c_s, n_min, n_mean, t_min, t_mean, rss))
    return rows


def main(argv=None):
    args = parse_args(argv)
    args.repeat = max(args.repeat, 2)
    configure_environment(args.build, args.threads)
    import torch
    torch.set_num_threads(args.threads)
    own = tempfile.TemporaryDirectory() if args.workdir is None else None
    workdir = own.name if own else args.workdir
    os.makedirs(workdir, exist_ok=True)
    rows = []
    try:
        for name in args.nets.split(","):
            text = args.shapes or SHAPES.get(name, "")
            shapes = [tuple(int(v) for v in s.split("x"))
                      for s in text.split(",")]
            rows += run_net(name, shapes, args, workdir)
    finally:
        if own:
            own.cleanup()
    load = os.getloadavg()
    print(f"nnx convnet benchmark  {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    print(f"machine: {cpu_model()}, {os.cpu_count()} cpus, "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"torch {torch.__version__}, threads {args.threads}, mkldnn "
          f"{'on' if torch.backends.mkldnn.is_available() else 'off'}")
    print("outputs agree with PyTorch (atol=rtol=1e-5) for every shape")
    print(f"time per forward, {args.repeat} forwards each (compilation "
          "excluded):")
    print("  net              shape              nnx compile   nnx min  "
          "nnx mean  torch min torch mean  ratio(min)  nnx-run peak RSS")
    for name, shape, c_s, n_min, n_mean, t_min, t_mean, rss in rows:
        dims = "x".join(map(str, shape))
        print(f"  {name:<16} {dims:<18} {c_s * 1e3:8.0f} ms {n_min * 1e3:8.1f} ms "
              f"{n_mean * 1e3:8.1f} ms {t_min * 1e3:8.1f} ms {t_mean * 1e3:8.1f} ms"
              f"  {n_min / t_min:8.2f}x  {rss / 2**20:8.0f} MiB")
    torch_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(f"  (this PyTorch process, models and runs included: peak RSS "
          f"{torch_rss / 2**20:.0f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
