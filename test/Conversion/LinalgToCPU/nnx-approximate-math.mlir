// RUN: nnx-opt %s -split-input-file --nnx-approximate-math | FileCheck %s

// f32 tanh, exp and erf (scalars and vectors) become arithmetic; the fmas of
// the approximations are LLVM's intrinsic (not libm's fmaf).
// CHECK-LABEL: func.func @f32
// CHECK-NOT:     math.tanh
// CHECK-NOT:     math.exp
// CHECK-NOT:     math.erf
// CHECK-NOT:     math.fma
// CHECK:         llvm.intr.fma
// CHECK:         return
func.func @f32(%x: f32, %v: vector<16xf32>) -> (f32, f32, f32, vector<16xf32>) {
  %t = math.tanh %x : f32
  %e = math.exp %x : f32
  %r = math.erf %x : f32
  %vt = math.tanh %v : vector<16xf32>
  return %t, %e, %r, %vt : f32, f32, f32, vector<16xf32>
}

// -----

// f64 and functions without an approximation are left alone (libm later).
// CHECK-LABEL: func.func @left_alone
// CHECK:         math.tanh %{{.*}} : f64
// CHECK:         math.log1p %{{.*}} : f32
func.func @left_alone(%x: f64, %y: f32) -> (f64, f32) {
  %t = math.tanh %x : f64
  %l = math.log1p %y : f32
  return %t, %l : f64, f32
}
