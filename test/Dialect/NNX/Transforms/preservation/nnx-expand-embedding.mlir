// expand_embedding preserves the forward on the original ids (< 7).
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %s --ids-below 7 --edit "nnx-expand-embedding{layer=embed num=12 init=copy_mean}"
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %s --ids-below 7 --edit "nnx-expand-embedding{layer=embed num=7}" --edit "nnx-expand-embedding{layer=embed num=9 init=zeros}"
nnx.model @emb inputs(tensor<?x3xi64>) {
  nnx.sequential @net keying = named {
    nnx.embedding @embed {weight = dense<[[-0.2334213, 0.4131694, 0.03586622, 0.495307],
 [-0.3696298, -0.05192756, 0.7859126, 0.6332881],
 [-0.3800725, 0.7635422, -0.2025621, 0.3647599],
 [0.4230211, -0.1966301, 0.6541876, -0.06929657],
 [0.9213774, 0.8733979, 0.8005309, 0.8167069],
 [-0.7059069, 0.2966682, 0.4822291, 0.05751833],
 [0.05844197, -0.5971382, -0.678427, 0.5662687]]> : tensor<7x4xf32>}
    nnx.relu @relu
    nnx.linear @head {weight = dense<[[-0.7007889, 0.456394, -0.845863, -0.1754958],
 [-0.9519773, 0.3207453, -0.4141682, -0.06459983]]> : tensor<2x4xf32>, bias = dense<[-0.4271026, 0.03154887]> : tensor<2xf32>}
  }
}
