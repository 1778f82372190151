// RUN: nnx-opt %s --nnx-cpu-pipeline=vector-bits=256 | FileCheck %s
// RUN: nnx-opt %s --nnx-cpu-pipeline=fast-matmul=false | FileCheck %s --check-prefix=LOOPS
// RUN: nnx-opt %s --nnx-cpu-pipeline=out-params=true | FileCheck %s --check-prefix=OUT
// RUN: nnx-opt %s --nnx-cpu-pipeline="out-params=true runtime-allocator=true" | FileCheck %s --check-prefix=ALLOC
// RUN: nnx-opt %s --nnx-cpu-pipeline="runtime-allocator=true parallel=false" | FileCheck %s --check-prefix=ALLOC

// The forward level (func on tensors: linalg, arith/math on tensors) goes
// all the way to the LLVM dialect: a C interface wrapper for the JIT, the
// matmul as vector FMAs, erf as a polynomial (nnx-approximate-math), nothing
// of the higher dialects left.
// Each linalg op is a layer kernel (nnx-outline-layers) that @forward, the
// glue, calls, and each loop nest of a layer a kernel (nnx-outline-kernels)
// that the layer calls; the glue is not optimized.
// CHECK-LABEL: llvm.func @forward(
// CHECK-SAME:    passthrough = ["noinline", "optnone"]
// CHECK:         llvm.call @forward_layer_{{[0-9]+}}(
// CHECK-LABEL: llvm.func @_mlir_ciface_forward(
// CHECK:         llvm.call @forward(
// CHECK:       llvm.func @forward_layer_{{[0-9]+}}_kernel_
// CHECK:         llvm.intr.fmuladd({{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK:         llvm.intr.fma({{.*}}) : (f32, f32, f32) -> f32
// CHECK-NOT:     llvm.call @erff
// CHECK-NOT:   {{linalg|memref|tensor|vector|scf|math|arith|func}}\.
// CHECK-NOT:   unrealized_conversion_cast

// Without the schedule, the matmul is plain scalar loops.
// LOOPS-LABEL: llvm.func @forward(
// LOOPS-NOT:     vector<
// LOOPS:         %[[P:.*]] = llvm.fmul %{{.*}}, %{{.*}} : f32
// LOOPS:         llvm.fadd %{{.*}}, %[[P]] : f32
// LOOPS-NOT:     vector<
// LOOPS-NOT:     llvm.call @erff

// With out-params (nnx-run's ABI) the result is a third memref argument that
// the caller allocates (%[[OUT]]: its aligned pointer): @forward returns
// nothing, copies the result into it and frees its own two temporaries; the
// C interface takes three descriptor pointers.
// OUT-LABEL: llvm.func @forward(
// OUT-SAME:    %{{.*}}: !llvm.ptr, %[[OUT:[^:]*]]: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64) attributes
// OUT:         %[[DST:.*]] = llvm.getelementptr %[[OUT]][
// OUT-NEXT:    "llvm.intr.memcpy"(%[[DST]], %{{.*}}, %{{.*}})
// OUT:         llvm.call @free(
// OUT-NEXT:    llvm.call @free(
// OUT-NEXT:    llvm.return{{$}}
// OUT-LABEL: llvm.func @_mlir_ciface_forward(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) attributes

// With runtime-allocator (what nnx-run compiles), temporaries come from
// upstream's generic allocation functions, which the execution library
// provides (a cache of freed blocks), with and without OpenMP (whose
// conversion would otherwise lower allocations to malloc itself).
// ALLOC-LABEL: llvm.func @forward(
// ALLOC-NOT:     llvm.call @malloc
// ALLOC:         llvm.call @_mlir_memref_to_llvm_alloc(
// ALLOC-NOT:     llvm.call @{{malloc|free}}(
// ALLOC:         llvm.call @_mlir_memref_to_llvm_free(
// ALLOC-NOT:     llvm.call @{{malloc|free}}(
// ALLOC-LABEL: llvm.func @_mlir_ciface_forward(

func.func @forward(%x: tensor<?x8xf32>, %w: tensor<8x16xf32>) -> tensor<?x16xf32> attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x16xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x16xf32>) -> tensor<?x16xf32>
  %m = linalg.matmul ins(%x, %w : tensor<?x8xf32>, tensor<8x16xf32>) outs(%f : tensor<?x16xf32>) -> tensor<?x16xf32>
  %s = arith.addf %m, %m : tensor<?x16xf32>
  %g = math.erf %s : tensor<?x16xf32>
  return %g : tensor<?x16xf32>
}
