// LoRA on attention projections inside custom modules.
nnx.model @gpt inputs(tensor<?x4xf32>) attributes {nnx.recipe = #nnx.recipe<materialization = in_place, materialized = 0, operations = [#nnx.recipe_op<id = "lora", version = 1, targets = ["transformer.h.0.attn.q_proj", "transformer.h.0.attn.v_proj"], config = {r = 2 : i64, alpha = 16.0 : f64}>]>} {
  nnx.module @model class = "GPT" {
    nnx.module @transformer class = "Transformer" {
      nnx.module_list @h {
        nnx.module @"0" class = "Block" {
          nnx.module @attn class = "Attention" {
            nnx.linear @q_proj {weight = dense<[[ 0.6047283411026001 , -0.6173521280288696 , -0.8368947505950928 ,  0.7104539275169373 ],
 [ 0.7225670218467712 ,  0.7530741691589355 , -0.05618056282401085, -0.45190322399139404],
 [-0.9858163595199585 ,  0.29144179821014404,  0.43981876969337463,  0.6711384057998657 ],
 [-0.43624433875083923, -0.5695636868476868 ,  0.278662770986557  ,  0.6101096868515015 ]]> : tensor<4x4xf32>, bias = dense<[ 0.9273417592048645  , -0.6989503502845764  , -0.035575222223997116,  0.7894317507743835  ]> : tensor<4xf32>}
            nnx.linear @v_proj {weight = dense<[[-0.1545661836862564 ,  0.17900411784648895, -0.9510186314582825 ,  0.3469197750091553 ],
 [ 0.8381772637367249 ,  0.6536506414413452 ,  0.7710405588150024 ,  0.3207107484340668 ],
 [-0.5088954567909241 ,  0.5370339751243591 , -0.5766505002975464 ,  0.6625496745109558 ],
 [-0.8745641708374023 ,  0.6509756445884705 , -0.6709854602813721 , -0.24970600008964539]]> : tensor<4x4xf32>}
            nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
              %q = nnx.call @q_proj(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
              %v = nnx.call @v_proj(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
              %y = arith.mulf %q, %v : tensor<?x4xf32>
              nnx.return %y : tensor<?x4xf32>
            }
          }
          nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
            %a = nnx.call @attn(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
            %y = arith.addf %x, %a : tensor<?x4xf32>
            nnx.return %y : tensor<?x4xf32>
          }
        }
      }
      nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
        %y = nnx.call @h::@"0"(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
        nnx.return %y : tensor<?x4xf32>
      }
    }
    nnx.linear @lm_head {weight = dense<[[-0.3665236532688141 ,  0.38267406821250916, -0.642856240272522  , -0.20748767256736755],
 [-0.9883508086204529 , -0.47501057386398315, -0.15762236714363098, -0.7881575226783752 ],
 [ 0.2663199007511139 , -0.2391514629125595 ,  0.4505878686904907 ,  0.3077320158481598 ]]> : tensor<3x4xf32>}
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x3xf32> {
      %h = nnx.call @transformer(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      %y = nnx.call @lm_head(%h) : (tensor<?x4xf32>) -> tensor<?x3xf32>
      nnx.return %y : tensor<?x3xf32>
    }
  }
}
