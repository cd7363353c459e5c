#!/usr/bin/python3
"""Real architectures from other toolchains against ONNX Runtime: models built in PyTorch
(torchvision, timm, transformers; seeded random weights), exported by torch.onnx (its TorchScript
exporter, and its dynamo exporter for the `_dynamo` names), quantized by ONNX Runtime's
`quantize_static`; run by `hsched run` on each listed device and compared with ONNX Runtime.

    python3 tests/differential/model_zoo.py --hsched BIN [--devices cpu,gpu] [--models a,b]
        [--no-int8] [--half [float16|bfloat16]] [--precision P] [--jobs N] [--work DIR]
        [--cases DIR] [--json FILE] [--deadline SEC]

It needs torch, torchvision, timm, transformers and onnxruntime's Python package: the GPU
machine of the device tool has them (bench/gpu/README.md). `--models` takes names of ZOO (all by
default); a model whose builder or exporter fails there is listed as not exported, not tested.

Each model is exported at opset 17 with its test input (images N(0,1), token ids uniform with
the last 8 masked out), and ONNX Runtime (graph optimizations off, as ort_reference.py) writes the
reference outputs. Its INT8 form is ONNX Runtime's own static quantization as
../shared/models-int8 was made: `quant_pre_process`, QDQ, per-channel symmetric int8 weights,
uint8 activations, MinMax calibration on the test input and 8 redrawn ones.

With --half the models' float16 forms alone are tested instead (`model.half()`, traced on the GPU
where there is one, exported likewise; inputs in float16), compared at fp16's tolerance: ONNX
Runtime runs them through casts around its float kernels, hsched in float32 between their float16
inputs and outputs (graph/half_models.h). Where ONNX Runtime cannot load one (its float16
LayerNormalization), torch's own outputs of the half model on the GPU are the reference. With
--half bfloat16 their bfloat16 forms (`model.to(torch.bfloat16)`), at bf16's tolerance, against
torch's outputs where ONNX Runtime (which has few bfloat16 kernels) cannot run them. --precision
is hsched's for the half forms (fp16: fp16 storage on the GPU).

Verdicts, a line per model and device:
- fp32: diff_test.py's (pass, refused with a reason, mismatch, crash, hang) at its tolerance. A
  mismatch, crash or hang is minimized (minimize.py: the first failing prefix, then that node
  alone) and saved under --cases as a regression case.
- int8: the largest difference in steps of the output's scale (qdq_graphs.steps_apart); a pass
  is within max(2, 2 x ONNX Runtime's own distance between its optimization levels on the same
  file): a deep model moves ties, and ONNX Runtime's fusions move them as much.
Exits 1 when any run fails.
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import diff_test  # noqa: E402
import ms_quantized_ops  # noqa: E402
import qdq_graphs  # noqa: E402


# ---- the models: name -> builder () -> (torch module, tuple of inputs, input names) ----------

def image(size=224, frames=None):
    import torch
    shape = (1, 3, size, size) if frames is None else (1, 3, frames, size, size)
    return torch.randn(*shape)


def torchvision_model(name, size=224, family="", frames=None, **kw):
    def build():
        import torchvision.models as tvm
        module = getattr(getattr(tvm, family) if family else tvm, name)
        return module(weights=None, **kw), (image(size, frames),), ["images"]
    return build


def wrapped(model, call):
    """A module running call(model, *inputs): outputs picked from what the model returns, or
    inputs passed the way it takes them."""
    import torch

    class Wrapped(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, *inputs):
            return call(self.model, *inputs)
    return Wrapped()


def torchvision_dense(name):
    """A segmentation model: its "out" map."""
    def build():
        import torchvision.models.segmentation as seg
        model = getattr(seg, name)(weights=None, weights_backbone=None)
        return wrapped(model, lambda m, x: m(x)["out"]), (image(),), ["images"]
    return build


def torchvision_detector(name, size=320):
    """A detector on one image: its boxes, scores and labels."""
    def build():
        import torchvision.models.detection as det

        def boxes(m, x):
            found = m([x[0]])[0]
            return found["boxes"], found["scores"], found["labels"]
        model = getattr(det, name)(weights=None, weights_backbone=None)
        return wrapped(model, boxes), (image(size),), ["images"]
    return build


def raft_small():
    import torchvision.models.optical_flow as flow
    model = flow.raft_small(weights=None)
    return (wrapped(model, lambda m, a, b: m(a, b, num_flow_updates=3)[-1]),
            (image(128), image(128)), ["image1", "image2"])


def timm_model(name, size=224):
    def build():
        import timm
        return timm.create_model(name, pretrained=False), (image(size),), ["images"]
    return build


def tokens(vocab=1000, length=64, masked=8):
    import torch
    ids = torch.randint(0, vocab, (1, length))
    mask = torch.ones(1, length, dtype=torch.long)
    if masked:
        mask[:, -masked:] = 0
    return ids, mask


def transformers_model(model_class, config_class, inputs=("input_ids", "attention_mask"),
                       output="last_hidden_state", part=None, **config):
    """A model of transformers from a small config; `inputs` its keyword inputs (token ids and
    mask, pixel_values, input_features, input_values, decoder_input_ids)."""
    def build():
        import torch
        import transformers
        model = getattr(transformers, model_class)(getattr(transformers, config_class)(**config))
        if part:
            model = getattr(model, part)
        ids, mask = tokens(config.get("vocab_size", 1000))
        examples = {"input_ids": ids, "attention_mask": mask, "decoder_input_ids": ids[:, :16],
                    "pixel_values": image(config.get("image_size", 224)),
                    "input_features": torch.randn(1, config.get("num_mel_bins", 80),
                                                  2 * config.get("max_source_positions", 1)),
                    "input_values": torch.randn(1, 16000)}

        def call(m, *values):
            result = m(**dict(zip(inputs, values)))
            return getattr(result, output) if hasattr(result, output) else result[0]
        return wrapped(model, call), tuple(examples[i] for i in inputs), list(inputs)
    return build


SMALL_TEXT = dict(vocab_size=1000, hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                  intermediate_size=256, max_position_embeddings=256)
DECODER = dict(SMALL_TEXT, num_key_value_heads=2, use_cache=False)
SEQ2SEQ = dict(vocab_size=1000, d_model=128, encoder_layers=2, decoder_layers=2,
               encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=256,
               decoder_ffn_dim=256, max_position_embeddings=256, use_cache=False)
VISION = dict(hidden_size=128, num_hidden_layers=2, num_attention_heads=4, intermediate_size=256)

ZOO = {
    # torchvision classifiers
    **{n: torchvision_model(n) for n in [
        "alexnet", "densenet121", "resnet50", "resnext50_32x4d", "regnet_y_400mf",
        "regnet_x_400mf", "mnasnet0_5", "shufflenet_v2_x0_5", "squeezenet1_0",
        "mobilenet_v3_large", "efficientnet_b0", "efficientnet_v2_s", "convnext_tiny", "swin_t",
        "swin_v2_t", "maxvit_t", "vit_b_32"]},
    "googlenet": torchvision_model("googlenet", aux_logits=False, init_weights=True),
    "inception_v3": torchvision_model("inception_v3", 299, aux_logits=False, init_weights=True),
    # torchvision segmentation, video, detection, optical flow
    "lraspp_mobilenet_v3_large": torchvision_dense("lraspp_mobilenet_v3_large"),
    "deeplabv3_mobilenet_v3_large": torchvision_dense("deeplabv3_mobilenet_v3_large"),
    "r3d_18": torchvision_model("r3d_18", 112, "video", frames=8),
    "r2plus1d_18": torchvision_model("r2plus1d_18", 112, "video", frames=8),
    "ssdlite320_mobilenet_v3_large": torchvision_detector("ssdlite320_mobilenet_v3_large"),
    "fasterrcnn_mobilenet_v3_large_320_fpn":
        torchvision_detector("fasterrcnn_mobilenet_v3_large_320_fpn"),
    "raft_small": raft_small,
    # timm
    **{n: timm_model(n) for n in [
        "mobilevit_xxs", "levit_128s", "efficientformer_l1", "poolformer_s12", "ghostnet_100",
        "repvgg_a0", "hrnet_w18_small", "dla34", "resnest14d", "eca_nfnet_l0",
        "edgenext_xx_small", "fastvit_t8", "tiny_vit_5m_224", "coat_lite_tiny", "gcvit_xxtiny",
        "rexnet_100", "lcnet_050", "tf_efficientnet_lite0", "mobilenetv4_conv_small",
        "efficientvit_b0", "regnetz_b16", "pit_ti_224", "xcit_nano_12_p16_224", "mobileone_s0",
        "ese_vovnet19b_dw", "dpn68", "selecsls42b", "cait_xxs24_224", "pvt_v2_b0", "mixnet_s",
        "res2net50_14w_8s"]},
    "crossvit_tiny_240": timm_model("crossvit_tiny_240", 240),
    # transformers, small configs
    "distilbert": transformers_model("DistilBertModel", "DistilBertConfig", vocab_size=1000,
                                     dim=128, n_layers=2, n_heads=4, hidden_dim=256),
    "roberta": transformers_model("RobertaModel", "RobertaConfig", **SMALL_TEXT),
    "albert": transformers_model("AlbertModel", "AlbertConfig", embedding_size=64, **SMALL_TEXT),
    "electra": transformers_model("ElectraModel", "ElectraConfig", embedding_size=64,
                                  **SMALL_TEXT),
    "deberta_v2": transformers_model("DebertaV2Model", "DebertaV2Config", **SMALL_TEXT),
    "mobilebert": transformers_model("MobileBertModel", "MobileBertConfig", vocab_size=1000,
                                     num_hidden_layers=2),
    "t5_encoder": transformers_model("T5EncoderModel", "T5Config", vocab_size=1000, d_model=128,
                                     d_kv=32, d_ff=256, num_layers=2, num_heads=4),
    "gpt2": transformers_model("GPT2Model", "GPT2Config", vocab_size=1000, n_embd=128, n_layer=2,
                               n_head=4, n_positions=256, use_cache=False),
    "bloom": transformers_model("BloomModel", "BloomConfig", vocab_size=1000, hidden_size=128,
                                n_layer=2, n_head=4, use_cache=False),
    "opt": transformers_model("OPTModel", "OPTConfig", vocab_size=1000, hidden_size=128,
                              num_hidden_layers=2, ffn_dim=256, num_attention_heads=4,
                              word_embed_proj_dim=128, max_position_embeddings=256,
                              use_cache=False),
    "llama": transformers_model("LlamaModel", "LlamaConfig", **DECODER),
    "qwen2": transformers_model("Qwen2Model", "Qwen2Config", **DECODER),
    "gemma": transformers_model("GemmaModel", "GemmaConfig", head_dim=32, **DECODER),
    "phi": transformers_model("PhiModel", "PhiConfig", partial_rotary_factor=0.5, **DECODER),
    "bart": transformers_model("BartModel", "BartConfig",
                               inputs=("input_ids", "attention_mask", "decoder_input_ids"),
                               **SEQ2SEQ),
    "whisper_encoder": transformers_model("WhisperModel", "WhisperConfig",
                                          inputs=("input_features",), part="encoder",
                                          num_mel_bins=80, max_source_positions=100,
                                          pad_token_id=1, **SEQ2SEQ),
    "wav2vec2": transformers_model("Wav2Vec2Model", "Wav2Vec2Config", inputs=("input_values",),
                                   num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
                                   **VISION),
    "vit_hf": transformers_model("ViTModel", "ViTConfig", inputs=("pixel_values",), **VISION),
    "clip_vision": transformers_model("CLIPVisionModel", "CLIPVisionConfig",
                                      inputs=("pixel_values",), patch_size=32, **VISION),
    "clip_text": transformers_model("CLIPTextModel", "CLIPTextConfig", vocab_size=1000,
                                    max_position_embeddings=64, **VISION),
    "swin_hf": transformers_model("SwinModel", "SwinConfig", inputs=("pixel_values",),
                                  embed_dim=48, depths=[2, 2, 2, 2], num_heads=[3, 6, 12, 24]),
    "segformer": transformers_model("SegformerForSemanticSegmentation", "SegformerConfig",
                                    inputs=("pixel_values",), output="logits"),
}
# The same architectures through torch's dynamo exporter (opset 18 and its own graph patterns).
DYNAMO = ["resnet50", "mobilenet_v3_large", "swin_t", "efficientformer_l1", "distilbert",
          "llama", "whisper_encoder"]
ZOO.update({f"{name}_dynamo": ZOO[name] for name in DYNAMO})


# ---- export and quantization (one process a model: torch holds its memory) ------------------

def write_inputs(case_dir, names, values):
    data_dir = os.path.join(case_dir, "test_data_set_0")
    os.makedirs(data_dir, exist_ok=True)
    for k, (name, value) in enumerate(zip(names, values)):
        with open(os.path.join(data_dir, f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(value, name).SerializeToString())


HALF_SUFFIX = {"float16": "_half", "bfloat16": "_bf16"}


def to_numpy(tensor):
    """A torch tensor's values; bfloat16 as ml_dtypes' bfloat16 (onnx's numpy_helper reads it)."""
    import torch
    if tensor.dtype == torch.bfloat16:
        import ml_dtypes
        return tensor.float().cpu().numpy().astype(ml_dtypes.bfloat16)
    return tensor.cpu().numpy()


def export(name, work, int8=True, half=None):
    """Exports ZOO[name] (and, with `int8`, its INT8 form) under work, or with `half` (float16 or
    bfloat16) its form of that type as name_half or name_bf16; {"nodes", "ops", "int8"} or
    {"error"}."""
    import torch
    torch.manual_seed(0)
    torch.set_num_threads(1)
    case_dir = os.path.join(work, name + (HALF_SUFFIX[half] if half else ""))
    os.makedirs(case_dir, exist_ok=True)
    path = os.path.join(case_dir, "model.onnx")
    try:
        module, inputs, names = ZOO[name]()
        module.eval()
        if half:  # traced on the GPU where there is one: torch's CPU lacks some float16 kernels
            device = "cuda" if torch.cuda.is_available() else "cpu"
            dtype = getattr(torch, half)
            module = module.to(device).to(dtype)
            inputs = tuple(t.to(device).to(dtype) if t.is_floating_point() else t.to(device)
                           for t in inputs)
        with torch.no_grad():
            if name.endswith("_dynamo"):
                torch.onnx.export(module, inputs, path, dynamo=True, input_names=names,
                                  external_data=False)
            else:
                torch.onnx.export(module, inputs, path, opset_version=17, dynamo=False,
                                  input_names=names, do_constant_folding=True)
    except Exception as e:  # noqa: BLE001  (a builder or exporter failure: not hsched's)
        return {"error": f"export: {type(e).__name__}: {str(e).splitlines()[0][:200]}"}
    arrays = [to_numpy(t) for t in inputs]
    write_inputs(case_dir, names, arrays)
    if half:  # torch's own outputs: the reference where ONNX Runtime cannot load the model
        with torch.no_grad():
            outputs = module(*inputs)
        outputs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
        if all(isinstance(value, torch.Tensor) for value in outputs):
            reference = os.path.join(case_dir, "torch_reference")
            os.makedirs(reference, exist_ok=True)
            for k, value in enumerate(outputs):
                with open(os.path.join(reference, f"output_{k}.pb"), "wb") as f:
                    f.write(numpy_helper.from_array(to_numpy(value)).SerializeToString())
    model = onnx.load(path)
    result = {"nodes": len(model.graph.node), "opset": model.opset_import[0].version,
              "ops": sorted({n.op_type for n in model.graph.node})}
    if not int8 or half:
        return result
    try:
        result["int8"] = quantize(case_dir, names, arrays)
    except Exception as e:  # noqa: BLE001
        result["int8"] = f"quantize: {type(e).__name__}: {str(e).splitlines()[0][:200]}"
    return result


def quantize(case_dir, names, arrays):
    """ONNX Runtime's static quantization of case_dir's model into case_dir + "_int8", with the
    same inputs and, beside its reference, ONNX Runtime's outputs at its default optimization
    level (ort_default/); "ok"."""
    import onnxruntime as ort
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process
    rng = np.random.default_rng(0)
    sets = [arrays] + [[rng.standard_normal(a.shape).astype(a.dtype) if a.dtype.kind == "f" else a
                        for a in arrays] for _ in range(8)]

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.sets = iter(sets)

        def get_next(self):
            values = next(self.sets, None)
            return None if values is None else dict(zip(names, values))

    int8_dir = case_dir + "_int8"
    os.makedirs(int8_dir, exist_ok=True)
    prepared = os.path.join(int8_dir, "prepared.onnx")
    quant_pre_process(os.path.join(case_dir, "model.onnx"), prepared)
    quantize_static(prepared, os.path.join(int8_dir, "model.onnx"), Reader(),
                    quant_format=QuantFormat.QDQ, per_channel=True,
                    weight_type=QuantType.QInt8, activation_type=QuantType.QUInt8)
    os.remove(prepared)
    write_inputs(int8_dir, names, arrays)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(os.path.join(int8_dir, "model.onnx"), options,
                                   providers=["CPUExecutionProvider"])
    os.makedirs(os.path.join(int8_dir, "ort_default"), exist_ok=True)
    for k, value in enumerate(session.run(None, dict(zip(names, arrays)))):
        with open(os.path.join(int8_dir, "ort_default", f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(value).SerializeToString())
    return "ok"


# ---- hsched against the references ------------------------------------------------------------

def run_fp32(args, case_dir, devices):
    run_args = argparse.Namespace(**{**vars(args), "devices": devices, "precision": "fp32"})
    return diff_test.run_hsched(run_args, case_dir)


def torch_reference(case_dir):
    """Puts torch's outputs of an exported half model in as its reference; whether it had them
    (a model's output tuple may not match the graph's outputs: not then)."""
    reference = os.path.join(case_dir, "torch_reference")
    files = sorted(os.listdir(reference)) if os.path.isdir(reference) else []
    outputs = onnx.load(os.path.join(case_dir, "model.onnx")).graph.output
    if not files or len(files) != len(outputs):
        return False
    for k, output in enumerate(outputs):  # in the type the graph declares (float16 or float32)
        tensor = onnx.TensorProto()
        with open(os.path.join(reference, f"output_{k}.pb"), "rb") as f:
            tensor.ParseFromString(f.read())
        elem_type = output.type.tensor_type.elem_type
        if elem_type == onnx.TensorProto.BFLOAT16:
            import ml_dtypes
            dtype = ml_dtypes.bfloat16
        else:
            dtype = onnx.helper.tensor_dtype_to_np_dtype(elem_type)
        value = numpy_helper.to_array(tensor).astype(dtype)
        with open(os.path.join(case_dir, "test_data_set_0", f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(value).SerializeToString())
    return True


def run_half(args, case_dir, devices):
    """diff_test's verdict on a model stored in a half type, at that type's tolerance."""
    tolerance = "bf16" if args.half == "bfloat16" else "fp16"
    run_args = argparse.Namespace(**{**vars(args), "devices": devices, "tolerance": tolerance})
    return diff_test.run_hsched(run_args, case_dir)


def run_int8(args, case_dir, devices):
    """steps_apart's verdict on the QDQ model, with ONNX Runtime's own levels as the floor."""
    run_args = argparse.Namespace(**{**vars(args), "devices": devices, "precision": "fp32"})
    out = "hsched-" + devices
    shutil.rmtree(os.path.join(case_dir, out), ignore_errors=True)
    try:
        run = ms_quantized_ops.run_hsched(run_args, case_dir, ["--threads", "1"], out)
    except subprocess.TimeoutExpired:
        return {"status": "hang", "detail": f"no exit within {args.timeout} s"}
    if run.returncode == 2:
        return {"status": "refused", "detail": diff_test.reason_of(run.stderr)}
    if run.returncode != 0:
        return {"status": "crash", "detail": f"exit {run.returncode}: {run.stderr[-300:]}"}
    try:
        worst, lines = qdq_graphs.steps_apart(case_dir, out)
    except FileNotFoundError as e:
        return {"status": "mismatch", "detail": f"{os.path.basename(e.filename)} not written"}
    floor, _ = qdq_graphs.steps_apart(case_dir, "ort_default")
    status = "pass" if worst <= max(2.0, 2 * floor) + 1e-3 else "mismatch"
    return {"status": status, "claimed": ms_quantized_ops.ran_on(run) != "on cpu0",
            "detail": f"{worst:.1f} steps (ONNX Runtime's levels {floor:.1f}); "
                      + "; ".join(lines)[:200]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hsched", required=True)
    parser.add_argument("--devices", default="cpu", help="comma-separated: one run each")
    parser.add_argument("--models", default=",".join(ZOO))
    parser.add_argument("--no-int8", action="store_true")
    parser.add_argument("--half", nargs="?", const="float16", choices=sorted(HALF_SUFFIX),
                        help="the models' forms of this type alone (default float16)")
    parser.add_argument("--precision", default="fp32", choices=sorted(diff_test.TOLERANCE),
                        help="hsched's for the half forms")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--timeout", type=int, default=300, help="seconds per hsched run")
    parser.add_argument("--work", help="where the models go and stay (default: a temporary "
                        "folder, removed at the end)")
    parser.add_argument("--cases", default=os.path.join(HERE, "cases"))
    parser.add_argument("--json", help="write every result here")
    parser.add_argument("--deadline", type=float, default=0,
                        help="seconds: start no hsched run or minimization after this")
    args = parser.parse_args()
    args.reference, args.split_every, args.compile_timeout_ms = "python", 0, 24 * 3600 * 1000
    start = time.monotonic()
    late = lambda: args.deadline and time.monotonic() - start > args.deadline  # noqa: E731
    work = args.work or tempfile.mkdtemp(prefix="hsched-zoo-")
    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in ZOO]
    if unknown:
        parser.error(f"not in the zoo: {', '.join(unknown)}")

    # A process a model (torch keeps what it loaded).
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs,
                                                max_tasks_per_child=1) as pool:
        exported = dict(zip(names, pool.map(export, names, [work] * len(names),
                                            [not args.no_int8] * len(names),
                                            [args.half] * len(names))))
    suffix = HALF_SUFFIX.get(args.half, "")
    print(f"exported {sum('error' not in e for e in exported.values())} of {len(names)} models "
          f"in {time.monotonic() - start:.0f} s", flush=True)
    if args.half:
        cases = [(n + suffix, os.path.join(work, n + suffix), run_half) for n in names
                 if "error" not in exported[n]]
    else:
        cases = [(n, os.path.join(work, n), run_fp32) for n in names if "error" not in exported[n]]
    cases += [(n + "_int8", os.path.join(work, n + "_int8"), run_int8) for n in names
              if exported[n].get("int8") == "ok"]
    errors = diff_test.OrtReference.run([c[1] for c in cases], "python")
    if args.half:  # ONNX Runtime's refusals (its float16 LayerNormalization): torch's outputs
        for name, case_dir, _ in cases:
            if errors[case_dir] and torch_reference(case_dir):
                print(f"{name:40} torch's outputs as the reference (ONNX Runtime: "
                      f"{errors[case_dir][:100]})")
                errors[case_dir] = None
    refused = {name: errors[case_dir] for name, case_dir, _ in cases if errors[case_dir]}
    cases = [c for c in cases if c[0] not in refused]

    # The first model on each device alone: a cold machine compiles the op programs once, not in
    # every process at the same time.
    devices_list = args.devices.split(",")
    runs = [(name, case_dir, run, devices) for name, case_dir, run in cases
            for devices in devices_list]
    results = {}
    for name, case_dir, run, devices in runs[:len(devices_list)]:
        results[(name, devices)] = run(args, case_dir, devices)
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {}
        for name, case_dir, run, devices in runs[len(devices_list):]:
            if late():
                break
            futures[pool.submit(run, args, case_dir, devices)] = (name, devices)
        for future in concurrent.futures.as_completed(futures):
            results[futures[future]] = future.result()
    saved = []
    run_of = {name: run for name, _, run in cases}
    for (name, devices), result in sorted(results.items()):
        print(f"{name:40} {devices:5} {result['status']:9} {result.get('detail', '')[:160]}")
        if result["status"] in diff_test.FAILURES and run_of[name] is run_fp32 and not late():
            import minimize  # noqa: E402  (only a failing run needs it)
            min_args = argparse.Namespace(**{**vars(args), "devices": devices,
                                             "precision": "fp32"})
            origin = (f"zoo-{name}", f"tests/differential/model_zoo.py --models {name} "
                                     f"--devices {devices} --hsched BIN")
            saved.append(minimize.minimize_and_save(min_args, os.path.join(work, name), result,
                                                    origin))
    for name, e in exported.items():
        if "error" in e or e.get("int8", "ok") != "ok":
            print(f"{name:40} not exported: {e.get('error') or e.get('int8')}")
    for name, error in refused.items():
        print(f"{name:40} ort-refused: {error[:160]}")
    for path in saved:
        print(f"saved {path}")
    failed = sum(r["status"] in diff_test.FAILURES for r in results.values())
    print(f"model_zoo: {len(results)} runs of {len(cases)} models on {args.devices}: "
          f"{sum(r['status'] == 'pass' for r in results.values())} pass, "
          f"{sum(r['status'] == 'refused' for r in results.values())} refused, {failed} failed, "
          f"{len(runs) - len(results)} not run (deadline); {time.monotonic() - start:.0f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"exported": exported, "ort_refused": refused,
                       "runs": {f"{n} {d}": r for (n, d), r in results.items()}}, f, indent=1)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
