// Issue 13: MLIR 22.1's dense array parser dereferences a null pointer on an
// `index` element type (llvm/llvm-project#179045), reached through every op's
// attribute dictionary. nnx-opt and nnx-run refuse it before MLIR parses the
// file, from a file and from stdin; inside a string it is only text.

// RUN: not nnx-opt %s 2>&1 | FileCheck %s
// RUN: not nnx-opt < %s 2>&1 | FileCheck %s
// RUN: not nnx-run %s 2>&1 | FileCheck %s --check-prefixes=CHECK,RUNNER
// RUN: sed 's/x = array<index: 8>/x = "array<index: 8>"/' %s | nnx-opt | FileCheck %s --check-prefix=STRING

// CHECK: :[[@LINE+5]]:{{[0-9]+}}: error: 'array<index: ...>' is not supported: MLIR 22.1's dense array parser crashes on an index element type (llvm/llvm-project#179045)
// CHECK-NOT: PLEASE submit
// RUNNER: nnx-run: error: cannot parse model file
// STRING: x = "array<index: 8>"
nnx.model @m inputs(tensor<?x2xf32>) {
  nnx.linear @fc {weight = dense<1.0> : tensor<2x2xf32>, x = array<index: 8>}
}
