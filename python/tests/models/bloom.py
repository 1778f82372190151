"""BLOOM (BloomForCausalLM): transformer.{word_embeddings,
word_embeddings_layernorm, h.N, ln_f}, lm_head.

Block `transformer.h.N`: input_layernorm, self_attention (fused
query_key_value, dense, attention_dropout; the alibi slopes as a buffer),
post_attention_layernorm, mlp (dense_h_to_4h, gelu_impl, dense_4h_to_h).
The attention and the MLP take the residual as their second argument and add
it inside, through the module-level `dropout_add`. Alibi: each head's slope
times the key position, added to the causal mask.
"""

import math
from dataclasses import dataclass

import torch
from torch import nn

from .common import attention_interface, dropout_add, init_weights


@dataclass
class BloomConfig:
    vocab_size: int = 32
    hidden_size: int = 32
    n_layer: int = 2
    n_head: int = 4
    layer_norm_epsilon: float = 1e-5
    hidden_dropout: float = 0.0
    attention_dropout: float = 0.0
    attn_implementation: str = "eager"


def small_config():
    return BloomConfig()


def build_alibi_slopes(num_heads):
    """The per-head alibi slopes (num_heads,), as HF's build_alibi_tensor."""
    closest_power_of_2 = 2 ** math.floor(math.log2(num_heads))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest_power_of_2) - 3))), dtype=torch.float32)
    powers = torch.arange(1, 1 + closest_power_of_2, dtype=torch.int32)
    slopes = torch.pow(base, powers)
    if closest_power_of_2 != num_heads:
        extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest_power_of_2) - 3))), dtype=torch.float32)
        num_remaining_heads = min(closest_power_of_2, num_heads - closest_power_of_2)
        extra_powers = torch.arange(1, 1 + 2 * num_remaining_heads, 2, dtype=torch.int32)
        slopes = torch.cat([slopes, torch.pow(extra_base, extra_powers)], dim=0)
    return slopes


class BloomAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.hidden_size = config.hidden_size
        self.num_heads = config.n_head
        self.head_dim = self.hidden_size // self.num_heads
        self.inv_norm_factor = 1.0 / math.sqrt(self.head_dim)
        self.hidden_dropout = config.hidden_dropout

        self.query_key_value = nn.Linear(self.hidden_size, 3 * self.hidden_size, bias=True)
        self.dense = nn.Linear(self.hidden_size, self.hidden_size)
        # Kept for the checkpoint layout; the eager path runs dropout=0.0 in eval.
        self.attention_dropout = nn.Dropout(config.attention_dropout)
        self.register_buffer("slopes", build_alibi_slopes(self.num_heads), persistent=False)

    def _reshape(self, fused_qkv):
        """(batch, seq, 3 * hidden) -> query, key, value (batch, heads, seq, head_dim)."""
        batch_size, seq_length, three_times_hidden_size = fused_qkv.shape
        fused_qkv = fused_qkv.view(batch_size, seq_length, self.num_heads, 3, self.head_dim)
        query_layer = fused_qkv[..., 0, :].transpose(1, 2)
        key_layer = fused_qkv[..., 1, :].transpose(1, 2)
        value_layer = fused_qkv[..., 2, :].transpose(1, 2)
        return query_layer, key_layer, value_layer

    def forward(self, hidden_states, residual):
        batch_size, q_length, _ = hidden_states.shape
        fused_qkv = self.query_key_value(hidden_states)
        query_layer, key_layer, value_layer = self._reshape(fused_qkv)

        # alibi (heads, 1, seq): slope * key position; plus the causal mask.
        positions = torch.arange(q_length, device=hidden_states.device).to(hidden_states.dtype)
        alibi = self.slopes[:, None, None] * positions[None, None, :]
        causal = torch.triu(torch.ones(q_length, q_length, dtype=torch.bool, device=hidden_states.device), diagonal=1)
        causal_mask = torch.zeros(q_length, q_length, dtype=hidden_states.dtype, device=hidden_states.device)
        causal_mask = causal_mask.masked_fill(causal, float("-inf"))
        attention_mask = alibi + causal_mask

        context_layer, attention_probs = attention_interface(
            query_layer, key_layer, value_layer, attention_mask=attention_mask, scaling=self.inv_norm_factor)

        context_layer = context_layer.reshape(batch_size, q_length, self.hidden_size)
        output_tensor = self.dense(context_layer)
        output_tensor = dropout_add(output_tensor, residual, self.hidden_dropout, self.training)
        return output_tensor, attention_probs


class BloomMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        hidden_size = config.hidden_size
        self.dense_h_to_4h = nn.Linear(hidden_size, 4 * hidden_size)
        self.gelu_impl = nn.GELU(approximate="tanh")
        self.dense_4h_to_h = nn.Linear(4 * hidden_size, hidden_size)
        self.hidden_dropout = config.hidden_dropout

    def forward(self, hidden_states, residual):
        hidden_states = self.gelu_impl(self.dense_h_to_4h(hidden_states))
        intermediate_output = self.dense_4h_to_h(hidden_states)
        output = dropout_add(intermediate_output, residual, self.hidden_dropout, self.training)
        return output


class BloomBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.input_layernorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_epsilon)
        self.self_attention = BloomAttention(config)
        self.post_attention_layernorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_epsilon)
        self.mlp = BloomMLP(config)

    def forward(self, hidden_states):
        layernorm_output = self.input_layernorm(hidden_states)
        residual = hidden_states

        attention_output, attention_probs = self.self_attention(layernorm_output, residual)

        layernorm_output = self.post_attention_layernorm(attention_output)
        residual = attention_output

        output = self.mlp(layernorm_output, residual)
        return output


class BloomModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size)
        self.word_embeddings_layernorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_epsilon)
        self.h = nn.ModuleList([BloomBlock(config) for _ in range(config.n_layer)])
        self.ln_f = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_epsilon)

    def forward(self, input_ids):
        inputs_embeds = self.word_embeddings(input_ids)
        hidden_states = self.word_embeddings_layernorm(inputs_embeds)
        for block in self.h:
            hidden_states = block(hidden_states)
        hidden_states = self.ln_f(hidden_states)
        return hidden_states


class BloomForCausalLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = BloomModel(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)

    def forward(self, input_ids):
        hidden_states = self.transformer(input_ids)
        logits = self.lm_head(hidden_states)
        return logits


def build(config, seed):
    return init_weights(BloomForCausalLM(config), seed).eval()
