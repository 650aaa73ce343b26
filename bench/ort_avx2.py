#!/usr/bin/python3
"""Makes a copy of ONNX Runtime's library that runs its AVX2 kernels on an AVX-512 machine.

ONNX Runtime (MLAS) picks its kernels from CPUID and from XGETBV, which says which register
state the operating system saves: it uses AVX-512 only where the OS saves the ZMM and opmask
registers (XCR0 bits 5-7). It has no setting to cap that. This copy has each XGETBV
instruction (3 bytes, 0f 01 d0) replaced by "push 7; pop rax" (6a 07 58): XCR0 reads as
x87 + SSE + AVX state, as on an OS without AVX-512 support, so every kernel choice is the one
the library makes on an AVX2-only CPU. Nothing else changes; the instruction sites are found
by disassembling the library (objdump), so bytes that only look like XGETBV are left alone.

    bench/ort_avx2.py SRC/libonnxruntime.so.1 DST/libonnxruntime.so.1
"""
import re
import subprocess
import sys


def text_sections(path):
    """(vma, size, file offset) of each executable section."""
    out = subprocess.run(["objdump", "-h", path], check=True, capture_output=True, text=True).stdout
    lines = out.splitlines()
    sections = []
    for i, line in enumerate(lines):
        m = re.match(r"\s*\d+\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if m and i + 1 < len(lines) and "CODE" in lines[i + 1]:
            sections.append((int(m.group(3), 16), int(m.group(2), 16), int(m.group(4), 16)))
    return sections


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, dst = sys.argv[1], sys.argv[2]
    try:
        data = bytearray(open(src, "rb").read())
        sections = text_sections(src)
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit("%s: cannot read it as a library (%s)" % (src, e))
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", src], check=True, capture_output=True,
                         text=True).stdout
    sites = [int(m.group(1), 16) for m in re.finditer(r"^\s*([0-9a-f]+):\s+xgetbv\s*$", out, re.M)]
    if not sites:
        sys.exit("%s: no xgetbv instruction found" % src)
    for vma in sites:
        offset = next((vma - s_vma + s_off for s_vma, size, s_off in sections if s_vma <= vma < s_vma + size), None)
        if offset is None or data[offset:offset + 3] != b"\x0f\x01\xd0":
            sys.exit("%s: xgetbv at 0x%x is not where the sections say" % (src, vma))
        data[offset:offset + 3] = b"\x6a\x07\x58"
    open(dst, "wb").write(data)
    print("%s: %d xgetbv sites now read XCR0 = 7 (no AVX-512 state)" % (dst, len(sites)))


if __name__ == "__main__":
    main()
