// Reference outputs from ONNX Runtime (onnxruntime-node, CPU execution provider, graph
// optimizations off unless LEVEL says, one thread) for many cases in one process.
//
//   node tests/differential/ort_reference.js [disabled|basic|extended|all] < CASE_DIRS
//
// LEVEL (default disabled: the graph as written) is ONNX Runtime's graph optimization level;
// from extended on it runs a QDQ group as its QOperator op (QLinearAdd, QLinearSoftmax...).
// Reads one case folder a line from standard input (CASE/model.onnx, inputs in
// CASE/test_data_set_0/input_K.pb), writes CASE/test_data_set_0/output_K.pb (TensorProto, raw
// data, in the order of the graph's outputs) and prints one JSON line a case, in input order:
// {"case": CASE, "ok": true} or {"case": CASE, "ok": false, "error": "one line"}.
// onnxruntime-node is loaded from bench/node_modules (bench/package.json pins it).
'use strict';
const fs = require('fs');
const path = require('path');
const readline = require('readline');
const ort = require(path.join(__dirname, '..', '..', 'bench', 'node_modules', 'onnxruntime-node'));

ort.env.logLevel = 'fatal';

const LEVELS = ['disabled', 'basic', 'extended', 'all'];
const LEVEL = process.argv[2] || 'disabled';
if (!LEVELS.includes(LEVEL)) {
  console.error(`ort_reference: level '${LEVEL}' is none of ${LEVELS.join(', ')}`);
  process.exit(2);
}

// TensorProto.DataType -> [onnxruntime-node type, typed array].
const TYPES = {
  1: ['float32', Float32Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array],
  5: ['int16', Int16Array], 6: ['int32', Int32Array], 7: ['int64', BigInt64Array],
  9: ['bool', Uint8Array], 10: ['float16', Uint16Array], 11: ['float64', Float64Array],
};
const TYPE_CODES = Object.fromEntries(Object.entries(TYPES).map(([code, [name]]) => [name, +code]));

function readVarint(buf, pos) {
  let value = 0n;
  let shift = 0n;
  for (;;) {
    const byte = buf[pos++];
    value |= BigInt(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return [value, pos];
    shift += 7n;
  }
}

// The fields of a TensorProto that the generator writes: dims, data_type, name, raw_data.
function parseTensor(buf) {
  const tensor = {dims: [], dataType: 0, name: '', raw: null};
  let pos = 0;
  while (pos < buf.length) {
    let key;
    [key, pos] = readVarint(buf, pos);
    const field = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (wire === 0) {
      let v;
      [v, pos] = readVarint(buf, pos);
      if (field === 1) tensor.dims.push(Number(BigInt.asIntN(64, v)));
      if (field === 2) tensor.dataType = Number(v);
    } else if (wire === 2) {
      let len;
      [len, pos] = readVarint(buf, pos);
      const end = pos + Number(len);
      if (field === 1) {  // packed dims
        while (pos < end) {
          let v;
          [v, pos] = readVarint(buf, pos);
          tensor.dims.push(Number(BigInt.asIntN(64, v)));
        }
      } else if (field === 8) {
        tensor.name = buf.toString('utf8', pos, end);
      } else if (field === 9) {
        tensor.raw = buf.subarray(pos, end);
      }
      pos = end;
    } else if (wire === 1) {
      pos += 8;
    } else if (wire === 5) {
      pos += 4;
    } else {
      throw new Error(`TensorProto: wire type ${wire} not handled`);
    }
  }
  if (tensor.raw === null) throw new Error(`tensor ${tensor.name}: no raw_data`);
  return tensor;
}

function toOrtTensor(tensor) {
  const type = TYPES[tensor.dataType];
  if (!type) throw new Error(`tensor ${tensor.name}: data type ${tensor.dataType} not handled`);
  const [name, Array_] = type;
  const copy = new Uint8Array(tensor.raw);  // aligned for the typed array
  return new ort.Tensor(name, new Array_(copy.buffer, 0, copy.length / Array_.BYTES_PER_ELEMENT),
                        tensor.dims);
}

function writeVarint(out, value) {
  let v = BigInt(value);
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v) byte |= 0x80;
    out.push(byte);
  } while (v);
}

function encodeTensor(name, tensor) {
  const code = TYPE_CODES[tensor.type];
  if (!code) throw new Error(`output ${name}: type ${tensor.type} not handled`);
  const head = [];
  const dims = [];
  tensor.dims.forEach((d) => writeVarint(dims, d));
  if (tensor.dims.length) {
    head.push(0x0a);
    writeVarint(head, dims.length);
    head.push(...dims);
  }
  head.push(0x10);
  writeVarint(head, code);
  const nameBytes = Buffer.from(name, 'utf8');
  head.push(0x42);
  writeVarint(head, nameBytes.length);
  const data = tensor.data;
  const raw = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const tail = [0x4a];
  writeVarint(tail, raw.length);
  return Buffer.concat([Buffer.from(head), nameBytes, Buffer.from(tail), raw]);
}

async function runCase(caseDir) {
  const dataDir = path.join(caseDir, 'test_data_set_0');
  let session;
  try {
    session = await ort.InferenceSession.create(path.join(caseDir, 'model.onnx'), {
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: LEVEL,
      logSeverityLevel: 4,
    });
  } catch (e) {
    return {ok: false, error: `load: ${String(e.message).split('\n')[0]}`};
  }
  try {
    const feeds = {};
    for (let k = 0; ; ++k) {
      const file = path.join(dataDir, `input_${k}.pb`);
      if (!fs.existsSync(file)) break;
      const tensor = parseTensor(fs.readFileSync(file));
      feeds[tensor.name || session.inputNames[k]] = toOrtTensor(tensor);
    }
    const results = await session.run(feeds);
    session.outputNames.forEach((name, k) => {
      fs.writeFileSync(path.join(dataDir, `output_${k}.pb`), encodeTensor(name, results[name]));
    });
    return {ok: true};
  } catch (e) {
    return {ok: false, error: `run: ${String(e.message).split('\n')[0]}`};
  } finally {
    if (session.release) await session.release();
  }
}

async function main() {
  const lines = readline.createInterface({input: process.stdin, crlfDelay: Infinity});
  for await (const line of lines) {
    const caseDir = line.trim();
    if (!caseDir) continue;
    const result = await runCase(caseDir);
    process.stdout.write(JSON.stringify({case: caseDir, ...result}) + '\n');
  }
}

main().catch((e) => { console.error(`ort_reference: ${e.message}`); process.exit(2); });
