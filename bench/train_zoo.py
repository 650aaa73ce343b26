#!/usr/bin/python3
"""Training speed against PyTorch: each model exported by torch (eval mode, BatchNormalization
folded into the convolutions) and wrapped in a TrainingInfoProto (bench/train_model.py: softmax
cross-entropy, Gradient over every weight, SGD), then `sluice train` and PyTorch's eager step
(the same module, BatchNormalization folded the same way, torch.optim.SGD) on the same batch,
alternating, at each thread count. Each side runs in its own process; its peak RSS is the
process's (the torch import included, as a user sees it). Prints per model and thread count
the median step time of each side (the first step left out), their ratio, the peak RSS of
each and the largest relative difference of the losses over the steps; then the geometric
mean of the ratios per thread count.

  bench/train_zoo.sh                                  # README-named wrapper
  /usr/bin/python3 bench/train_zoo.py [--models resnet18,mobilenet_v2] [--threads 1,2]
      [--steps 6] [--rounds 1] [--batch 8] [--json OUT.json]

Models: resnet18 resnet50 mobilenet_v2 efficientnet_b0 bert_encoder (the zoo's encoder with a
16-class head on its pooled output, sequences of 128 tokens) lstm (embeddings of 128 for 10000
tokens, a 2-layer LSTM of 256 over sequences of 35, a 16-class head on the last layer's final
state). Written once under $SLUICE_BENCH_DIR (default /tmp/sluice-train-zoo). Build first:
bazel build -c opt //tools:sluice
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

MODELS = ["resnet18", "resnet50", "mobilenet_v2", "efficientnet_b0", "bert_encoder", "lstm"]
INPUT_OF = {"bert_encoder": "ids", "lstm": "ids"}  # The others take images, "x".
LR = 1e-3  # Small enough that a few steps on random data do not diverge (losses stay comparable).
# ResNet-50's random weights with identity BatchNormalization statistics start at a loss near 70
# and diverge at 1e-3 (67, 133, 543, ...), where any summation order gives other numbers.
LR_OF = {"resnet50": 1e-5}


def build(name, batch):
    """The torch module (parameters as the ONNX export has them), its example input, the
    input's name and the number of classes; deterministic for a name and batch."""
    import torch
    import torchvision
    from torch.fx.experimental.optimization import fuse
    from train_model import distinct_parameters
    torch.manual_seed(0)
    if name == "bert_encoder":
        from zoo_models import Encoder

        class Classifier(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.encoder = Encoder()
                self.head = torch.nn.Linear(256, 16)

            def forward(self, ids):
                return self.head(self.encoder(ids)[1])
        module = distinct_parameters(Classifier().eval())
        return module, torch.randint(0, 8192, (batch, 128)), "ids", 16
    if name == "lstm":
        class LstmClassifier(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.embedding = torch.nn.Embedding(10000, 128)
                self.lstm = torch.nn.LSTM(128, 256, num_layers=2, batch_first=True)
                self.head = torch.nn.Linear(256, 16)

            def forward(self, ids):
                _, (h, _) = self.lstm(self.embedding(ids))
                return self.head(h[-1])
        module = distinct_parameters(LstmClassifier().eval())
        return module, torch.randint(0, 10000, (batch, 35)), "ids", 16
    module = distinct_parameters(fuse(getattr(torchvision.models, name)(num_classes=1000).eval()))
    return module, torch.randn(batch, 3, 224, 224), "x", 1000


def export(name, batch, d, dynamic_batch=False):
    import numpy as np
    import onnx
    from onnx import numpy_helper
    from train_model import one_hot_target, training_model
    # v2: distinct parameters, LR_OF; _dyn: the batch dimension is dynamic.
    path = os.path.join(d, "%s_b%d_v2%s.onnx" % (name, batch, "_dyn" if dynamic_batch else ""))
    if os.path.exists(path):
        return path
    module, x, input_name, classes = build(name, batch)
    model = training_model(module, x, input_name, batch, classes, LR_OF.get(name, LR), opset=17,
                           dynamic_batch=dynamic_batch)
    # Counted in values: the export of an LSTM layer holds torch's 4 parameters as 3 (W, R and
    # both biases in one B), and a merged initializer would still show as values missing.
    weights = sum(int(np.prod(i.dims)) for i in model.graph.initializer if i.data_type == onnx.TensorProto.FLOAT)
    params = sum(p.numel() for p in module.parameters())
    if weights != params:
        raise RuntimeError("the export has %d weight values for torch's %d" % (weights, params))
    target = one_hot_target(batch, classes)
    base = path[:-len(".onnx")]
    onnx.save_tensor(numpy_helper.from_array(x.numpy(), input_name), base + "_input.pb")
    onnx.save_tensor(numpy_helper.from_array(target, "target"), base + "_target.pb")
    np.save(base + "_input.npy", x.numpy())
    np.save(base + "_target.npy", target)
    onnx.save(model, path + ".tmp")
    os.rename(path + ".tmp", path)
    return path


def torch_worker(args):
    """Runs in its own process: PyTorch's steps, printed as JSON."""
    import time
    import numpy as np
    import torch
    torch.set_num_threads(args.threads)
    module, _, _, _ = build(args.model, args.batch)
    base = os.path.join(args.dir, "%s_b%d_v2" % (args.model, args.batch))
    x = torch.from_numpy(np.load(base + "_input.npy"))
    target = torch.from_numpy(np.load(base + "_target.npy"))
    opt = torch.optim.SGD(module.parameters(), lr=LR_OF.get(args.model, LR))
    ms, losses = [], []
    for _ in range(args.steps):
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = -(torch.log_softmax(module(x), 1) * target).sum(1).mean()
        loss.backward()
        opt.step()
        ms.append((time.perf_counter() - start) * 1e3)
        losses.append(loss.item())
    print(json.dumps({"ms": ms, "loss": losses}))


# Runs argv[1:] as its child and writes the child's peak RSS (KiB, from wait4) to fd 3. Peak RSS
# must be measured from a small process: Linux's ru_maxrss of a process carries over exec the
# high-water mark of the memory it was forked with, so a child forked straight from this
# script (torch imported, models exported: ~800 MB) reported at least this script's size.
RSS_LAUNCHER = r"""
import os, sys
pid = os.fork()
if pid == 0:
    os.close(3)
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
os.write(3, b"%d" % usage.ru_maxrss)
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


def run_measured(cmd, err_path, threads):
    """Runs cmd (stderr to err_path) with the BLAS and OpenMP pools of `threads` threads (torch's
    set_num_threads leaves OpenBLAS's own pool at every core: at "1 thread" its matrix products
    ran on two); returns (stdout, peak RSS in MB of cmd's process, through RSS_LAUNCHER)."""
    r, w = os.pipe()
    rss_r, rss_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.close(rss_r)
        os.dup2(w, 1)
        os.dup2(rss_w, 3)
        os.dup2(os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
        env = dict(os.environ)
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = str(threads)
        launcher = ["/usr/bin/python3", "-S", "-c", RSS_LAUNCHER]
        os.execvpe(launcher[0], launcher + list(cmd), env)
    os.close(w)
    os.close(rss_w)
    chunks = []
    while True:
        b = os.read(r, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    _, status, _ = os.wait4(pid, 0)
    rss = os.read(rss_r, 64)
    os.close(rss_r)
    if os.waitstatus_to_exitcode(status) != 0 or not rss:
        with open(err_path) as f:
            raise RuntimeError("%s failed:\n%s" % (" ".join(cmd[:4]), f.read().strip()[-3000:]))
    return b"".join(chunks).decode(), int(rss) / 1024.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--json", default="")
    ap.add_argument("--sluice", default=os.environ.get("SLUICE", os.path.join(HERE, "..", "bazel-bin/tools/sluice")))
    ap.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    ap.add_argument("--dir", default=os.environ.get("SLUICE_BENCH_DIR", "/tmp/sluice-train-zoo"))
    args = ap.parse_args()
    if args.torch_worker:
        args.threads = int(args.threads)
        return torch_worker(args)
    os.makedirs(args.dir, exist_ok=True)
    err_path = os.path.join(args.dir, "last_run.err")
    rows = []
    print("%-16s %3s %10s %10s %7s %9s %9s %10s" % ("model", "thr", "sluice ms", "torch ms", "ratio",
                                                   "sluice MB", "torch MB", "loss diff"), flush=True)
    for name in args.models.split(","):
        try:
            path = export(name, args.batch, args.dir)
        except Exception as e:  # noqa: BLE001 (report and go on with the next model)
            print("%-16s export failed: %s" % (name, str(e).splitlines()[-1][:200]), flush=True)
            continue
        base = path[:-len(".onnx")]
        input_name = INPUT_OF.get(name, "x")
        for threads in [int(t) for t in args.threads.split(",")]:
            s_ms, t_ms, s_rss, t_rss, diff = [], [], 0.0, 0.0, 0.0
            try:
                for _ in range(args.rounds):
                    out, rss = run_measured([args.sluice, "train", path, "--steps", str(args.steps), "--threads",
                                             str(threads), "--feed", "%s=%s_input.pb" % (input_name, base),
                                             "--feed", "target=%s_target.pb" % base, "--json"], err_path, threads)
                    s = json.loads(out)
                    s_ms += [st["ms"] for st in s["steps"][1:]]
                    s_loss = [float(st["outputs"]["loss"]) for st in s["steps"]]
                    s_rss = max(s_rss, rss)
                    out, rss = run_measured([sys.executable, os.path.abspath(__file__), "--torch-worker", "--model",
                                             name, "--threads", str(threads), "--steps", str(args.steps),
                                             "--batch", str(args.batch), "--dir", args.dir], err_path, threads)
                    t = json.loads(out)
                    t_ms += t["ms"][1:]
                    t_rss = max(t_rss, rss)
                    diff = max([diff] + [abs(a - b) / max(abs(b), 1e-12) for a, b in zip(s_loss, t["loss"])])
            except RuntimeError as e:
                print("%-16s %3d failed: %s" % (name, threads, str(e)[-400:]), flush=True)
                continue
            row = {"model": name, "threads": threads, "sluice_ms": statistics.median(s_ms),
                   "torch_ms": statistics.median(t_ms), "sluice_ms_all": s_ms, "torch_ms_all": t_ms,
                   "sluice_rss_mb": s_rss, "torch_rss_mb": t_rss, "loss_rel_diff": diff}
            row["ratio"] = row["sluice_ms"] / row["torch_ms"]
            rows.append(row)
            print("%-16s %3d %10.1f %10.1f %7.2f %9.0f %9.0f %10.2e" % (
                name, threads, row["sluice_ms"], row["torch_ms"], row["ratio"], s_rss, t_rss, diff), flush=True)
    for threads in sorted({r["threads"] for r in rows}):
        ratios = [r["ratio"] for r in rows if r["threads"] == threads]
        print("geometric mean of sluice/torch at %d thread(s): %.3f over %d models (max %.2f)" % (
            threads, math.exp(sum(map(math.log, ratios)) / len(ratios)), len(ratios), max(ratios)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
