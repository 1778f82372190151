"""Falcon (FalconForCausalLM): transformer.{word_embeddings, h.N, ln_f}, lm_head.

Block `transformer.h.N` (Falcon-7B's layout: parallel_attn, one norm):
input_layernorm, self_attention (fused query_key_value with multi-query
keys/values, dense, attention_dropout, rotary_emb), mlp (dense_h_to_4h, act,
dense_4h_to_h). Parallel: the attention's output is added into the MLP's
output in place (`mlp_output += attention_output`), then the residual through
the module-level `dropout_add`. Rotary positions, exact GELU.
"""

import math
from dataclasses import dataclass

import torch
from torch import nn

from .common import apply_rotary_pos_emb, attention_interface, dropout_add, init_weights, repeat_kv


@dataclass
class FalconConfig:
    vocab_size: int = 32
    hidden_size: int = 32
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    num_kv_heads: int = 1  # multi-query, as Falcon-7B
    max_position_embeddings: int = 16
    layer_norm_epsilon: float = 1e-5
    rope_theta: float = 10000.0
    bias: bool = False
    hidden_dropout: float = 0.0
    attention_dropout: float = 0.0
    attn_implementation: str = "eager"


def small_config():
    return FalconConfig()


class FalconRotaryEmbedding(nn.Module):
    def __init__(self, dim, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, x):
        t = x.shape[1]
        position_ids = torch.arange(t, device=x.device).float()
        freqs = position_ids[:, None] * self.inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)


class FalconAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.hidden_size = config.hidden_size
        self.num_heads = config.num_attention_heads
        self.head_dim = self.hidden_size // self.num_heads
        self.num_kv_heads = config.num_kv_heads
        self.num_key_value_groups = self.num_heads // self.num_kv_heads
        self.inv_norm_factor = 1.0 / math.sqrt(self.head_dim)

        qkv_out_dim = (self.num_heads + 2 * self.num_kv_heads) * self.head_dim
        self.query_key_value = nn.Linear(self.hidden_size, qkv_out_dim, bias=config.bias)
        self.dense = nn.Linear(self.hidden_size, self.hidden_size, bias=config.bias)
        # Kept for the checkpoint layout; the eager path runs dropout=0.0 in eval.
        self.attention_dropout = nn.Dropout(config.attention_dropout)
        self.rotary_emb = FalconRotaryEmbedding(self.head_dim, base=config.rope_theta)

    def _split_heads(self, fused_qkv):
        """(batch, seq, (heads + 2 kv_heads) * head_dim) -> query (batch, seq,
        heads, head_dim), key and value (batch, seq, kv_heads, head_dim)."""
        batch_size, seq_length, _ = fused_qkv.shape
        fused_qkv = fused_qkv.view(batch_size, seq_length, self.num_heads + 2 * self.num_kv_heads, self.head_dim)
        query = fused_qkv[:, :, : self.num_heads]
        key = fused_qkv[:, :, self.num_heads : self.num_heads + self.num_kv_heads]
        value = fused_qkv[:, :, self.num_heads + self.num_kv_heads :]
        return query, key, value

    def forward(self, hidden_states):
        batch_size, query_length, _ = hidden_states.shape
        fused_qkv = self.query_key_value(hidden_states)
        query_layer, key_layer, value_layer = self._split_heads(fused_qkv)

        query_layer = query_layer.transpose(1, 2)
        key_layer = key_layer.transpose(1, 2)
        value_layer = value_layer.transpose(1, 2)

        cos, sin = self.rotary_emb(hidden_states)
        query_layer, key_layer = apply_rotary_pos_emb(query_layer, key_layer, cos, sin)

        key_layer = repeat_kv(key_layer, self.num_key_value_groups)
        value_layer = repeat_kv(value_layer, self.num_key_value_groups)

        t = query_length
        causal = torch.triu(torch.ones(t, t, dtype=torch.bool, device=hidden_states.device), diagonal=1)
        causal_mask = torch.zeros(t, t, dtype=hidden_states.dtype, device=hidden_states.device)
        causal_mask = causal_mask.masked_fill(causal, float("-inf"))

        attn_output, attention_probs = attention_interface(
            query_layer, key_layer, value_layer, attention_mask=causal_mask, scaling=self.inv_norm_factor)

        attn_output = attn_output.reshape(batch_size, query_length, self.hidden_size)
        attn_output = self.dense(attn_output)
        return attn_output, attention_probs


class FalconMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        hidden_size = config.hidden_size
        self.dense_h_to_4h = nn.Linear(hidden_size, 4 * hidden_size, bias=config.bias)
        self.act = nn.GELU()
        self.dense_4h_to_h = nn.Linear(4 * hidden_size, hidden_size, bias=config.bias)

    def forward(self, x):
        x = self.act(self.dense_h_to_4h(x))
        x = self.dense_4h_to_h(x)
        return x


class FalconDecoderLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.input_layernorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_epsilon)
        self.self_attention = FalconAttention(config)
        self.mlp = FalconMLP(config)
        self.hidden_dropout = config.hidden_dropout

    def forward(self, hidden_states):
        residual = hidden_states
        attention_layernorm_out = self.input_layernorm(hidden_states)

        attn_outputs = self.self_attention(attention_layernorm_out)
        attention_output = attn_outputs[0]

        mlp_layernorm_out = attention_layernorm_out
        mlp_output = self.mlp(mlp_layernorm_out)
        mlp_output += attention_output

        output = dropout_add(mlp_output, residual, self.hidden_dropout, self.training)
        return output


class FalconModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size)
        self.h = nn.ModuleList([FalconDecoderLayer(config) for _ in range(config.num_hidden_layers)])
        self.ln_f = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_epsilon)

    def forward(self, input_ids):
        hidden_states = self.word_embeddings(input_ids)
        for block in self.h:
            hidden_states = block(hidden_states)
        hidden_states = self.ln_f(hidden_states)
        return hidden_states


class FalconForCausalLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = FalconModel(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)

    def forward(self, input_ids):
        hidden_states = self.transformer(input_ids)
        logits = self.lm_head(hidden_states)
        return logits


def build(config, seed):
    return init_weights(FalconForCausalLM(config), seed).eval()
