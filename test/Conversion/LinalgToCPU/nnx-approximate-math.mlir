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

// f32 sqrt, floor and abs become LLVM's (exact) intrinsics, not libm calls.
// CHECK-LABEL: func.func @intrinsics
// CHECK:         llvm.intr.sqrt(%{{.*}}) : (f32) -> f32
// CHECK:         llvm.intr.floor(%{{.*}}) : (vector<8xf32>) -> vector<8xf32>
// CHECK:         llvm.intr.fabs(%{{.*}}) : (f32) -> f32
// CHECK:         math.sqrt %{{.*}} : f64
func.func @intrinsics(%x: f32, %v: vector<8xf32>, %d: f64) -> (f32, vector<8xf32>, f32, f64) {
  %s = math.sqrt %x : f32
  %f = math.floor %v : vector<8xf32>
  %a = math.absf %x : f32
  %sd = math.sqrt %d : f64
  return %s, %f, %a, %sd : f32, vector<8xf32>, f32, f64
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
