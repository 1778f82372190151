// Element types come from the parameters: the same network in f64 and f16
// reads and writes float64 / float16 arrays, and refuses the other dtype.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; x = np.array([[1, 2], [3, 4]]); np.save('%t/x64.npy', x.astype(np.float64)); np.save('%t/x16.npy', x.astype(np.float16))"
// RUN: nnx-run %s --model m64 --input %t/x64.npy --output %t/y64.npy --print | FileCheck %s --check-prefix=F64
// RUN: nnx-run %s --model m16 --input %t/x16.npy --output %t/y16.npy --print | FileCheck %s --check-prefix=F16
// RUN: %python -c "import numpy as np; x = np.array([[1, 2], [3, 4]], np.float64); W = np.array([[0.125, 0.25], [0.375, -0.5]]); b = np.array([0.5, 0]); y64 = np.load('%t/y64.npy'); y16 = np.load('%t/y16.npy'); ref = np.tanh(x @ W.T + b); assert y64.dtype == np.float64 and np.allclose(y64, ref, atol=1e-12, rtol=0), (y64, ref); assert y16.dtype == np.float16 and np.allclose(y16, ref, atol=2e-3, rtol=0), (y16, ref)"
// RUN: not nnx-run %s --model m16 --input %t/x64.npy 2>&1 | FileCheck %s --check-prefix=MISMATCH

// F64: output 0: float64 array of shape (2, 2)
// F16: output 0: float16 array of shape (2, 2)
// MISMATCH: nnx-run: error: {{.*}}x64.npy: input 0 of @forward is tensor<?x2xf16>; the file holds float64 array of shape (2, 2) (pass --cast-inputs to round it to float16, nearest even)

nnx.model @m64 inputs(tensor<?x2xf64>) {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<[[0.125, 0.25], [0.375, -0.5]]> : tensor<2x2xf64>,
                    bias = dense<[0.5, 0.0]> : tensor<2xf64>}
    nnx.tanh @act
  }
}
nnx.model @m16 inputs(tensor<?x2xf16>) {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<[[0.125, 0.25], [0.375, -0.5]]> : tensor<2x2xf16>,
                    bias = dense<[0.5, 0.0]> : tensor<2xf16>}
    nnx.tanh @act
  }
}
