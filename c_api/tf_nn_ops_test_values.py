#!/usr/bin/python3
"""Expected values of c_api/tf_nn_ops_test.c, computed with numpy straight from TensorFlow's
documented definitions (direct loops, nothing from Sluice): run it and paste what it prints.
Inputs are small ramps so the cases can also be checked by hand."""
import numpy as np


def ramp(shape, start=1.0, step=1.0):
    return (start + step * np.arange(int(np.prod(shape)))).reshape(shape).astype(np.float64)


def pads_for(in_size, k, stride, dilation, padding, explicit=(0, 0)):
    dk = (k - 1) * dilation + 1
    if padding == "VALID":
        return (in_size - dk) // stride + 1, 0
    if padding == "SAME":
        out = -(-in_size // stride)
        total = max((out - 1) * stride + dk - in_size, 0)
        return out, total // 2
    return (in_size + explicit[0] + explicit[1] - dk) // stride + 1, explicit[0]


def conv2d_nhwc(x, f, strides, padding, dilations=(1, 1), explicit=((0, 0), (0, 0))):
    """x [N,H,W,C], f [kh,kw,C/g,O]; grouped when C > f's input depth."""
    n, h, w, c = x.shape
    kh, kw, fi, o = f.shape
    groups = c // fi
    og = o // groups
    oh, pt = pads_for(h, kh, strides[0], dilations[0], padding, explicit[0])
    ow, pl = pads_for(w, kw, strides[1], dilations[1], padding, explicit[1])
    y = np.zeros((n, oh, ow, o))
    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                for oc in range(o):
                    g = oc // og
                    s = 0.0
                    for a in range(kh):
                        for d in range(kw):
                            r = i * strides[0] - pt + a * dilations[0]
                            q = j * strides[1] - pl + d * dilations[1]
                            if 0 <= r < h and 0 <= q < w:
                                for ci in range(fi):
                                    s += x[b, r, q, g * fi + ci] * f[a, d, ci, oc]
                    y[b, i, j, oc] = s
    return y


def depthwise_nhwc(x, f, strides, padding):
    kh, kw, c, m = f.shape
    # A grouped convolution with one group per channel: output channel ci * m + mi.
    return conv2d_nhwc(x, f.reshape(kh, kw, 1, c * m), strides, padding)


def numeric_grads(x, f, dy, strides, padding):
    """d(sum(conv(x, f) * dy)) / dx and / df, exactly (conv is linear in each)."""
    dx = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[idx] = 1
        dx[idx] = np.sum(conv2d_nhwc(e, f, strides, padding) * dy)
    df = np.zeros_like(f)
    for idx in np.ndindex(f.shape):
        e = np.zeros_like(f)
        e[idx] = 1
        df[idx] = np.sum(conv2d_nhwc(x, e, strides, padding) * dy)
    return dx, df


def pool_nhwc(x, k, s, padding, kind):
    n, h, w, c = x.shape
    oh, pt = pads_for(h, k[0], s[0], 1, padding)
    ow, pl = pads_for(w, k[1], s[1], 1, padding)
    y = np.zeros((n, oh, ow, c))
    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                r0, q0 = i * s[0] - pt, j * s[1] - pl
                win = x[b, max(r0, 0):min(r0 + k[0], h), max(q0, 0):min(q0 + k[1], w), :]
                y[b, i, j] = win.max(axis=(0, 1)) if kind == "max" else win.mean(axis=(0, 1))
    return y


def resize_scale(i, o, align):
    return np.float32(i - 1) / np.float32(o - 1) if align and o > 1 else np.float32(i) / np.float32(o)


def bilinear(x, oh, ow, align=False, half=False):
    n, h, w, c = x.shape
    x = x.astype(np.float32)
    def weights(o, i, scale):
        res = []
        for k in range(o):
            src = (np.float32(k) + np.float32(0.5)) * scale - np.float32(0.5) if half else np.float32(k) * scale
            lo = np.floor(src)
            res.append((max(int(lo), 0), min(int(np.ceil(src)), i - 1), np.float32(src - lo)))
        return res
    ys, xs = weights(oh, h, resize_scale(h, oh, align)), weights(ow, w, resize_scale(w, ow, align))
    y = np.zeros((n, oh, ow, c), np.float32)
    for i, (t, bm, fy) in enumerate(ys):
        for j, (l, r, fx) in enumerate(xs):
            top = x[:, t, l] + (x[:, t, r] - x[:, t, l]) * fx
            bot = x[:, bm, l] + (x[:, bm, r] - x[:, bm, l]) * fx
            y[:, i, j] = top + (bot - top) * fy
    return y


def nearest(x, oh, ow, align=False, half=False):
    n, h, w, c = x.shape
    def index(k, i, scale):
        src = (np.float32(k) + np.float32(0.5)) * scale if half else np.float32(k) * scale
        # roundf: half away from zero (np.round rounds half to even, so not that).
        r = int(np.floor(src + np.float32(0.5))) if align else int(np.floor(src))
        r = min(r, i - 1)
        return max(r, 0) if half else r
    sh, sw = resize_scale(h, oh, align), resize_scale(w, ow, align)
    return np.stack([np.stack([x[:, index(i, h, sh), index(j, w, sw)] for j in range(ow)], 1)
                     for i in range(oh)], 1)


def c_array(name, a):
    vals = ", ".join("%.9g" % v for v in np.asarray(a, np.float64).ravel())
    print("static const float %s[] = {%s};" % (name, vals))


x33 = ramp((1, 3, 3, 1))
f22 = ramp((2, 2, 1, 1))
c_array("kConvValid", conv2d_nhwc(x33, f22, (1, 1), "VALID"))

x442 = ramp((1, 4, 4, 2), 0.5, 0.25)
f3323 = ramp((3, 3, 2, 3), -1.0, 0.125)
c_array("kConvSameStride2", conv2d_nhwc(x442, f3323, (2, 2), "SAME"))

# NCHW input, EXPLICIT padding (top 1, bottom 0, left 0, right 2), dilation 2: computed in NHWC.
x_nchw = ramp((1, 2, 4, 5), 0.0, 0.5)
f2222 = ramp((2, 2, 2, 2), 1.0, -0.25)
y = conv2d_nhwc(x_nchw.transpose(0, 2, 3, 1), f2222, (1, 1), "EXPLICIT", (2, 2), ((1, 0), (0, 2)))
c_array("kConvExplicitNchw", y.transpose(0, 3, 1, 2))
print("/* kConvExplicitNchw shape:", y.transpose(0, 3, 1, 2).shape, "*/")

# Grouped: 4 input channels, filter input depth 2 (2 groups), 2 outputs.
x3 = ramp((1, 3, 3, 4), 1.0, 0.5)
fg = ramp((2, 2, 2, 2), 0.25, 0.25)
c_array("kConvGrouped", conv2d_nhwc(x3, fg, (1, 1), "VALID"))

xd = ramp((1, 3, 3, 2))
fd = ramp((2, 2, 2, 2), 1.0, -0.5)
c_array("kDepthwise", depthwise_nhwc(xd, fd, (1, 1), "SAME"))

xb = ramp((1, 4, 4, 1), 1.0, 0.5)
fb = ramp((3, 3, 1, 2), 0.5, 0.25)
dyb = ramp((1, 2, 2, 2), 1.0, 1.0)
dx, df = numeric_grads(xb, fb, dyb, (2, 2), "SAME")
c_array("kBackpropInput", dx)
c_array("kBackpropFilter", df)

# FusedBatchNormV3, NHWC x [1,2,2,2]. Inference with given statistics, epsilon 0.001.
xbn = np.array([1, 2, 3, 4, 5, 6, 7, 8], np.float64).reshape(1, 2, 2, 2)
scale, offset = np.array([1.0, 2.0]), np.array([0.5, -0.5])
mean, var = np.array([4.0, 5.0]), np.array([2.0, 8.0])
c_array("kBnInference", (xbn - mean) / np.sqrt(var + 0.001) * scale + offset)
bm = xbn.reshape(-1, 2).mean(0)
bv = xbn.reshape(-1, 2).var(0)
c_array("kBnTrainingY", (xbn - bm) / np.sqrt(bv + 0.001) * scale + offset)
f = 0.5
c_array("kBnTrainingMean", (1 - f) * mean + f * bm)
c_array("kBnTrainingVar", (1 - f) * var + f * bv * 4 / 3)
c_array("kBnTrainingSaved", np.concatenate([bm, bv]))

xp = ramp((1, 3, 3, 1))
c_array("kMaxPoolSame", pool_nhwc(xp, (2, 2), (2, 2), "SAME", "max"))
c_array("kAvgPoolSame", pool_nhwc(xp, (2, 2), (2, 2), "SAME", "avg"))
xp2 = ramp((1, 4, 4, 2), 1.0, -0.5)
c_array("kAvgPoolValid", pool_nhwc(xp2, (3, 2), (1, 2), "VALID", "avg"))

xr = np.array([1, 2, 3, 4], np.float32).reshape(1, 2, 2, 1)
c_array("kBilinearLegacy", bilinear(xr, 3, 3))
c_array("kBilinearAlign", bilinear(xr, 3, 3, align=True))
c_array("kBilinearHalf", bilinear(xr, 3, 3, half=True))
xr5 = ramp((1, 1, 5, 1))
c_array("kBilinearHalfDown", bilinear(xr5, 1, 3, half=True))
c_array("kNearestLegacy", nearest(xr, 3, 3))
c_array("kNearestAlign", nearest(xr, 3, 3, align=True))
c_array("kNearestHalf", nearest(xr, 3, 3, half=True))
c_array("kNearestHalfDown", nearest(xr5, 1, 3, half=True))
c_array("kNearestAlignUp", nearest(xr5, 1, 7, align=True))

# Gradients of sum(Conv2D(x, f)) (dy = ones), x [1,3,3,1] = 1..9, f [2,2,1,1] = 1..4, VALID.
gx, gf = numeric_grads(x33, f22, np.ones((1, 2, 2, 1)), (1, 1), "VALID")
c_array("kConvGradInput", gx)
c_array("kConvGradFilter", gf)
