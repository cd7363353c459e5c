#!/usr/bin/env python3
"""PyTorch CUDA fp32 baselines (eager and CUDA graph replay) for hsched-gpu, run on the GPU machine.

Usage: python3 torch_baseline.py NAME[,NAME...] [--iterations 50] [--warmup 5] [--gemm-size 4096]
       python3 torch_baseline.py NAME[,NAME...] --export DIR
  NAME: a shared model (see BUILDERS) or "gemm" (torch.mm of two SIZE x SIZE fp32 matrices).
  --export: instead of timing, writes DIR/NAME/model.onnx the way the shared models were exported
  (opset 17, TorchScript exporter, constant folding, same input/output names; random weights), and
  prints {"name", "exported", "nodes", "ops": {op: count}} per model: for runs whose bundle cannot
  carry the shared files (the device tool's 64 MiB limit; bench/gpu/README.md).
Prints one JSON object per NAME, one per line (compare.sh reads them):
  model:  {"name", "torch_ms": median, "torch_min_ms", "torch_max_ms", "torch_io_ms",
           "torch_graph_ms": median of CUDA graph replays, ...}
  gemm:   {"name": "gemm", "m", "n", "k", "median_ms", "tflops", ...}
  failure: {"name", "error"}; the exit status is 0 unless the arguments are wrong.

Protocol, matching `hsched run --iterations N --warmup W` and hsched_gemm_bench: W untimed runs,
then N runs each timed alone on the host clock up to torch.cuda.synchronize(); the median.
torch_ms keeps input and output on the GPU (PyTorch's best case); torch_io_ms also copies the
input from host memory and the output back each run, as `hsched run` hands tensors in and out.
TF32 is off for matmul and cuDNN: fp32 against fp32. Weights are seeded random (timings do not
depend on them). The architectures are the ones the shared models were exported from
(../shared/tools/torch_models.py), rebuilt here by small builders of our own.
"""
import argparse
import json
import statistics
import sys
import time

import torch
import torch.nn as nn


def torchvision_model(name):
    import torchvision.models as tvm
    return getattr(tvm, name)(weights=None), (torch.randn(1, 3, 224, 224),)


def timm_model(name):
    import timm
    return timm.create_model(name, pretrained=False), (torch.randn(1, 3, 224, 224),)


class LastHiddenState(nn.Module):
    """A transformers model returning its last hidden state as a plain tensor."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids, mask):
        return self.model(input_ids=ids, attention_mask=mask).last_hidden_state


def bert_mini():
    from transformers import BertConfig, BertModel
    config = BertConfig(vocab_size=8192, hidden_size=256, num_hidden_layers=4,
                        num_attention_heads=4, intermediate_size=1024,
                        max_position_embeddings=512)
    ids = torch.randint(0, 8192, (1, 128))
    mask = torch.ones(1, 128, dtype=torch.long)
    return LastHiddenState(BertModel(config)), (ids, mask)


def resblock(channels):
    return nn.Sequential(nn.GroupNorm(8, channels), nn.SiLU(),
                         nn.Conv2d(channels, channels, 3, padding=1),
                         nn.GroupNorm(8, channels), nn.SiLU(),
                         nn.Conv2d(channels, channels, 3, padding=1))


class SmallVaeDecoder(nn.Module):
    """The shared vae_decoder_small: 4x32x32 latent -> 3x256x256, residual GroupNorm/SiLU blocks
    and three nearest 2x upsamplings."""

    def __init__(self):
        super().__init__()
        self.inp = nn.Conv2d(4, 128, 3, padding=1)
        self.b = nn.ModuleList([resblock(128), resblock(128), resblock(64), resblock(64)])
        self.up = nn.ModuleList([nn.Conv2d(128, 128, 3, padding=1),
                                 nn.Conv2d(128, 64, 3, padding=1),
                                 nn.Conv2d(64, 64, 3, padding=1)])
        self.out = nn.Sequential(nn.GroupNorm(8, 64), nn.SiLU(), nn.Conv2d(64, 3, 3, padding=1))

    def forward(self, z):
        def up2(x):
            return nn.functional.interpolate(x, scale_factor=2.0, mode="nearest")
        h = self.inp(z)
        h = h + self.b[0](h)
        h = h + self.b[1](h)
        h = self.up[0](up2(h))
        h = self.up[1](up2(h))
        h = h + self.b[2](h)
        h = h + self.b[3](h)
        h = self.up[2](up2(h))
        return self.out(h)


BUILDERS = {
    "resnet18": lambda: torchvision_model("resnet18"),
    "mobilenet_v2": lambda: torchvision_model("mobilenet_v2"),
    "mobilenet_v3_small": lambda: torchvision_model("mobilenet_v3_small"),
    "squeezenet1_1": lambda: torchvision_model("squeezenet1_1"),
    "convnext_atto": lambda: timm_model("convnext_atto"),
    "vit_tiny": lambda: timm_model("vit_tiny_patch16_224"),
    "bert_mini": bert_mini,
    "vae_decoder_small": lambda: (SmallVaeDecoder(), (torch.randn(1, 4, 32, 32),)),
    # Not shared models: torchvision's, exported here for hsched.
    "shufflenet_v2": lambda: torchvision_model("shufflenet_v2_x1_0"),
    "efficientnet_b0": lambda: torchvision_model("efficientnet_b0"),
}


def timed_median(step, warmup, iterations):
    """Median, min, max ms of `step` over `iterations` runs after `warmup`, each synchronized."""
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), min(times), max(times)


def time_model(name, warmup, iterations):
    torch.manual_seed(0)
    model, host_inputs = BUILDERS[name]()
    model = model.eval().cuda()
    inputs = tuple(x.cuda() for x in host_inputs)
    pinned = tuple(x.pin_memory() for x in host_inputs)
    with torch.inference_mode():
        start = time.perf_counter()
        model(*inputs)
        torch.cuda.synchronize()
        first_ms = (time.perf_counter() - start) * 1e3
        median, low, high = timed_median(lambda: model(*inputs), warmup, iterations)
        io_median, _, _ = timed_median(
            lambda: model(*(x.cuda(non_blocking=True) for x in pinned)).cpu(), warmup, iterations)
        graph_median, graph_low, _ = time_graph_replay(model, inputs, warmup, iterations)
    return {"name": name, "torch_ms": median, "torch_min_ms": low, "torch_max_ms": high,
            "torch_io_ms": io_median, "torch_first_run_ms": first_ms,
            "torch_graph_ms": graph_median, "torch_graph_min_ms": graph_low,
            "iterations": iterations, "warmup": warmup}


def time_graph_replay(model, inputs, warmup, iterations):
    """The model captured once into a CUDA graph, then each run one replay of it (inputs and
    output stay in the graph's own buffers): the fair anchor for hsched's replayed launches."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):  # warm-up on a side stream, as capture requires
            model(*inputs)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        model(*inputs)
    return timed_median(graph.replay, warmup, iterations)


def export_model(name, folder):
    import os
    import onnx
    import onnx.numpy_helper
    torch.manual_seed(0)
    model, inputs = BUILDERS[name]()
    path = os.path.join(folder, name, "model.onnx")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    input_names = ["input_ids", "attention_mask"] if name == "bert_mini" else ["input"]
    with torch.no_grad():
        torch.onnx.export(model.eval(), inputs, path, opset_version=17, dynamo=False,
                          input_names=input_names, output_names=["output"],
                          do_constant_folding=True)
    # The export's inputs beside it, as the shared models keep theirs: runs there then read real
    # token ids and an all-ones mask, not hsched's seeded 0/1 (half the tokens masked).
    data = os.path.join(os.path.dirname(path), "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    for k, (tensor, input_name) in enumerate(zip(inputs, input_names)):
        proto = onnx.numpy_helper.from_array(tensor.numpy(), input_name)
        with open(os.path.join(data, f"input_{k}.pb"), "wb") as f:
            f.write(proto.SerializeToString())
    ops = {}
    for node in onnx.load(path).graph.node:
        ops[node.op_type] = ops.get(node.op_type, 0) + 1
    return {"name": name, "exported": path, "nodes": sum(ops.values()),
            "ops": dict(sorted(ops.items()))}


def time_gemm(size, warmup, iterations):
    torch.manual_seed(0)
    a = torch.rand(size, size, device="cuda") * 2 - 1
    b = torch.rand(size, size, device="cuda") * 2 - 1
    out = torch.empty(size, size, device="cuda")
    median, low, high = timed_median(lambda: torch.mm(a, b, out=out), max(warmup, 3), iterations)
    flop = 2.0 * size ** 3
    return {"name": "gemm", "m": size, "n": size, "k": size, "median_ms": median,
            "min_ms": low, "max_ms": high, "tflops": flop / (median * 1e-3) / 1e12,
            "iterations": iterations}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", help="comma-separated: " + ",".join(BUILDERS) + ",gemm")
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--gemm-size", type=int, default=4096)
    parser.add_argument("--export", metavar="DIR", help="write DIR/NAME/model.onnx, time nothing")
    args = parser.parse_args()
    names = args.names.split(",")
    unknown = [n for n in names if n not in BUILDERS and (n != "gemm" or args.export)]
    if unknown:
        parser.error("unknown name(s): " + ",".join(unknown))
    if args.export:
        for name in names:
            try:
                result = export_model(name, args.export)
            except Exception as error:  # one model's failure must not stop the others
                result = {"name": name, "error": repr(error)[:500]}
            print(json.dumps(result), flush=True)
        return 0
    if not torch.cuda.is_available():
        for name in names:
            print(json.dumps({"name": name, "error": "no CUDA device"}), flush=True)
        return 0
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = False  # eager defaults: no per-shape autotuning
    context = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(0),
               "tf32": False}
    for name in names:
        try:
            result = (time_gemm(args.gemm_size, args.warmup, args.iterations) if name == "gemm"
                      else time_model(name, args.warmup, args.iterations))
        except Exception as error:  # one model's failure must not stop the others
            result = {"name": name, "error": repr(error)[:500]}
        result.update(context)
        print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
