#!/usr/bin/python3
"""Writes kernels/image_decoder_cases.inc: a 3 x 2 image encoded by PIL in every format
ImageDecoder reads, each with PIL's own decoding of the bytes (RGB and L), which is what ONNX's
reference gives. Run with Debian's python3 (python3-pil): /usr/bin/python3 kernels/image_decoder_cases.py
"""
import io
import os

import numpy as np
from PIL import Image

pixels = np.array([[[255, 0, 0], [0, 255, 0], [0, 0, 255]],
                   [[10, 20, 30], [200, 150, 100], [255, 255, 255]]], dtype=np.uint8)
image = Image.fromarray(pixels, "RGB")
cases = [
    ("png", "PNG", {}),
    ("jpeg", "JPEG", {"quality": 95}),
    ("bmp", "BMP", {}),
    ("ppm", "PPM", {}),
    ("tiff", "TIFF", {}),
    ("webp_lossless", "WEBP", {"lossless": True}),
    ("jpeg2000", "JPEG2000", {"irreversible": False}),
]
gray = Image.fromarray(pixels[:, :, 1], "L")
lines = ["// Written by kernels/image_decoder_cases.py (PIL " + Image.__version__ + "); do not edit.",
         "struct ImageCase { const char* name; std::vector<uint8_t> data, rgb, gray; };",
         "const std::vector<ImageCase> kImageCases = {"]
def arr(a):
    return "{" + ", ".join(str(int(v)) for v in np.asarray(a).reshape(-1)) + "}"
for name, fmt, kw in cases + [("png_gray", "PNG", {}), ("pgm", "PPM", {})]:
    src = gray if name in ("png_gray", "pgm") else image
    buf = io.BytesIO()
    src.save(buf, fmt, **kw)
    data = buf.getvalue()
    back = Image.open(io.BytesIO(data))
    rgb = np.array(back.convert("RGB"))
    l = np.array(back.convert("L"))
    lines.append(f'    {{"{name}", {arr(np.frombuffer(data, np.uint8))},\n     {arr(rgb)},\n     {arr(l)}}},')
lines.append("};")
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "image_decoder_cases.inc")
with open(out, "w") as f:
    f.write("\n".join(lines) + "\n")
