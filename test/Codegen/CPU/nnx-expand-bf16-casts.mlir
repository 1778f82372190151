// nnx-expand-bf16-casts: bf16 conversions as integer ops (what a target
// without AVX512_BF16 needs: LLVM would call compiler-rt's __truncsfbf2).
// With `always`, or a target without avx512_bf16 (the default target, or a
// cap below AVX-512), every truncf to bf16 (rounding to nearest even: add
// 0x7fff plus the kept lowest bit, NaN kept) and every extf from bf16 (a
// shift) goes; f16 conversions stay. A target with avx512_bf16 keeps them
// for LLVM, whatever NNX_JIT_MAX_ISA says, but its bf16 arithmetic runs in
// f32 between them too (no instruction computes on bf16).
// RUN: nnx-opt %s -split-input-file --nnx-expand-bf16-casts=always | FileCheck %s
// RUN: nnx-opt %s -split-input-file --nnx-expand-bf16-casts | FileCheck %s
// RUN: nnx-opt %s -split-input-file --nnx-set-target="vector-bits=512 avx512-bf16=true max-isa=avx2" --nnx-expand-bf16-casts | FileCheck %s
// RUN: nnx-opt %s -split-input-file --nnx-set-target="vector-bits=512 avx512-bf16=true" --nnx-expand-bf16-casts=always | FileCheck %s
// RUN: env NNX_JIT_MAX_ISA=avx2 nnx-opt %s -split-input-file --nnx-set-target="vector-bits=512 avx512-bf16=true" --nnx-expand-bf16-casts | FileCheck %s --check-prefix=KEEP

// KEEP-LABEL: func.func @casts(
// KEEP: arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// KEEP: arith.extf %{{.*}} : vector<16xbf16> to vector<16xf32>
// KEEP-LABEL: func.func @arithmetic(
// KEEP-NOT: arith.addf %{{.*}} : vector<8xbf16>
// KEEP: arith.extf %{{.*}} : vector<8xbf16> to vector<8xf32>
// KEEP: arith.addf %{{.*}} : vector<8xf32>
// KEEP: arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
// KEEP: math.exp %{{.*}} : vector<8xf32>
// KEEP: arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK-LABEL: func.func @casts(
// CHECK-SAME:      %[[X:[a-z0-9]+]]: vector<16xf32>, %[[Y:[a-z0-9]+]]: vector<16xbf16>
// CHECK-DAG:     %[[ONE:.*]] = arith.constant dense<1> : vector<16xi32>
// CHECK-DAG:     %[[SIXTEEN:.*]] = arith.constant dense<16> : vector<16xi32>
// CHECK-DAG:     %[[QNAN:.*]] = arith.constant dense<32704> : vector<16xi16>
// CHECK-DAG:     %[[HALF:.*]] = arith.constant dense<32767> : vector<16xi32>
// CHECK:         %[[NAN:.*]] = arith.cmpf une, %[[X]], %[[X]]
// CHECK:         %[[BITS:.*]] = arith.bitcast %[[X]] : vector<16xf32> to vector<16xi32>
// CHECK:         %[[HI:.*]] = arith.shrui %[[BITS]], %[[SIXTEEN]]
// CHECK:         %[[LSB:.*]] = arith.andi %[[HI]], %[[ONE]]
// CHECK:         %[[BIAS:.*]] = arith.addi %[[LSB]], %[[HALF]]
// CHECK:         %[[SUM:.*]] = arith.addi %[[BITS]], %[[BIAS]]
// CHECK:         %[[TOP:.*]] = arith.shrui %[[SUM]], %[[SIXTEEN]]
// CHECK:         %[[T16:.*]] = arith.trunci %[[TOP]] : vector<16xi32> to vector<16xi16>
// CHECK:         %[[SEL:.*]] = arith.select %[[NAN]], %[[QNAN]], %[[T16]]
// CHECK:         %[[T:.*]] = arith.bitcast %[[SEL]] : vector<16xi16> to vector<16xbf16>
// CHECK:         %[[YB:.*]] = arith.bitcast %[[Y]] : vector<16xbf16> to vector<16xi16>
// CHECK:         %[[YW:.*]] = arith.extui %[[YB]] : vector<16xi16> to vector<16xi32>
// CHECK:         %[[YS:.*]] = arith.shli %[[YW]], %[[SIXTEEN]]
// CHECK:         %[[E:.*]] = arith.bitcast %[[YS]] : vector<16xi32> to vector<16xf32>
// CHECK:         %[[H:.*]] = arith.truncf %[[X]] : vector<16xf32> to vector<16xf16>
// CHECK:         return %[[T]], %[[E]], %[[H]]
func.func @casts(%x: vector<16xf32>, %y: vector<16xbf16>) -> (vector<16xbf16>, vector<16xf32>, vector<16xf16>) {
  %t = arith.truncf %x : vector<16xf32> to vector<16xbf16>
  %e = arith.extf %y : vector<16xbf16> to vector<16xf32>
  %h = arith.truncf %x : vector<16xf32> to vector<16xf16>
  return %t, %e, %h : vector<16xbf16>, vector<16xf32>, vector<16xf16>
}

// -----

// bf16 arithmetic (elementwise ops kept in the storage type, math on bf16)
// runs in f32 between the conversions, which are then expanded too: no op
// is left on bf16 but the bitcasts.
// CHECK-LABEL: func.func @arithmetic(
// CHECK-NOT:     arith.addf %{{.*}} : vector<8xbf16>
// CHECK-NOT:     math.exp %{{.*}} : vector<8xbf16>
// CHECK:         arith.addf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK:         math.exp %{{.*}} : vector<8xf32>
// CHECK-NOT:     arith.truncf
// CHECK-NOT:     arith.extf
// CHECK:         return
func.func @arithmetic(%a: vector<8xbf16>, %b: vector<8xbf16>) -> vector<8xbf16> {
  %s = arith.addf %a, %b : vector<8xbf16>
  %e = math.exp %s : vector<8xbf16>
  return %e : vector<8xbf16>
}

// -----

// A bf16 max pool's body as convert-linalg-to-loops leaves it (scalars): the
// max runs in f32 on every target, which LLVM vectorizes (its own promotion
// of a bf16 max stayed one element at a time).
// CHECK-LABEL: func.func @pool_max(
// CHECK:         arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK-NOT:     arith.maximumf %{{.*}} : bf16
// KEEP-LABEL: func.func @pool_max(
// KEEP-DAG:     %[[A:.*]] = arith.extf %{{.*}} : bf16 to f32
// KEEP-DAG:     %[[B:.*]] = arith.extf %{{.*}} : bf16 to f32
// KEEP:         %[[M:.*]] = arith.maximumf %{{.*}}, %{{.*}} : f32
// KEEP:         arith.truncf %[[M]] {{.*}}: f32 to bf16
func.func @pool_max(%a: bf16, %b: bf16) -> bf16 {
  %m = arith.maximumf %a, %b : bf16
  return %m : bf16
}
