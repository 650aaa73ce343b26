"""Inputs and expected outputs of the TensorFlow GraphDefs in tests/tf_graphs/, by numpy.

Run with Debian's /usr/bin/python3: `expected.py OUT_DIR` writes, for each case NAME (one per
NAME.pbtxt beside this file), OUT_DIR/NAME/case.txt and the .npy files it names:

    feed NODE FILE        feed FILE into the Placeholder NODE
    fetch TENSOR FILE     fetch TENSOR ("node:index") and compare it with FILE ("-": no value,
                          for the cases that must fail)
    error TEXT            the run must fail with INVALID_ARGUMENT whose message holds TEXT

Every expected value is numpy's own (slicing, np.pad, np.take, np.argwhere, ...), never
Sluice's, so the runner (tests/tf_graph_runner.cc) checks the ops against an independent
implementation of TensorFlow's documented semantics.
"""
import os
import sys

import numpy as np

rng = np.random.default_rng(11)
CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def floats(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def arange(*shape, dtype=np.float32):
    return np.arange(np.prod(shape), dtype=dtype).reshape(shape)


@case
def strided_slice_basic():
    x = arange(4, 5)
    return {"x": x}, {"y:0": x[1:3, ::2], "z:0": x[:, 1:]}


@case
def strided_slice_negative():
    x = arange(4, 5)
    return {"x": x}, {"y:0": x[::-1, -2:0:-1], "z:0": x[3:0:-2, 10:-10:-1]}


@case
def strided_slice_ellipsis_newaxis():
    x = arange(2, 3, 4)
    return {"x": x}, {"y:0": x[..., np.newaxis, 1:3], "z:0": x[np.newaxis, ..., 0]}


@case
def strided_slice_shrink_mixed():
    x = arange(3, 4, 5)
    return {"x": x}, {"y:0": x[1, :, -1], "z:0": x[np.newaxis, -1, ..., ::-2]}


@case
def slice():
    x = arange(3, 4)
    return {"x": x}, {"y:0": x[1:3, 1:], "z:0": x[0:, 2:3]}


@case
def split_concat():
    x = floats(2, 6)
    parts = np.split(x, 3, axis=1)
    out = {f"split:{i}": p for i, p in enumerate(parts)}
    out["cat:0"] = np.concatenate([parts[2], parts[0]], axis=0)
    return {"x": x}, out


@case
def splitv():
    x = floats(5, 2)
    return {"x": x}, {"split:0": x[:2], "split:1": x[2:4], "split:2": x[4:]}


@case
def unpack_pack():
    x = floats(3, 2, 4)
    return {"x": x}, {"u:0": x[:, 0], "u:1": x[:, 1], "p:0": np.stack([x[:, 1], x[:, 0]], axis=-1)}


@case
def tile_transpose():
    x = arange(2, 1, 3, dtype=np.int32)
    t = np.tile(x, (2, 1, 3))
    return {"x": x}, {"t:0": t, "y:0": np.transpose(t, (2, 0, 1))}


@case
def pad():
    x = floats(2, 3)
    p = ((1, 0), (2, 1))
    return {"x": x}, {"y:0": np.pad(x, p), "z:0": np.pad(x, p, constant_values=7.5)}


@case
def mirror_pad():
    x = arange(3, 4)
    return {"x": x}, {"r:0": np.pad(x, ((2, 1), (3, 2)), mode="reflect"),
                      "s:0": np.pad(x, ((3, 0), (1, 4)), mode="symmetric")}


@case
def gather_v2():
    params = floats(3, 4, 2)
    idx = np.array([[2, 0], [1, 1], [3, 2]], np.int32)
    return {"params": params, "idx": idx}, {"y:0": np.take(params, idx, axis=1),
                                            "z:0": np.take(params, [1, 0, 1], axis=-1)}


@case
def gather_v2_batch_dims():
    params = floats(2, 3, 4)
    idx = np.array([[3, 0], [1, 1]], np.int64)
    want = np.stack([np.take(params[b], idx[b], axis=1) for b in range(2)])
    return {"params": params, "idx": idx}, {"y:0": want}


@case
def gather_nd():
    params = floats(3, 4, 2)
    i1 = np.array([[2], [0]], np.int32)
    i2 = np.array([[[0, 3], [2, 1]]], np.int32)
    i3 = np.array([[1, 2, 1], [0, 0, 0], [2, 3, 1]], np.int64)
    return ({"params": params, "i1": i1, "i2": i2, "i3": i3},
            {"y1:0": params[i1[:, 0]], "y2:0": params[i2[..., 0], i2[..., 1]],
             "y3:0": params[i3[:, 0], i3[:, 1], i3[:, 2]]})


@case
def where():
    n = np.array([[0, 3, 0, -1], [0, 0, 0, 0], [7, 0, 0, 2]], np.int32)
    x = floats(2, 3, 2)
    return {"n": n, "x": x}, {"wn:0": np.argwhere(n).astype(np.int64),
                              "wb:0": np.argwhere(x > 0.5).astype(np.int64)}


@case
def one_hot():
    i = np.array([[0, 2, 3], [-1, 4, 1]], np.int32)
    eye = np.where(i[..., None] == np.arange(4), np.float32(5), np.float32(-1))
    return {"i": i}, {"y:0": eye, "z:0": np.moveaxis(eye, -1, 0)}


@case
def top_k_v2():
    x = np.array([[1, 5, 3, 5, 0, 2], [4, 4, 4, 4, 4, 4], [-1, -3, 2, 8, 8, -2]], np.float32)
    order = np.argsort(-x, axis=1, kind="stable")
    vals = np.take_along_axis(x, order, axis=1)
    return {"x": x}, {"t:0": vals[:, :3], "t:1": order[:, :3].astype(np.int32),
                      "t64:0": vals[:, :2], "t64:1": order[:, :2].astype(np.int64)}


@case
def cumsum():
    x = floats(3, 4)
    c = np.cumsum(x, axis=1)
    r = np.flip(np.cumsum(np.flip(x, 1), axis=1), 1)
    return {"x": x}, {"c:0": c, "ce:0": c - x, "cr:0": r, "cer:0": r - x, "c0:0": np.cumsum(x, axis=0)}


@case
def string_join():
    a = np.array([b"a", b"bc", b""], dtype="S")
    b = np.array([b"x", b"", b"yz"], dtype="S")
    return {"a": a, "b": b}, {"j:0": np.array([b"a_mid_x", b"bc_mid_", b"_mid_yz"], dtype="S")}


@case
def normalize_pipeline():
    x = floats(4, 5)
    mean = x[:, 1:-1].mean(axis=1, keepdims=True)
    cent = x - mean
    norm = cent / np.square(cent).sum(axis=1, keepdims=True)
    y = np.where(norm < 0, x[[0]], norm).astype(np.float64)
    return {"x": x}, {"y:0": y}


@case
def index_pipeline():
    x = floats(3, 5)
    am = np.argmax(x, axis=1)
    oh = np.eye(5, dtype=np.float32)[am]
    w = np.argwhere(oh)
    top = -np.sort(-x, axis=1)[:, :2]
    tiled = np.tile(top, (1, 2))
    return {"x": x}, {"am:0": am.astype(np.int64), "oh:0": oh, "w:0": w.astype(np.int64),
                      "picked:0": x[w[:, 0], w[:, 1]], "padded:0": np.pad(tiled, ((0, 1), (1, 0)))}


@case
def error_gather_index():
    return {"params": floats(3, 2), "idx": np.array([0, 3], np.int32)}, ("y:0", "is not in [0, 3)")


@case
def error_split_uneven():
    return {"x": floats(5, 2)}, ("s:0", "does not split evenly")


@case
def error_strided_slice_stride0():
    return {"x": floats(4), "st": np.array([0], np.int32)}, ("y:0", "strides[0] is 0")


def main():
    out = sys.argv[1]
    for name, fn in CASES.items():
        feeds, want = fn()
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        lines = []
        for node, value in feeds.items():
            np.save(os.path.join(d, f"feed_{node}.npy"), np.ascontiguousarray(value))
            lines.append(f"feed {node} feed_{node}.npy")
        if isinstance(want, tuple):  # (the tensor to fetch, the error's text)
            lines.append(f"fetch {want[0]} -")
            lines.append(f"error {want[1]}")
        else:
            for k, (tensor, value) in enumerate(want.items()):
                np.save(os.path.join(d, f"fetch_{k}.npy"), np.ascontiguousarray(value))
                lines.append(f"fetch {tensor} fetch_{k}.npy")
        with open(os.path.join(d, "case.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
    print(f"{len(CASES)} cases written to {out}")


if __name__ == "__main__":
    main()
