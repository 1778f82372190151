// A layer index past the list is "no such layer" (naming the count), even for
// a value the family marks unavailable; a condition on a config key that no
// config of the model defines is an error naming the condition and the key,
// never a silent "does not hold".
// RUN: nnx-opt %s -verify-diagnostics --nnx-insert-probes="family=%S/Inputs/config-typo.json reads=layers.5.layer_mid,layers.2.layer_output,layers.0.typo,layers.1.named_typo,layers.0.flagged"

// expected-error @+5 {{'layers.5.layer_mid': no such layer: its host 'layer' is 'layers.5', and 'layers' holds 2 module(s), none under key '5'}}
// expected-error @+4 {{'layers.2.layer_output': no such layer: its host 'layer' is 'layers.2', and 'layers' holds 2 module(s), none under key '2'}}
// expected-error @+3 {{'layers.0.typo' (family 'config-typo'): its 'unavailable_if' tests config key 'flg' (reason: 'the config sets flag'), which no config in the model defines (keys: flag, hidden_size); a misspelt key would never hold}}
// expected-error @+2 {{'layers.1.named_typo' (family 'config-typo'): condition list 'off_interface' tests config key 'attn_implementaton'}}
// expected-error @+1 {{'layers.0.flagged' is unavailable on family 'config-typo': the config sets flag}}
nnx.model @m inputs(tensor<?x4xf32>) {
  nnx.module @net class = "Net" attributes {config = {flag = true, hidden_size = 4 : i64}} {
    nnx.module_list @layers {
      nnx.linear @"0" {weight = dense<0.5> : tensor<4x4xf32>}
      nnx.linear @"1" {weight = dense<0.25> : tensor<4x4xf32>}
    }
    nnx.forward @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %h = nnx.call @layers::@"0"(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      %y = nnx.call @layers::@"1"(%h) : (tensor<?x4xf32>) -> tensor<?x4xf32>
      nnx.return %y : tensor<?x4xf32>
    }
  }
}
