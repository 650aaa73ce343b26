// Times an ONNX model in ONNX Runtime (npm onnxruntime-node, CPU) the way `sluice bench` times
// it in Sluice: the same random-input policy (shapes from the model, unknown dims as 1), warm-up
// runs, then whole runs. Prints the same JSON line.
//   node bench/ort_bench.js MODEL.onnx THREADS ITERS [INPUTS.json [WARMUP]]
// INPUTS.json ({name: {type, dims, data}}, as scripts/npm_models.py writes) fixes the inputs;
// WARMUP (default 3) untimed runs come first.
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

async function main() {
  const [model, threads = '1', iters = '20', inputs = '', warmup = '3'] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threads),
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
  });
  const feeds = {};
  const kArrays = {float32: Float32Array, float64: Float64Array, int32: Int32Array, uint8: Uint8Array, bool: Uint8Array};
  const fixed = inputs ? JSON.parse(fs.readFileSync(inputs, 'utf8')) : {};
  for (const [name, t] of Object.entries(fixed)) {
    const data = t.type === 'int64' ? BigInt64Array.from(t.data, (v) => BigInt(v)) : kArrays[t.type].from(t.data);
    feeds[name] = new ort.Tensor(t.type, data, t.dims);
  }
  for (const name of session.inputNames) {
    if (name in feeds) continue;
    const meta = session.inputMetadata ? session.inputMetadata.find((m) => m.name === name) : null;
    const dims = meta && meta.shape ? meta.shape.map((d) => (typeof d === 'number' && d > 0 ? d : 1)) : [1];
    const n = dims.reduce((a, b) => a * b, 1);
    // As `sluice bench`: floats in [-1, 1), integers in [0, 8) (valid ids for embeddings).
    const type = meta && meta.type ? meta.type : 'float32';
    let data;
    if (type === 'int64') {
      data = BigInt64Array.from({length: n}, () => BigInt(Math.floor(Math.random() * 8)));
    } else if (type === 'int32') {
      data = Int32Array.from({length: n}, () => Math.floor(Math.random() * 8));
    } else if (type === 'bool') {
      data = Uint8Array.from({length: n}, () => (Math.random() < 0.5 ? 1 : 0));
    } else {
      data = Float32Array.from({length: n}, () => Math.random() * 2 - 1);
    }
    feeds[name] = new ort.Tensor(type, data, dims);
  }
  for (let i = 0; i < Number(warmup); ++i) await session.run(feeds);
  const ms = [];
  for (let i = 0; i < Number(iters); ++i) {
    const start = process.hrtime.bigint();
    await session.run(feeds);
    ms.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  ms.sort((a, b) => a - b);
  const median = ms.length % 2 ? ms[(ms.length - 1) / 2] : (ms[ms.length / 2 - 1] + ms[ms.length / 2]) / 2;
  console.log(JSON.stringify({model: path.basename(model), threads: Number(threads), iters: Number(iters),
                              median_ms: Number(median.toFixed(3)), min_ms: Number(ms[0].toFixed(3))}));
}

main().catch((e) => { console.error(e.message || e); process.exit(1); });
