// "select" on a destination-style op counts its inputs only: select=2 on a
// two-input linalg.generic names its destination (`outs`), which the op
// writes rather than reads, and is out of range (it used to be accepted: a
// read returned uninitialized memory, a write was dropped).
// RUN: nnx-opt %s -verify-diagnostics --nnx-insert-probes="family=%S/Inputs/dps.json reads=outs"
// RUN: nnx-opt %s --nnx-insert-probes="family=%S/Inputs/dps.json reads=second" | FileCheck %s

// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1 : {{.*}}) outs(%{{.*}} : tensor<2x4xf32>) attrs = {nnx.probes = [#nnx.probe<name = "second", point = input, index = 1, kind = read>], nnx.source = "add_0"}

#id = affine_map<(d0, d1) -> (d0, d1)>
// expected-error @+1 {{'outs' (family 'dps', path 'source.add_0.input' on '<root>'): 'source.add_0' (linalg.generic) in the forward of '<root>' has 2 input(s): select=2 is out of range}}
nnx.model @m inputs(tensor<2x4xf32>, tensor<2x4xf32>) {
  nnx.module @net class = "Net" {
    nnx.forward @forward(%x: tensor<2x4xf32>, %y: tensor<2x4xf32>) -> tensor<2x4xf32> {
      %e = tensor.empty() : tensor<2x4xf32>
      // expected-note @+1 {{this op}}
      %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
          ins(%x, %y : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) attrs = {nnx.source = "add_0"} {
      ^bb0(%a: f32, %b: f32, %o: f32):
        %r = arith.addf %a, %b : f32
        linalg.yield %r : f32
      } -> tensor<2x4xf32>
      nnx.return %s : tensor<2x4xf32>
    }
  }
}
