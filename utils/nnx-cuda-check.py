#!/usr/bin/env python3
"""Compiles nnx models for CUDA and validates the kernels without a GPU.

    nnx-cuda-check.py --nnx-opt BIN --chip sm_90 --format isa|bin \
        --workdir DIR (MODEL.mlir | DIR)...

For each model (directories are searched for *.mlir recursively): runs
`nnx-opt [--nnx-build-forward] --nnx-cuda-pipeline=chip=.. format=..`,
extracts the embedded objects (nnx-gpu-objects.py), assembles every PTX with
`ptxas -arch=<chip>` into a cubin, and checks every cubin is a CUDA ELF
(e_machine 190) for that chip. Prints one line per model
("OK <model> ..." / "FAIL <model>: why") and a summary; exits 1 on failure.
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import importlib.util  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "nnx_gpu_objects",
    os.path.join(os.path.dirname(os.path.abspath(__file__)),
                 "nnx-gpu-objects.py"))
gpu_objects = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gpu_objects)

EM_CUDA = 190


def cubin_arch(data):
    """The sm_XY a CUDA ELF targets, or raises ValueError."""
    if data[:4] != b"\x7fELF":
        raise ValueError("not an ELF file")
    machine = int.from_bytes(data[18:20], "little")
    if machine != EM_CUDA:
        raise ValueError(f"e_machine {machine}, expected {EM_CUDA} (CUDA)")
    flags = int.from_bytes(data[48:52], "little")
    # CUDA ELF e_flags: the SM version in the low bits (bits 8-15 on newer
    # ABIs, 0-7 on older ones).
    for sm in ((flags >> 8) & 0xFF, flags & 0xFF):
        if 50 <= sm <= 200:
            return f"sm_{sm}"
    raise ValueError(f"unrecognized e_flags 0x{flags:x}")


def models(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, _, files in sorted(os.walk(p)):
                for f in sorted(files):
                    if f.endswith(".mlir"):
                        yield os.path.join(root, f)
        else:
            yield p


def check(model, args):
    base = re.sub(r"[^\w.-]", "_", os.path.relpath(model))
    out_dir = os.path.join(args.workdir, f"{base}.{args.chip}.{args.format}")
    os.makedirs(out_dir, exist_ok=True)
    lowered = os.path.join(out_dir, "lowered.mlir")
    with open(model, encoding="utf-8") as f:
        text = f.read()
    cmd = [args.nnx_opt, model]
    if "nnx.model" in text:
        cmd.append("--nnx-build-forward")
    cmd += [f"--nnx-cuda-pipeline=chip={args.chip} format={args.format}",
            "-o", lowered]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        return None, "nnx-opt failed: " + r.stderr.strip()[-2000:]
    with open(lowered, encoding="utf-8") as f:
        objs = list(gpu_objects.objects(f.read()))
    if not objs:
        return None, "no gpu.binary in the lowered module"
    kernels = shared = 0
    for name, chip, kind, data in objs:
        if chip != args.chip:
            return None, f"{name}: object for {chip}, expected {args.chip}"
        if kind == "ptx":
            ptx = os.path.join(out_dir, f"{name}.ptx")
            cubin = os.path.join(out_dir, f"{name}.cubin")
            with open(ptx, "wb") as f:
                f.write(data)
            text = data.decode("utf-8", "replace")
            kernels += len(re.findall(r"^\.visible \.entry", text, re.M))
            shared += len(re.findall(r"^\s*\.shared ", text, re.M))
            r = subprocess.run([args.ptxas, f"-arch={args.chip}", ptx, "-o",
                                cubin], capture_output=True, text=True)
            if r.returncode:
                return None, f"ptxas rejected {ptx}: " + r.stderr.strip()
            with open(cubin, "rb") as f:
                data = f.read()
        elif kind != "cubin":
            return None, f"{name}: unexpected object kind {kind}"
        try:
            arch = cubin_arch(data)
        except ValueError as e:
            return None, f"{name}: bad cubin: {e}"
        if arch != args.chip.rstrip("af"):
            return None, f"{name}: cubin for {arch}, expected {args.chip}"
    return (len(objs), kernels, shared), None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nnx-opt", required=True)
    ap.add_argument("--ptxas", default=os.environ.get(
        "NNX_PTXAS", "/usr/local/cuda/bin/ptxas"))
    ap.add_argument("--chip", default="sm_90")
    ap.add_argument("--format", choices=["isa", "bin"], default="isa")
    ap.add_argument("--workdir", required=True)
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    checked = failed = 0
    for model in models(args.paths):
        checked += 1
        result, error = check(model, args)
        name = os.path.relpath(model)
        if error:
            failed += 1
            print(f"FAIL {name}: {error}")
            continue
        objects, kernels, shared = result
        detail = f"objects={objects}"
        if args.format == "isa":
            detail += f" kernels={kernels} shared-tiles={shared}"
        print(f"OK {name} chip={args.chip} format={args.format} {detail}")
    print(f"checked {checked} models, {failed} failed")
    sys.exit(1 if failed or not checked else 0)


if __name__ == "__main__":
    main()
