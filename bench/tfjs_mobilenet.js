// bench/tfjs_mobilenet.js -- the node side of bench/tfjs_mobilenet.sh (see its header).
//
//   node bench/tfjs_mobilenet.js WORK_DIR RUNS CPU_RUNS PROFILE(0|1) [JSON_OUT]
//
// Builds Keras's MobileNetV2 (alpha 1.0, 224x224, 1000 classes) with tfjs-layers' functional
// API twice in one process, once on each backend with the same (seeded, random) weights, and
// times model.predict + dataSync on both, alternating.
'use strict';
const fs = require('fs');
const path = require('path');
const os = require('os');
const {createRequire} = require('module');
const {performance} = require('perf_hooks');

const [work, runsArg, cpuRunsArg, profileArg, jsonOut] = process.argv.slice(2);
const RUNS = Number(runsArg);
const CPU_RUNS = Number(cpuRunsArg);
const PROFILE = profileArg === '1';
const req = createRequire(path.join(work, 'package.json'));
const tf = req('@tensorflow/tfjs-node');  // registers 'tensorflow' (the addon) and 'cpu'
const log = (...a) => console.error(...a);

// ------------------------------------------------------------- the model ----
// Keras's keras.applications.MobileNetV2(alpha=1.0, include_top=True, weights=None), layer
// for layer (same names), with seeded random weights: glorot-uniform kernels as Keras
// initializes them, and batch-norm statistics/affine terms drawn at random so that every
// batch norm does real work and the activations stay in a sensible range.
function makeDivisible(v, divisor = 8) {
  let n = Math.max(divisor, Math.floor(Math.trunc(v + divisor / 2) / divisor) * divisor);
  if (n < 0.9 * v) n += divisor;
  return n;
}

function buildMobileNetV2() {
  let seed = 1;
  const glorot = () => tf.initializers.glorotUniform({seed: seed++});
  const uniform = (minval, maxval) => tf.initializers.randomUniform({minval, maxval, seed: seed++});
  const bn = (name) => tf.layers.batchNormalization({
    axis: -1, epsilon: 1e-3, momentum: 0.999, name,
    gammaInitializer: uniform(0.5, 1.5), betaInitializer: uniform(-0.2, 0.2),
    movingMeanInitializer: uniform(-0.2, 0.2), movingVarianceInitializer: uniform(0.5, 2.0),
  });
  const relu6 = (name) => tf.layers.reLU({maxValue: 6, name});
  const conv1x1 = (filters, name) => tf.layers.conv2d({
    filters, kernelSize: 1, padding: 'same', useBias: false, kernelInitializer: glorot(), name});

  function invertedResBlock(inputs, expansion, stride, filters, blockId) {
    const inChannels = inputs.shape[inputs.shape.length - 1];
    const pointwiseFilters = makeDivisible(filters * 1.0, 8);
    let x = inputs;
    let prefix = `block_${blockId}_`;
    if (blockId) {
      x = conv1x1(expansion * inChannels, prefix + 'expand').apply(x);
      x = bn(prefix + 'expand_BN').apply(x);
      x = relu6(prefix + 'expand_relu').apply(x);
    } else {
      prefix = 'expanded_conv_';
    }
    if (stride === 2) {
      // imagenet_utils.correct_pad for an even input size: ((0, 1), (0, 1)).
      x = tf.layers.zeroPadding2d({padding: [[0, 1], [0, 1]], name: prefix + 'pad'}).apply(x);
    }
    x = tf.layers.depthwiseConv2d({
      kernelSize: 3, strides: stride, useBias: false, padding: stride === 1 ? 'same' : 'valid',
      depthwiseInitializer: glorot(), name: prefix + 'depthwise'}).apply(x);
    x = bn(prefix + 'depthwise_BN').apply(x);
    x = relu6(prefix + 'depthwise_relu').apply(x);
    x = conv1x1(pointwiseFilters, prefix + 'project').apply(x);
    x = bn(prefix + 'project_BN').apply(x);
    if (inChannels === pointwiseFilters && stride === 1) {
      return tf.layers.add({name: prefix + 'add'}).apply([inputs, x]);
    }
    return x;
  }

  const input = tf.input({shape: [224, 224, 3], name: 'input_1'});
  let x = tf.layers.conv2d({filters: makeDivisible(32, 8), kernelSize: 3, strides: 2, padding: 'same',
                            useBias: false, kernelInitializer: glorot(), name: 'Conv1'}).apply(input);
  x = bn('bn_Conv1').apply(x);
  x = relu6('Conv1_relu').apply(x);
  // [expansion, stride, filters] of blocks 0..16, as keras.applications lists them.
  const blocks = [[1, 1, 16],
                  [6, 2, 24], [6, 1, 24],
                  [6, 2, 32], [6, 1, 32], [6, 1, 32],
                  [6, 2, 64], [6, 1, 64], [6, 1, 64], [6, 1, 64],
                  [6, 1, 96], [6, 1, 96], [6, 1, 96],
                  [6, 2, 160], [6, 1, 160], [6, 1, 160],
                  [6, 1, 320]];
  blocks.forEach(([e, s, f], i) => { x = invertedResBlock(x, e, s, f, i); });
  x = conv1x1(1280, 'Conv_1').apply(x);
  x = bn('Conv_1_bn').apply(x);
  x = relu6('out_relu').apply(x);
  const pooled = tf.layers.globalAveragePooling2d({name: 'global_average_pooling2d'}).apply(x);
  const out = tf.layers.dense({units: 1000, activation: 'softmax', kernelInitializer: glorot(),
                               name: 'predictions'}).apply(pooled);
  const model = tf.model({inputs: input, outputs: out, name: 'mobilenetv2_1.00_224'});
  // The same layers, also exposing the pooled features: for the agreement check only.
  const probe = tf.model({inputs: input, outputs: [pooled, out]});
  return {model, probe};
}

// ------------------------------------------------------------- helpers ----
const engine = tf.engine();
function backendOf(t) {
  const info = engine.state.tensorInfo.get(t.dataId);
  if (!info) return '(disposed)';
  for (const name of ['tensorflow', 'cpu']) {
    if (engine.registry[name] && info.backend === engine.registry[name]) return name;
  }
  return '(other)';
}
// Every weight and the given tensors must live on `name`: a weight that had wandered to the
// other backend would be moved back and forth on every call and the timing would be wrong.
function checkPlacement(name, model, tensors) {
  const bad = model.weights.map((w) => w.read()).concat(tensors).filter((t) => backendOf(t) !== name);
  if (bad.length) throw new Error(`${bad.length} tensors of the ${name} model are not on the ${name} backend`);
}
function stats(a) {
  const s = [...a].sort((p, q) => p - q);
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  return {median, min: s[0], max: s[s.length - 1], runs: a};
}
const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));

async function main() {
  const numThreads = os.cpus().length;
  const loadStart = os.loadavg();
  const setups = {};
  // Sluice first: its model's weights are the reference the CPU model copies.
  for (const name of ['tensorflow', 'cpu']) {
    if (!(await tf.setBackend(name))) throw new Error(`cannot set the ${name} backend`);
    const t0 = performance.now();
    const {model, probe} = buildMobileNetV2();
    if (name === 'cpu') {
      // Same weights: copied as plain arrays, so the new tensors are made on the CPU backend.
      const src = setups.tensorflow.model.getWeights().map((w) => ({shape: w.shape, v: w.dataSync().slice()}));
      model.setWeights(src.map(({shape, v}) => tf.tensor(v, shape)));
    }
    // One 1x224x224x3 image in [-1, 1] (MobileNet's preprocessing range), from a fixed LCG.
    const img = new Float32Array(224 * 224 * 3);
    let r = 12345;
    for (let i = 0; i < img.length; ++i) { r = (r * 1103515245 + 12345) >>> 0; img[i] = (r / 4294967296) * 2 - 1; }
    const input = tf.tensor4d(img, [1, 224, 224, 3]);
    setups[name] = {model, probe, input, buildMs: performance.now() - t0, times: [], cpuMs: []};
  }
  const params = setups.tensorflow.model.countParams();
  log(`MobileNetV2: ${setups.tensorflow.model.layers.length} layers, ${params} parameters; ` +
      `built in ${fmt(setups.tensorflow.buildMs)} ms (tensorflow), ${fmt(setups.cpu.buildMs)} ms (cpu, incl. weight copy)`);

  async function runOnce(name) {
    await tf.setBackend(name);
    const s = setups[name];
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const y = s.model.predict(s.input);
    y.dataSync();
    const ms = performance.now() - t0;
    const c = process.cpuUsage(c0);
    s.cpuMs.push((c.user + c.system) / 1000);
    checkPlacement(name, s.model, [y, s.input]);
    y.dispose();
    return ms;
  }

  // Warm-up: the first calls prepare kernels (Sluice caches one per op signature) and let
  // V8 compile the CPU backend's kernels.
  const warm = {tensorflow: [], cpu: []};
  for (let i = 0; i < 2; ++i) warm.tensorflow.push(await runOnce('tensorflow'));
  warm.cpu.push(await runOnce('cpu'));
  log(`warm-up: tensorflow ${warm.tensorflow.map(fmt).join(', ')} ms; cpu ${warm.cpu.map(fmt).join(', ')} ms`);

  // Alternating timed runs.
  for (let i = 0; i < Math.max(RUNS, CPU_RUNS); ++i) {
    if (i < RUNS) setups.tensorflow.times.push(await runOnce('tensorflow'));
    if (i < CPU_RUNS) setups.cpu.times.push(await runOnce('cpu'));
    const last = (a) => fmt(a[a.length - 1]);
    log(`run ${i + 1}: tensorflow ${i < RUNS ? last(setups.tensorflow.times) + ' ms (process CPU ' +
        last(setups.tensorflow.cpuMs) + ' ms)' : '-'}, cpu ${i < CPU_RUNS ? last(setups.cpu.times) +
        ' ms (process CPU ' + last(setups.cpu.cpuMs) + ' ms)' : '-'}`);
  }
  const tfS = stats(setups.tensorflow.times);
  const cpuS = stats(setups.cpu.times);
  // Process CPU time (all threads, user + system) of the timed runs: next to the wall time it
  // shows how much of a run the process had the cores for.
  tfS.processCpuMs = setups.tensorflow.cpuMs.slice(warm.tensorflow.length);
  cpuS.processCpuMs = setups.cpu.cpuMs.slice(warm.cpu.length);
  const speedup = cpuS.median / tfS.median;

  // Agreement: the softmax output and the pooled 1280 features, same input, both backends.
  const outs = {};
  for (const name of ['tensorflow', 'cpu']) {
    await tf.setBackend(name);
    const [feat, prob] = setups[name].probe.predict(setups[name].input);
    outs[name] = {feat: feat.dataSync().slice(), prob: prob.dataSync().slice()};
    checkPlacement(name, setups[name].model, [feat, prob]);
    feat.dispose();
    prob.dispose();
  }
  const maxAbsDiff = (a, b) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), 0);
  const maxAbs = (a) => a.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  const argmax = (a) => a.reduce((bi, v, i) => (v > a[bi] ? i : bi), 0);
  const probA = outs.tensorflow.prob, probB = outs.cpu.prob;
  const agree = {
    softmaxMaxAbsDiff: maxAbsDiff(probA, probB),
    softmaxMax: maxAbs(probA),
    softmaxSum: probA.reduce((s, v) => s + v, 0),
    argmaxTensorflow: argmax(probA),
    argmaxCpu: argmax(probB),
    // log p differs from the logits by a constant: this shows the logits' differences, which
    // the near-uniform softmax of random weights would hide.
    logSoftmaxMaxAbsDiff: maxAbsDiff(probA.map(Math.log), probB.map(Math.log)),
    featuresMaxAbsDiff: maxAbsDiff(outs.tensorflow.feat, outs.cpu.feat),
    featuresMaxAbs: maxAbs(outs.tensorflow.feat),
  };
  log(`agreement: softmax max |diff| ${agree.softmaxMaxAbsDiff.toExponential(2)} ` +
      `(largest probability ${agree.softmaxMax.toFixed(4)}, sum ${agree.softmaxSum.toFixed(5)}, argmax ` +
      `${agree.argmaxTensorflow} vs ${agree.argmaxCpu}); log-softmax max |diff| ` +
      `${agree.logSoftmaxMaxAbsDiff.toExponential(2)}; pooled features max |diff| ` +
      `${agree.featuresMaxAbsDiff.toExponential(2)} of max |value| ${agree.featuresMaxAbs.toFixed(3)}`);

  // Optional profiles (after the timed runs, so they cannot disturb them).
  //  tensorflow: every TensorFlow op tfjs-node runs goes through the addon's executeOp, which
  //    runs TFE_Execute synchronously on Sluice; the binding is wrapped so each call is timed
  //    (hrtime around it: Sluice's kernel plus the addon's attr/handle work). What predict
  //    spends outside executeOp is tfjs's JavaScript (layers, engine bookkeeping, dataSync).
  //  cpu: tf.profile's kernel times (the '__op' entries are tfjs op scopes around kernels and
  //    are left out so that nothing counts twice).
  const profiles = {};
  if (PROFILE) {
    const PROFILE_RUNS = 5;
    await tf.setBackend('tensorflow');
    const be = engine.registry.tensorflow;
    const orig = be.binding;
    const shapes = new Map();  // tensor id -> shape, from executeOp's output metadata
    let calls = [];
    let bindingMs = {};  // the addon's other entry points (createTensor, deleteTensor, ...)
    // The binding's properties are read-only (napi_default): delegate to it instead.
    const wrapped = {executeOp: {value(name, attrs, ids, n) {
      const t0 = process.hrtime.bigint();
      const out = orig.executeOp(name, attrs, ids, n);
      const ns = Number(process.hrtime.bigint() - t0);
      for (const m of out) shapes.set(m.id, m.shape);
      calls.push({name, ms: ns / 1e6, in: ids.map((id) => shapes.get(id) || '?'), out: out.map((m) => m.shape)});
      return out;
    }}};
    for (const key of Object.getOwnPropertyNames(orig)) {
      if (key === 'executeOp' || typeof orig[key] !== 'function') continue;
      wrapped[key] = {value(...args) {
        const t0 = process.hrtime.bigint();
        try { return orig[key](...args); } finally {
          const g = bindingMs[key] || (bindingMs[key] = {calls: 0, ms: 0});
          g.calls++;
          g.ms += Number(process.hrtime.bigint() - t0) / 1e6;
        }
      }};
    }
    be.binding = Object.create(orig, wrapped);
    const perRun = [];
    try {
      for (let r = 0; r < PROFILE_RUNS; ++r) {
        calls = [];
        bindingMs = {};
        const s = setups.tensorflow;
        const t0 = performance.now();
        const y = s.model.predict(s.input);
        y.dataSync();
        const wall = performance.now() - t0;
        y.dispose();
        perRun.push({wall, calls, bindingMs});
      }
    } finally {
      be.binding = orig;
    }
    // Per run: predict's wall time = executeOp + the addon's other calls + tfjs's JavaScript.
    // The op table is the run with the median wall time; its last column adds up, per op, the
    // fastest of the runs at each call site: what the op costs when nothing gets in its way
    // (on a busy machine a kernel that waits for a descheduled thread of its team takes
    // milliseconds more, at a different call each run).
    const nCalls = perRun[0].calls.length;
    const sumMs = (xs) => xs.reduce((t, x) => t + x.ms, 0);
    for (const p of perRun) {
      p.execMs = sumMs(p.calls);
      p.otherMs = sumMs(Object.values(p.bindingMs));
      p.jsMs = p.wall - p.execMs - p.otherMs;
    }
    const order = perRun.map((p, i) => i).sort((i, j) => perRun[i].wall - perRun[j].wall);
    const med = perRun[order[(order.length - 1) >> 1]];
    const minAt = perRun[0].calls.map((c, i) => Math.min(...perRun.map((p) => (p.calls[i] ? p.calls[i].ms : Infinity))));
    const by = new Map();
    med.calls.forEach((c, i) => {
      const g = by.get(c.name) || {op: c.name, calls: 0, ms: 0, fastestMs: 0};
      g.calls++;
      g.ms += c.ms;
      g.fastestMs += minAt[i];
      by.set(c.name, g);
    });
    const rows = [...by.values()].sort((x, y) => y.ms - x.ms);
    const sum = med.execMs;
    const fastestSum = minAt.reduce((t, v) => t + v, 0);
    const medCalls = med.calls.map((c, i) => Object.assign({}, c, {fastestMs: minAt[i]}));
    const slowest = [...medCalls].sort((x, y) => y.ms - x.ms).slice(0, 20);
    const slowestFastest = [...medCalls].sort((x, y) => y.fastestMs - x.fastestMs).slice(0, 20);
    profiles.tensorflow = {
      runs: perRun.map((p) => ({wallMs: p.wall, executeOpMs: p.execMs, otherAddonMs: p.otherMs, javascriptMs: p.jsMs,
                                otherAddon: p.bindingMs})),
      opCalls: nCalls, medianRun: {byOp: rows, slowestCalls: slowest, calls: medCalls},
      slowestAtFastest: slowestFastest,
      executeOpFastestSumMs: fastestSum,
    };
    console.log(`\nprofile (tensorflow): ${nCalls} TensorFlow ops per predict; ${PROFILE_RUNS} runs, ` +
                'predict = executeOp (Sluice) + the addon\'s other calls + tfjs JavaScript:');
    for (const p of perRun) {
      console.log(`  ${fmt(p.wall).padStart(6)} ms = ${fmt(p.execMs).padStart(6)} + ${fmt(p.otherMs).padStart(5)} + ` +
                  `${fmt(p.jsMs).padStart(6)}   (other: ` +
                  Object.entries(p.bindingMs).map(([k, g]) => `${k} ${g.calls}x ${fmt(g.ms)}`).join(', ') + ')');
    }
    console.log(`  executeOp with each call at its fastest of the ${PROFILE_RUNS} runs: ${fmt(fastestSum)} ms`);
    console.log(`  per op, the median run (${fmt(med.wall)} ms):`);
    console.log('  op                         calls   total ms   share   ms/call   fastest ms');
    for (const g of rows) {
      console.log(`  ${g.op.padEnd(26)} ${String(g.calls).padStart(5)} ${fmt(g.ms).padStart(10)} ` +
                  `${(100 * g.ms / sum).toFixed(1).padStart(6)}% ${(g.ms / g.calls).toFixed(3).padStart(9)} ` +
                  `${fmt(g.fastestMs).padStart(12)}`);
    }
    console.log('  slowest single calls of the median run (ms, fastest ms, op, input shapes -> output shapes):');
    for (const c of slowest) {
      console.log(`    ${c.ms.toFixed(2).padStart(7)} ${c.fastestMs.toFixed(2).padStart(7)}  ${c.name}  ` +
                  `${JSON.stringify(c.in)} -> ${JSON.stringify(c.out)}`);
    }
    console.log('  slowest single calls at their fastest of the runs (fastest ms, op, shapes):');
    for (const c of slowestFastest) {
      console.log(`    ${c.fastestMs.toFixed(2).padStart(7)}  ${c.name}  ${JSON.stringify(c.in)} -> ${JSON.stringify(c.out)}`);
    }

    await tf.setBackend('cpu');
    const s = setups.cpu;
    const t0 = performance.now();
    const info = await tf.profile(() => { const y = s.model.predict(s.input); y.dataSync(); y.dispose(); });
    const cwall = performance.now() - t0;
    const cby = new Map();
    for (const k of info.kernels) {
      if (/__op$/.test(k.name)) continue;
      const g = cby.get(k.name) || {op: k.name, calls: 0, ms: 0};
      g.calls++;
      g.ms += k.kernelTimeMs;
      cby.set(k.name, g);
    }
    const crows = [...cby.values()].sort((a, b) => b.ms - a.ms);
    const csum = crows.reduce((t, g) => t + g.ms, 0);
    profiles.cpu = {wallMs: cwall, kernelMs: csum, byKernel: crows};
    console.log(`\nprofile (cpu): one predict under tf.profile, ${fmt(cwall)} ms wall, kernels ${fmt(csum)} ms`);
    console.log('  kernel                     calls   total ms   share   ms/call');
    for (const g of crows) {
      console.log(`  ${g.op.padEnd(26)} ${String(g.calls).padStart(5)} ${fmt(g.ms).padStart(10)} ` +
                  `${(100 * g.ms / csum).toFixed(1).padStart(6)}% ${(g.ms / g.calls).toFixed(3).padStart(9)}`);
    }
  }

  const loadEnd = os.loadavg();
  log(`load average: ${loadStart.map((v) => v.toFixed(2)).join(' ')} at the start, ` +
      `${loadEnd.map((v) => v.toFixed(2)).join(' ')} at the end`);
  let avx512f = null;
  try { avx512f = /\bavx512f\b/.test(fs.readFileSync('/proc/cpuinfo', 'utf8')); } catch (e) { /* not Linux */ }
  const binding = engine.registry.tensorflow && engine.registry.tensorflow.binding;
  const result = {
    model: 'MobileNetV2 alpha 1.0, 224x224x3, batch 1, 1000 classes, random seeded weights (tfjs-layers)',
    params, layers: setups.tensorflow.model.layers.length,
    tfjs: tf.version['tfjs-node'], backendVersion: binding && binding.TF_Version,
    cpus: numThreads, cpuModel: os.cpus()[0] && os.cpus()[0].model, avx512f,
    loadAverage: {start: loadStart, end: loadEnd},
    warmup: warm,
    tensorflow: tfS, cpu: cpuS, speedup, agreement: agree,
    profile: PROFILE ? profiles : undefined,
  };
  if (jsonOut) fs.writeFileSync(jsonOut, JSON.stringify(result, null, 1) + '\n');
  console.log('');
  console.log(`tfjs MobileNetV2 predict: tensorflow(Sluice) median ${fmt(tfS.median)} ms [${fmt(tfS.min)}-${fmt(tfS.max)}], ` +
              `cpu median ${fmt(cpuS.median)} ms [${fmt(cpuS.min)}-${fmt(cpuS.max)}], speedup ${speedup.toFixed(1)} x`);
  const ok = agree.softmaxMaxAbsDiff <= 1e-4 && agree.argmaxTensorflow === agree.argmaxCpu;
  if (!ok) log('the backends disagree: softmax max |diff| above 1e-4 or a different argmax');
  process.exitCode = ok ? 0 : 1;
}

main().catch((e) => { console.error(e && e.stack || e); process.exit(2); });
