// The support report of every bundled family on its example model: each
// standardized name, where it resolves or why it is unavailable.
// RUN: nnx-opt --nnx-support=family=gpt2 %nnx_src/examples/families/gpt2.mlir -o /dev/null | FileCheck %s --check-prefix=GPT2
// RUN: nnx-opt --nnx-support=family=llama %nnx_src/examples/families/llama.mlir -o /dev/null | FileCheck %s --check-prefix=LLAMA
// RUN: nnx-opt --nnx-support=family=gemma2 %nnx_src/examples/families/gemma2.mlir -o /dev/null | FileCheck %s --check-prefix=GEMMA2
// RUN: nnx-opt --nnx-support=family=bloom %nnx_src/examples/families/bloom.mlir -o /dev/null | FileCheck %s --check-prefix=BLOOM
// RUN: nnx-opt --nnx-support=family=cohere %nnx_src/examples/families/cohere.mlir -o /dev/null | FileCheck %s --check-prefix=COHERE
// RUN: nnx-opt --nnx-support=family=falcon %nnx_src/examples/families/falcon.mlir -o /dev/null | FileCheck %s --check-prefix=FALCON
//
// A family given as a file path, and the families directory given by
// option; the pass reads no environment variable (drivers pass
// $NNX_FAMILIES_DIR on as families-dir), so a wrong one changes nothing:
// RUN: nnx-opt --nnx-support=family=%nnx_src/families/llama.json %nnx_src/examples/families/llama.mlir -o /dev/null | FileCheck %s --check-prefix=LLAMA
// RUN: nnx-opt --nnx-support="family=llama families-dir=%nnx_src/families" %nnx_src/examples/families/llama.mlir -o /dev/null | FileCheck %s --check-prefix=LLAMA
// RUN: env NNX_FAMILIES_DIR=%t.nowhere nnx-opt --nnx-support=family=llama %nnx_src/examples/families/llama.mlir -o /dev/null | FileCheck %s --check-prefix=LLAMA
//
// Config-decided availability: GPT-2's reorder_and_upcast_attn, sdpa.
// RUN: sed 's/reorder_and_upcast_attn = false/reorder_and_upcast_attn = true/' %nnx_src/examples/families/gpt2.mlir | nnx-opt --nnx-support=family=gpt2 -o /dev/null | FileCheck %s --check-prefix=UPCAST
// RUN: sed 's/attn_implementation = "eager"/attn_implementation = "sdpa"/' %nnx_src/examples/families/llama.mlir | nnx-opt --nnx-support=family=llama -o /dev/null | FileCheck %s --check-prefix=SDPA
//
// The report changes nothing in the IR.
// RUN: nnx-opt --nnx-support=family=gpt2 %nnx_src/examples/families/gpt2.mlir -o %t.mlir
// RUN: nnx-opt %nnx_src/examples/families/gpt2.mlir | diff - %t.mlir

// GPT2-LABEL: model @gpt2 family gpt2
// GPT2:      embeddings available output 0 of module 'transformer.wte' (nnx.embedding)
// GPT2:      final_norm_output available output 0 of module 'transformer.ln_f' (nnx.layer_norm)
// GPT2:      input_ids available input 0 of module '<root>' (nnx.module)
// GPT2:      logits available output 0 of module '<root>' (nnx.module)
// GPT2:      layers.0.attention_mask available input 3 of 'source.attention_interface_0' (nnx.call) in the forward of 'transformer.h.0.attn'
// GPT2:      layers.0.attention_output available output 0 of module 'transformer.h.0.attn' (nnx.module)
// GPT2:      layers.0.attention_probabilities available output 0 of 'source.softmax_0' (nnx.fn.softmax) in the forward of 'transformer.h.0.attn.attention_interface'
// GPT2:      layers.0.attention_queries available input 0 of 'source.attention_interface_0' (nnx.call) in the forward of 'transformer.h.0.attn'
// GPT2:      layers.0.attention_scores available input 0 of 'source.softmax_0' (nnx.fn.softmax) in the forward of 'transformer.h.0.attn.attention_interface'
// GPT2:      layers.0.layer_input available input 0 of module 'transformer.h.0' (nnx.module)
// GPT2:      layers.0.layer_mid available input 0 of module 'transformer.h.0.ln_2' (nnx.layer_norm)
// GPT2:      layers.0.layer_output available output 0 of module 'transformer.h.0' (nnx.module)
// GPT2:      layers.0.mlp_norm_output available output 0 of module 'transformer.h.0.ln_2' (nnx.layer_norm)
// GPT2:      layers.0.mlp_output available output 0 of module 'transformer.h.0.mlp' (nnx.sequential)
// GPT2:      layers.1.attention_keys available input 1 of 'source.attention_interface_0' (nnx.call) in the forward of 'transformer.h.1.attn'
// GPT2:      layers.1.mlp_output available output 0 of module 'transformer.h.1.mlp' (nnx.sequential)
// GPT2-NOT:  layers.2

// LLAMA-LABEL: model @llama family llama
// LLAMA:      embeddings available output 0 of module 'model.embed_tokens' (nnx.embedding)
// LLAMA:      final_norm_output available output 0 of module 'model.norm' (nnx.module)
// LLAMA:      layers.0.attention_output available output 0 of module 'model.layers.0.self_attn' (nnx.module)
// LLAMA:      layers.0.layer_mid available input 0 of module 'model.layers.0.post_attention_layernorm' (nnx.module)
// LLAMA:      layers.0.mlp_output available output 0 of module 'model.layers.0.mlp' (nnx.module)
// LLAMA:      layers.1.layer_output available output 0 of module 'model.layers.1' (nnx.module)

// GEMMA2-LABEL: model @gemma2 family gemma2
// GEMMA2:      layers.0.attention_output available output 0 of module 'model.layers.0.post_attention_layernorm' (nnx.module)
// GEMMA2:      layers.0.layer_mid available input 0 of module 'model.layers.0.pre_feedforward_layernorm' (nnx.module)
// GEMMA2:      layers.0.mlp_norm_output available output 0 of module 'model.layers.0.pre_feedforward_layernorm' (nnx.module)
// GEMMA2:      layers.0.mlp_output available output 0 of module 'model.layers.0.post_feedforward_layernorm' (nnx.module)

// BLOOM-LABEL: model @bloom family bloom
// BLOOM:      embeddings available output 0 of module 'transformer.word_embeddings' (nnx.embedding)
// BLOOM:      layers.0.attention_output available input 0 of 'source.dropout_add_0' (nnx.call) in the forward of 'transformer.h.0.self_attention'
// BLOOM:      layers.0.layer_mid available input 0 of module 'transformer.h.0.post_attention_layernorm' (nnx.layer_norm)
// BLOOM:      layers.0.mlp_output available input 0 of 'source.dropout_add_0' (nnx.call) in the forward of 'transformer.h.0.mlp'

// COHERE-LABEL: model @cohere family cohere
// COHERE:      layers.0.attention_output available output 0 of module 'model.layers.0.self_attn' (nnx.module)
// COHERE:      layers.0.layer_mid unavailable the block is parallel: the attention and the MLP both read the layer input, so there is no stream between them
// COHERE:      layers.0.mlp_norm_output available input 0 of module 'model.layers.0.mlp' (nnx.module)
// COHERE:      layers.1.layer_mid unavailable the block is parallel

// FALCON-LABEL: model @falcon family falcon
// FALCON:      layers.0.attention_output available output 0 of module 'transformer.h.0.self_attention' (nnx.module)
// FALCON:      layers.0.layer_mid unavailable the block is parallel
// FALCON:      layers.0.mlp_output available output 0 of module 'transformer.h.0.mlp' (nnx.module) (a copy)

// UPCAST-LABEL: model @gpt2 family gpt2
// UPCAST:      layers.0.attention_mask unavailable this checkpoint sets reorder_and_upcast_attn, which takes GPT-2's own upcast attention path
// UPCAST:      layers.0.attention_output available
// UPCAST:      layers.0.attention_probabilities unavailable this checkpoint sets reorder_and_upcast_attn
// UPCAST:      layers.0.attention_scores unavailable this checkpoint sets reorder_and_upcast_attn

// SDPA-LABEL: model @llama family llama
// SDPA:      layers.0.attention_probabilities unavailable needs_eager: this model runs sdpa
// SDPA:      layers.0.layer_mid available

// The seed's example: on GPT-2's attention, "../post_attention_layernorm.output"
// names nothing (post_attention_layernorm is a rename, and renames do not
// resolve above the host), while "../ln_2.output" works.
// RUN: nnx-opt --nnx-support=family=%S/Inputs/gpt2-sandwich.json %nnx_src/examples/families/gpt2.mlir -o /dev/null | FileCheck %s --check-prefix=PARENT
// PARENT-LABEL: model @gpt2 family gpt2-sandwich
// PARENT:       layers.0.attention_output error 'layers.0.attention_output' (family 'gpt2-sandwich', path '../post_attention_layernorm.output' on 'transformer.h.0.attn'): segment '../post_attention_layernorm' names no module: 'transformer.h.0' has no child 'post_attention_layernorm' (above the host, paths use native names)
// PARENT:       layers.0.mlp_output available output 0 of module 'transformer.h.0.ln_2' (nnx.layer_norm)
