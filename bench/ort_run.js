// Runs an ONNX model once in ONNX Runtime (npm onnxruntime-node, CPU) on inputs given as JSON
// and writes its outputs as JSON, for scripts that use ONNX Runtime as the reference
// (scripts/npm_models.sh). Both files map names to {"type", "dims", "data"} (data flat, row
// major; int64 as numbers).
//   node bench/ort_run.js MODEL.onnx INPUTS.json OUTPUTS.json
const fs = require('fs');
const ort = require('onnxruntime-node');

const kArrays = {
  float32: Float32Array, float64: Float64Array, int32: Int32Array, int8: Int8Array, uint8: Uint8Array,
  bool: Uint8Array,
};

async function main() {
  const [model, inputsFile, outputsFile] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3});
  const inputs = JSON.parse(fs.readFileSync(inputsFile, 'utf8'));
  const feeds = {};
  for (const [name, t] of Object.entries(inputs)) {
    const data = t.type === 'int64' ? BigInt64Array.from(t.data, (v) => BigInt(v)) : kArrays[t.type].from(t.data);
    feeds[name] = new ort.Tensor(t.type, data, t.dims);
  }
  const results = await session.run(feeds);
  const out = {};
  for (const name of session.outputNames) {
    const t = results[name];
    out[name] = {type: t.type, dims: t.dims, data: Array.from(t.data, (v) => (typeof v === 'bigint' ? Number(v) : v))};
  }
  fs.writeFileSync(outputsFile, JSON.stringify(out));
}

main().catch((e) => { console.error(e.message || e); process.exit(1); });
