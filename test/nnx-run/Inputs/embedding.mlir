// A 16-row table; ids are (batch, sequence).
nnx.model @m inputs(tensor<?x?xi64>) {
  nnx.sequential @net keying = named {
    nnx.embedding @wte {weight = dense<1.0> : tensor<16x4xf32>}
    nnx.relu @act
  }
}
