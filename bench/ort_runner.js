// Times one model with ONNX Runtime (onnxruntime-node, CPU execution provider, default graph
// optimizations) and prints one JSON line: per-run milliseconds and the process's peak RSS.
// Usage: node ort_runner.js MODEL SPEC_JSON THREADS WARMUP ITERATIONS
// SPEC_JSON lists the inputs as `hsched info --json` reports them ([{name, shape, dtype}]).
'use strict';
const ort = require('onnxruntime-node');

function makeInput(spec, seed) {
  const n = spec.shape.reduce((a, b) => a * b, 1);
  let state = seed;
  const next = () => {  // a small LCG: deterministic, and values do not change timings
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  switch (spec.dtype) {
    case 'f32': return new ort.Tensor('float32', Float32Array.from({length: n}, () => next() * 2 - 1), spec.shape);
    case 'i64': return new ort.Tensor('int64', BigInt64Array.from({length: n}, () => BigInt(Math.floor(next() * 2))), spec.shape);
    case 'i32': return new ort.Tensor('int32', Int32Array.from({length: n}, () => Math.floor(next() * 2)), spec.shape);
    case 'bool': return new ort.Tensor('bool', Uint8Array.from({length: n}, () => Math.floor(next() * 2)), spec.shape);
    default: throw new Error(`input ${spec.name}: dtype ${spec.dtype} not handled by the bench`);
  }
}

async function main() {
  const [model, specJson, threads, warmup, iterations] = process.argv.slice(2);
  const specs = JSON.parse(specJson);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threads),
    interOpNumThreads: 1,
    executionMode: 'sequential',
  });
  const feeds = {};
  specs.forEach((spec, i) => { feeds[spec.name] = makeInput(spec, i + 1); });
  const times = [];
  for (let i = 0; i < Number(warmup) + Number(iterations); ++i) {
    const start = process.hrtime.bigint();
    await session.run(feeds);
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (i >= Number(warmup)) times.push(ms);
  }
  console.log(JSON.stringify({times_ms: times, peak_rss_bytes: process.resourceUsage().maxRSS * 1024}));
}

main().catch((e) => { console.error(`ort_runner: ${e.message}`); process.exit(2); });
