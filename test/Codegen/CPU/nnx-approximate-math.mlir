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

// -----

// f32 erf is the pass's own piecewise polynomial (about 1 ulp): the odd form
// x + x R(x^2) below 1, a polynomial in |x| - c (its coefficients selected
// per interval) with x's sign up to 4, +-1 beyond (ordered: NaN stays NaN).
// absi is LLVM's abs (INT_MIN stays INT_MIN).
// CHECK-LABEL: func.func @erf_absi
// CHECK-SAME:      (%[[X:.*]]: vector<8xf32>, %[[I:.*]]: i32)
// CHECK:         %[[A:.*]] = llvm.intr.fabs(%[[X]])
// CHECK:         %[[X2:.*]] = arith.mulf %[[X]], %[[X]]
// CHECK:         %[[NEAR:.*]] = llvm.intr.fma(%[[X]], %{{.*}}, %[[X]])
// CHECK:         arith.cmpf olt, %[[A]], %{{.*}} : vector<8xf32>
// CHECK:         %[[T:.*]] = arith.subf %[[A]], %{{.*}} : vector<8xf32>
// CHECK:         arith.minimumf
// CHECK:         %[[BEYOND:.*]] = arith.cmpf oge, %[[A]], %{{.*}} : vector<8xf32>
// CHECK:         %[[FAR:.*]] = arith.select %[[BEYOND]]
// CHECK:         %[[SIGNED:.*]] = llvm.intr.copysign(%[[FAR]], %[[X]])
// CHECK:         %[[SMALL:.*]] = arith.cmpf olt, %[[A]], %{{.*}} : vector<8xf32>
// CHECK:         %[[E:.*]] = arith.select %[[SMALL]], %[[NEAR]], %[[SIGNED]]
// CHECK:         %[[ABS:.*]] = "llvm.intr.abs"(%[[I]]) <{is_int_min_poison = false}> : (i32) -> i32
// CHECK:         return %[[E]], %[[ABS]]
func.func @erf_absi(%x: vector<8xf32>, %i: i32) -> (vector<8xf32>, i32) {
  %e = math.erf %x : vector<8xf32>
  %a = math.absi %i : i32
  return %e, %a : vector<8xf32>, i32
}
