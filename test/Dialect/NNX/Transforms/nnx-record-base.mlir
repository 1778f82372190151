// nnx-record-base: every module in pre-order, tensors as their types, flags
// kept; aliases are entries of kind nnx.alias; custom modules record their
// class (the forward is the class's code, not part of the descriptor).
// RUN: nnx-opt %s --nnx-record-base | FileCheck %s

// CHECK-LABEL: nnx.model @m inputs(tensor<?x4xf32>) attributes {nnx.base = #nnx.base<root = "blk", modules = [
// CHECK-SAME: #nnx.module_desc<path = "", kind = "nnx.module", attributes = {class_name = "Block", train}>,
// CHECK-SAME: #nnx.module_desc<path = "fc", kind = "nnx.linear", attributes = {bias = tensor<3xf32>, requires_grad = {bias = false}, weight = tensor<3x4xf32>}>,
// CHECK-SAME: #nnx.module_desc<path = "lazy", kind = "nnx.linear", attributes = {lazy, out_features = 2 : i64}>,
// CHECK-SAME: #nnx.module_desc<path = "again", kind = "nnx.alias", attributes = {target = @fc}>]>}
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @blk class = "Block" attributes {train} {
    nnx.linear @fc {weight = dense<1.0> : tensor<3x4xf32>, bias = dense<0.0> : tensor<3xf32>, requires_grad = {bias = false}}
    nnx.linear @lazy {lazy, out_features = 2 : i64}
    nnx.alias @again = @fc
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x3xf32> {
      %y = nnx.call @fc(%x) : (tensor<?x4xf32>) -> tensor<?x3xf32>
      nnx.return %y : tensor<?x3xf32>
    }
  }
}
