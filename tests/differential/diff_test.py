#!/usr/bin/python3
"""Differential test: random ONNX graphs (gen_graphs.py) run by `hsched run` and by ONNX Runtime
(ort_reference.js, or ort_reference.py with --reference python), outputs compared.

    /usr/bin/python3 tests/differential/diff_test.py [--count N] [--seed S] [--first I]
        [--devices cpu|opencl|npu|...] [--precision fp32|fp16|bf16] [--split-every K] [--jobs N]
        [--hsched BIN] [--timeout SEC] [--compile-timeout-ms MS] [--reference node|python]
        [--keep-failures DIR] [--cases DIR] [--no-minimize]

Each case ends as one of: pass; refused (hsched exit 2 with a reason: counted, grouped by reason,
not a failure); ort-refused (ONNX Runtime cannot load or run the model: skipped); fp16-limited
(--precision fp16 only: a mismatch that fp16 storage itself explains, see below; counted, not a
failure); mismatch (an output differs beyond the tolerance, has another shape or dtype, or is
missing); crash (a signal or an exit status other than 0 and 2); hang (no exit within --timeout).
Mismatches, crashes and hangs are failures: each is minimized (minimize.py) and saved under --cases
(tests/differential/cases/<name>/: model.onnx, test_data_set_0/input_K.pb and ONNX Runtime's
output_K.pb, failure.txt saying how it failed). --keep-failures DIR also keeps the whole case.

Tolerance: |hsched - ort| <= atol + rtol |ort| elementwise, NaN equal to NaN, integers and bools
exactly; fp32 rtol 1e-3, atol 1e-4; fp16 (--precision fp16, the NPU) rtol 3e-2, atol 3e-2; bf16
(--precision bf16, the CPU's bf16 convolutions and matmuls) rtol 1e-1, atol 5e-2.
atol is scaled by the largest magnitude in the expected tensor when that is above 1, so a value
that cancels to near 0 in a tensor of large values is held to the error of its inputs.

fp16 storage: a graph can be ill-conditioned in fp16 whatever runs it (an intermediate beyond
65504, a LayerNormalization over two nearly equal values, Cos of 1e4, where one fp16 step is 8).
When an fp16 run mismatches, ONNX Runtime runs the graph again with every float input,
initializer, node output and graph output rounded to fp16 (Cast pairs), and each element's
tolerance grows by twice the distance between the two references (without bound where the rounded
reference is not finite and the other is). If the case still mismatches, the same is done with the
rounding placed as the run places it (`hsched plan`): a value is rounded where a node of the fp16
device makes it, and for the device's nodes that read it; a value the CPU makes and reads stays
fp32 (a mean computed on the CPU from fp32 values, subtracted on the NPU from fp16 ones). A case
that passes either way is fp16-limited: its error is the format's, not hsched's.

With npu in --devices and no ZE_ENABLE_ALT_DRIVERS set, the simulated NPU driver beside --hsched
(<build>/backends/level_zero/sim/libze_hsched_sim.so) is used. Exit 1 on any failure.
"""
import argparse
import collections
import concurrent.futures
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import gen_graphs  # noqa: E402

TOLERANCE = {"fp32": (1e-3, 1e-4), "fp16": (3e-2, 3e-2), "bf16": (1e-1, 5e-2)}  # (rtol, atol)
FAILURES = ("mismatch", "crash", "hang")
STATUSES = ("pass", "refused", "ort-refused", "fp16-limited") + FAILURES


def read_tensor(path):
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return numpy_helper.to_array(tensor)


def compare(expected, got, rtol, atol, slack=None):
    """None when `got` matches `expected`, else one line saying how it differs; `slack` (an array
    of expected's shape) widens each float element's tolerance."""
    if expected.dtype != got.dtype:
        return f"dtype {got.dtype}, expected {expected.dtype}"
    if expected.shape != got.shape:
        return f"shape {list(got.shape)}, expected {list(expected.shape)}"
    # ml_dtypes' bfloat16 (onnx's numpy_helper on newer onnx) is a float of kind 'V'.
    if expected.dtype.kind != "f" and expected.dtype.name != "bfloat16":
        diff = int((expected != got).sum())
        return None if diff == 0 else f"{diff} of {expected.size} elements differ"
    e, g = expected.astype(np.float64), got.astype(np.float64)
    finite = np.isfinite(e)
    magnitude = float(np.abs(e[finite]).max()) if finite.any() else 1.0
    atol *= max(1.0, magnitude)
    bound = atol + rtol * np.abs(e) + (0.0 if slack is None else slack)
    with np.errstate(invalid="ignore"):
        close = (np.abs(g - e) <= bound) | (np.isnan(e) & np.isnan(g)) | (e == g) | np.isinf(bound)
    if close.all():
        return None
    bad = np.argwhere(~close)[0]
    with np.errstate(invalid="ignore"):
        error = np.where(close, 0, np.abs(g - e))
    worst = np.max(np.nan_to_num(error, nan=np.inf, posinf=np.inf))
    return (f"max error {worst:.3g} at {int((~close).sum())} of {close.size} elements "
            f"(first at {list(int(i) for i in bad)}: got {g[tuple(bad)]:.6g}, "
            f"expected {e[tuple(bad)]:.6g})")


def write_fp16_storage_case(case_dir, to_dir, on_device=None):
    """A copy of the case, without its reference outputs, whose graph reads float values through
    fp16 (a Cast to float16 and back). on_device None: every float input, initializer, node output
    and graph output is rounded. Otherwise the set of nodes the fp16 device runs: a value is
    rounded where such a node produces it (for every reader and as a graph output) or reads it
    (for that node only); a value made and read off the device stays fp32, as it does in a run
    that mixes devices."""
    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    graph = onnx.shape_inference.infer_shapes(model).graph
    is_float = {v.name for v in list(graph.input) + list(graph.value_info) + list(graph.output)
                if v.type.tensor_type.elem_type == onnx.TensorProto.FLOAT}
    initialized = {init.name for init in model.graph.initializer}
    for init in model.graph.initializer:
        value = numpy_helper.to_array(init)
        if value.dtype == np.float32:
            is_float.add(init.name)
            if on_device is None:
                init.CopyFrom(numpy_helper.from_array(
                    value.astype(np.float16).astype(np.float32), init.name))
    values = {v.name for v in model.graph.input if v.name in is_float and v.name not in initialized}
    values |= {o for n in model.graph.node for o in n.output if o in is_float}
    if on_device is None:
        device_made = values
    else:
        values |= initialized & is_float
        device_made = {o for n in model.graph.node if n.name in on_device for o in n.output}

    def rounded(name):  # name + "_r": the value through fp16
        return [onnx.helper.make_node("Cast", [name], [name + "_h"], to=onnx.TensorProto.FLOAT16),
                onnx.helper.make_node("Cast", [name + "_h"], [name + "_r"],
                                      to=onnx.TensorProto.FLOAT)]

    read_rounded = {v for n in model.graph.node if on_device and n.name in on_device
                    for v in n.input if v in values}
    needed = (device_made | read_rounded) & values
    nodes = [c for v in model.graph.input if v.name in needed for c in rounded(v.name)]
    nodes += [c for v in sorted(initialized & needed) for c in rounded(v)]
    for node in model.graph.node:
        copy = onnx.NodeProto()
        copy.CopyFrom(node)
        reads_rounded = on_device is None or node.name in on_device
        copy.input[:] = [i + "_r" if i in values and (i in device_made or reads_rounded) else i
                         for i in node.input]
        nodes += [copy] + [c for o in node.output if o in needed for c in rounded(o)]
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    for value in model.graph.output:
        if value.name in device_made and value.name in values:
            value.name += "_r"
    os.makedirs(os.path.join(to_dir, "test_data_set_0"))
    with open(os.path.join(to_dir, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    data_dir = os.path.join(case_dir, "test_data_set_0")
    for f in os.listdir(data_dir):
        if f.startswith("input_"):
            shutil.copy(os.path.join(data_dir, f), os.path.join(to_dir, "test_data_set_0", f))


def nodes_on_device(args, case_dir):
    """The names of the ONNX nodes hsched's plan puts off the CPU; None if it cannot say. A node
    the plan does not list (fused into another, or folded) counts as on the device when one of
    its readers or its producers is."""
    command = [args.hsched, "plan", os.path.join(case_dir, "model.onnx"), "--devices",
               args.devices, "--precision", args.precision, "--json"]
    if args.split_every:
        command += ["--split-every", str(args.split_every)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
        placed = {n["name"]: n["device"] != "cpu0" for n in json.loads(done.stdout)["nodes"]}
    except (subprocess.TimeoutExpired, ValueError, KeyError):
        return None
    nodes = onnx.load(os.path.join(case_dir, "model.onnx")).graph.node
    producer = {o: n.name for n in nodes for o in n.output}
    on_device = {n.name for n in nodes if placed.get(n.name)}
    for node in nodes:
        if node.name in placed:
            continue
        neighbours = [producer.get(i) for i in node.input]
        neighbours += [m.name for m in nodes if set(m.input) & set(node.output)]
        if any(placed.get(name) for name in neighbours):
            on_device.add(node.name)
    return on_device


def fp16_slack(args, case_dir, expected_files, on_device=None):
    """{output file: slack} from ONNX Runtime on the fp16-storage copy (write_fp16_storage_case);
    None if that fails."""
    with tempfile.TemporaryDirectory(prefix="hsched-fp16-") as work:
        copy = os.path.join(work, "case")
        write_fp16_storage_case(case_dir, copy, on_device)
        if OrtReference.run([copy], args.reference).get(copy):
            return None
        slack = {}
        for f in expected_files:
            e = read_tensor(os.path.join(case_dir, "test_data_set_0", f))
            if e.dtype.kind != "f":
                continue
            r = read_tensor(os.path.join(copy, "test_data_set_0", f)).astype(np.float64)
            e = e.astype(np.float64)
            with np.errstate(invalid="ignore"):
                slack[f] = np.where(np.isfinite(r) | ~np.isfinite(e), 2 * np.abs(r - e), np.inf)
            slack[f] = np.nan_to_num(slack[f], nan=0.0, posinf=np.inf)
        return slack


def explained_by_fp16(args, case_dir, data_dir, out_dir, expected):
    """Whether hsched's outputs pass once widened by one of the two fp16-storage references: every
    value rounded, or the values the plan's fp16 device makes or reads."""
    slack = fp16_slack(args, case_dir, expected)
    if slack is not None and not compare_outputs(args, data_dir, out_dir, expected, slack):
        return True
    on_device = nodes_on_device(args, case_dir)
    if on_device is None:
        return False
    slack = fp16_slack(args, case_dir, expected, on_device)
    return slack is not None and not compare_outputs(args, data_dir, out_dir, expected, slack)


def reason_of(stderr):
    """hsched's error line, without the model path, numbers folded (so reasons group)."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    if not lines:
        return "exit 2 without a message"
    line = re.sub(r"^hsched: error: \S*model\.onnx: ", "", lines[-1])
    return line.replace("hsched: error: ", "")


def group_of(reason):
    reason = re.sub(r"'[^']*'", "'...'", reason)
    reason = re.sub(r"\[[-0-9, ]*\]", "[..]", reason)
    return re.sub(r"\d+", "N", reason)


def hsched_command(args, case_dir, out_dir):
    command = [args.hsched, "run", os.path.join(case_dir, "model.onnx"), "--devices", args.devices,
               "--precision", args.precision, "--inputs",
               os.path.join(case_dir, "test_data_set_0"), "--outputs", out_dir,
               "--iterations", "1", "--warmup", "0", "--threads", "1", "--json"]
    if args.split_every:
        command += ["--split-every", str(args.split_every)]
    if args.compile_timeout_ms:
        command += ["--compile-timeout-ms", str(args.compile_timeout_ms)]
    return command


def run_hsched(args, case_dir, keep=None):
    """{"status", "detail", "claimed"} of one case whose ONNX Runtime outputs are in place;
    hsched's outputs are left in `keep` (an empty folder) when given."""
    data_dir = os.path.join(case_dir, "test_data_set_0")
    with (contextlib.nullcontext(keep) if keep else
          tempfile.TemporaryDirectory(prefix="hsched-diff-")) as out_dir:
        try:
            done = subprocess.run(hsched_command(args, case_dir, out_dir), capture_output=True,
                                  text=True, timeout=args.timeout, errors="replace")
        except subprocess.TimeoutExpired:
            return {"status": "hang", "detail": f"no exit within {args.timeout} s"}
        if done.returncode not in (0, 2):
            tail = " ".join(done.stderr.strip().splitlines()[-2:])[:300]
            return {"status": "crash", "detail": f"exit {done.returncode}: {tail}"}
        if done.returncode == 2:
            return {"status": "refused", "detail": reason_of(done.stderr)}
        try:
            report = json.loads(done.stdout)
            claimed = any(p["device"] != "cpu0" and p["nodes"] > 0 for p in report["partitions"])
        except (ValueError, KeyError) as e:
            got = done.stdout.strip()[:120].replace("\n", " ") or "nothing"
            tail = " ".join(done.stderr.strip().splitlines()[-2:])[:200]
            return {"status": "crash",
                    "detail": f"exit 0 without a JSON report ({type(e).__name__}: {e}); "
                              f"stdout {len(done.stdout)} bytes: {got!r}; stderr: {tail!r}"}
        expected = sorted((f for f in os.listdir(data_dir) if f.startswith("output_")),
                          key=lambda f: int(f[7:-3]))
        for f in expected:
            if not os.path.exists(os.path.join(out_dir, f)):
                return {"status": "mismatch", "detail": f"{f} not written", "claimed": claimed}
        differences = compare_outputs(args, data_dir, out_dir, expected)
        if not differences:
            return {"status": "pass", "claimed": claimed}
        mismatch = {"status": "mismatch", "detail": differences[0], "claimed": claimed}
        if args.precision != "fp16":
            return mismatch
        if not explained_by_fp16(args, case_dir, data_dir, out_dir, expected):
            return mismatch
        return {"status": "fp16-limited", "detail": differences[0], "claimed": claimed}


def compare_outputs(args, data_dir, out_dir, files, slack=None):
    """'FILE: how it differs' for each output beyond the tolerance (widened by slack[FILE]): that
    of args.tolerance where a caller sets it (a model stored in fp16), else of args.precision."""
    differences = []
    tolerance = TOLERANCE[getattr(args, "tolerance", None) or args.precision]
    for f in files:
        difference = compare(read_tensor(os.path.join(data_dir, f)),
                             read_tensor(os.path.join(out_dir, f)), *tolerance,
                             slack=(slack or {}).get(f))
        if difference:
            differences.append(f"{f}: {difference}")
    return differences


class OrtReference:
    """One process running ort_reference.js (onnxruntime-node) or, with `python`, ort_reference.py
    (onnxruntime's Python package); `run(dirs)` answers {dir: error or None}."""

    COMMANDS = {"node": ["node", os.path.join(HERE, "ort_reference.js")],
                "python": [sys.executable, os.path.join(HERE, "ort_reference.py")]}

    def __init__(self, reference="node"):
        self.process = subprocess.Popen(self.COMMANDS[reference], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, bufsize=1)

    def send(self, case_dir):
        self.process.stdin.write(case_dir + "\n")
        self.process.stdin.flush()

    def close(self):
        self.process.stdin.close()

    def replies(self):
        for line in self.process.stdout:
            reply = json.loads(line)
            yield reply["case"], None if reply["ok"] else reply["error"]
        if self.process.wait() != 0:
            raise RuntimeError(f"the ONNX Runtime reference exited with {self.process.returncode}")

    @staticmethod
    def run(dirs, reference="node", level="disabled"):
        """One process for the batch `dirs` (written at once and read to the end, so no pipe
        fills), ONNX Runtime's graph optimizations at `level`: {dir: error or None}."""
        command = OrtReference.COMMANDS[reference] + [level]
        answer = subprocess.run(command, input="".join(d + "\n" for d in dirs),
                                capture_output=True, text=True)
        replies = [json.loads(line) for line in answer.stdout.splitlines() if line.strip()]
        if len(replies) != len(dirs):
            raise RuntimeError(f"{os.path.basename(command[-1])} answered {len(replies)} of "
                               f"{len(dirs)} cases: {answer.stderr.strip()[:300]}")
        return {r["case"]: None if r["ok"] else r["error"] for r in replies}


def default_hsched():
    for build in ("release", "api"):
        path = os.path.join(ROOT, "build", build, "cli", "hsched")
        if os.access(path, os.X_OK):
            return path
    return os.path.join(ROOT, "build", "release", "cli", "hsched")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--first", type=int, default=0, help="index of the first case")
    parser.add_argument("--devices", default="cpu")
    parser.add_argument("--precision", default="fp32", choices=sorted(TOLERANCE))
    parser.add_argument("--split-every", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--hsched", default=default_hsched())
    parser.add_argument("--timeout", type=int, default=60, help="seconds per hsched run")
    parser.add_argument("--compile-timeout-ms", type=int,
                        help="hsched run's (a cold GPU machine compiles for longer than its 30 s)")
    parser.add_argument("--reference", default="node", choices=sorted(OrtReference.COMMANDS),
                        help="ONNX Runtime from node (onnxruntime-node) or python (onnxruntime)")
    parser.add_argument("--keep-failures", help="copy every failing case here, unminimized")
    parser.add_argument("--cases", default=os.path.join(HERE, "cases"),
                        help="where minimized failures are saved")
    parser.add_argument("--no-minimize", action="store_true")
    parser.add_argument("--max-minimize", type=int, default=10,
                        help="minimize at most this many failures (the others are listed)")
    parser.add_argument("--json", help="write every case's result here")
    args = parser.parse_args()
    if not os.access(args.hsched, os.X_OK):
        parser.error(f"{args.hsched}: no hsched program (build first or pass --hsched)")
    use_simulated_npu(args.devices, args.hsched)
    return args


def use_simulated_npu(devices, hsched):
    """With npu in `devices` and no ZE_ENABLE_ALT_DRIVERS set, the simulated NPU driver beside
    `hsched` for this process and the runs it starts."""
    if "npu" in devices.split(",") and "ZE_ENABLE_ALT_DRIVERS" not in os.environ:
        sim = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(hsched))),
                           "backends", "level_zero", "sim", "libze_hsched_sim.so")
        if os.path.exists(sim):
            os.environ["ZE_ENABLE_ALT_DRIVERS"] = sim


def generate_all(args, work, ort, slots, stop):
    """The writer thread: cases into `work`, each handed to ONNX Runtime; `slots` bounds the
    cases on disk at once."""
    try:
        for index in range(args.first, args.first + args.count):
            slots.acquire()
            if stop.is_set():
                break
            case_dir = os.path.join(work, f"case_{index:05d}")
            gen_graphs.write_case(case_dir, *gen_graphs.generate(args.seed, index))
            ort.send(case_dir)
    finally:
        ort.close()


def main():
    args = parse_args()
    work = tempfile.mkdtemp(prefix="hsched-differential-")
    results = {}
    start = time.monotonic()
    ort = OrtReference(args.reference)
    slots = threading.Semaphore(4 * args.jobs + 32)
    stop = threading.Event()
    writer = threading.Thread(target=generate_all, args=(args, work, ort, slots, stop), daemon=True)
    writer.start()
    failed_dirs = {}

    def finish(case_dir, result):
        name = os.path.basename(case_dir)
        results[name] = result
        if result["status"] in FAILURES + ("fp16-limited",):
            print(f"{result['status']:9} {name}: {result['detail']}", flush=True)
        if result["status"] in FAILURES:
            failed_dirs[name] = case_dir
            if args.keep_failures:
                shutil.copytree(case_dir, os.path.join(args.keep_failures, name),
                                dirs_exist_ok=True)
        else:
            shutil.rmtree(case_dir, ignore_errors=True)
        if len(results) % 500 == 0:
            print(f"... {len(results)} cases, {time.monotonic() - start:.0f} s", flush=True)
        slots.release()

    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            pending = []
            for case_dir, error in ort.replies():
                if error:
                    finish(case_dir, {"status": "ort-refused", "detail": error})
                    continue
                future = pool.submit(run_hsched, args, case_dir)
                future.add_done_callback(lambda f, d=case_dir: finish(d, f.result()))
                pending.append(future)
            for future in pending:
                future.result()
    except KeyboardInterrupt:
        stop.set()
        print("interrupted; the summary counts the cases finished so far", file=sys.stderr)
    elapsed = time.monotonic() - start
    saved = []
    if not args.no_minimize and failed_dirs:
        import minimize  # noqa: E402  (only a failing run needs it)
        for name in sorted(failed_dirs)[:args.max_minimize]:
            saved.append(minimize.minimize_and_save(args, failed_dirs[name], results[name]))
    shutil.rmtree(work, ignore_errors=True)
    return summarize(args, results, elapsed, saved)


def summarize(args, results, elapsed, saved):
    counts = collections.Counter(r["status"] for r in results.values())
    refusals = collections.Counter(group_of(r["detail"]) for r in results.values()
                                   if r["status"] == "refused")
    if refusals:
        print("refused by hsched, by reason:")
        for reason, n in refusals.most_common():
            example = next(k for k, r in sorted(results.items())
                           if r["status"] == "refused" and group_of(r["detail"]) == reason)
            print(f"  {n:6d}  {reason[:150]}  (e.g. {example})")
    ort_refusals = collections.Counter(group_of(r["detail"]) for r in results.values()
                                       if r["status"] == "ort-refused")
    for reason, n in ort_refusals.most_common(5):
        print(f"  ort-refused {n}: {reason[:150]}")
    for path in saved:
        print(f"saved {os.path.relpath(path, ROOT) if path.startswith(ROOT) else path}")
    claimed = [r for r in results.values() if r.get("claimed")]
    device_note = ""
    if args.devices != "cpu":
        device_note = (f"; {len(claimed)} ran a partition off the CPU, "
                       f"{sum(r['status'] == 'pass' for r in claimed)} of them pass")
    print(f"diff_test --devices {args.devices} --precision {args.precision}"
          + (f" --split-every {args.split_every}" if args.split_every else "")
          + f" --seed {args.seed}: {len(results)} graphs in {elapsed:.1f} s "
          + f"({len(results) / max(elapsed, 1e-9):.1f} graphs/s): "
          + ", ".join(f"{counts[s]} {s}" for s in STATUSES)
          + device_note)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"devices": args.devices, "precision": args.precision, "seed": args.seed,
                       "cases": results}, f, indent=1, sort_keys=True)
    return 1 if any(counts[s] for s in FAILURES) else 0


if __name__ == "__main__":
    sys.exit(main())
