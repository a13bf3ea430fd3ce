#!/usr/bin/python3
"""make_onnx_fixtures.py: regenerates two small PyTorch exports in tests/data/onnx/ (Debian's
python3-torch 1.13, python3-onnx) for the importer's tests (tests/test_onnx.c):

- convt3d.onnx: Conv3d -> ReLU -> ConvTranspose3d (stride, padding, output_padding, dilation,
  2 groups) -> global average pool -> Linear, input [N, 2, 5, 6, 7], exported in training mode.
- custom_mid.onnx: Conv2d -> ReLU -> a custom op (domain driple_test, type Warp, exported from
  an autograd Function's symbolic) -> Conv2d -> global average pool -> Linear, input
  [N, 3, 16, 16], training mode.

It prints PyTorch's figures the tests assert: each model's parameter count (sum of p.numel()
over model.parameters()) and the transposed convolution's output shape. Weights are kept (a few
KiB). Usage: /usr/bin/python3 tools/make_onnx_fixtures.py [OUT_DIR]
The project itself never needs Python: the fixtures are committed.
"""
import os
import sys

import torch
import torch.nn as nn


class ConvT3d(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(2, 4, 3, padding=1)
        self.up = nn.ConvTranspose3d(4, 6, (3, 2, 2), stride=(2, 2, 1), padding=(1, 0, 0),
                                     output_padding=(1, 0, 0), dilation=(1, 1, 2), groups=2)
        self.fc = nn.Linear(6, 10)

    def forward(self, x):
        y = self.up(torch.relu(self.conv(x)))
        return self.fc(y.mean(dim=(2, 3, 4)))


class Warp(torch.autograd.Function):
    """A stand-in for a custom kernel: PyTorch runs it as x * 2, the export names it
    driple_test::Warp, an op no importer knows."""

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2

    @staticmethod
    def symbolic(g, x):
        return g.op("driple_test::Warp", x)


class CustomMid(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        y = Warp.apply(torch.relu(self.conv1(x)))
        return self.fc(self.conv2(y).mean(dim=(2, 3)))


def export(model, shape, path, **kw):
    model.train()
    x = torch.zeros(*shape)
    torch.onnx.export(model, (x,), path, opset_version=13,
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      input_names=["x"], output_names=["logits"],
                      dynamic_axes={"x": {0: "N"}, "logits": {0: "N"}}, **kw)
    print(os.path.basename(path), "params", sum(p.numel() for p in model.parameters()))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/data/onnx"
    torch.manual_seed(0)
    m = ConvT3d()
    export(m, (2, 2, 5, 6, 7), os.path.join(out, "convt3d.onnx"))
    with torch.no_grad():
        print("convt3d up output", list(m.up(m.conv(torch.zeros(2, 2, 5, 6, 7))).shape))
    export(CustomMid(), (2, 3, 16, 16), os.path.join(out, "custom_mid.onnx"),
           custom_opsets={"driple_test": 1})


if __name__ == "__main__":
    main()
