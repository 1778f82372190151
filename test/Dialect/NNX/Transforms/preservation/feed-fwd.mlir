// widen and deepen on a feed_fwd with per-layer overrides (activations and
// dropout_probs; eval mode, so dropout is the identity).
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %s --edit "nnx-widen{layer=layers.0 width=13 seed=3}"
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %s --edit "nnx-widen{layer=layers.1 width=9 seed=1}"
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %s --edit "nnx-widen{layer=layers.2 width=8}"
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %s --edit "nnx-deepen{after=layers.0}"
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %s --edit "nnx-deepen{after=layers.2}"
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %s --edit "nnx-deepen{after=layers.0}" --edit "nnx-widen{layer=layers.1 width=10 seed=7}" --edit "nnx-widen{layer=layers.0 width=7}" --edit "nnx-deepen{after=layers.3}"
nnx.model @ff inputs(tensor<?x5xf32>) {
  nnx.feed_fwd @net attributes {input_dim = 5, hidden_dims = array<i64: 6, 7, 4>, output_dim = 3, activation = #nnx.activation<tanh>, activations = [#nnx.activation<relu>, #nnx.activation<gelu>, #nnx.activation<relu>], dropout = 0.2 : f64, dropout_probs = [0.1, 0.0, 0.3]} {
    nnx.module_list @layers {
      nnx.linear @"0" {weight = dense<[[-0.1812779, -0.7966285, -0.2939031, 0.9269695, -0.566953],
 [-0.772724, -0.2646411, -0.7980384, -0.4656021, 0.8289123],
 [-0.3624358, 0.171779, -0.5225105, 0.3359599, -0.7446872],
 [0.5796188, -0.1541079, -0.6326792, 0.5164991, 0.1085651],
 [-0.12371, -0.5187479, 0.5627318, -0.2694299, -0.9138186],
 [0.9307386, -0.9390704, -0.7590619, -0.06837494, -0.5842901]]> : tensor<6x5xf32>, bias = dense<[-0.3297299, 0.1351305, 0.9156839, 0.8726245, -0.8522081, 0.7066273]> : tensor<6xf32>}
      nnx.linear @"1" {weight = dense<[[-0.6643527, 0.6228657, -0.4073056, 0.4356687, 0.4375864, 0.7011025],
 [0.9592517, -0.4490383, 0.2566169, 0.4785216, -0.8407413, 0.3259227],
 [-0.356969, -0.6770619, 0.09894311, -0.07623281, 0.1541597, 0.2838352],
 [-0.002662277, 0.8103014, -0.6441716, -0.4224167, -0.2875567, 0.5487641],
 [0.3041962, -0.5871546, 0.4888838, 0.5430741, 0.5404829, -0.8432542],
 [-0.5757217, 0.7907701, 0.7588641, -0.5888547, 0.1027513, -0.4746335],
 [-0.1674305, -0.9581103, -0.4364795, -0.4586382, 0.838261, 0.1759404]]> : tensor<7x6xf32>, bias = dense<[-0.644967, -0.1448709, -0.01412768, 0.2747202, 0.0648957, -0.1580146, -0.378414]> : tensor<7xf32>}
      nnx.linear @"2" {weight = dense<[[0.149999, 0.951664, 0.1059739, 0.7740243, -0.9694551, -0.5938052, 0.7295359],
 [0.1389458, -0.02488384, -0.2623914, -0.4094686, 0.3576596, -0.2685299, -0.1295306],
 [0.5536966, 0.8923659, 0.9873137, -0.03016953, -0.7236619, -0.9501528, -0.01068659],
 [-0.84729, -0.7645738, -0.5303218, 0.9839862, -0.6755429, -0.7797357, 0.8318475]]> : tensor<4x7xf32>}
      nnx.linear @"3" {weight = dense<[[0.2441395, 0.4798014, -0.2905331, 0.867665],
 [0.9522012, 0.1169114, 0.9736806, 0.01158871],
 [-0.1205194, 0.570868, 0.2884953, -0.5989393]]> : tensor<3x4xf32>, bias = dense<[0.02987857, -0.9670811, 0.7513197]> : tensor<3xf32>}
    }
  }
}
