// The compile cache (--cache-dir, NNX_CACHE_DIR): the first compile writes
// its lowering and its object (compile-cache-lowering.test: what a lowering
// is), a second compile of the same model loads them (the --repeat report
// says so) and computes the same output; another optimization level is
// another pair. A corrupt or truncated entry is recompiled and replaced,
// never loaded; a cache directory that cannot be created is an error.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/make_inputs.py %t
// RUN: nnx-run %s --input %t/x5.npy --output %t/first.npy --cache-dir %t/cache --repeat 2 2>&1 | FileCheck %s --check-prefix=MISS
// MISS-NOT: cache
// MISS: nnx-run: compile {{[0-9.]+}} ms, weights
// RUN: ls %t/cache | sort -t. -k2 | FileCheck %s --check-prefix=ONE
// ONE: {{^[0-9a-f]{64}\.nnxlow$}}
// ONE-NEXT: {{^[0-9a-f]{64}\.nnxobj$}}
// ONE-NOT: nnx
// RUN: env NNX_CACHE_DIR=%t/cache nnx-run %s --input %t/x5.npy --output %t/second.npy --repeat 2 2>&1 | FileCheck %s --check-prefix=HIT
// HIT: nnx-run: the machine code came from the compile cache
// HIT-NEXT: nnx-run: compile {{[0-9.]+}} ms, weights
// RUN: %python -c "import numpy as np; a = np.load('%t/first.npy'); b = np.load('%t/second.npy'); assert a.shape == (5, 2) and (a == b).all(), (a, b)"

// Another optimization level: a second lowering and object.
// RUN: nnx-run %s --input %t/x5.npy --cache-dir %t/cache --opt-level 1 --repeat 2 2>&1 | FileCheck %s --check-prefix=MISS
// RUN: ls %t/cache | wc -l | FileCheck %s --check-prefix=FOUR
// FOUR: 4

// Every entry cut short, then every entry with one byte changed: each is
// compiled again (no "from the cache"), runs right, and is replaced by a
// whole entry that the next run loads.
// RUN: %python -c "import glob, os; [os.truncate(p, os.path.getsize(p) // 2) for p in glob.glob('%t/cache/*')]"
// RUN: nnx-run %s --input %t/x5.npy --output %t/third.npy --cache-dir %t/cache --repeat 2 2>&1 | FileCheck %s --check-prefix=MISS
// RUN: nnx-run %s --input %t/x5.npy --cache-dir %t/cache --repeat 2 2>&1 | FileCheck %s --check-prefix=HIT
// RUN: %python -c "import glob; [(f.seek(200), f.write(b'\xff' * 4), f.close()) for f in [open(p, 'r+b') for p in glob.glob('%t/cache/*')]]"
// RUN: nnx-run %s --input %t/x5.npy --output %t/fourth.npy --cache-dir %t/cache --repeat 2 2>&1 | FileCheck %s --check-prefix=MISS
// RUN: %python -c "import numpy as np; a = np.load('%t/first.npy'); assert all((np.load('%t/' + n + '.npy') == a).all() for n in ('third', 'fourth'))"

// A cache directory that cannot be made.
// RUN: touch %t/file
// RUN: %exit1 nnx-run %s --input %t/x5.npy --cache-dir %t/file/cache 2>&1 | FileCheck %s --check-prefix=BADDIR
// BADDIR: nnx-run: error: cannot write the compile cache entry '{{.*}}file/cache/{{[0-9a-f]+}}.nnxobj': cannot create '{{.*}}file/cache': Not a directory
// RUN: %exit1 nnx-run %s --input %t/x5.npy --cache-dir= 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: nnx-run: error: --cache-dir: the value is empty; give a dir or leave it out

nnx.model @gelu_mlp inputs(tensor<?x2xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<0.5> : tensor<64x2xf32>,
                    bias = dense<0.125> : tensor<64xf32>}
    nnx.gelu @act {approximate = #nnx.gelu_approximation<tanh>}
    nnx.linear @head {weight = dense<0.25> : tensor<2x64xf32>}
  }
}
