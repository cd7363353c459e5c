#!/usr/bin/env python3
"""What a kernel costs in a model's stream on the GPU machine, against what calibration measures.

Two experiments through `hsched run --devices GPU` (unprofiled: a profiled run waits for every
step, so a CLBlast call's host time and its GPU time add up there instead of overlapping):
  chains: Relu chains and mixed Add/Mul/Relu chains of 9, 33, 129 and 321 nodes over 16 and
          50,176 floats: the slope is the per-kernel time of long streams (calibration measures
          9-node chains).
  mlp:    dependent MLP chains (x [197, 192] by 192x768, then 768x192, and again; with and
          without a Relu between) against fans of independent MatMuls reading one input
          (calibration's rectangular GEMM benchmarks), 4 and 16 MatMuls each.
  pointwise: SqueezeNet's 1x1 Convs (each with its Relu) in chains of 8 and 32 alternating
          squeeze and expand Convs (64/16 channels at 55x55, 128/32 at 27x27, 512/64 at
          13x13), 3x3 Convs 16 -> 64 alternating with 1x1 Convs back at 55x55, and chains of 2
          and 8 of its fire modules (squeeze, 1x1 and 3x3 expand, Concat) at 55x55: the
          per-node slope against the prediction's.
Each configuration runs in 3 processes of 200 timed runs; prints their medians and the plan's
prediction. Models are exported with PyTorch to /tmp/kernel_probe.

    bash .devrun/run.sh python3 bench/gpu/kernel_probe.py --target PROFILE [--device ocl0]
"""
import argparse
import json
import os
import subprocess

import torch
import torch.nn as nn

OUT = "/tmp/kernel_probe"


class Chain(nn.Module):
    def __init__(self, nodes, mixed):
        super().__init__()
        self.nodes, self.mixed = nodes, mixed

    def forward(self, x):
        for i in range(self.nodes):
            if not self.mixed or i % 3 == 2:
                x = torch.relu(x)
            else:
                x = x + 0.5 if i % 3 == 0 else x * 0.9
        return x


class Mlp(nn.Module):
    def __init__(self, pairs, d, h, relu):
        super().__init__()
        self.relu = relu
        self.layers = nn.ModuleList()
        for _ in range(pairs):
            self.layers.append(nn.Linear(d, h, bias=False))
            self.layers.append(nn.Linear(h, d, bias=False))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if self.relu and i % 2 == 0:
                x = torch.relu(x)
        return x


class Fan(nn.Module):
    def __init__(self, n, d, h):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(d, h, bias=False) for _ in range(n)])

    def forward(self, x):
        return sum(layer(x) for layer in self.layers)


class Alternating(nn.Module):
    """Convs alternating between two (in, out, kernel) shapes, each followed by a Relu."""

    def __init__(self, nodes, there, back):
        super().__init__()
        self.convs = nn.ModuleList(
            [nn.Conv2d(cin, cout, k, padding=k // 2)
             for cin, cout, k in (there if i % 2 == 0 else back for i in range(nodes))])

    def forward(self, x):
        for conv in self.convs:
            x = torch.relu(conv(x))
        return x


class Fire(nn.Module):
    """SqueezeNet's fire module: a 1x1 squeeze, then 1x1 and 3x3 expands concatenated."""

    def __init__(self, channels, squeeze, expand):
        super().__init__()
        self.squeeze = nn.Conv2d(channels, squeeze, 1)
        self.expand1 = nn.Conv2d(squeeze, expand, 1)
        self.expand3 = nn.Conv2d(squeeze, expand, 3, padding=1)

    def forward(self, x):
        s = torch.relu(self.squeeze(x))
        return torch.cat([torch.relu(self.expand1(s)), torch.relu(self.expand3(s))], 1)


def measure(args, name, module, example):
    path = os.path.join(OUT, name, "model.onnx")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.onnx.export(module, (example,), path, opset_version=17, input_names=["x"],
                      output_names=["y"], do_constant_folding=True, dynamo=False)
    medians, predicted = [], None
    for _ in range(3):
        run = subprocess.run([args.hsched, "run", path, "--target", args.target, "--devices",
                              args.device, "--iterations", "200", "--warmup", "20", "--json"],
                             capture_output=True, text=True, check=True)
        report = json.loads(run.stdout)
        medians.append(round(report["latency_ms"]["median"], 4))
        predicted = round(report["plan"]["predicted_run_ms"], 4)
    print(f"{name:28s} measured {medians} ms, predicted {predicted} ms", flush=True)
    return sorted(medians)[1], predicted


def slope(args, name, make, lengths, example):
    """Per-unit time between the two chain lengths, measured against predicted."""
    (m0, p0), (m1, p1) = (measure(args, f"{name}_{n}", make(n), example) for n in lengths)
    units = lengths[1] - lengths[0]
    print(f"{name:28s} per unit: measured {(m1 - m0) / units * 1000:.1f} us, "
          f"predicted {(p1 - p0) / units * 1000:.1f} us", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hsched", default=".devrun/hsched")
    parser.add_argument("--target", required=True)
    parser.add_argument("--device", default="ocl0")
    parser.add_argument("experiment", nargs="*", default=["chains", "mlp"])
    args = parser.parse_args()
    if "chains" in args.experiment:
        for elements in (16, 50176):
            for mixed in (False, True):
                for nodes in (9, 33, 129, 321):
                    name = f"{'mixed' if mixed else 'relu'}{nodes}_{elements}"
                    measure(args, name, Chain(nodes, mixed), torch.randn(1, elements))
    if "mlp" in args.experiment:
        x, wide = torch.randn(1, 197, 192), torch.randn(1, 197, 768)
        for pairs in (2, 8):
            measure(args, f"mlp{pairs}_197_192_768", Mlp(pairs, 192, 768, False), x)
            measure(args, f"mlp{pairs}_relu_197_192_768", Mlp(pairs, 192, 768, True), x)
        for n in (4, 16):
            measure(args, f"fan{n}_197_192_768", Fan(n, 192, 768), x)
            measure(args, f"fan{n}_197_768_192", Fan(n, 768, 192), wide)
    if "pointwise" in args.experiment:
        for wide, narrow, size in ((64, 16, 55), (128, 32, 27), (512, 64, 13)):
            slope(args, f"pointwise_{wide}_{narrow}_{size}",
                  lambda n, w=wide, c=narrow: Alternating(n, (w, c, 1), (c, w, 1)), (8, 32),
                  torch.randn(1, wide, size, size))
        slope(args, "alternate3x3_64_16_55",
              lambda n: Alternating(n, (16, 64, 3), (64, 16, 1)), (8, 32),
              torch.randn(1, 16, 55, 55))
        slope(args, "fire_128_16_64_55", lambda n: nn.Sequential(*[Fire(128, 16, 64)
                                                                   for _ in range(n)]),
              (2, 8), torch.randn(1, 128, 55, 55))


if __name__ == "__main__":
    main()
