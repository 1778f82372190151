// RUN: nnx-opt %s --nnx-lower-functional | FileCheck %s
// RUN: nnx-opt %s --nnx-lower-functional --canonicalize --cse | FileCheck %s

// The indexing maps (printed at the top of the module).
// CHECK-DAG:   #[[$ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG:   #[[$LAST:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG:   #[[$SCALAR:.*]] = affine_map<(d0, d1, d2) -> ()>
// CHECK-DAG:   #[[$ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[$ROW0:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-DAG:   #[[$MASK:.*]] = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
// CHECK-DAG:   #[[$ID4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG:   #[[$SCALAR4:.*]] = affine_map<(d0, d1, d2, d3) -> ()>
// CHECK-DAG:   #[[$MK:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG:   #[[$NK:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-DAG:   #[[$MN:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG:   #[[$KN1:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d4, d3)>
// CHECK-DAG:   #[[$KN:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d4, d3)>
// CHECK-DAG:   #[[$GQA:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, 0, d3, d4)>
// CHECK-DAG:   #[[$ID5:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>

// CHECK-LABEL: func.func @binary(
// CHECK-SAME:      %[[A:[^:]*]]: tensor<?x?x8xf32>, %[[B:[^:]*]]: tensor<8xf32>, %[[Z:[^:]*]]: tensor<f32>
// CHECK:         %[[E0:.*]] = tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x?x8xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[$ID3]], #[[$LAST]], #[[$ID3]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME:        ins(%[[A]], %[[B]] : tensor<?x?x8xf32>, tensor<8xf32>) outs(%[[E0]] : tensor<?x?x8xf32>)
// CHECK:           arith.addf
// CHECK:         linalg.generic {indexing_maps = [#[[$ID3]], #[[$SCALAR]], #[[$ID3]]]
// CHECK-SAME:        outs(%{{.*}} : tensor<?x?x8xi1>)
// CHECK:           arith.cmpf une
// CHECK:           arith.subf
// A static 1 against a dynamic result dim reads index 0.
// CHECK:         linalg.generic {indexing_maps = [#[[$ROW0]], #[[$ID2]], #[[$ID2]]]
// CHECK:           arith.maximumf
// CHECK-NOT:     nnx.fn
func.func @binary(%a: tensor<?x?x8xf32>, %b: tensor<8xf32>, %z: tensor<f32>, %m: tensor<1x?xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x8xi1>, tensor<?x?xf32>) {
  %0 = nnx.fn.add %a, %b : tensor<?x?x8xf32>, tensor<8xf32> -> tensor<?x?x8xf32>
  %1 = nnx.fn.ne %a, %z : tensor<?x?x8xf32>, tensor<f32> -> tensor<?x?x8xi1>
  %2 = nnx.fn.sub %m, %m : tensor<1x?xf32>, tensor<1x?xf32> -> tensor<1x?xf32>
  %n = tensor.cast %m : tensor<1x?xf32> to tensor<?x?xf32>
  %3 = nnx.fn.maximum %2, %n : tensor<1x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  return %0, %1, %3 : tensor<?x?x8xf32>, tensor<?x?x8xi1>, tensor<?x?xf32>
}

// CHECK-LABEL: func.func @ints(
// CHECK:         arith.cmpi sge
// CHECK:         arith.minsi
// CHECK:         arith.maxsi %{{.*}}, %{{.*}} : i64
// CHECK:         %[[ACC:.*]] = linalg.fill ins(%{{.*}} : i64) outs(%{{.*}} : tensor<?xi64>)
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} outs(%[[ACC]] : tensor<?xi64>)
// CHECK:           arith.addi
func.func @ints(%i: tensor<?x4xi64>, %j: tensor<4xi64>) -> (tensor<?x4xi1>, tensor<?x4xi64>, tensor<?x4xi64>, tensor<?xi64>) {
  %0 = nnx.fn.ge %i, %j : tensor<?x4xi64>, tensor<4xi64> -> tensor<?x4xi1>
  %1 = nnx.fn.minimum %i, %j : tensor<?x4xi64>, tensor<4xi64> -> tensor<?x4xi64>
  %2 = nnx.fn.relu %i : tensor<?x4xi64>
  %3 = nnx.fn.sum %i {dims = array<i64: 1>} : tensor<?x4xi64> -> tensor<?xi64>
  return %0, %1, %2, %3 : tensor<?x4xi1>, tensor<?x4xi64>, tensor<?x4xi64>, tensor<?xi64>
}

// CHECK-LABEL: func.func @where(
// CHECK:         linalg.generic {indexing_maps = [#[[$MASK]], #[[$ID4]], #[[$SCALAR4]], #[[$ID4]]]
// CHECK:           arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
func.func @where(%c: tensor<1x1x?x?xi1>, %a: tensor<?x4x?x?xf32>, %b: tensor<f32>) -> tensor<?x4x?x?xf32> {
  %0 = nnx.fn.where %c, %a, %b : tensor<1x1x?x?xi1>, tensor<?x4x?x?xf32>, tensor<f32> -> tensor<?x4x?x?xf32>
  return %0 : tensor<?x4x?x?xf32>
}

// CHECK-LABEL: func.func @matmul(
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?x4x?x?xf32>)
// CHECK:         %[[S:.*]] = linalg.generic {indexing_maps = [#[[$MK]], #[[$NK]], #[[$MN]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME:        outs(%[[Z]] : tensor<?x4x?x?xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         linalg.generic {indexing_maps = [#[[$MK]], #[[$KN1]], #[[$MN]]]
// CHECK-SAME:        ins(%[[S]], %{{.*}} : tensor<?x4x?x?xf32>, tensor<?x1x?x16xf32>)
// CHECK:         linalg.generic {indexing_maps = [#[[$MK]], #[[$KN]], #[[$MN]]]
// CHECK-SAME:        tensor<16x8xf32>
// CHECK-NOT:     tensor.collapse_shape
// CHECK-NOT:     tensor.expand_shape
func.func @matmul(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x1x?x16xf32>, %w: tensor<16x8xf32>) -> (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x8xf32>) {
  %s = nnx.fn.matmul %q, %k {transpose_b} : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x?xf32>
  %c = nnx.fn.matmul %s, %v : tensor<?x4x?x?xf32>, tensor<?x1x?x16xf32> -> tensor<?x4x?x16xf32>
  %d = nnx.fn.matmul %q, %w : tensor<?x4x?x16xf32>, tensor<16x8xf32> -> tensor<?x4x?x8xf32>
  return %s, %c, %d : tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x8xf32>
}

// CHECK-LABEL: func.func @reshapes(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x?x64xf32>, %[[M:[^:]*]]: tensor<?x?xi1>, %[[Y:[^:]*]]: tensor<?x?x4x16xf32>, %[[B:[^:]*]]: index, %[[T:[^:]*]]: index, %[[BT:[^:]*]]: index
// CHECK:         %[[E:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1], [2, 3]] output_shape [%[[B]], %[[T]], 4, 16] : tensor<?x?x64xf32> into tensor<?x?x4x16xf32>
// CHECK:         %[[U:.*]] = tensor.expand_shape %[[M]] {{\[\[}}0, 1, 2], [3]] output_shape [1, 1, %[[T]], %[[T]]] : tensor<?x?xi1> into tensor<1x1x?x?xi1>
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[Y]] {{\[\[}}0], [1], [2, 3]] : tensor<?x?x4x16xf32> into tensor<?x?x64xf32>
// Merging batch and sequence: a group with two dynamic dims, so tensor.reshape.
// CHECK:         %[[SH:.*]] = tensor.from_elements %[[BT]], %{{.*}} : tensor<2xindex>
// CHECK:         %[[R:.*]] = tensor.reshape %[[X]](%[[SH]]) : (tensor<?x?x64xf32>, tensor<2xindex>) -> tensor<?x64xf32>
// Sizes of the input's rank that are not provably its own: a reshape too,
// its element count checked at run time (no longer the input itself).
// CHECK:         scf.if
// CHECK:         %[[R2:.*]] = tensor.reshape %[[X]](%{{.*}}) : (tensor<?x?x64xf32>, tensor<3xindex>) -> tensor<?x?x64xf32>
// CHECK:         return %[[E]], %[[U]], %[[C]], %[[R]], %[[R2]]
func.func @reshapes(%x: tensor<?x?x64xf32>, %m: tensor<?x?xi1>, %y: tensor<?x?x4x16xf32>, %b: index, %t: index, %bt: index) -> (tensor<?x?x4x16xf32>, tensor<1x1x?x?xi1>, tensor<?x?x64xf32>, tensor<?x64xf32>, tensor<?x?x64xf32>) {
  %0 = nnx.fn.reshape %x [%b, %t, 4, 16] : tensor<?x?x64xf32> -> tensor<?x?x4x16xf32>
  %1 = nnx.fn.reshape %m [1, 1, %t, %t] : tensor<?x?xi1> -> tensor<1x1x?x?xi1>
  %2 = nnx.fn.reshape %y [%b, %t, 64] : tensor<?x?x4x16xf32> -> tensor<?x?x64xf32>
  %3 = nnx.fn.reshape %x [%bt, 64] : tensor<?x?x64xf32> -> tensor<?x64xf32>
  %4 = nnx.fn.reshape %x [%b, %t, 64] : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  return %0, %1, %2, %3, %4 : tensor<?x?x4x16xf32>, tensor<1x1x?x?xi1>, tensor<?x?x64xf32>, tensor<?x64xf32>, tensor<?x?x64xf32>
}

// CHECK-LABEL: func.func @expand_permute(
// CHECK-SAME:      %[[KV:[^:]*]]: tensor<?x2x1x?x16xf32>, %[[V:[^:]*]]: tensor<?x?x4x16xf32>, %[[B:[^:]*]]: index, %[[T:[^:]*]]: index
// CHECK:         %[[E:.*]] = tensor.empty(%[[B]], %[[T]]) : tensor<?x2x2x?x16xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[$GQA]], #[[$ID5]]]
// CHECK-SAME:        ins(%[[KV]] : tensor<?x2x1x?x16xf32>) outs(%[[E]] : tensor<?x2x2x?x16xf32>)
// CHECK:         linalg.transpose ins(%[[V]] : tensor<?x?x4x16xf32>) outs(%{{.*}} : tensor<?x4x?x16xf32>) permutation = [0, 2, 1, 3]
func.func @expand_permute(%kv: tensor<?x2x1x?x16xf32>, %v: tensor<?x?x4x16xf32>, %b: index, %t: index) -> (tensor<?x2x2x?x16xf32>, tensor<?x4x?x16xf32>) {
  %e = nnx.fn.expand %kv [%b, 2, 2, %t, 16] : tensor<?x2x1x?x16xf32> -> tensor<?x2x2x?x16xf32>
  %h = nnx.fn.permute %v [0, 2, 1, 3] : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
  return %e, %h : tensor<?x2x2x?x16xf32>, tensor<?x4x?x16xf32>
}

// CHECK-LABEL: func.func @rows(
// CHECK:         linalg.softmax dimension(1) ins(%{{.*}} : tensor<?x4x?x?xf32>)
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:         %[[MEAN:.*]] = linalg.generic
// CHECK-SAME:        ins(%[[SUM]] : tensor<?x?xf32>)
// CHECK:           arith.divf %{{.*}}, %{{.*}} : f32
// CHECK:         tensor.expand_shape %[[MEAN]] {{\[\[}}0], [1, 2]] output_shape [%{{.*}}, %{{.*}}, 1] : tensor<?x?xf32> into tensor<?x?x1xf32>
func.func @rows(%s: tensor<?x4x?x?xf32>, %x: tensor<?x?x64xf32>) -> (tensor<?x4x?x?xf32>, tensor<?x?x1xf32>) {
  %p = nnx.fn.softmax %s {dim = 1 : i64} : tensor<?x4x?x?xf32>
  %v = nnx.fn.mean %x {dims = array<i64: -1>, keepdim} : tensor<?x?x64xf32> -> tensor<?x?x1xf32>
  return %p, %v : tensor<?x4x?x?xf32>, tensor<?x?x1xf32>
}

// The leaf layers' scalar functions: gelu's tanh form, sigmoid; dropout
// without train is the identity, with train the hash mask.
// CHECK-LABEL: func.func @activations(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x8xf32>
// CHECK:         %[[G:.*]] = linalg.generic
// CHECK:           math.tanh
// CHECK:         %[[S:.*]] = linalg.generic
// CHECK:           math.exp
// CHECK:         %[[D:.*]] = linalg.generic
// CHECK:           linalg.index 0
// CHECK:           arith.cmpi uge
// CHECK:         return %[[G]], %[[S]], %[[X]], %[[D]]
func.func @activations(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %g = nnx.fn.gelu %x {approximate = #nnx.gelu_approximation<tanh>} : tensor<?x8xf32>
  %s = nnx.fn.sigmoid %x : tensor<?x8xf32>
  %d = nnx.fn.dropout %x {p = 1.000000e-01 : f64} : tensor<?x8xf32>
  %t = nnx.fn.dropout %x {p = 1.000000e-01 : f64, train, seed = 3 : i64} : tensor<?x8xf32>
  return %g, %s, %d, %t : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}

// CHECK-LABEL: func.func @factories(
// CHECK-SAME:      %[[N:[^:]*]]: index
// CHECK:         %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?xi64>
// CHECK:         linalg.generic {{.*}} outs(%[[E]] : tensor<?xi64>)
// CHECK:           %[[I:.*]] = linalg.index 0 : index
// CHECK:           arith.index_cast %[[I]] : index to i64
// CHECK:         linalg.generic
// CHECK:           arith.sitofp %{{.*}} : i64 to f32
// CHECK:         linalg.generic
// CHECK:           %[[R:.*]] = linalg.index 0 : index
// CHECK:           %[[C:.*]] = linalg.index 1 : index
// CHECK:           %[[D:.*]] = arith.subi %[[C]], %[[R]] : index
// CHECK:           %[[K:.*]] = arith.cmpi sge, %[[D]], %{{.*}} : index
// CHECK:           arith.select %[[K]], %{{.*}}, %{{.*}} : i1
func.func @factories(%n: index, %m: tensor<?x?xi1>) -> (tensor<?xi64>, tensor<?xf32>, tensor<?x?xi1>) {
  %i = nnx.fn.arange %n : tensor<?xi64>
  %f = nnx.fn.arange %n : tensor<?xf32>
  %u = nnx.fn.triu %m {diagonal = 1 : i64} : tensor<?x?xi1>
  return %i, %f, %u : tensor<?xi64>, tensor<?xf32>, tensor<?x?xi1>
}

// tensor.concat and a ranked tensor.splat, rewritten for both pipelines.
// CHECK-LABEL: func.func @upstream(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x?x8xf32>, %[[Y:[^:]*]]: tensor<?x?x4xf32>, %[[T:[^:]*]]: index, %[[V:[^:]*]]: f32
// CHECK:         %[[E:.*]] = tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x?x12xf32>
// CHECK:         %[[I:.*]] = tensor.insert_slice %[[X]] into %[[E]][0, 0, 0]
// CHECK:         tensor.insert_slice %[[Y]] into %[[I]][0, 0, 8]
// CHECK:         %[[S:.*]] = tensor.empty(%[[T]], %[[T]]) : tensor<?x?xf32>
// CHECK:         linalg.fill ins(%[[V]] : f32) outs(%[[S]] : tensor<?x?xf32>)
// CHECK-NOT:     tensor.concat
// CHECK-NOT:     tensor.splat
func.func @upstream(%x: tensor<?x?x8xf32>, %y: tensor<?x?x4xf32>, %t: index, %v: f32) -> (tensor<?x?x12xf32>, tensor<?x?xf32>) {
  %c = tensor.concat dim(2) %x, %y : (tensor<?x?x8xf32>, tensor<?x?x4xf32>) -> tensor<?x?x12xf32>
  %s = tensor.splat %v[%t, %t] : tensor<?x?xf32>
  return %c, %s : tensor<?x?x12xf32>, tensor<?x?xf32>
}

// Rank 0 to and from unit dims (an empty reassociation); an empty `dims`
// reduces everything (keepdim: unit dims from rank 0).
// CHECK-LABEL: func.func @edge(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x4xf32>, %[[S:[^:]*]]: tensor<f32>, %[[U:[^:]*]]: tensor<1x1xf32>
// CHECK:         tensor.expand_shape %[[S]] [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
// CHECK:         tensor.collapse_shape %[[U]] [] : tensor<1x1xf32> into tensor<f32>
// CHECK:         %[[ALL:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]{{.*}} outs(%{{.*}} : tensor<f32>)
// CHECK:         tensor.expand_shape %{{.*}} [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
func.func @edge(%x: tensor<?x4xf32>, %s: tensor<f32>, %u: tensor<1x1xf32>) -> (tensor<1x1xf32>, tensor<f32>, tensor<1x1xf32>) {
  %0 = nnx.fn.reshape %s [1, 1] : tensor<f32> -> tensor<1x1xf32>
  %1 = nnx.fn.reshape %u [] : tensor<1x1xf32> -> tensor<f32>
  %2 = nnx.fn.mean %x {dims = array<i64>, keepdim} : tensor<?x4xf32> -> tensor<1x1xf32>
  return %0, %1, %2 : tensor<1x1xf32>, tensor<f32>, tensor<1x1xf32>
}

// The logical ops: one broadcasting generic each, on i1.
// CHECK-LABEL: func.func @logical(
// CHECK:         linalg.generic
// CHECK-SAME:        outs(%{{.*}} : tensor<?x4xi1>)
// CHECK:           arith.andi %{{.*}}, %{{.*}} : i1
// CHECK:         linalg.generic
// CHECK:           arith.ori %{{.*}}, %{{.*}} : i1
// CHECK:         linalg.generic
// CHECK:           arith.xori %{{.*}}, %{{.*}} : i1
// CHECK-NOT:     nnx.fn
func.func @logical(%a: tensor<?x4xi1>, %b: tensor<4xi1>, %t: tensor<i1>) -> (tensor<?x4xi1>, tensor<?x4xi1>, tensor<?x4xi1>) {
  %0 = nnx.fn.logical_and %a, %b : tensor<?x4xi1>, tensor<4xi1> -> tensor<?x4xi1>
  %1 = nnx.fn.logical_or %0, %b : tensor<?x4xi1>, tensor<4xi1> -> tensor<?x4xi1>
  %2 = nnx.fn.logical_xor %1, %t : tensor<?x4xi1>, tensor<i1> -> tensor<?x4xi1>
  return %0, %1, %2 : tensor<?x4xi1>, tensor<?x4xi1>, tensor<?x4xi1>
}

// amax / amin: reductions from -inf / +inf (the integer type's extremes)
// with the NaN-propagating maximumf / minimumf; keepdim expands the result.
// CHECK-LABEL: func.func @max_min(
// CHECK:         %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[ACC:.*]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.*}} : tensor<?xf32>)
// CHECK:         %[[MAX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} outs(%[[ACC]] : tensor<?xf32>)
// CHECK:           arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK:         tensor.expand_shape %[[MAX]] {{\[\[}}0, 1]] output_shape [%{{.*}}, 1] : tensor<?xf32> into tensor<?x1xf32>
// CHECK:         linalg.fill ins(%c2147483647_i32 : i32)
// CHECK:         linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
// CHECK:           arith.minsi %{{.*}}, %{{.*}} : i32
// CHECK-NOT:     nnx.fn
func.func @max_min(%x: tensor<?x8xf32>, %i: tensor<?x4xi32>) -> (tensor<?x1xf32>, tensor<4xi32>) {
  %0 = nnx.fn.amax %x {dims = array<i64: -1>, keepdim} : tensor<?x8xf32> -> tensor<?x1xf32>
  %1 = nnx.fn.amin %i {dims = array<i64: 0>} : tensor<?x4xi32> -> tensor<4xi32>
  return %0, %1 : tensor<?x1xf32>, tensor<4xi32>
}

// gather / index_select: the index range check (a reduction over the
// indices, then nnxRuntimeFail; nnx-lower-functional-checks.mlir), then a
// generic over the result reading the input at the clamped index.
// CHECK-LABEL: func.func @indexing(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x8xf32>, %[[I:[^:]*]]: tensor<?x2xi64>, %[[S:[^:]*]]: tensor<3xi32>
// CHECK:         linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]{{.*}} ins(%[[I]] : tensor<?x2xi64>)
// CHECK:         scf.if
// CHECK:           func.call @nnxRuntimeFail
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} ins(%[[I]] : tensor<?x2xi64>) outs(%{{.*}} : tensor<?x2xf32>)
// CHECK:           %[[L:.*]] = arith.maxsi
// CHECK:           %[[C:.*]] = arith.minsi %[[L]]
// CHECK:           %[[R:.*]] = linalg.index 0 : index
// CHECK:           tensor.extract %[[X]][%[[R]], %[[C]]] : tensor<?x8xf32>
// CHECK:         linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}} ins(%[[S]] : tensor<3xi32>)
// CHECK:           arith.extsi %{{.*}} : i32 to i64
// CHECK:         scf.if
// CHECK:         linalg.generic {{.*}}ins(%[[S]] : tensor<3xi32>) outs(%{{.*}} : tensor<?x3xf32>)
// CHECK:           %[[R2:.*]] = linalg.index 0 : index
// CHECK:           tensor.extract %[[X]][%[[R2]], %{{.*}}] : tensor<?x8xf32>
// CHECK-NOT:     nnx.fn
func.func @indexing(%x: tensor<?x8xf32>, %i: tensor<?x2xi64>, %s: tensor<3xi32>) -> (tensor<?x2xf32>, tensor<?x3xf32>) {
  %0 = nnx.fn.gather %x, %i {dim = 1 : i64} : tensor<?x8xf32>, tensor<?x2xi64> -> tensor<?x2xf32>
  %1 = nnx.fn.index_select %x, %s {dim = -1 : i64} : tensor<?x8xf32>, tensor<3xi32> -> tensor<?x3xf32>
  return %0, %1 : tensor<?x2xf32>, tensor<?x3xf32>
}

// topk: pass j is a reduction generic giving the j-th value and position
// of each row, inserted at position j of both results; the second pass
// reads the first's pick.
// CHECK-LABEL: func.func @topk(
// CHECK:         %[[V0:.*]] = tensor.empty(%{{.*}}) : tensor<?x2xf32>
// CHECK:         %[[I0:.*]] = tensor.empty(%{{.*}}) : tensor<?x2xi64>
// CHECK:         %[[P0:.*]]:2 = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK-SAME:        outs(%{{.*}}, %{{.*}} : tensor<?xf32>, tensor<?xi64>)
// CHECK:           arith.cmpf uno
// CHECK:           arith.cmpf ogt
// CHECK:         %[[V1:.*]] = tensor.insert_slice %[[P0]]#0 into %[[V0]][0, 0] [%{{.*}}, 1] [1, 1] : tensor<?xf32> into tensor<?x2xf32>
// CHECK:         %[[I1:.*]] = tensor.insert_slice %[[P0]]#1 into %[[I0]][0, 0] [%{{.*}}, 1] [1, 1] : tensor<?xi64> into tensor<?x2xi64>
// CHECK:         %[[P1:.*]]:2 = linalg.generic
// CHECK-SAME:        ins(%{{.*}}, %[[P0]]#0, %[[P0]]#1 : tensor<?x8xf32>, tensor<?xf32>, tensor<?xi64>)
// CHECK:         tensor.insert_slice %[[P1]]#0 into %[[V1]][0, 1] [%{{.*}}, 1] [1, 1]
// CHECK:         tensor.insert_slice %[[P1]]#1 into %[[I1]][0, 1] [%{{.*}}, 1] [1, 1]
// The smallest of integers: signed less-than, no NaN test.
// CHECK:         linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
// CHECK-NOT:       arith.cmpf
// CHECK:           arith.cmpi slt, %{{.*}}, %{{.*}} : i32
// CHECK-NOT:     nnx.fn
func.func @topk(%x: tensor<?x8xf32>, %y: tensor<4x?xi32>) -> (tensor<?x2xf32>, tensor<?x2xi64>, tensor<1x?xi32>, tensor<1x?xi64>) {
  %v, %i = nnx.fn.topk %x {k = 2 : i64, dim = -1 : i64, largest, sorted} : tensor<?x8xf32> -> tensor<?x2xf32>, tensor<?x2xi64>
  %w, %j = nnx.fn.topk %y {k = 1 : i64, dim = 0 : i64} : tensor<4x?xi32> -> tensor<1x?xi32>, tensor<1x?xi64>
  return %v, %i, %w, %j : tensor<?x2xf32>, tensor<?x2xi64>, tensor<1x?xi32>, tensor<1x?xi64>
}

// cumsum: loops (d0, d1, j'), j' a reduction along dim 1; the sum takes
// x[d0, j'] while j' <= d1.
// CHECK-LABEL: func.func @cumsum(
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?x?xf32>)
// CHECK:         linalg.generic {indexing_maps = [#[[$CSIN:.*]], #[[$CSOUT:.*]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME:        outs(%[[Z]] : tensor<?x?xf32>)
// CHECK:         ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-DAG:       %[[JP:.*]] = linalg.index 2 : index
// CHECK-DAG:       %[[J:.*]] = linalg.index 1 : index
// CHECK:           %[[KEEP:.*]] = arith.cmpi ule, %[[JP]], %[[J]] : index
// CHECK:           %[[SUM:.*]] = arith.addf %[[ACC]], %[[IN]] : f32
// CHECK:           arith.select %[[KEEP]], %[[SUM]], %[[ACC]] : f32
// CHECK:         linalg.generic
// CHECK:           arith.addi %{{.*}}, %{{.*}} : i64
// CHECK-NOT:     nnx.fn
func.func @cumsum(%x: tensor<?x?xf32>, %m: tensor<2x?xi64>) -> (tensor<?x?xf32>, tensor<2x?xi64>) {
  %0 = nnx.fn.cumsum %x {dim = 1 : i64} : tensor<?x?xf32>
  %1 = nnx.fn.cumsum %m {dim = -1 : i64} : tensor<2x?xi64>
  return %0, %1 : tensor<?x?xf32>, tensor<2x?xi64>
}

// The pools go through the pooling layers' lowering: a -inf padded
// linalg.pooling_nchw_max, a zero padded pooling_nchw_sum divided by the
// window's count, and the adaptive pool's split dims summed and divided.
// CHECK-LABEL: func.func @pools(
// CHECK:         tensor.pad
// CHECK:         linalg.pooling_nchw_max
// CHECK:         linalg.pooling_nchw_sum
// CHECK:         arith.divf
// CHECK:         tensor.expand_shape
// CHECK:         linalg.generic
// CHECK:           arith.addf
// CHECK-NOT:     nnx.fn
func.func @pools(%x: tensor<?x3x?x?xf32>) -> (tensor<?x3x?x?xf32>, tensor<?x3x4x4xf32>, tensor<?x3x1x1xf32>) {
  %0 = nnx.fn.max_pool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : tensor<?x3x?x?xf32> -> tensor<?x3x?x?xf32>
  %c = tensor.cast %x : tensor<?x3x?x?xf32> to tensor<?x3x8x8xf32>
  %1 = nnx.fn.avg_pool2d %c {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, count_include_pad} : tensor<?x3x8x8xf32> -> tensor<?x3x4x4xf32>
  %2 = nnx.fn.adaptive_avg_pool2d %x {output_size = array<i64: 1, 1>} : tensor<?x3x?x?xf32> -> tensor<?x3x1x1xf32>
  return %0, %1, %2 : tensor<?x3x?x?xf32>, tensor<?x3x4x4xf32>, tensor<?x3x1x1xf32>
}

// A reshape to the input's own sizes is the input: a size read from the
// input itself (by its form), or from a value layers before it (by a
// value-bounds proof over a bounded slice).
// CHECK-LABEL: func.func @identity_reshapes(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<?x?x64xf32>
// CHECK-NOT:     tensor.reshape
// CHECK:         linalg.generic
// CHECK-NOT:     tensor.reshape
// CHECK:         %[[R:.*]] = linalg.generic
// CHECK-NOT:     tensor.reshape
// CHECK:         return %[[X]], %[[R]]
func.func @identity_reshapes(%x: tensor<?x?x64xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x64xf32>
  %t = tensor.dim %x, %c1 : tensor<?x?x64xf32>
  %0 = nnx.fn.reshape %x [%b, %t, 64] : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  %a = nnx.fn.add %x, %x : tensor<?x?x64xf32>, tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  %r = nnx.fn.relu %a : tensor<?x?x64xf32>
  %1 = nnx.fn.reshape %r [%b, %t, 64] : tensor<?x?x64xf32> -> tensor<?x?x64xf32>
  return %0, %1 : tensor<?x?x64xf32>, tensor<?x?x64xf32>
}
