// RUN: nnx-opt %s -split-input-file --nnx-duplicate-empty-tensors | FileCheck %s
// RUN: nnx-opt %s -split-input-file --nnx-duplicate-empty-tensors=uses-per-empty=2 | FileCheck %s --check-prefix=TWO

// Up to uses-per-empty (default 8) uses keep sharing one tensor.empty. With
// a limit of 2, the third use (in program order) starts a new group, with a
// clone of the empty placed just before the original.
// CHECK-LABEL: func.func @chain(
// CHECK-COUNT-1: tensor.empty
// CHECK-NOT:     tensor.empty
// TWO-LABEL:   func.func @chain(
// TWO-SAME:        %[[X:.*]]: tensor<?x64xf32>
// TWO:           %[[N:.*]] = tensor.dim %[[X]]
// TWO-NEXT:      %[[CLONE:.*]] = tensor.empty(%[[N]]) : tensor<?x64xf32>
// TWO-NEXT:      %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x64xf32>
// TWO-NEXT:      %[[A:.*]] = linalg.exp ins(%[[X]] : tensor<?x64xf32>) outs(%[[E]] : tensor<?x64xf32>)
// TWO-NEXT:      %[[B:.*]] = linalg.exp ins(%[[A]] : tensor<?x64xf32>) outs(%[[E]] : tensor<?x64xf32>)
// TWO-NEXT:      linalg.exp ins(%[[B]] : tensor<?x64xf32>) outs(%[[CLONE]] : tensor<?x64xf32>)
func.func @chain(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  %e = tensor.empty(%n) : tensor<?x64xf32>
  %a = linalg.exp ins(%x : tensor<?x64xf32>) outs(%e : tensor<?x64xf32>) -> tensor<?x64xf32>
  %b = linalg.exp ins(%a : tensor<?x64xf32>) outs(%e : tensor<?x64xf32>) -> tensor<?x64xf32>
  %c = linalg.exp ins(%b : tensor<?x64xf32>) outs(%e : tensor<?x64xf32>) -> tensor<?x64xf32>
  return %c : tensor<?x64xf32>
}

// -----

// A fill of an empty tensor that two reductions start from: the first
// reduction gets its own fill of its own empty tensor (placed before the
// originals), the last keeps the original.
// CHECK-LABEL: func.func @shared_fill(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8xf32>
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[E2:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:    %[[F2:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E2]] : tensor<4xf32>)
// CHECK-NEXT:    %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<4xf32>)
// CHECK-NEXT:    linalg.reduce ins(%[[X]] : tensor<4x8xf32>) outs(%[[F2]] : tensor<4xf32>)
// CHECK:         linalg.reduce ins(%[[X]] : tensor<4x8xf32>) outs(%[[F]] : tensor<4xf32>)
func.func @shared_fill(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%f : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %max = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%f : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    }
  return %sum, %max : tensor<4xf32>, tensor<4xf32>
}

// -----

// A use inside a loop gets its clone outside the loop, next to the
// original: the loop does not allocate per iteration.
// TWO-LABEL: func.func @in_loop(
// TWO:         %[[CLONE:.*]] = tensor.empty() : tensor<8xf32>
// TWO-NEXT:    %[[E:.*]] = tensor.empty() : tensor<8xf32>
// TWO:         scf.for
// TWO:           linalg.exp ins(%{{.*}} : tensor<8xf32>) outs(%[[CLONE]] : tensor<8xf32>)
// TWO:         }
func.func @in_loop(%x: tensor<8xf32>, %n: index) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.exp ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %b = linalg.exp ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %b) -> (tensor<8xf32>) {
    %c = linalg.exp ins(%acc : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
    scf.yield %c : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

// A fill of something else than an empty tensor (here an argument, whose
// contents the fill overwrites in place) is left alone.
// CHECK-LABEL: func.func @fill_of_argument(
// CHECK-COUNT-1: linalg.fill
// CHECK-NOT:     linalg.fill
func.func @fill_of_argument(%x: tensor<4x8xf32>, %init: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %f = linalg.fill ins(%zero : f32) outs(%init : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%f : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %sum, %f : tensor<4xf32>, tensor<4xf32>
}

// -----

// A fill that ops only read (DPS inputs) is not recomputed for each.
// CHECK-LABEL: func.func @fill_read(
// CHECK-COUNT-1: linalg.fill
// CHECK-NOT:     linalg.fill
func.func @fill_read(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %a = linalg.add ins(%x, %f : tensor<4xf32>, tensor<4xf32>) outs(%x : tensor<4xf32>) -> tensor<4xf32>
  %b = linalg.sub ins(%x, %f : tensor<4xf32>, tensor<4xf32>) outs(%x : tensor<4xf32>) -> tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}
