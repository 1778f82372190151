// REQUIRES: ptxas
// nnx-cuda-pipeline: forward level -> kernels -> PTX / cubin, checked with
// ptxas for sm_80 and sm_90, on a hand-written forward and on the MLP and
// custom-module examples.

// The forward below, to PTX for sm_90: host code on one stream, one
// gpu.binary holding every kernel, the matmul as a shared-memory tiled kernel.
// RUN: nnx-opt %s --nnx-cuda-pipeline='chip=sm_90 format=isa' -o %t.sm90.mlir
// RUN: FileCheck %s --check-prefix=HOST -D'$CUDA=%cuda_toolkit' < %t.sm90.mlir
// RUN: rm -rf %t.o && %python %nnx_src/utils/nnx-gpu-objects.py %t.sm90.mlir %t.o | FileCheck %s --check-prefix=OBJ
// RUN: %ptxas -arch=sm_90 %t.o/forward_kernel.sm_90.ptx -o %t.o/sm90.cubin
// RUN: FileCheck %s --check-prefix=PTX < %t.o/forward_kernel.sm_90.ptx
// RUN: grep -c '^.visible .entry' %t.o/forward_kernel.sm_90.ptx | FileCheck %s --check-prefix=ENTRIES
// Same for sm_80, and cubins straight from the pipeline (format=bin).
// RUN: nnx-opt %s --nnx-cuda-pipeline='chip=sm_80 format=isa' -o %t.sm80.mlir
// RUN: rm -rf %t.o80 && %python %nnx_src/utils/nnx-gpu-objects.py %t.sm80.mlir %t.o80
// RUN: %ptxas -arch=sm_80 %t.o80/forward_kernel.sm_80.ptx -o %t.o80/sm80.cubin
// RUN: FileCheck %s --check-prefix=PTX80 < %t.o80/forward_kernel.sm_80.ptx
// RUN: nnx-opt %s --nnx-cuda-pipeline='chip=sm_90 format=bin' | FileCheck %s --check-prefix=BIN -D'$CUDA=%cuda_toolkit'
// With out-params (nnx-run's ABI) the result goes from device memory straight
// into the host buffer the caller passes.
// RUN: nnx-opt %s --nnx-cuda-pipeline='chip=sm_90 format=isa out-params=true' | FileCheck %s --check-prefix=OUT

// The examples (structure level) for both chips, as PTX assembled by ptxas
// and as cubins from the pipeline.
// RUN: %python %nnx_src/utils/nnx-cuda-check.py --nnx-opt %nnx_bin/bin/nnx-opt --chip sm_80 --format isa --workdir %t.ex %nnx_src/examples/mlp.mlir %nnx_src/examples/residual.mlir | FileCheck %s --check-prefix=EX
// RUN: %python %nnx_src/utils/nnx-cuda-check.py --nnx-opt %nnx_bin/bin/nnx-opt --chip sm_90 --format isa --workdir %t.ex %nnx_src/examples/mlp.mlir %nnx_src/examples/residual.mlir | FileCheck %s --check-prefix=EX
// RUN: %python %nnx_src/utils/nnx-cuda-check.py --nnx-opt %nnx_bin/bin/nnx-opt --chip sm_80 --format bin --workdir %t.ex %nnx_src/examples/mlp.mlir %nnx_src/examples/residual.mlir | FileCheck %s --check-prefix=EXBIN
// RUN: %python %nnx_src/utils/nnx-cuda-check.py --nnx-opt %nnx_bin/bin/nnx-opt --chip sm_90 --format bin --workdir %t.ex %nnx_src/examples/mlp.mlir %nnx_src/examples/residual.mlir | FileCheck %s --check-prefix=EXBIN

// Batch AND sequence dynamic (ids tensor<?x?xi64>, a causal mask built from
// the run's length), with a read and two writes: PTX for both chips that
// ptxas assembles; the probes are trailing arguments and results.
// RUN: %python %nnx_src/utils/nnx-cuda-check.py --nnx-opt %nnx_bin/bin/nnx-opt --chip sm_80 --format isa --workdir %t.bs %nnx_src/test/nnx-run/Inputs/llama_bs.mlir | FileCheck %s --check-prefix=BS
// RUN: nnx-opt %nnx_src/test/nnx-run/Inputs/llama_bs.mlir --nnx-insert-probes="family=llama reads=layers.0.attention_output writes=layers.0.attention_probabilities,layers.0.attention_output" --nnx-build-forward --nnx-cuda-pipeline='chip=sm_90 format=isa out-params=true' -o %t.bs90.mlir
// RUN: FileCheck %s --check-prefix=BSPROBES < %t.bs90.mlir
// RUN: rm -rf %t.bs90 && %python %nnx_src/utils/nnx-gpu-objects.py %t.bs90.mlir %t.bs90
// RUN: %ptxas -arch=sm_90 %t.bs90/forward_kernel.sm_90.ptx -o %t.bs90/sm90.cubin

// Bad options are refused before anything runs.
// RUN: not nnx-opt %s --nnx-cuda-pipeline='chip=gfx90a' 2>&1 | FileCheck %s --check-prefix=BADCHIP
// RUN: not nnx-opt %s --nnx-cuda-pipeline='format=elf' 2>&1 | FileCheck %s --check-prefix=BADFMT

// HOST-LABEL: llvm.func @forward(
// HOST: %[[S:.*]] = llvm.call @mgpuStreamCreate()
// HOST-NOT: mgpuStreamCreate
// HOST: gpu.launch_func <%[[S]] : !llvm.ptr> @forward_kernel::@{{.*}} threads in ({{.*}}) : i64 args(
// HOST: llvm.call @mgpuMemcpy({{.*}}, %[[S]])
// HOST: gpu.launch_func <%[[S]] : !llvm.ptr> @forward_kernel::@{{.*}} blocks in
// HOST: llvm.call @mgpuMemFree({{.*}}, %[[S]])
// HOST: llvm.call @mgpuStreamSynchronize(%[[S]])
// HOST-NEXT: llvm.call @mgpuStreamDestroy(%[[S]])
// HOST-LABEL: llvm.func @_mlir_ciface_forward(
// HOST: gpu.binary @forward_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80", link = ["[[$CUDA]]/nvvm/libdevice/libdevice.10.bc"]>
// HOST-NOT: gpu.binary

// OBJ: forward_kernel.sm_90.ptx ptx sm_90

// OUT-LABEL: llvm.func @forward(
// OUT-SAME:    %{{.*}}: !llvm.ptr, %[[OUT:[^:]*]]: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64) attributes
// OUT-NOT:     llvm.call @malloc
// OUT:         llvm.call @mgpuMemcpy(%[[OUT]], %{{.*}}, %{{.*}}, %[[S:.*]]) :
// OUT-NOT:     llvm.call @malloc
// OUT:         llvm.call @mgpuStreamSynchronize(%[[S]])
// OUT-NEXT:    llvm.call @mgpuStreamDestroy(%[[S]])
// OUT-NEXT:    llvm.return{{$}}
// OUT-LABEL: llvm.func @_mlir_ciface_forward(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) attributes

// One module, three kernels: fill, the tiled matmul, the fused bias + ReLU.
// PTX: .target sm_90
// PTX: .visible .entry
// The matmul: two shared tiles, staged between barriers, 16 FMAs (a 4x4
// register tile) per K step.
// PTX: .shared .align 4 .b8 [[TA:.*]][4352];
// PTX: .shared .align 4 .b8 [[TB:.*]][4160];
// PTX: st.shared.b32
// PTX: bar.sync 0;
// PTX-COUNT-8: ld.shared.b32
// PTX-COUNT-16: fma.rn.f32
// PTX: bar.sync 0;

// ENTRIES: {{^}}3{{$}}

// PTX80: .target sm_80
// PTX80: bar.sync 0;

// BIN: gpu.binary @forward_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80", link = ["[[$CUDA]]/nvvm/libdevice/libdevice.10.bc"]>, properties = {{.*}}, bin = "\7FELF

// EX: OK {{.*}}examples/mlp.mlir chip=sm_{{[89]}}0 format=isa objects=1 kernels={{[0-9]+}} shared-tiles={{[1-9][0-9]*}}
// EX: OK {{.*}}examples/residual.mlir chip=sm_{{[89]}}0 format=isa objects=1 kernels={{[0-9]+}} shared-tiles={{[1-9][0-9]*}}
// EX: checked 2 models, 0 failed
// EXBIN: OK {{.*}}examples/mlp.mlir chip=sm_{{[89]}}0 format=bin objects=1
// EXBIN: OK {{.*}}examples/residual.mlir chip=sm_{{[89]}}0 format=bin objects=1
// EXBIN: checked 2 models, 0 failed

// BS: OK {{.*}}llama_bs.mlir chip=sm_80 format=isa objects=1 kernels={{[0-9]+}} shared-tiles={{[1-9][0-9]*}}
// BS: checked 1 models, 0 failed
// BSPROBES: llvm.func @forward(
// BSPROBES-SAME: nnx.read_probes = ["layers.0.attention_output"]
// BSPROBES-SAME: nnx.write_probes = ["layers.0.attention_probabilities", "layers.0.attention_output"]

// BADCHIP: nnx-cuda-pipeline: option 'chip' must name an NVIDIA compute capability like sm_80 or sm_90a, got 'gfx90a'
// BADFMT: nnx-cuda-pipeline: option 'format' must be isa, bin or fatbin, got 'elf'

#map_a = affine_map<(m, n, k) -> (m, k)>
#map_b = affine_map<(m, n, k) -> (k, n)>
#map_c = affine_map<(m, n, k) -> (m, n)>
#bias = affine_map<(m, n) -> (n)>
#id = affine_map<(m, n) -> (m, n)>
func.func @forward(%x: tensor<?x96xf32>) -> tensor<?x80xf32> attributes {llvm.emit_c_interface} {
  %w = arith.constant dense<0.5> : tensor<96x80xf32>
  %b = arith.constant dense<0.25> : tensor<80xf32>
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x96xf32>
  %e = tensor.empty(%n) : tensor<?x80xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x80xf32>) -> tensor<?x80xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<?x96xf32>, tensor<96x80xf32>) outs(%f : tensor<?x80xf32>) -> tensor<?x80xf32>
  %y = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]} ins(%mm, %b : tensor<?x80xf32>, tensor<80xf32>) outs(%e : tensor<?x80xf32>) {
  ^bb0(%a: f32, %bb: f32, %o: f32):
    %s = arith.addf %a, %bb : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x80xf32>
  return %y : tensor<?x80xf32>
}
