"""Shrinks a failing differential case (diff_test.py) and saves it for a regression test.

Two steps, each kept only when the smaller model still fails the same way (mismatch, crash or
hang) on the same devices, precision and --split-every:
  1. the smallest prefix: for each node in order, a model whose sole output is that node's output,
     with only the nodes, inputs and initializers it needs; the first that fails is kept;
  2. that node alone: its computed inputs become graph inputs holding ONNX Runtime's values.
The result goes to <--cases>/<name>/ in the layout of ONNX's node tests (model.onnx,
test_data_set_0/input_K.pb, ONNX Runtime's output_K.pb) with failure.txt saying how it fails.
"""
import concurrent.futures
import os
import shutil

import onnx
from onnx import helper

import diff_test


def load_inputs(case_dir):
    data_dir = os.path.join(case_dir, "test_data_set_0")
    inputs, k = [], 0
    while os.path.exists(os.path.join(data_dir, f"input_{k}.pb")):
        inputs.append(diff_test.read_tensor(os.path.join(data_dir, f"input_{k}.pb")))
        k += 1
    return inputs


def value_types(args, model, arrays, work):
    """Name -> ValueInfoProto (dtype and shape) of every value of the model: shapes as ONNX
    Runtime computes them where shape inference leaves them open (shapes computed in the graph)."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
    except Exception:  # noqa: BLE001  (then only the declared values are known)
        inferred = model
    g = inferred.graph
    types = {v.name: v for v in list(g.value_info) + list(g.input) + list(g.output)}
    open_ = [o for n in model.graph.node for o in n.output
             if o and o in types and not has_static_shape(types[o])]
    if open_:
        probe = clone_with_graph(model, helper.make_graph(
            model.graph.node, model.graph.name, model.graph.input,
            [helper.make_tensor_value_info(o, types[o].type.tensor_type.elem_type, None)
             for o in open_], model.graph.initializer))
        probe_dir = write(os.path.join(work, "probe"), probe, arrays)
        if not diff_test.OrtReference.run([probe_dir], args.reference)[probe_dir]:
            for k, name in enumerate(open_):
                value = diff_test.read_tensor(
                    os.path.join(probe_dir, "test_data_set_0", f"output_{k}.pb"))
                types[name] = helper.make_tensor_value_info(
                    name, types[name].type.tensor_type.elem_type, value.shape)
    return {name: v for name, v in types.items() if has_static_shape(v)}


def has_static_shape(value_info):
    t = value_info.type.tensor_type
    return t.HasField("shape") and all(d.HasField("dim_value") for d in t.shape.dim)


def subgraph(model, arrays, outputs, types):
    """(model, input arrays) computing `outputs` with the nodes they need only."""
    nodes_in = list(model.graph.node)
    producers = {o: k for k, n in enumerate(nodes_in) for o in n.output}
    needed, stack = set(), list(outputs)
    while stack:
        k = producers.get(stack.pop())
        if k is None or k in needed:
            continue
        needed.add(k)
        stack.extend(i for i in nodes_in[k].input if i)
    nodes = [n for k, n in enumerate(nodes_in) if k in needed]
    used = {i for n in nodes for i in n.input} | set(outputs)
    kept = [(v, a) for v, a in zip(model.graph.input, arrays) if v.name in used]
    graph = helper.make_graph(
        nodes, model.graph.name, [v for v, _ in kept], [types[o] for o in outputs],
        [t for t in model.graph.initializer if t.name in used])
    return clone_with_graph(model, graph), [a for _, a in kept]


def single_node(model, node, feeds, output, types):
    """A model of `node` alone; `feeds` maps its computed inputs to their values."""
    inits = {t.name: t for t in model.graph.initializer}
    graph = helper.make_graph(
        [node], model.graph.name,
        [helper.make_tensor_value_info(name, types[name].type.tensor_type.elem_type, a.shape)
         for name, a in feeds.items()],
        [types[output]],
        [inits[i] for i in dict.fromkeys(node.input) if i in inits])
    return clone_with_graph(model, graph), list(feeds.values())


def clone_with_graph(model, graph):
    out = helper.make_model(graph, producer_name=model.producer_name,
                            opset_imports=list(model.opset_import))
    out.ir_version = model.ir_version
    return out


def write(case_dir, model, arrays):
    names = [v.name for v in model.graph.input]
    diff_test.gen_graphs.write_case(case_dir, model, list(zip(names, arrays)))
    return case_dir


def evaluate(args, dirs):
    """dir -> diff_test result; ONNX Runtime first, then hsched on the cases it ran."""
    refused = diff_test.OrtReference.run(dirs, args.reference)
    results = {d: {"status": "ort-refused", "detail": e} for d, e in refused.items() if e}
    todo = [d for d in dirs if d not in results]
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for d, r in zip(todo, pool.map(lambda d: diff_test.run_hsched(args, d), todo)):
            results[d] = r
    return results


def smallest_prefix(args, case_dir, work, status):
    """(node index, output name, dir) of the first prefix that fails with `status`, or None."""
    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    arrays = load_inputs(case_dir)
    types = value_types(args, model, arrays, work)
    candidates = [(i, o) for i, n in enumerate(model.graph.node) for o in n.output
                  if o and o in types]
    chunk = max(4, args.jobs * 2)
    for start in range(0, len(candidates), chunk):
        dirs = []
        for i, o in candidates[start:start + chunk]:
            sub, sub_arrays = subgraph(model, arrays, [o], types)
            dirs.append(write(os.path.join(work, f"prefix_{i}_{o}"), sub, sub_arrays))
        results = evaluate(args, dirs)
        for (i, o), d in zip(candidates[start:start + chunk], dirs):
            if results[d]["status"] == status:
                return i, o, d, results[d]
    return None


def isolate(args, case_dir, work, index, output, status):
    """The node `index` alone (inputs from ONNX Runtime), if it still fails: (dir, result)."""
    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    arrays = load_inputs(case_dir)
    types = value_types(args, model, arrays, work)
    node = model.graph.node[index]
    inits = {t.name for t in model.graph.initializer}
    computed = [i for i in dict.fromkeys(node.input) if i and i not in inits]
    if not computed or any(i not in types for i in computed):
        return None
    graph_inputs = dict(zip((v.name for v in model.graph.input), arrays))
    feeds = {i: graph_inputs[i] for i in computed if i in graph_inputs}
    inner = [i for i in computed if i not in graph_inputs]
    if inner:
        feeder, feeder_arrays = subgraph(model, arrays, inner, types)
        feeder_dir = write(os.path.join(work, "feeder"), feeder, feeder_arrays)
        if diff_test.OrtReference.run([feeder_dir], args.reference)[feeder_dir]:
            return None
        for k, name in enumerate(inner):
            feeds[name] = diff_test.read_tensor(
                os.path.join(feeder_dir, "test_data_set_0", f"output_{k}.pb"))
    feeds = {i: feeds[i] for i in computed}
    single, single_arrays = single_node(model, node, feeds, output, types)
    single_dir = write(os.path.join(work, "single"), single, single_arrays)
    result = evaluate(args, [single_dir])[single_dir]
    return (single_dir, result) if result["status"] == status else None


def minimize_and_save(args, case_dir, result, origin=None):
    """Saves the smallest failing form of `case_dir` under args.cases; returns its path.
    `origin`: (label, command making the whole case) of a case not generated by gen_graphs."""
    status = result["status"]
    if origin is None:
        index = int(os.path.basename(case_dir).split("_")[1])
        origin = (f"s{args.seed}-c{index}",
                  f"tests/differential/diff_test.py --seed {args.seed} --first {index} --count 1 "
                  f"--devices {args.devices} --precision {args.precision}"
                  + (f" --split-every {args.split_every}" if args.split_every else ""))
    work = case_dir + "-min"
    os.makedirs(work, exist_ok=True)
    chosen, chosen_result, how, op = case_dir, result, "the whole model", "graph"
    prefix = smallest_prefix(args, case_dir, work, status)
    if prefix is not None:
        i, output, chosen, chosen_result = prefix
        op = onnx.load(os.path.join(case_dir, "model.onnx")).graph.node[i].op_type
        how = f"the prefix of the model up to node #{i} ({op}), output {output}"
        alone = isolate(args, case_dir, work, i, output, status)
        if alone is not None:
            chosen, chosen_result = alone
            how = f"node #{i} ({op}) alone, its inputs computed by ONNX Runtime"
    name = "-".join([args.devices.replace(",", "+"), args.precision]
                    + ([f"split{args.split_every}"] if args.split_every else [])
                    + [origin[0], op])
    dest = os.path.join(args.cases, name)
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    shutil.copy(os.path.join(chosen, "model.onnx"), dest)
    shutil.copytree(os.path.join(chosen, "test_data_set_0"), os.path.join(dest, "test_data_set_0"))
    env = "ZE_ENABLE_ALT_DRIVERS=<build>/backends/level_zero/sim/libze_hsched_sim.so " \
        if "npu" in args.devices.split(",") else ""
    command = diff_test.hsched_command(args, dest, "OUT")
    command[0] = "hsched"
    command[2] = "model.onnx"
    command[command.index("--inputs") + 1] = "test_data_set_0"
    with open(os.path.join(dest, "failure.txt"), "w") as f:
        f.write(f"{status}: {chosen_result.get('detail', '')}\n"
                f"model: {how}\n"
                f"expected outputs: ONNX Runtime (onnxruntime-node, CPU, optimizations off)\n"
                f"reproduce (in this folder): {env}{' '.join(command)}\n"
                f"regenerate the whole case: {origin[1]}\n"
                f"whole case: {status}: {result.get('detail', '')}\n")
    shutil.rmtree(work, ignore_errors=True)
    return dest
