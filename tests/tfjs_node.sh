#!/usr/bin/env bash
# tests/tfjs_node.sh -- run @tensorflow/tfjs-node@4.22.0's own test suite
# against Sluice's libtensorflow.so / libtensorflow_framework.so.
#
# This is a by-hand developer check, NOT part of CI: it needs the npm registry.
#
# What it does (every step is skipped when already done, so re-running is
# cheap and safe):
#   1. In a work dir, `npm init -y` and `npm install --ignore-scripts`
#      @tensorflow/tfjs-node@4.22.0 jasmine@4.2.1 yargs@16 tmp@0.0.33 esbuild
#      (--ignore-scripts: tfjs-node's install script would download Google's
#      libtensorflow; we supply Sluice's instead).
#   2. (--backend tensorflow) copies c_api/include/tensorflow into
#      node_modules/@tensorflow/tfjs-node/deps/include/, the two libraries
#      (cp -L) into .../deps/lib/, and builds the unmodified native addon with
#      node-gyp against /usr/include/node (lib/napi-v8/tfjs_binding.node, rpath
#      $ORIGIN/../../deps/lib). It is rebuilt whenever a checksum of the
#      libraries or headers changes.
#   3. Bundles, with esbuild, one CommonJS entry that does what tfjs-node's
#      dist/run_tests.js does: loads tfjs-node (registers the backend), the
#      chained ops and gradients, sets the same jasmine test env, then loads
#      tfjs-core's shared kernel tests (@tensorflow/tfjs-core/dist/tests) and
#      tfjs-node's own dist/**/*_test.js. tfjs-core's dist/ is extension-less
#      ES modules that Node cannot load directly, hence the bundle; every
#      @tensorflow package resolves to its ES-module build, so there is ONE
#      copy of tfjs-core (the script checks the esbuild metafile for that).
#      The bundle lives in tfjs-node's dist/ so the addon path resolves.
#      tfjs-node's own library modules are bundled from the package's src/*.ts
#      (same version, shipped in the npm package) instead of its ES5 dist/*.js:
#      ES5 subclasses cannot extend tfjs-core's native ES2017 classes
#      ("Class constructor KernelBackend cannot be invoked without 'new'").
#      The spec files themselves are the shipped dist/**/*_test.js.
#   4. Runs the specs with jasmine, minus run_tests.js's IGNORE_LIST (read out
#      of run_tests.js itself, not hard-coded), in a child process whose
#      reporter appends one JSON line per spec to a results file as it goes.
#      If the child dies (e.g. a segfault in the addon, or a spec that makes no
#      progress for --spec-timeout seconds), the spec that was running is
#      recorded as "crashed" and the remaining specs are re-run without it,
#      up to --max-crashes times.
#
# Usage:
#   tests/tfjs_node.sh [--work DIR] [--lib DIR] [--filter REGEX] [--json FILE]
#                      [--backend tensorflow|cpu] [--spec-timeout SECONDS]
#                      [--max-crashes N] [--setup-only]
#
#   --work DIR      work dir (default ${SLUICE_TFJS_WORK:-$HOME/.cache/sluice-tfjs})
#   --lib DIR       dir with libtensorflow.so and libtensorflow_framework.so
#                   (default <repo>/bazel-bin/c_api; build them first with
#                   bazel, this script never runs bazel)
#   --filter REGEX  only run specs whose full name matches (like run_tests.js's
#                   --grep), e.g. --filter '^matMul '
#   --json FILE     also write per-spec results + failure groups as JSON
#   --backend B     tensorflow (default): the real thing, needs the libraries.
#                   cpu: harness self-check; same bundle shape but on tfjs's CPU
#                   backend (tfjs-core's shared tests only: tfjs-node's own
#                   specs need the addon). No libraries or addon needed.
#   --spec-timeout  seconds without any spec finishing before the child is
#                   killed and the running spec counted as crashed (default 300)
#   --max-crashes   stop re-running after this many crashes (default 20);
#                   specs never reached are counted as failed ("not-run")
#   --setup-only    do steps 1-2 only (npm install; with --backend tensorflow
#                   also the addon build) and exit 0, printing nothing on
#                   stdout (progress lines go to stderr as always); for other
#                   scripts that run tfjs-node on Sluice, e.g.
#                   bench/tfjs_mobilenet.sh
#
# Needs: node (>= 18) and npm, node-gyp as shipped in
# /usr/lib/node_modules/npm/node_modules/node-gyp, Node headers in
# /usr/include/node, python3, make and g++ (for the addon), network access to
# the npm registry for the first run only.
#
# How long (2-core machine): first run ~20 s of npm install (~300 MB in DIR)
# and ~40 s for the addon build (again whenever the libraries or headers
# change); bundling ~5 s. The CPU-backend run: ~3,900 specs in ~5 s. The
# tensorflow-backend run: ~4,000 specs in ~15 s, plus ~3 s per crash (each
# crash restarts node and re-loads the bundle).
#
# What it prints: progress lines, then a summary: total specs, passed, failed,
# crashed (crashed and not-run specs count as failed), skipped (xit/pending),
# the pass percentage, the 30 most common failure messages grouped after
# normalisation (numbers -> N; "Op type not registered 'Foo'" and
# "No OpKernel was registered to support Op 'Foo'" group per op) with counts,
# and as the very last line:
#   tfjs-node specs: N passed, M failed (P%)
# Full per-spec output (failure stacks, test logging) goes to
# DIR/run-<backend>.log; raw results to DIR/results-<backend>.jsonl.
# Exit status: 0 all passed, 1 some failed/crashed, 2 harness/setup error.
#
# Checking the harness itself: `tests/tfjs_node.sh --backend cpu` should pass
# every spec. To exercise the crash/re-run path, set SLUICE_TFJS_CRASH_ON=REGEX
# (specs whose full name matches kill the child with SIGSEGV) or
# SLUICE_TFJS_HANG_ON=REGEX with a small --spec-timeout.

set -euo pipefail

SELF="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
REPO="$(dirname "$(dirname "$SELF")")"
WORK="${SLUICE_TFJS_WORK:-$HOME/.cache/sluice-tfjs}"
LIB="$REPO/bazel-bin/c_api"
FILTER=""
JSON_OUT=""
BACKEND="tensorflow"
SPEC_TIMEOUT=300
MAX_CRASHES=20
SETUP_ONLY=0

die() { echo "tfjs_node.sh: error: $*" >&2; exit 2; }
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --work) WORK="${2:?--work needs a value}"; shift 2 ;;
    --work=*) WORK="${1#*=}"; shift ;;
    --lib) LIB="${2:?--lib needs a value}"; shift 2 ;;
    --lib=*) LIB="${1#*=}"; shift ;;
    --filter) FILTER="${2?--filter needs a value}"; shift 2 ;;
    --filter=*) FILTER="${1#*=}"; shift ;;
    --json) JSON_OUT="${2:?--json needs a value}"; shift 2 ;;
    --json=*) JSON_OUT="${1#*=}"; shift ;;
    --backend) BACKEND="${2:?--backend needs a value}"; shift 2 ;;
    --backend=*) BACKEND="${1#*=}"; shift ;;
    --spec-timeout) SPEC_TIMEOUT="${2:?}"; shift 2 ;;
    --spec-timeout=*) SPEC_TIMEOUT="${1#*=}"; shift ;;
    --max-crashes) MAX_CRASHES="${2:?}"; shift 2 ;;
    --max-crashes=*) MAX_CRASHES="${1#*=}"; shift ;;
    --setup-only) SETUP_ONLY=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done

case "$BACKEND" in tensorflow|cpu) ;; *) die "--backend must be tensorflow or cpu" ;; esac
[[ "$SPEC_TIMEOUT" =~ ^[0-9]+$ ]] || die "--spec-timeout must be a number of seconds"
[[ "$MAX_CRASHES" =~ ^[0-9]+$ ]] || die "--max-crashes must be a number"
command -v node >/dev/null || die "node not found"
command -v npm >/dev/null || die "npm not found"

mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"
if [[ -n "$JSON_OUT" ]]; then
  mkdir -p "$(dirname "$JSON_OUT")"
  JSON_OUT="$(cd "$(dirname "$JSON_OUT")" && pwd)/$(basename "$JSON_OUT")"
fi
N="$WORK/node_modules/@tensorflow/tfjs-node"
H="$WORK/.sluice"   # generated helper files
mkdir -p "$H"
log() { echo "== $*" >&2; }

# ---------------------------------------------------------------- 1. npm ----
cd "$WORK"
if [[ ! -f package.json ]]; then
  log "npm init in $WORK"
  npm init -y >/dev/null
fi

# Exits 0 when every package is installed at an acceptable version.
installed_ok() {
  node -e '
    const want = {"@tensorflow/tfjs-node": /^4\.22\.0$/, "jasmine": /^4\.2\.1$/,
                  "yargs": /^16\./, "tmp": /^0\.0\.33$/, "esbuild": /./};
    for (const [name, re] of Object.entries(want)) {
      let v;
      try { v = require(process.cwd() + "/node_modules/" + name + "/package.json").version; }
      catch (e) { process.exit(1); }
      if (!re.test(v)) process.exit(1);
    }' 2>/dev/null
}
if ! installed_ok; then
  log "npm install (once; needs the npm registry)"
  npm install --ignore-scripts --no-audit --no-fund \
    @tensorflow/tfjs-node@4.22.0 jasmine@4.2.1 yargs@16 tmp@0.0.33 esbuild >&2
  installed_ok || die "npm install did not produce the expected package versions"
fi
[[ -x "$WORK/node_modules/.bin/esbuild" ]] || die "esbuild binary missing in $WORK/node_modules/.bin"

# One tfjs-core only: a nested second copy would mean the tests and the backend
# talk to different registries.
mapfile -t CORES < <(find "$WORK/node_modules" -path '*/@tensorflow/tfjs-core/package.json' -not -path '*/.sluice/*' 2>/dev/null)
[[ ${#CORES[@]} -eq 1 ]] || die "expected exactly one @tensorflow/tfjs-core under $WORK/node_modules, found: ${CORES[*]:-none}"

# ------------------------------------------------------- 2. native addon ----
ADDON="$N/lib/napi-v8/tfjs_binding.node"
if [[ "$BACKEND" == tensorflow ]]; then
  LIB="$(cd "$LIB" 2>/dev/null && pwd)" || die "--lib dir does not exist"
  INC="$REPO/c_api/include/tensorflow"
  for f in "$LIB/libtensorflow.so" "$LIB/libtensorflow_framework.so"; do
    [[ -f "$f" ]] || die "$f not found (build Sluice's C API libraries first, or pass --lib)"
  done
  [[ -f "$INC/c/c_api.h" && -f "$INC/c/eager/c_api.h" ]] || die "headers missing under $INC"
  STAMP_FILE="$N/deps/.sluice-stamp"
  STAMP="$( { sha256sum "$LIB/libtensorflow.so" "$LIB/libtensorflow_framework.so" | cut -d' ' -f1
              (cd "$INC" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
              sha256sum "$N/binding.gyp" "$N"/binding/*.cc | cut -d' ' -f1; } | sha256sum | cut -d' ' -f1)"
  if [[ -f "$ADDON" && -f "$STAMP_FILE" && "$(cat "$STAMP_FILE")" == "$STAMP" ]]; then
    log "addon up to date ($ADDON)"
  else
    log "copying headers and libraries into $N/deps"
    rm -rf "$N/deps/include" "$N/deps/lib" "$STAMP_FILE"
    mkdir -p "$N/deps/include" "$N/deps/lib"
    cp -r "$INC" "$N/deps/include/"
    cp -L "$LIB/libtensorflow.so" "$LIB/libtensorflow_framework.so" "$N/deps/lib/"
    chmod u+w "$N"/deps/lib/*.so
    log "building the tfjs-node addon with node-gyp (log: $WORK/node-gyp.log)"
    # module_path must be absolute (as node-pre-gyp passes it): a relative one
    # is taken relative to build/, which puts the addon in build/lib/napi-v8
    # where neither node-pre-gyp's binary.find nor the $ORIGIN rpath work.
    rm -rf "$N/build" "$N/lib/napi-v8"
    if ! (cd "$N" && node /usr/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js rebuild \
            --nodedir=/usr --module_name=tfjs_binding --module_path="$N/lib/napi-v8" \
            --napi_build_version=8) >"$WORK/node-gyp.log" 2>&1; then
      tail -n 40 "$WORK/node-gyp.log" >&2
      die "addon build failed (full log: $WORK/node-gyp.log)"
    fi
    [[ -f "$ADDON" ]] || die "node-gyp succeeded but $ADDON is missing"
    echo "$STAMP" >"$STAMP_FILE"
  fi
fi

[[ "$SETUP_ONLY" == 1 ]] && exit 0

# ------------------------------------------------------- helper scripts ----
# One node script: `prepare` writes the bundle entry and the spec config,
# `drive` runs and re-runs the child and summarises, `child` is the jasmine
# process itself.
cat >"$H/harness.js" <<'HARNESS_EOF'
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');
const cp = require('child_process');

const mode = process.argv[2];
const cfgPath = process.argv[3];
const readJSON = (p) => JSON.parse(fs.readFileSync(p, 'utf8'));

// ------------------------------------------------------------- prepare ----
// argv: prepare CFG_OUT N BACKEND ENTRY_OUT
function prepare() {
  const [, , , out, N, backend, entryOut] = process.argv;
  const src = fs.readFileSync(path.join(N, 'dist/run_tests.js'), 'utf8');

  // IGNORE_LIST, including its platform-conditional pushes, evaluated from
  // run_tests.js's own text.
  const ig = src.match(/var IGNORE_LIST = \[[\s\S]*?\n(?=var grepRegex)/);
  if (!ig) throw new Error('cannot find IGNORE_LIST in run_tests.js');
  const ctx = {process: {platform: process.platform}};
  vm.runInNewContext(ig[0], ctx);
  let ignore = ctx.IGNORE_LIST;
  if (!Array.isArray(ignore) || ignore.length === 0) {
    throw new Error('IGNORE_LIST from run_tests.js is empty or not an array');
  }

  const te = src.match(/jasmine_util\.setTestEnvs\((\[[\s\S]*?\])\);/);
  if (!te) throw new Error('cannot find setTestEnvs(...) in run_tests.js');
  let envs = vm.runInNewContext('(' + te[1] + ')');
  if (!src.includes('require("@tensorflow/tfjs-core/dist/tests")')) {
    throw new Error('run_tests.js no longer loads @tensorflow/tfjs-core/dist/tests');
  }

  if (backend === 'cpu') {
    // Same envs/ignore list with the backend swapped.
    const from = envs.map((e) => e.name);
    envs = envs.map((e) => Object.assign({}, e, {
      name: e.name.replace('tensorflow', 'cpu'),
      backendName: 'cpu',
    }));
    ignore = ignore.map((s) => {
      from.forEach((n, i) => { s = s.split(n).join(envs[i].name); });
      return s;
    });
  }

  // tfjs-node's own specs (run_tests.ts loads src/**/*_test.ts; the npm
  // package ships their compiled dist/**/*_test.js).
  const nodeSpecs = [];
  (function walk(dir) {
    for (const ent of fs.readdirSync(dir, {withFileTypes: true})) {
      const p = path.join(dir, ent.name);
      if (ent.isDirectory()) walk(p);
      else if (/_test\.js$/.test(ent.name)) nodeSpecs.push(p);
    }
  })(path.join(N, 'dist'));
  nodeSpecs.sort();

  const dist = path.join(N, 'dist');
  const rel = (p) => './' + path.relative(dist, p).replace(/\.js$/, '');
  const L = [];
  L.push('// Generated by tests/tfjs_node.sh: mirrors tfjs-node dist/run_tests.js.');
  L.push('"use strict";');
  if (backend === 'tensorflow') {
    L.push('require("./index");  // registers the tensorflow backend (loads the addon)');
  } else {
    L.push('require("@tensorflow/tfjs-backend-cpu");');
  }
  L.push('require("@tensorflow/tfjs-core/dist/public/chained_ops/register_all_chained_ops");');
  L.push('require("@tensorflow/tfjs-core/dist/register_all_gradients");');
  L.push('const tf = require("@tensorflow/tfjs");');
  L.push('const jasmine_util = require("@tensorflow/tfjs-core/dist/jasmine_util");');
  L.push('jasmine_util.setTestEnvs(' + JSON.stringify(envs) + ');');
  L.push('// tfjs-core\'s shared tests first, then tfjs-node\'s spec files, as in run_tests.js');
  L.push('require("@tensorflow/tfjs-core/dist/tests");');
  if (backend === 'tensorflow') {
    for (const p of nodeSpecs) L.push('require(' + JSON.stringify(rel(p)) + ');');
  }
  L.push('exports.backendVersion = () => ' + (backend === 'tensorflow' ?
      'tf.backend().binding.TF_Version;' : '"tfjs cpu backend " + tf.version.tfjs;'));
  fs.writeFileSync(entryOut, L.join('\n') + '\n');
  fs.writeFileSync(out, JSON.stringify({ignore, envs,
    nodeSpecFiles: backend === 'tensorflow' ? nodeSpecs.length : 0}, null, 1));
}

// ---------------------------------------------------------------- bundle ----
// argv: bundle ENTRY OUT META N
// esbuild, as `--bundle --platform=node --format=cjs --main-fields=module,main
// --ignore-annotations --external:@mapbox/node-pre-gyp`, plus one plugin:
// tfjs-node's non-test modules are taken from the package's own src/*.ts
// rather than dist/*.js. dist/ is compiled to ES5, and its ES5 subclasses
// (NodeJSKernelBackend extends KernelBackend, the callbacks) cannot extend the
// native ES2017 classes of tfjs-core's ES-module build, which the tests need
// ("Class constructor KernelBackend cannot be invoked without 'new'"). The
// upstream run_tests.ts runs tfjs-node from its TypeScript sources too.
async function bundle() {
  const [, , , entry, outfile, metafile, N] = process.argv;
  const esbuild = require('esbuild');
  const dist = path.join(N, 'dist');
  const src = path.join(N, 'src');
  const fromSrc = {
    name: 'tfjs-node-from-src',
    setup(b) {
      b.onResolve({filter: /^\.\.?(\/|$)/}, (args) => {
        if (!args.importer) return undefined;
        const abs = path.resolve(args.resolveDir, args.path);
        if (!abs.startsWith(dist + path.sep)) return undefined;
        const rel = path.relative(dist, abs).replace(/\.js$/, '');
        if (/_test$/.test(rel) || /^sluice_/.test(rel)) return undefined;
        for (const cand of [rel + '.ts', rel + '.js', path.join(rel, 'index.ts')]) {
          const p = path.join(src, cand);
          if (fs.existsSync(p) && fs.statSync(p).isFile()) return {path: p};
        }
        return undefined;
      });
      // tsc compiled dist/ without esModuleInterop: `import * as ProgressBar
      // from 'progress'` is the CommonJS export itself (callable). Keep that
      // meaning: import-equals, which esbuild turns into a plain require().
      b.onLoad({filter: /\.ts$/}, (args) => {
        if (!args.path.startsWith(src + path.sep)) return undefined;
        const text = fs.readFileSync(args.path, 'utf8').replace(
            /^import \* as (\w+) from '((?!@tensorflow\/)[^.'][^']*)';/gm,
            "import $1 = require('$2');");
        return {contents: text, loader: 'ts'};
      });
    },
  };
  const res = await esbuild.build({
    entryPoints: [entry], outfile, bundle: true, platform: 'node', format: 'cjs',
    mainFields: ['module', 'main'], ignoreAnnotations: true,
    external: ['@mapbox/node-pre-gyp', 'jasmine-core', 'jasmine-core/*'],
    plugins: [fromSrc], metafile: true, logLevel: 'error',
  });
  fs.writeFileSync(metafile, JSON.stringify(res.metafile));
}

// Fails when the bundle holds more than one copy of a @tensorflow package.
function checkMeta() {
  const meta = readJSON(process.argv[3]);
  const nodeMods = new Set();
  for (const input of Object.keys(meta.inputs)) {
    const m = input.match(/@tensorflow\/tfjs-node\/(dist|src)\/(.*)\.[jt]s$/);
    if (!m || /_test$|^sluice_/.test(m[2])) continue;
    if (nodeMods.has(m[2])) throw new Error('tfjs-node module ' + m[2] + ' bundled from both src/ and dist/');
    nodeMods.add(m[2]);
  }
  const roots = {};
  for (const input of Object.keys(meta.inputs)) {
    const m = input.match(/^(.*node_modules\/@tensorflow\/([\w-]+))\/(.*)$/);
    if (!m) continue;
    // dist/tf-core.node.js, dist/tf.fesm.js, ...: a prebuilt whole-package
    // bundle next to the ES modules means a second copy.
    if (/^dist\/tf(-[a-z0-9-]+)?(\.[a-z0-9]+)*\.js$/.test(m[3])) {
      throw new Error('bundle pulled in the pre-bundled build ' + input +
                      ' (a second copy of @tensorflow/' + m[2] + ')');
    }
    (roots[m[2]] = roots[m[2]] || new Set()).add(m[1]);
  }
  for (const [pkg, set] of Object.entries(roots)) {
    if (set.size > 1) throw new Error('@tensorflow/' + pkg + ' bundled from ' + [...set].join(', '));
  }
  if (!roots['tfjs-core']) throw new Error('tfjs-core is not in the bundle?');
}

// --------------------------------------------------------------- child ----
function child() {
  const cfg = readJSON(cfgPath);
  const fd = fs.openSync(cfg.results, 'a');
  // writeSync goes straight to the kernel: survives a segfault right after.
  const emit = (o) => fs.writeSync(fd, JSON.stringify(o) + '\n');
  emit({e: 'begin', attempt: cfg.attempt, pid: process.pid});

  // As in run_tests.js.
  Error.stackTraceLimit = Infinity;
  process.on('unhandledRejection', (e) => { throw e; });
  const Jasmine = require('jasmine');
  const runner = new Jasmine();
  runner.loadConfig({spec_files: [], random: false, jsLoader: 'require'});
  if (process.env.JASMINE_SEED) runner.seed(process.env.JASMINE_SEED);

  const bundle = require(cfg.bundle);  // defines all specs
  const env = jasmine.getEnv();
  const grep = new RegExp(cfg.filter || '');
  const baseFilter = (name) => {
    if (!grep.test(name)) return false;
    for (const s of cfg.ignore) if (name.indexOf(s) > -1) return false;
    return true;
  };

  const plan = [];
  let defined = 0;
  (function walk(node, suites) {
    for (const c of node.children) {
      if (c.children !== undefined) {
        walk(c, suites.concat([c.id]));
      } else {
        const name = c.getFullName();
        defined++;
        if (baseFilter(name)) plan.push({id: c.id, name, suites});
      }
    }
  })(env.topSuite(), []);
  const planById = new Map(plan.map((p) => [p.id, p]));
  for (const [id, name] of Object.entries(cfg.skip)) {
    if (!planById.has(id) || planById.get(id).name !== name) {
      emit({e: 'fatal', msg: 'spec ids are not stable across runs (' + id + ')'});
      process.exit(2);
    }
  }
  if (cfg.writePlan) fs.writeFileSync(cfg.plan, JSON.stringify(plan));
  const active = new Set(plan.filter((p) => !(p.id in cfg.skip)).map((p) => p.id));
  emit({e: 'plan', defined, total: plan.length, active: active.size});

  // Harness self-test hooks (see the header): die or hang in matching specs.
  const crashOn = process.env.SLUICE_TFJS_CRASH_ON ? new RegExp(process.env.SLUICE_TFJS_CRASH_ON) : null;
  const hangOn = process.env.SLUICE_TFJS_HANG_ON ? new RegExp(process.env.SLUICE_TFJS_HANG_ON) : null;

  env.configure({
    random: false,
    specFilter: (spec) => active.has(spec.id),
  });

  runner.clearReporters();
  runner.addReporter({
    suiteStarted(r) { emit({e: 'suiteStart', id: r.id}); },
    suiteDone(r) {
      const f = (r.failedExpectations || [])[0];
      emit({e: 'suiteDone', id: r.id, name: r.fullName, msg: f ? f.message : undefined});
      if (f) console.log('SUITE ERROR ' + r.fullName + '\n  ' + (f.stack || f.message));
    },
    specStarted(r) {
      if (!active.has(r.id)) return;
      emit({e: 'start', id: r.id});
      if (crashOn && crashOn.test(r.fullName)) process.kill(process.pid, 'SIGSEGV');
      if (hangOn && hangOn.test(r.fullName)) for (;;) { /* hang */ }
    },
    specDone(r) {
      if (!active.has(r.id)) return;
      const f = (r.failedExpectations || [])[0];
      emit({e: 'done', id: r.id, status: r.status, msg: f ? f.message : undefined,
            ms: r.duration});
      if (r.status === 'failed') {
        const stack = f && f.stack ? f.stack.split('\n').slice(0, 12).join('\n    ') : '';
        console.log('FAILED ' + r.fullName + '\n  ' + (f ? f.message : '') +
                    (stack ? '\n    ' + stack : ''));
      }
    },
    jasmineDone(r) {
      emit({e: 'end', overall: r.overallStatus,
            msgs: (r.failedExpectations || []).map((f) => f.message).slice(0, 5)});
    },
  });

  if (active.size === 0) {
    emit({e: 'end', overall: 'empty', msgs: []});
    process.exit(0);
  }
  const version = bundle.backendVersion();
  console.log('Running tests against TensorFlow: ' + version);
  emit({e: 'info', version});
  runner.execute();
}

// --------------------------------------------------------------- drive ----
function normalize(msg) {
  if (!msg) return '(no message)';
  const full = String(msg);
  let r = full.match(/Op type not registered '([^']+)'/);
  if (r) return "Op type not registered '" + r[1] + "'";
  r = full.match(/No OpKernel was registered to support Op '([^']+)'/);
  if (r) return "No OpKernel was registered to support Op '" + r[1] + "'";
  let m = full.split('\n')[0].trim();
  if (/^(crashed|timed out):/.test(m)) return m.replace(/\d+/g, 'N');
  // tfjs-node reports TF errors as "Invalid TF_Status: <code>\nMessage: <msg>".
  r = full.match(/Invalid TF_Status: (\d+)\s*\n\s*Message: ([^\n]*)/);
  if (r) m = m.slice(0, m.indexOf('Invalid TF_Status')) + 'TF_Status ' + r[1] + ': ' + r[2].trim();
  m = m.replace(/\{\{node [^}]*\}\}/g, '{{node}}')
       .replace(/\/[\w.\/-]*\/tfjs-[\w.\/-]+/g, '<path>')
       .replace(/-?\b\d+(\.\d+)?(e[-+]?\d+)?\b/gi, 'N')
       .replace(/(N, ){3,}(N, )*N/g, 'N, ..., N')
       .replace(/\s+/g, ' ');
  return m.length > 200 ? m.slice(0, 197) + '...' : m;
}

function parseResults(file) {
  if (!fs.existsSync(file)) return [];
  const out = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue;
    try { out.push(JSON.parse(line)); } catch (e) { /* torn last line */ }
  }
  return out;
}

function drive() {
  const cfg = readJSON(cfgPath);
  const log = fs.openSync(cfg.log, 'w');
  fs.writeFileSync(cfg.results, '');
  try { fs.unlinkSync(cfg.plan); } catch (e) { /* none */ }
  const t0 = Date.now();
  const done = new Map();      // id -> {status, msg}
  let crashes = 0;
  let attempt = 0;
  let version = null;
  let fatal = null;
  const suiteErrors = [];

  const runAttempt = () => new Promise((resolve) => {
    attempt++;
    const skip = {};
    let plan = null;
    if (attempt > 1) {
      plan = readJSON(cfg.plan);
      const names = new Map(plan.map((p) => [p.id, p.name]));
      for (const id of done.keys()) skip[id] = names.get(id);
    }
    const ccfg = Object.assign({}, cfg, {attempt, skip, writePlan: attempt === 1});
    const ccfgPath = cfg.results + '.child.json';
    fs.writeFileSync(ccfgPath, JSON.stringify(ccfg));
    const startSize = fs.statSync(cfg.results).size;
    fs.writeSync(log, `\n===== attempt ${attempt} (${Object.keys(skip).length} specs already done) =====\n`);
    const ch = cp.spawn(process.execPath, [__filename, 'child', ccfgPath],
                        {cwd: cfg.cwd, stdio: ['ignore', 'pipe', 'pipe']});
    let tail = '';
    const onData = (d) => {
      fs.writeSync(log, d);
      tail = (tail + d.toString()).slice(-8192);
    };
    ch.stdout.on('data', onData);
    ch.stderr.on('data', onData);
    let lastSize = startSize;
    let lastChange = Date.now();
    let lastReport = Date.now();
    let timedOut = false;
    const timer = setInterval(() => {
      const size = fs.statSync(cfg.results).size;
      if (size !== lastSize) { lastSize = size; lastChange = Date.now(); }
      if (cfg.specTimeout > 0 && Date.now() - lastChange > cfg.specTimeout * 1000) {
        timedOut = true;
        ch.kill('SIGKILL');
      }
      if (Date.now() - lastReport > 20000) {
        lastReport = Date.now();
        const ev = parseResults(cfg.results);
        const nd = ev.filter((e) => e.e === 'done').length;
        const nf = ev.filter((e) => e.e === 'done' && e.status === 'failed').length;
        const pl = ev.find((e) => e.e === 'plan');
        process.stderr.write(`   ... ${nd}${pl ? '/' + pl.total : ''} specs finished ` +
                             `(${nf} failed, ${crashes} crashed), ${Math.round((Date.now() - t0) / 1000)}s\n`);
      }
    }, 1000);
    ch.on('exit', (code, signal) => {
      clearInterval(timer);
      resolve({code, signal, timedOut, tail, startSize});
    });
  });

  (async () => {
    for (;;) {
      const res = await runAttempt();
      const all = parseResults(cfg.results);
      // Events of this attempt only: after its last 'begin'.
      let b = -1;
      all.forEach((e, i) => { if (e.e === 'begin') b = i; });
      const ev = b >= 0 ? all.slice(b) : [];
      let ended = false;
      const started = new Map();
      const suiteStack = [];
      let progress = 0;
      for (const e of ev) {
        if (e.e === 'info') version = e.version;
        else if (e.e === 'fatal') fatal = e.msg;
        else if (e.e === 'start') started.set(e.id, true);
        else if (e.e === 'done') {
          started.delete(e.id);
          if (!done.has(e.id)) { done.set(e.id, {status: e.status, msg: e.msg}); progress++; }
        } else if (e.e === 'suiteStart') suiteStack.push(e.id);
        else if (e.e === 'suiteDone') {
          suiteStack.pop();
          if (e.msg) suiteErrors.push({name: e.name, msg: e.msg});
        } else if (e.e === 'end') {
          ended = true;
          for (const m of e.msgs || []) suiteErrors.push({name: '(top level)', msg: m});
        }
      }
      if (ended || fatal) break;
      if (!fs.existsSync(cfg.plan)) {
        fatal = 'the test process died before any spec ran (' +
                (res.signal ? 'signal ' + res.signal : 'exit code ' + res.code) + ')';
        process.stderr.write(res.tail.split('\n').slice(-30).join('\n') + '\n');
        break;
      }
      // Crash: blame the running spec, else the specs left in the running
      // suite (a beforeAll/afterAll crash).
      let why = res.timedOut ? `timed out: no spec finished for ${cfg.specTimeout}s` :
                res.signal ? `crashed: killed by ${res.signal}` :
                `crashed: process exited with code ${res.code}`;
      if (!res.timedOut) {
        const lines = res.tail.split('\n').filter((l) => /(Error|Exception|Check failed|Assertion|terminate|abort|symbol lookup)/i.test(l));
        if (lines.length) why += ' (' + lines[lines.length - 1].trim().slice(0, 160) + ')';
      }
      const plan = readJSON(cfg.plan);
      let blamed = [...started.keys()];
      if (blamed.length === 0 && suiteStack.length > 0) {
        const inner = suiteStack[suiteStack.length - 1];
        blamed = plan.filter((p) => p.suites.includes(inner) && !done.has(p.id)).map((p) => p.id);
      }
      crashes++;
      const names = new Map(plan.map((p) => [p.id, p.name]));
      for (const id of blamed) done.set(id, {status: 'crashed', msg: why});
      process.stderr.write(`   !! ${why}` +
          (blamed.length ? ` in: ${names.get(blamed[0])}` + (blamed.length > 1 ? ` (+${blamed.length - 1} more)` : '') : ' between specs') +
          `; crash ${crashes}/${cfg.maxCrashes}\n`);
      fs.writeSync(log, `\n!! ${why}; blamed: ${blamed.map((id) => names.get(id)).join(' | ')}\n`);
      if (blamed.length === 0 && progress === 0) {
        fatal = 'the test process keeps dying without making progress: ' + why;
        process.stderr.write(res.tail.split('\n').slice(-30).join('\n') + '\n');
        break;
      }
      if (crashes >= cfg.maxCrashes) break;
      if (plan.every((p) => done.has(p.id))) break;
    }
    summarize();
  })().catch((e) => { console.error(e); process.exit(2); });

  function summarize() {
    if (!fs.existsSync(cfg.plan)) {
      console.error('tfjs_node.sh: error: ' + (fatal || 'no spec plan written') +
                    '\n  log: ' + cfg.log);
      process.exit(2);
    }
    const plan = readJSON(cfg.plan);
    const specs = plan.map((p) => {
      const d = done.get(p.id) || {status: 'not-run', msg: 'not run: the crash cap was reached or the run was aborted'};
      return {id: p.id, name: p.name, status: d.status, message: d.msg || null};
    });
    const count = (s) => specs.filter((x) => x.status === s).length;
    const passed = count('passed');
    const failedOnly = count('failed');
    const crashed = count('crashed');
    const notRun = count('not-run');
    const skipped = count('pending') + count('excluded');
    const failed = failedOnly + crashed + notRun;
    const pct = passed + failed ? (100 * passed / (passed + failed)) : 0;
    const pctStr = (Math.floor(pct * 10) / 10).toFixed(1);

    const groups = new Map();
    for (const s of specs) {
      if (s.status === 'passed' || s.status === 'pending' || s.status === 'excluded') continue;
      const k = normalize(s.message);
      const g = groups.get(k) || {count: 0, message: k, example: s.name};
      g.count++;
      groups.set(k, g);
    }
    const top = [...groups.values()].sort((a, b) => b.count - a.count || (a.message < b.message ? -1 : 1));

    const secs = Math.round((Date.now() - t0) / 1000);
    const out = [];
    out.push('');
    out.push(`tfjs-node test summary (backend: ${cfg.backend}${version ? ', ' + version : ''}, ` +
             `${attempt} run${attempt > 1 ? 's' : ''}, ${secs}s)`);
    if (cfg.filter) out.push(`  filter:   ${cfg.filter}`);
    const planEv = parseResults(cfg.results).find((e) => e.e === 'plan');
    if (planEv) {
      out.push(`  defined:  ${planEv.defined} specs; ${planEv.defined - planEv.total} left out by ` +
               `run_tests.js's IGNORE_LIST (${cfg.ignore.length} patterns)${cfg.filter ? ' and --filter' : ''}`);
    }
    out.push(`  total:    ${specs.length}`);
    out.push(`  passed:   ${passed}`);
    out.push(`  failed:   ${failed}  (assertion/error: ${failedOnly}, crashed: ${crashed}, not run: ${notRun})`);
    out.push(`  crashed:  ${crashed}`);
    out.push(`  skipped:  ${skipped}  (pending/xit; not counted)`);
    out.push(`  pass:     ${pctStr}%`);
    const bad = specs.filter((x) => !['passed', 'pending', 'excluded'].includes(x.status));
    const missingOps = new Set();
    let opSpecs = 0;
    for (const x of bad) {
      const r = /Op type not registered '([^']+)'/.exec(x.message || '');
      if (r) { missingOps.add(r[1]); opSpecs++; }
    }
    if (missingOps.size) {
      out.push(`  missing ops: ${missingOps.size} op types not registered, failing ${opSpecs} specs`);
    }
    const fixtures = bad.filter((x) => /test_objects\//.test(x.message || '')).length;
    if (fixtures) {
      out.push(`  fixtures: ${fixtures} failed specs need test_objects/ files that the npm package does not ship`);
    }
    if (suiteErrors.length) {
      out.push(`  suite-level errors (beforeAll/afterAll, not counted as specs): ${suiteErrors.length}`);
      for (const s of suiteErrors.slice(0, 5)) out.push(`    ${s.name}: ${normalize(s.msg)}`);
    }
    if (fatal) out.push(`  ABORTED: ${fatal}`);
    if (top.length) {
      out.push('');
      out.push(`Top ${Math.min(30, top.length)} failure messages (of ${top.length} distinct; count, message, e.g. spec):`);
      for (const g of top.slice(0, 30)) {
        out.push(`  ${String(g.count).padStart(5)}  ${g.message}`);
        out.push(`         e.g. ${g.example.length > 150 ? g.example.slice(0, 147) + '...' : g.example}`);
      }
    }
    out.push('');
    out.push(`  log: ${cfg.log}`);
    out.push(`  raw results: ${cfg.results}`);
    if (cfg.json) {
      fs.writeFileSync(cfg.json, JSON.stringify({
        backend: cfg.backend, version, filter: cfg.filter || null, seconds: secs, runs: attempt,
        defined: planEv ? planEv.defined : null,
        totals: {total: specs.length, passed, failed, failedAssertion: failedOnly, crashed, notRun,
                 skipped, passPercent: Number(pctStr)},
        aborted: fatal, suiteErrors, failureGroups: top, specs,
      }, null, 1) + '\n');
      out.push(`  json: ${cfg.json}`);
    }
    out.push(`tfjs-node specs: ${passed} passed, ${failed} failed (${pctStr}%)`);
    console.log(out.join('\n'));
    process.exit(fatal ? 2 : failed ? 1 : 0);
  }
}

if (mode === 'prepare') prepare();
else if (mode === 'checkmeta') checkMeta();
else if (mode === 'bundle') bundle().catch((e) => { console.error(e.message || e); process.exit(1); });
else if (mode === 'child') child();
else if (mode === 'drive') drive();
else { console.error('usage: harness.js prepare|bundle|checkmeta|child|drive ...'); process.exit(2); }
HARNESS_EOF

# ----------------------------------------------------------- 3. bundle ----
ENTRY="$N/dist/sluice_tests_entry_${BACKEND}.js"
BUNDLE="$N/dist/sluice_tests_bundle_${BACKEND}.js"
SPECCFG="$H/spec_config_${BACKEND}.json"
node "$H/harness.js" prepare "$SPECCFG" "$N" "$BACKEND" "$ENTRY.new"
BSTAMP="$( { cat "$ENTRY.new"; cat "$SELF"; ls -l --time-style=+%s "$WORK/node_modules/.package-lock.json" 2>/dev/null || true; } | sha256sum | cut -d' ' -f1)"
if [[ -f "$BUNDLE" && -f "$BUNDLE.stamp" && "$(cat "$BUNDLE.stamp")" == "$BSTAMP" ]]; then
  rm -f "$ENTRY.new"
  log "bundle up to date ($BUNDLE)"
else
  mv "$ENTRY.new" "$ENTRY"
  log "bundling tests with esbuild -> $BUNDLE"
  rm -f "$BUNDLE.stamp"
  node "$H/harness.js" bundle "$ENTRY" "$BUNDLE" "$H/meta_${BACKEND}.json" "$N" || die "esbuild failed"
  node "$H/harness.js" checkmeta "$H/meta_${BACKEND}.json" || die "bundle check failed"
  echo "$BSTAMP" >"$BUNDLE.stamp"
fi

# -------------------------------------------------------------- 4. run ----
RCFG="$H/run_${BACKEND}.json"
node -e '
  const [cfgOut, spec, bundle, results, plan, log, cwd, filter, json, backend, st, mc] = process.argv.slice(1);
  const s = JSON.parse(require("fs").readFileSync(spec, "utf8"));
  require("fs").writeFileSync(cfgOut, JSON.stringify({
    bundle, results, plan, log, cwd, filter, json, backend,
    ignore: s.ignore, envs: s.envs,
    specTimeout: Number(st), maxCrashes: Math.max(1, Number(mc)),
  }, null, 1));' "$RCFG" "$SPECCFG" "$BUNDLE" "$WORK/results-${BACKEND}.jsonl" \
  "$H/plan_${BACKEND}.json" "$WORK/run-${BACKEND}.log" "$N" "$FILTER" "$JSON_OUT" "$BACKEND" \
  "$SPEC_TIMEOUT" "$MAX_CRASHES"

log "running specs (backend: $BACKEND${FILTER:+, filter: $FILTER}); log: $WORK/run-${BACKEND}.log"
set +e
node "$H/harness.js" drive "$RCFG"
rc=$?
set -e
exit "$rc"
