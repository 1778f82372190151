// widen and deepen on sequentials (positional, named, nested): the edited
// model computes the same forward as the original (atol = rtol = 1e-5).
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %s --edit "nnx-widen{layer=body.0 width=16 seed=1}"
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %s --edit "nnx-widen{layer=body.3 width=9 seed=5}"
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %s --edit "nnx-deepen{after=body.1}"
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %s --edit "nnx-widen{layer=head.fc width=11 seed=2}"
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %s --edit "nnx-deepen{after=head.relu}"
// An edit sequence: deepen renumbers body (3 becomes 5), widen addresses the
// new key (its consumer is the old "6", now "8"), and a second deepen at the
// same named site picks a fresh N.
// RUN: %python %S/Inputs/nnxcheck.py --opt nnx-opt --run nnx-run %s --edit "nnx-deepen{after=body.1}" --edit "nnx-widen{layer=body.5 width=12 seed=9}" --edit "nnx-widen{layer=body.0 width=10}" --edit "nnx-deepen{after=head.relu}" --edit "nnx-deepen{after=head.relu}" --edit "nnx-widen{layer=head._nnx_deepen_linear_1 width=8 seed=4}"
nnx.model @seq inputs(tensor<?x4xf32>) {
  nnx.sequential @net keying = named {
    nnx.sequential @body keying = positional {
      nnx.linear @"0" {weight = dense<[[-0.6421304, 0.2798263, -0.0654632, -0.258999],
 [-0.2901653, 0.5810365, 0.8102877, -0.6452936],
 [0.3055696, -0.4033945, 0.9339244, 0.8397003],
 [0.2717416, 0.5054642, 0.03030739, 0.6517905],
 [-0.1032389, -0.3223751, -0.4442016, -0.5473339],
 [0.05163369, -0.1381759, 0.3263612, -0.974319],
 [-0.1045962, -0.2696384, -0.6092048, 0.1897317],
 [-0.1293737, -0.400017, -0.5811678, 0.7492481]]> : tensor<8x4xf32>, bias = dense<[0.5949246, 0.2134193, -0.3097988, 0.8936396, 0.1267547, -0.1344745, 0.8008992, -0.3613164]> : tensor<8xf32>}
      nnx.relu @"1"
      nnx.dropout @"2" {p = 0.1 : f64}
      nnx.linear @"3" {weight = dense<[[0.3919897, -0.3723593, -0.4768939, 0.4016818, -0.544216, -0.01377935, 0.1600569, -0.6221873],
 [0.4624813, 0.09696613, 0.2430065, -0.2557114, -0.1596135, -0.01034064, -0.06005818, 0.3512785],
 [0.154355, -0.1674587, -0.9963953, 0.5880621, 0.03876844, -0.3469107, -8.995517e-05, -0.8131081],
 [0.8094081, 0.9794723, -0.8825296, -0.2835376, 0.4601291, -0.3715237, 0.1340995, -0.1668581],
 [0.5484243, 0.9169288, 0.7767909, 0.2418709, -0.6794513, 0.8941242, -0.9527351, -0.4045811],
 [-0.436773, 0.343652, -0.02527387, -0.8142229, -0.9742842, 0.2086315, -0.01703333, 0.2027642]]> : tensor<6x8xf32>}
      nnx.gelu @"4"
      nnx.identity @"5"
      nnx.linear @"6" {weight = dense<[[0.571864605, 0.102343909, -0.512223601, -0.33109358, -0.362619609, -0.219691977], [0.602601349, -0.818396747, -0.252751201, 0.582645774, 0.517342925, 0.207950085], [-0.73850435, -0.280310631, 0.741609693, 0.956266224, 0.414362282, -0.678254008], [0.757045507, -0.676209152, -0.321225971, -0.293554872, -0.22369504, -0.768051386], [-0.628983855, 0.509808123, -0.848299265, -0.214532718, -0.994318604, -0.0767574459], [-0.826300919, -0.93155545, 0.624150574, -0.587431848, 0.622395039, -0.463272482]]> : tensor<6x6xf32>, bias = dense<[0.60103333, -0.116100214, 0.341586709, 0.94854182, -0.585059226, 0.262230217]> : tensor<6xf32>}
    }
    nnx.sequential @head keying = named {
      nnx.linear @fc {weight = dense<[[0.1280477, 0.7809182, 0.8367937, -0.6234857, 0.8842418, 0.5754533],
 [0.2780525, 0.3192145, 0.09212046, 0.8345266, -0.5334736, 0.198632],
 [0.6284861, -0.7304771, 0.2310165, -0.194333, 0.5320727, -0.8645713],
 [0.2136288, 0.7141574, 0.2566957, -0.3573246, 0.3115921, -0.3236943],
 [0.3371856, -0.7433112, -0.4400165, -0.9345632, -0.8321812, 0.1095392]]> : tensor<5x6xf32>, bias = dense<[-0.5366036, 0.03216517, 0.3191391, 0.7623724, -0.289878]> : tensor<5xf32>}
      nnx.relu @relu
      nnx.leaky_relu @leaky {negative_slope = 0.2 : f64}
      nnx.linear @proj {weight = dense<[[-0.3626421, -0.3726665, -0.7643007, 0.3263667, 0.6393092],
 [-0.05399028, 0.1165948, 0.9169602, 0.3978303, 0.4900698],
 [0.7789967, -0.5684189, 0.3003321, 0.434789, 0.6844559]]> : tensor<3x5xf32>, bias = dense<[-0.3124289, 0.3775894, 0.2088012]> : tensor<3xf32>}
      nnx.tanh @out
    }
  }
}
