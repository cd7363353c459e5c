"""The second half of the op menu (see graph_builders.py): reductions, softmax, MatMul/Gemm,
Conv blocks, pools, normalizations, attention, Pad, Resize, comparisons with Where, Cast."""
import math

import numpy as np

from graph_builders import (BOOL, FLOAT, FLOAT16, INT32, INT64, broadcast_shape, is_float,
                            operand, partner_shape, signed_axis)


def reduce(g):
    op = g.choice(["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceSumSquare",
                   "ReduceMean", "ReduceSum"])
    x = g.source(lambda v: v.rank >= 1 and is_float(v))
    if x is None:
        return False
    keepdims = g.choice([0, 1])
    axes = None
    if not g.chance(0.15):
        axes = sorted(int(a) for a in g.rng.choice(x.rank, size=g.randint(1, x.rank),
                                                   replace=False))
    reduced = list(range(x.rank)) if axes is None else axes
    shape = [1 if i in reduced else d for i, d in enumerate(x.shape)]
    if not keepdims:
        shape = [d for i, d in enumerate(x.shape) if i not in reduced]
    count = int(np.prod([x.shape[i] for i in reduced]))
    scale = {"ReduceSum": x.scale * count, "ReduceSumSquare": x.scale ** 2 * count}.get(op, x.scale)
    attrs = {} if keepdims and g.chance(0.3) else {"keepdims": keepdims}
    inputs = [x]
    written = None if axes is None else [signed_axis(g, a, x.rank) for a in axes]
    if op == "ReduceSum":  # axes became an input in opset 13
        if written is not None:
            inputs.append(g.ints(written))
    elif written is not None:
        attrs["axes"] = written
    g.op(op, inputs, shape, scale=scale, exact=x.exact and op in ("ReduceMax", "ReduceMin"),
         **attrs)
    return True


def arg_reduce(g):
    """ArgMax/ArgMin of an exact value (ties occur; the first or last index wins)."""
    x = g.source(lambda v: v.rank >= 1 and is_float(v) and v.exact, exact=True)
    if x is None:
        return False
    axis = g.randint(0, x.rank - 1)
    keepdims = g.choice([0, 1])
    shape = [1 if i == axis else d for i, d in enumerate(x.shape)]
    if not keepdims:
        del shape[axis]
    attrs = {"axis": signed_axis(g, axis, x.rank), "keepdims": keepdims}
    if g.chance(0.3):
        attrs["select_last_index"] = 1
    g.op(g.choice(["ArgMax", "ArgMin"]), [x], shape, dtype=INT64, exact=True, **attrs)
    return True


def softmax(g):
    x = g.source(lambda v: v.rank >= 1 and is_float(v))
    if x is None:
        return False
    op = g.choice(["Softmax", "Softmax", "LogSoftmax"])
    axis = g.randint(-x.rank, x.rank - 1)
    attrs = {} if axis == -1 and g.chance(0.5) else {"axis": axis}
    g.op(op, [x], x.shape, scale=1.0 if op == "Softmax" else 2 * x.scale + 3, **attrs)
    return True


def matmul(g):
    x = g.source(lambda v: 1 <= v.rank <= 4 and is_float(v) and v.shape[-1] <= 64)
    if x is None:
        return False
    k = x.shape[-1]
    n = g.choice([1, 2, 3, 4, 8, 16])
    mode = g.choice(["weight", "weight", "batched", "vector", "left"])
    if mode == "weight":
        a, b = x, g.weight((k, n), k)
    elif mode == "vector":
        a, b = x, g.weight((k,), k)
    elif mode == "batched":
        batch = partner_shape(g, x.shape[:-2]) if x.rank > 2 else ()
        if x.rank <= 2 and g.chance(0.5):
            batch = (g.choice([1, 2, 3]),)
        a, b = x, operand(g, batch + (k, n))
    else:  # x on the right: [.., M, K'] @ x
        if x.rank < 2:
            return False
        a, b = operand(g, (g.choice([1, 2, 5]), x.shape[-2])), x
    out = np.matmul(np.zeros(a.shape, np.float32), np.zeros(b.shape, np.float32)).shape
    inner = a.shape[-1]
    g.op("MatMul", [a, b], out, scale=a.scale * b.scale * math.sqrt(inner) + 0.1)
    return True


def gemm(g):
    x = g.source(lambda v: v.rank >= 1 and is_float(v) and v.size <= 4096)
    if x is None:
        return False
    if x.rank != 2:
        axis = g.randint(0, x.rank - 1) if x.rank > 1 else 0
        x = g.op("Flatten", [x], [int(np.prod(x.shape[:axis])), int(np.prod(x.shape[axis:]))],
                 scale=x.scale, exact=x.exact, axis=axis)
    trans_a, trans_b = g.choice([0, 1]), g.choice([0, 1])
    m, k = x.shape[::-1] if trans_a else x.shape
    if k > 256:
        return False
    n = g.choice([1, 3, 4, 8, 16])
    b = g.weight((n, k) if trans_b else (k, n), k)
    inputs = [x, b]
    c_shape = g.choice([None, (), (n,), (1, n), (m, 1), (m, n)])
    if c_shape is not None:
        inputs.append(g.const(g.random_floats(c_shape)))
    attrs = {}
    if trans_a:
        attrs["transA"] = 1
    if trans_b:
        attrs["transB"] = 1
    if g.chance(0.3):
        attrs["alpha"] = g.choice([0.5, 2.0])
    if c_shape is not None and g.chance(0.3):
        attrs["beta"] = g.choice([0.5, 2.0])
    g.op("Gemm", inputs, (m, n), scale=2 * x.scale * math.sqrt(k) + 2, **attrs)
    return True


def image(g, rank=4, max_channels=16):
    """An existing N,C,spatial value or a new input of that rank."""
    def make():
        spatial = [g.choice([3, 4, 5, 7, 8, 9, 12]) for _ in range(rank - 2)]
        return (g.choice([1, 1, 2]), g.choice([1, 2, 3, 4, 8])) + tuple(spatial)
    return g.source(lambda v: is_float(v) and v.rank == rank and v.shape[1] <= max_channels
                    and min(v.shape[2:]) >= 2 and v.size <= 8192, make_shape=make)


def window_attrs(g, spatial, kernel_max, pad_below_kernel):
    """Kernel, strides, dilations and padding for a Conv or pool over `spatial`; returns
    (attrs, output spatial dims) or None when a window does not fit."""
    r = len(spatial)
    kernel = [g.randint(1, kernel_max) for _ in range(r)]
    strides = [g.choice([1, 1, 2]) for _ in range(r)]
    dilations = [g.choice([1, 1, 1, 2]) for _ in range(r)]
    attrs = {"kernel_shape": kernel}
    if any(s != 1 for s in strides) or g.chance(0.3):
        attrs["strides"] = strides
    if any(d != 1 for d in dilations):
        attrs["dilations"] = dilations
    extent = [d * (k - 1) + 1 for d, k in zip(dilations, kernel)]
    auto = g.choice(["NOTSET", "NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"])
    if auto == "NOTSET":
        limit = (lambda k: k - 1) if pad_below_kernel else (lambda k: k)
        pads = [g.randint(0, min(2, limit(k))) for k in kernel for _ in (0,)]
        pads += [g.randint(0, min(2, limit(k))) for k in kernel]
        if any(pads):
            attrs["pads"] = pads
        out = [(n + pads[i] + pads[i + r] - e) // s + 1
               for i, (n, e, s) in enumerate(zip(spatial, extent, strides))]
    elif auto == "VALID":
        attrs["auto_pad"] = auto
        out = [(n - e) // s + 1 for n, e, s in zip(spatial, extent, strides)]
    else:
        if any(d != 1 for d in dilations):
            return None  # ONNX Runtime refuses SAME_* with dilations
        attrs["auto_pad"] = auto
        out = [-(-n // s) for n, s in zip(spatial, strides)]
        needed = [(o - 1) * s + e - n for o, s, e, n in zip(out, strides, extent, spatial)]
        if min(needed) < 0:
            return None  # ONNX Runtime refuses a negative total pad
        if pad_below_kernel and any(p > k - 1 for p, k in zip(needed, kernel)):
            return None
    if min(out) < 1:
        return None
    return attrs, out


def conv_block(g):
    """Conv (+BatchNormalization) (+Relu/Clip/LeakyRelu) (+residual Add)."""
    x = image(g, rank=4 if g.chance(0.85) else 3)
    if x is None:
        return False
    n, c = x.shape[:2]
    groups = 1
    if c > 1 and g.chance(0.3):
        groups = c if g.chance(0.6) else g.choice([d for d in range(1, c + 1) if c % d == 0])
    m = groups * g.choice([1, 2]) if groups > 1 else g.choice([1, 2, 4, 8, 16])
    window = window_attrs(g, x.shape[2:], 3, pad_below_kernel=False)
    if window is None:
        return False
    attrs, spatial = window
    if groups > 1:
        attrs["group"] = groups
    kernel = attrs["kernel_shape"]
    if g.chance(0.3):
        del attrs["kernel_shape"]  # inferred from the weight
    fan_in = c // groups * int(np.prod(kernel))
    inputs = [x, g.weight((m, c // groups) + tuple(kernel), fan_in)]
    if g.chance(0.6):
        inputs.append(g.const(g.random_floats((m,), -0.5, 0.5)))
    shape = (n, m) + tuple(spatial)
    y = g.op("Conv", inputs, shape, scale=x.scale * math.sqrt(3) + 0.5, **attrs)
    if g.chance(0.4):
        bn = [g.const(g.random_floats((m,), 0.5, 1.5)), g.const(g.random_floats((m,), -0.5, 0.5)),
              g.const(g.random_floats((m,), -0.5, 0.5)), g.const(g.random_floats((m,), 0.5, 2.0))]
        y = g.op("BatchNormalization", [y] + bn, shape, scale=y.scale * 2 + 0.5,
                 epsilon=g.choice([1e-5, 1e-3]))
    act = g.choice([None, "Relu", "Relu", "Clip", "LeakyRelu", "Sigmoid"])
    if act == "Clip":
        y = g.op("Clip", [y, g.floats(0.0), g.floats(6.0)], shape, scale=min(6, y.scale))
    elif act:
        y = g.op(act, [y], shape, scale=y.scale)
    if shape == x.shape and g.chance(0.6):
        g.op("Add", [y, x] if g.chance(0.5) else [x, y], shape, scale=x.scale + y.scale)
    return True


def pool(g):
    op = g.choice(["MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "MaxPool",
                   "AveragePool"])
    x = image(g, rank=4 if g.chance(0.85) else 3)
    if x is None:
        return False
    if op.startswith("Global"):
        g.op(op, [x], x.shape[:2] + (1,) * (x.rank - 2), scale=x.scale, exact=op == "GlobalMaxPool"
             and x.exact)
        return True
    window = window_attrs(g, x.shape[2:], 3, pad_below_kernel=True)
    if window is None:
        return False
    attrs, spatial = window
    if op == "AveragePool":
        attrs.pop("dilations", None)
        if attrs.get("dilations") is None and "auto_pad" not in attrs:
            r = x.rank - 2
            ext = attrs["kernel_shape"]
            pads = attrs.get("pads", [0] * 2 * r)
            strides = attrs.get("strides", [1] * r)
            spatial = [(n + pads[i] + pads[i + r] - e) // s + 1
                       for i, (n, e, s) in enumerate(zip(x.shape[2:], ext, strides))]
            if min(spatial) < 1:
                return False
        elif "auto_pad" in attrs:
            return False  # recomputing SAME/VALID without dilations is not worth it here
        if g.chance(0.5):
            attrs["count_include_pad"] = 1
    if "auto_pad" not in attrs and g.chance(0.3):
        # ceil_mode, only where the last window starts inside the input or its left padding
        # (elsewhere implementations differ on whether that window exists)
        r = x.rank - 2
        pads = attrs.get("pads", [0] * 2 * r)
        strides = attrs.get("strides", [1] * r)
        dil = attrs.get("dilations", [1] * r)
        ceil = []
        for i, n in enumerate(x.shape[2:]):
            e = dil[i] * (attrs["kernel_shape"][i] - 1) + 1
            ceil.append(-(-(n + pads[i] + pads[i + r] - e) // strides[i]) + 1)
        if ceil != spatial and all((o - 1) * s < n + p for o, s, n, p in
                                   zip(ceil, strides, x.shape[2:], pads)):
            attrs["ceil_mode"] = 1
            spatial = ceil
    g.op(op, [x], x.shape[:2] + tuple(spatial), scale=x.scale,
         exact=op == "MaxPool" and x.exact, **attrs)
    return True


def layer_norm(g):
    x = g.source(lambda v: v.rank >= 1 and is_float(v) and v.shape[-1] >= 2)
    if x is None:
        return False
    if g.opset >= 17 and g.chance(0.7):
        axis = g.randint(-x.rank, x.rank - 1) if g.chance(0.4) else -1
        normed = x.shape[axis:] if axis < 0 else x.shape[axis:]
        inputs = [x, g.const(g.random_floats(normed, 0.5, 1.5))]
        if g.chance(0.7):
            inputs.append(g.const(g.random_floats(normed, -0.5, 0.5)))
        g.op("LayerNormalization", inputs, x.shape, scale=6.0, axis=axis,
             epsilon=g.choice([1e-5, 1e-3]))
        return True
    s = x.shape
    mean_shape = s[:-1] + (1,)
    mean = g.op("ReduceMean", [x], mean_shape, scale=x.scale, axes=[-1])
    d = g.op("Sub", [x, mean], s, scale=2 * x.scale)
    var = g.op("ReduceMean", [g.op("Mul", [d, d], s, scale=d.scale ** 2)], mean_shape, axes=[-1])
    std = g.op("Sqrt", [g.op("Add", [var, g.floats([1e-3])], mean_shape)], mean_shape)
    y = g.op("Div", [d, std], s, scale=6.0)
    y = g.op("Mul", [y, g.const(g.random_floats(s[-1:], 0.5, 1.5))], s, scale=9.0)
    g.op("Add", [y, g.const(g.random_floats(s[-1:], -0.5, 0.5))], s, scale=10.0)
    return True


def instance_norm(g):
    x = image(g, rank=4 if g.chance(0.7) else 3)
    if x is None or min(x.shape[2:]) < 2:
        return False
    c = x.shape[1]
    g.op("InstanceNormalization",
         [x, g.const(g.random_floats((c,), 0.5, 1.5)), g.const(g.random_floats((c,), -0.5, 0.5))],
         x.shape, scale=6.0, epsilon=1e-3)
    return True


def group_norm(g):
    """GroupNorm as PyTorch exports it: Reshape to [N, groups, -1], InstanceNormalization,
    Reshape back, Mul and Add by per-channel constants, then often a SiLU or a Relu."""
    x = image(g)
    if x is None or x.rank != 4 or x.shape[1] % 2 or min(x.shape[2:]) < 2:
        return False
    n, c = x.shape[:2]
    groups = g.choice([d for d in (1, 2, 4) if c % d == 0])
    grouped = g.op("Reshape", [x, g.ints([n, groups, -1])], (n, groups, x.size // n // groups),
                   scale=x.scale)
    normed = g.op("InstanceNormalization",
                  [grouped, g.const(np.ones((groups,), np.float32)),
                   g.const(np.zeros((groups,), np.float32))], grouped.shape, scale=6.0,
                  epsilon=1e-5)
    y = g.op("Reshape", [normed, g.ints(list(x.shape))], x.shape, scale=6.0)
    per_channel = (c, 1, 1) if g.chance(0.5) else (1, c, 1, 1)
    y = g.op("Mul", [y, g.const(g.random_floats(per_channel, 0.5, 1.5))], x.shape, scale=9.0)
    y = g.op("Add", [y, g.const(g.random_floats(per_channel, -0.5, 0.5))], x.shape, scale=10.0)
    if g.chance(0.5):
        gate = g.op("Sigmoid", [y], x.shape, scale=1.0)
        g.op("Mul", [y, gate], x.shape, scale=10.0)
    elif g.chance(0.5):
        g.op("Relu", [y], x.shape, scale=10.0)
    return True


def vit_attention(g):
    """ViT's attention: one projection to q, k and v together, split apart by Reshape ->
    Transpose(2, 0, 3, 1, 4) -> Split -> Squeeze, scaled, K transposed, Softmax, heads merged."""
    def make():
        return (1, g.choice([2, 3, 5, 7]), g.choice([4, 8, 12]))
    x = g.source(lambda v: is_float(v) and v.rank == 3 and v.shape[2] % 2 == 0 and
                 v.shape[2] <= 24 and v.shape[1] <= 12, make_shape=make)
    if x is None:
        return False
    b, s, d = x.shape
    heads = g.choice([h for h in (1, 2) if d % h == 0])
    dh = d // heads
    qkv = g.op("MatMul", [x, g.weight((d, 3 * d), d)], (b, s, 3 * d), scale=x.scale * 2)
    r = g.op("Reshape", [qkv, g.ints([b, s, 3, heads, dh])], (b, s, 3, heads, dh), scale=qkv.scale)
    t = g.op("Transpose", [r], (3, b, heads, s, dh), perm=[2, 0, 3, 1, 4], scale=r.scale)
    parts = g.op_multi("Split", [t, g.ints([1, 1, 1])], [(1, b, heads, s, dh)] * 3, axis=0,
                       scale=t.scale)
    q, k, v = [g.op("Squeeze", [p, g.ints([0])], (b, heads, s, dh), scale=p.scale) for p in parts]
    kt = g.op("Transpose", [k], (b, heads, dh, s), perm=[0, 1, 3, 2], scale=k.scale)
    q = g.op("Mul", [q, g.floats([1 / math.sqrt(dh)])], q.shape, scale=q.scale)
    scores = g.op("MatMul", [q, kt], (b, heads, s, s), scale=q.scale * kt.scale * math.sqrt(dh))
    probs = g.op("Softmax", [scores], scores.shape, axis=-1)
    ctx = g.op("MatMul", [probs, v], (b, heads, s, dh), scale=v.scale)
    ctx = g.op("Transpose", [ctx], (b, s, heads, dh), perm=[0, 2, 1, 3], scale=ctx.scale)
    g.op("Reshape", [ctx, g.ints([b, s, d])], (b, s, d), scale=ctx.scale)
    return True


def se_block(g):
    """Squeeze-and-excitation: GlobalAveragePool, 1x1 Conv, Relu, 1x1 Conv, a gate (HardSigmoid or
    Sigmoid), x times the gate, and now and then a 1x1 Conv reading the product."""
    x = image(g)
    if x is None or x.rank != 4:
        return False
    n, c = x.shape[:2]
    r = max(1, c // 2)
    pooled = g.op("GlobalAveragePool", [x], (n, c, 1, 1), scale=x.scale)
    s = g.op("Conv", [pooled, g.weight((r, c, 1, 1), c)], (n, r, 1, 1), scale=x.scale * 2 + 0.5)
    s = g.op("Relu", [s], s.shape, scale=s.scale)
    s = g.op("Conv", [s, g.weight((c, r, 1, 1), r)], (n, c, 1, 1), scale=s.scale * 2 + 0.5)
    gate = g.op(g.choice(["HardSigmoid", "Sigmoid"]), [s], s.shape, scale=1.0)
    y = g.op("Mul", [x, gate] if g.chance(0.5) else [gate, x], x.shape, scale=x.scale)
    if g.chance(0.7):
        m = g.choice([2, 4, 8])
        g.op("Conv", [y, g.weight((m, c, 1, 1), c)], (n, m) + x.shape[2:], scale=y.scale * 2 + 0.5)
    return True


def fire(g):
    """SqueezeNet's fire module: a 1x1 squeeze Conv and Relu, then 1x1 and 3x3 (pad 1) expand
    Convs with their Relus, concatenated over the channels."""
    x = image(g)
    if x is None or x.rank != 4:
        return False
    n, c = x.shape[:2]
    sq, e1, e3 = g.choice([2, 4]), g.choice([2, 4, 8]), g.choice([2, 4, 8])
    s = g.op("Conv", [x, g.weight((sq, c, 1, 1), c)], (n, sq) + x.shape[2:],
             scale=x.scale * 2 + 0.5)
    s = g.op("Relu", [s], s.shape, scale=s.scale)
    a = g.op("Conv", [s, g.weight((e1, sq, 1, 1), sq)], (n, e1) + x.shape[2:],
             scale=s.scale * 2 + 0.5)
    b = g.op("Conv", [s, g.weight((e3, sq, 3, 3), sq * 9)], (n, e3) + x.shape[2:],
             scale=s.scale * 2 + 0.5, pads=[1, 1, 1, 1])
    parts = [g.op("Relu", [a], a.shape, scale=a.scale), g.op("Relu", [b], b.shape, scale=b.scale)]
    g.op("Concat", parts, (n, e1 + e3) + x.shape[2:], scale=max(a.scale, b.scale),
         axis=g.choice([1, -3]))
    return True


def shuffle_unit(g):
    """ShuffleNet's unit: a channel split by Slices (or two Convs of x, downsampling-like), a
    branch of 1x1 Conv, Relu, depthwise 3x3 Conv and 1x1 Conv, the Concat, then the channel
    shuffle (Reshape to [N, G, C / G, ...], Transpose of those two axes, Reshape back); now and
    then a different perm, group count, or the shuffled value read twice."""
    x = image(g, rank=4 if g.chance(0.85) else 3)
    if x is None:
        return False
    n, c = x.shape[:2]
    spatial = x.shape[2:]
    half = c // 2 if c % 2 == 0 and c >= 2 else g.choice([2, 4])
    pads = [1] * (2 * len(spatial))

    def branch(v, channels):
        v = g.op("Conv", [v, g.weight((half, channels) + (1,) * len(spatial), channels)],
                 (n, half) + spatial, scale=v.scale * 2 + 0.5)
        v = g.op("Relu", [v], v.shape, scale=v.scale)
        v = g.op("Conv", [v, g.weight((half, 1) + (3,) * len(spatial), 9)], v.shape,
                 scale=v.scale * 2 + 0.5, group=half, pads=pads)
        return g.op("Conv", [v, g.weight((half, half) + (1,) * len(spatial), half)], v.shape,
                    scale=v.scale * 2 + 0.5)

    axis = g.ints([1])
    if c == 2 * half and g.chance(0.7):
        lo = g.op("Slice", [x, g.ints([0]), g.ints([half]), axis], (n, half) + spatial,
                  scale=x.scale)
        hi = g.op("Slice", [x, g.ints([half]), g.ints([c]), axis], (n, half) + spatial,
                  scale=x.scale)
        parts = [lo, branch(hi, half)]
    else:
        parts = [branch(x, c), branch(x, c)]
    total = 2 * half
    y = g.op("Concat", parts, (n, total) + spatial, scale=max(p.scale for p in parts), axis=1)
    groups = 2 if g.chance(0.8) else g.choice([d for d in (1, 4) if total % d == 0])
    grouped = (n, groups, total // groups) + spatial
    t = g.op("Reshape", [y, g.ints(list(grouped))], grouped, scale=y.scale)
    perm = [0, 2, 1] + list(range(3, len(grouped)))
    if g.chance(0.15):
        perm = [0, 1, 2] + list(range(3, len(grouped)))
    t = g.op("Transpose", [t], tuple(grouped[p] for p in perm), scale=y.scale, perm=perm)
    out = g.op("Reshape", [t, g.ints([n, total] + list(spatial))], (n, total) + spatial,
               scale=y.scale)
    if g.chance(0.2):
        g.op("Relu", [t], t.shape, scale=t.scale)  # the Transpose's output read twice
    return out is not None


def attention(g):
    """One attention head group: Q/K/V projections, heads by Reshape/Transpose, scaled scores,
    an optional additive mask, Softmax, the weighted sum and the output projection."""
    def make():
        return (g.choice([1, 2]), g.choice([2, 3, 4, 6, 8]), g.choice([4, 8, 12, 16]))
    x = g.source(lambda v: is_float(v) and v.rank == 3 and v.shape[2] % 2 == 0 and
                 v.shape[2] <= 32 and v.shape[1] <= 16, make_shape=make)
    if x is None:
        return False
    b, s, d = x.shape
    heads = g.choice([h for h in (1, 2, 4) if d % h == 0])
    dh = d // heads
    proj = []
    for _ in range(3):
        p = g.op("MatMul", [x, g.weight((d, d), d)], (b, s, d), scale=x.scale * 2)
        if g.chance(0.5):
            p = g.op("Add", [p, g.const(g.random_floats((d,), -0.2, 0.2))], (b, s, d),
                     scale=p.scale)
        proj.append(g.op("Reshape", [p, g.ints([0, 0, heads, dh] if g.chance(0.5) else
                                               [b, s, heads, -1])], (b, s, heads, dh),
                         scale=p.scale))
    q = g.op("Transpose", [proj[0]], (b, heads, s, dh), perm=[0, 2, 1, 3], scale=proj[0].scale)
    kt = g.op("Transpose", [proj[1]], (b, heads, dh, s), perm=[0, 2, 3, 1], scale=proj[1].scale)
    v = g.op("Transpose", [proj[2]], (b, heads, s, dh), perm=[0, 2, 1, 3], scale=proj[2].scale)
    scores = g.op("MatMul", [q, kt], (b, heads, s, s), scale=q.scale * kt.scale * math.sqrt(dh))
    if g.chance(0.5):
        scores = g.op("Mul", [scores, g.floats([1 / math.sqrt(dh)])], scores.shape,
                      scale=scores.scale)
    else:
        scores = g.op("Div", [scores, g.floats([math.sqrt(dh)])], scores.shape, scale=scores.scale)
    if g.chance(0.4):
        mask = np.triu(np.full((s, s), -10000.0, np.float32), 1)
        scores = g.op("Add", [scores, g.const(mask)], scores.shape, scale=scores.scale)
    probs = g.op("Softmax", [scores], scores.shape, axis=-1)
    if g.chance(0.3):  # PyTorch's guard of fully masked rows
        nan = g.op("IsNaN", [probs], probs.shape, dtype=BOOL)
        probs = g.op("Where", [nan, g.floats([0.0]), probs], probs.shape)
    ctx = g.op("MatMul", [probs, v], (b, heads, s, dh), scale=v.scale)
    ctx = g.op("Transpose", [ctx], (b, s, heads, dh), perm=[0, 2, 1, 3], scale=ctx.scale)
    ctx = g.op("Reshape", [ctx, g.ints([0, 0, -1])], (b, s, d), scale=ctx.scale)
    g.op("MatMul", [ctx, g.weight((d, d), d)], (b, s, d), scale=ctx.scale * 2)
    return True


def pad(g):
    x = g.source(lambda v: 1 <= v.rank <= 4 and is_float(v))
    if x is None:
        return False
    mode = g.choice(["constant", "constant", "reflect", "edge"])
    pads = []
    for d in x.shape:
        limit = d - 1 if mode == "reflect" else 2
        pads.append([g.randint(0, min(2, limit)) for _ in range(2)])
    if mode == "constant":  # a crop: a negative pad
        i = g.randint(0, x.rank - 1)
        if x.shape[i] > 2 and g.chance(0.3):
            pads[i][g.randint(0, 1)] = -1
    written = [p[0] for p in pads] + [p[1] for p in pads]
    shape = [d + p[0] + p[1] for d, p in zip(x.shape, pads)]
    inputs = [x, g.ints(written)]
    if mode == "constant" and g.chance(0.5):
        inputs.append(g.floats(g.choice([0.5, -1.0])))
    attrs = {} if mode == "constant" and g.chance(0.5) else {"mode": mode}
    g.op("Pad", inputs, shape, scale=x.scale + 1, exact=x.exact, **attrs)
    return True


def resize(g):
    x = image(g, rank=4)
    if x is None:
        return False
    mode = g.choice(["nearest", "linear"])
    coords = g.choice(["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"])
    attrs = {"mode": mode, "coordinate_transformation_mode": coords}
    if mode == "nearest":
        attrs["nearest_mode"] = g.choice(["round_prefer_floor", "round_prefer_ceil", "floor",
                                          "ceil"])
    h, w = x.shape[2:]
    if g.chance(0.6):
        scales = [g.choice([0.5, 0.75, 1.0, 1.5, 2.0, 3.0]) for _ in range(2)]
        out = [int(math.floor(n * s)) for n, s in zip((h, w), scales)]
        if min(out) < 1:
            return False
        inputs = [x, "", g.floats([1.0, 1.0] + scales)]
    else:
        out = [g.randint(1, 2 * n) for n in (h, w)]
        inputs = [x, "", "", g.ints(list(x.shape[:2]) + out)]
    g.op("Resize", inputs, x.shape[:2] + tuple(out), scale=x.scale, **attrs)
    return True


def where(g):
    """Where(cond, a, b) with cond from Less/Greater/Equal of exact values, or a bool input."""
    x = g.source(lambda v: v.rank >= 1 and is_float(v) and v.exact, exact=True)
    if x is None:
        return False
    y = operand(g, partner_shape(g, x.shape), exact=True)
    if g.chance(0.15):
        cond = g.input_array(g.rng.integers(0, 2, size=x.shape).astype(np.bool_))
    else:
        op = g.choice(["Less", "Greater", "Equal", "LessOrEqual", "GreaterOrEqual"])
        cond = g.op(op, [x, y], broadcast_shape(x.shape, y.shape), dtype=BOOL, exact=True)
    if g.chance(0.2):
        cond = g.op("Not", [cond], cond.shape, dtype=BOOL, exact=True)
    a = g.source(lambda v: is_float(v) and len(v.shape) <= len(cond.shape) and
                 broadcast_ok(v.shape, cond.shape)) or x
    b = operand(g, partner_shape(g, cond.shape))
    out = broadcast_shape(cond.shape, a.shape, b.shape)
    g.op("Where", [cond, a, b], out, scale=max(a.scale, b.scale), exact=a.exact and b.exact)
    return True


def broadcast_ok(a, b):
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


def cast(g):
    """Casts through fp16, an integer type or bool, and back to float."""
    target = g.choice([FLOAT16, INT32, INT64, BOOL, INT64])
    exact_needed = target != FLOAT16
    x = g.source(lambda v: is_float(v) and v.rank >= 1 and (v.exact or not exact_needed),
                 exact=exact_needed or None)
    if x is None:
        return False
    y = g.op("Cast", [x], x.shape, dtype=target, scale=x.scale, exact=x.exact, to=target)
    if target in (INT32, INT64) and g.chance(0.5):
        op = g.choice(["Add", "Mul", "Sub", "Max", "Min"])
        dtype = np.int64 if target == INT64 else np.int32
        c = g.const(g.rng.integers(-3, 4, size=partner_shape(g, x.shape)).astype(dtype), exact=True)
        y = g.op(op, [y, c], broadcast_shape(y.shape, c.shape), dtype=target, scale=x.scale * 4,
                 exact=True)
    if g.chance(0.15):
        return True  # an integer, bool or fp16 graph output
    g.op("Cast", [y], y.shape, scale=y.scale, exact=y.exact, to=FLOAT)
    return True


def space_depth(g):
    x = image(g, rank=4)
    if x is None:
        return False
    n, c, h, w = x.shape
    if g.chance(0.5) and h % 2 == 0 and w % 2 == 0:
        g.op("SpaceToDepth", [x], (n, c * 4, h // 2, w // 2), scale=x.scale, exact=x.exact,
             blocksize=2)
    elif c % 4 == 0:
        g.op("DepthToSpace", [x], (n, c // 4, h * 2, w * 2), scale=x.scale, exact=x.exact,
             blocksize=2, mode=g.choice(["DCR", "CRD"]))
    else:
        return False
    return True
