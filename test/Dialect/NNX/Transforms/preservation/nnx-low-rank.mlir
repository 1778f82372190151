// low_rank at max rank (min(out, in)) is exact.
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %s --edit "nnx-low-rank{layer=fc rank=5}"
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %s --edit "nnx-low-rank{layer=head rank=3}"
nnx.model @lr inputs(tensor<?x6xf32>) {
  nnx.sequential @net keying = named {
    nnx.linear @fc {weight = dense<[[0.08489177, -0.9076259, 0.8755178, 0.9988729, 0.4746109, -0.1373531],
 [0.1828386, -0.9795362, -0.7831014, -0.3380011, -0.1774626, 0.5118977],
 [-0.6585404, -0.7677906, 0.3949279, 0.7760642, 0.7593345, 0.4838324],
 [0.9671346, 0.04418421, 0.5489376, -0.1656451, -0.2934887, 0.8216442],
 [-0.138586, 0.4929421, -0.005954769, -0.7755741, -0.7462478, 0.02024517]]> : tensor<5x6xf32>, bias = dense<[0.4153558, 0.4849684, -0.3286058, -0.9815787, 0.06671285]> : tensor<5xf32>}
    nnx.relu @relu
    nnx.linear @head {weight = dense<[[-0.620866, -0.3597601, 0.1328983, -0.2163341, -0.08199672],
 [-0.8990821, -0.6339692, 0.6837912, 0.02376285, 0.7702354],
 [0.714602, -0.61366, -0.2008063, 0.0515566, -0.8049697]]> : tensor<3x5xf32>, bias = dense<[-0.8292876, 0.6829731, 0.6534272]> : tensor<3xf32>}
  }
}
