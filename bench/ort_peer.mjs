// ort_peer.mjs: the ONNX Runtime side of bench/onnx_peer.py and bench/realmodels_peer.py.
//
//   node bench/ort_peer.mjs SPEC_JSON
//   node bench/ort_peer.mjs --serve ORT_DIR      (specs on stdin, one a line; see serve())
//
// SPEC_JSON (a JSON object as one argument): {"ort_dir": folder holding
// node_modules/onnxruntime-node, "model": path, "inputs": {name: file.npy}, "threads": int,
// "warmup": int, "runs": int, "save_dir": folder or null, "optimization": optional level,
// "profile_dir": optional folder}. Loads the model in an InferenceSession
// (graphOptimizationLevel "optimization", 'all' by default; intra- and inter-op threads both
// "threads", CPU), runs it "warmup" times, then times "runs" runs in-process with
// process.hrtime, and prints one JSON line: {"ort_version", "median_ms", "min_ms", "runs",
// "threads", "outputs": {name: dims}, "profile_file"}. With profile_dir, the session profiles
// (enableProfiling, warm-up runs included) and endProfiling writes ORT's Chrome-trace JSON
// there; profile_file is its path (null without profile_dir). With save_dir, writes
// each output as save_dir/<name>.npy (characters other than letters, digits, '.', '-' and '_'
// become '_') and save_dir/outputs.json = {"outputs": [{"name", "file", "shape", "dtype"}]}
// in the session's output order, as `dynscope --save-outputs` does. Errors print one line on
// stderr and exit 1.

import { readFileSync, writeFileSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { createInterface } from 'node:readline';

// .npy descr <-> ONNX Runtime tensor type and typed array.
const DTYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
  '<i4': ['int32', Int32Array], '<i8': ['int64', BigInt64Array],
  '|b1': ['bool', Uint8Array], '|u1': ['uint8', Uint8Array], '|i1': ['int8', Int8Array],
  '<f2': ['float16', Uint16Array],
};

function readNpy(file) {
  const buf = readFileSync(file);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + headerLen;
  const header = buf.toString('latin1', major === 1 ? 10 : 12, start);
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: Fortran order`);
  if (!(descr in DTYPES) || shapeText === undefined)
    throw new Error(`${file}: unsupported header ${header.trim()}`);
  const dims = shapeText.split(',').map((d) => d.trim()).filter((d) => d).map(Number);
  const [type, Array_] = DTYPES[descr];
  const count = dims.reduce((a, b) => a * b, 1);
  const bytes = buf.subarray(start, start + count * Array_.BYTES_PER_ELEMENT);
  const data = new Array_(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
  return { type, data, dims };
}

function writeNpy(file, tensor) {
  const descr = Object.keys(DTYPES).find((k) => DTYPES[k][0] === tensor.type);
  if (descr === undefined) throw new Error(`output type ${tensor.type} cannot be saved`);
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const data = tensor.data;
  writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'),
    Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

function median(values) {
  const v = [...values].sort((a, b) => a - b);
  const n = v.length;
  return n % 2 ? v[(n - 1) / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

async function runSpec(ort, spec) {
  const options = {
    executionProviders: ['cpu'],
    graphOptimizationLevel: spec.optimization ?? 'all',
    executionMode: 'sequential',
    intraOpNumThreads: spec.threads,
    interOpNumThreads: spec.threads,
  };
  const profileDir = spec.profile_dir ? path.resolve(spec.profile_dir) : null;
  if (profileDir) {
    mkdirSync(profileDir, { recursive: true });
    options.enableProfiling = true;
    options.profileFilePrefix = path.join(profileDir, 'ort_profile');
  }
  const session = await ort.InferenceSession.create(spec.model, options);
  const feeds = {};
  for (const [name, file] of Object.entries(spec.inputs)) {
    const { type, data, dims } = readNpy(file);
    feeds[name] = new ort.Tensor(type, data, dims);
  }
  let results;
  for (let i = 0; i < spec.warmup; i++) results = await session.run(feeds);
  const times = [];
  for (let i = 0; i < spec.runs; i++) {
    const t0 = process.hrtime.bigint();
    results = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const outputs = {};
  for (const [name, tensor] of Object.entries(results)) outputs[name] = tensor.dims;
  let profileFile = null;
  if (profileDir) {
    // endProfiling names the file ort_profile_<date>.json and does not say which: the newest.
    session.endProfiling();
    const traces = readdirSync(profileDir).filter((f) => f.startsWith('ort_profile') &&
      f.endsWith('.json')).map((f) => path.join(profileDir, f));
    traces.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
    profileFile = traces[0] ?? null;
  }
  if (spec.save_dir) {
    mkdirSync(spec.save_dir, { recursive: true });
    const listing = [];
    for (const name of session.outputNames) {
      const tensor = results[name];
      const file = `${name.replace(/[^A-Za-z0-9._-]/g, '_')}.npy`;
      writeNpy(path.join(spec.save_dir, file), tensor);
      listing.push({ name, file, shape: tensor.dims, dtype: tensor.type });
    }
    writeFileSync(path.join(spec.save_dir, 'outputs.json'), JSON.stringify({ outputs: listing }));
  }
  const answer = {
    ort_version: ort.env.versions?.common ?? null, median_ms: median(times),
    min_ms: Math.min(...times), runs: spec.runs, threads: spec.threads, outputs,
    profile_file: profileFile,
  };
  await session.release();
  return answer;
}

function loadOrt(ortDir) {
  const require = createRequire(path.join(path.resolve(ortDir), 'package.json'));
  return require('onnxruntime-node');
}

function errorLine(e) {
  return `ort_peer: ${String(e?.message ?? e).split('\n')[0]}`;
}

// --serve ORT_DIR: one process for many specs (bench/realmodels_peer.py), so node and
// onnxruntime-node load once; each spec still gets a session of its own, released after it.
// Each line on stdin is a spec (its ort_dir ignored); each answer is one line on stdout: the
// result object, or {"error": "ort_peer: MESSAGE"}.
async function serve(ortDir) {
  const ort = loadOrt(ortDir);
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let answer;
    try {
      answer = await runSpec(ort, JSON.parse(line));
    } catch (e) {
      answer = { error: errorLine(e) };
    }
    process.stdout.write(`${JSON.stringify(answer)}\n`);
  }
}

async function main() {
  if (process.argv[2] === '--serve') return serve(process.argv[3] ?? '.');
  const spec = JSON.parse(process.argv[2] ?? '{}');
  console.log(JSON.stringify(await runSpec(loadOrt(spec.ort_dir), spec)));
}

main().catch((e) => {
  console.error(errorLine(e));
  process.exit(1);
});
