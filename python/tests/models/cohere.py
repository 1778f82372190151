"""Cohere (CohereForCausalLM): model.{embed_tokens, layers.N, norm}, lm_head.

Block `model.layers.N`: input_layernorm (LayerNorm without bias), self_attn
(q_proj, k_proj, v_proj, o_proj, rotary_emb), mlp (gate_proj, up_proj,
down_proj, act_fn). Parallel: `x + attn(n) + mlp(n)` with n the one normed
input. Interleaved rotary (pairs (2i, 2i+1)), grouped-query attention, SwiGLU
MLP, no biases, the logits multiplied by `logit_scale`.
"""

from dataclasses import dataclass

import torch
from torch import nn

from .common import attention_interface, init_weights, layer_norm, repeat_kv


@dataclass
class CohereConfig:
    vocab_size: int = 32
    hidden_size: int = 32
    intermediate_size: int = 64
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    num_key_value_heads: int = 2
    max_position_embeddings: int = 16
    layer_norm_eps: float = 1e-5
    rope_theta: float = 10000.0
    logit_scale: float = 0.0625
    attention_dropout: float = 0.0
    attn_implementation: str = "eager"


def small_config():
    return CohereConfig(logit_scale=0.5)


class CohereRotaryEmbedding(nn.Module):
    """cos, sin (seq, head_dim), each frequency repeated for its pair of dims."""

    def __init__(self, dim, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, x):
        t = x.shape[1]
        position_ids = torch.arange(t, device=x.device).float()
        freqs = position_ids[:, None] * self.inv_freq[None, :]
        # torch.repeat_interleave(freqs, 2, dim=-1)
        emb = torch.cat((freqs[:, :, None], freqs[:, :, None]), dim=-1).reshape(t, -1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)


def rotate_half(x):
    """Interleaved: each pair (x[2i], x[2i+1]) becomes (-x[2i+1], x[2i])."""
    b, h, t, d = x.shape
    pairs = x.view(b, h, t, d // 2, 2)
    x1 = pairs[..., 0]
    x2 = pairs[..., 1]
    rot_x = torch.cat((-x2[..., None], x1[..., None]), dim=-1)
    return rot_x.reshape(b, h, t, d)


def apply_rotary_pos_emb(q, k, cos, sin):
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


class CohereAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.hidden_size = config.hidden_size
        self.num_heads = config.num_attention_heads
        self.head_dim = config.hidden_size // config.num_attention_heads
        self.num_key_value_heads = config.num_key_value_heads
        self.num_key_value_groups = self.num_heads // self.num_key_value_heads
        self.scaling = self.head_dim**-0.5

        self.q_proj = nn.Linear(self.hidden_size, self.num_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(self.hidden_size, self.num_key_value_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(self.hidden_size, self.num_key_value_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(self.num_heads * self.head_dim, self.hidden_size, bias=False)
        self.rotary_emb = CohereRotaryEmbedding(self.head_dim, base=config.rope_theta)

    def forward(self, hidden_states):
        bsz, q_len, _ = hidden_states.shape

        query_states = self.q_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim)
        key_states = self.k_proj(hidden_states).view(bsz, q_len, self.num_key_value_heads, self.head_dim)
        value_states = self.v_proj(hidden_states).view(bsz, q_len, self.num_key_value_heads, self.head_dim)
        query_states = query_states.transpose(1, 2)
        key_states = key_states.transpose(1, 2)
        value_states = value_states.transpose(1, 2)

        cos, sin = self.rotary_emb(hidden_states)
        query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)

        key_states = repeat_kv(key_states, self.num_key_value_groups)
        value_states = repeat_kv(value_states, self.num_key_value_groups)

        causal = torch.triu(torch.ones(q_len, q_len, dtype=torch.bool, device=hidden_states.device), diagonal=1)
        causal_mask = torch.zeros(q_len, q_len, dtype=hidden_states.dtype, device=hidden_states.device)
        causal_mask = causal_mask.masked_fill(causal, float("-inf"))

        attn_output, attn_weights = attention_interface(
            query_states, key_states, value_states, attention_mask=causal_mask, scaling=self.scaling)

        attn_output = attn_output.reshape(bsz, q_len, self.hidden_size)
        attn_output = self.o_proj(attn_output)
        return attn_output, attn_weights


class CohereMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.gate_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.up_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.down_proj = nn.Linear(config.intermediate_size, config.hidden_size, bias=False)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class CohereDecoderLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.input_layernorm = layer_norm(config.hidden_size, config.layer_norm_eps, bias=False)
        self.self_attn = CohereAttention(config)
        self.mlp = CohereMLP(config)

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states_attention, self_attn_weights = self.self_attn(hidden_states)
        hidden_states_mlp = self.mlp(hidden_states)
        hidden_states = residual + hidden_states_attention + hidden_states_mlp
        return hidden_states


class CohereModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList([CohereDecoderLayer(config) for _ in range(config.num_hidden_layers)])
        self.norm = layer_norm(config.hidden_size, config.layer_norm_eps, bias=False)

    def forward(self, input_ids):
        hidden_states = self.embed_tokens(input_ids)
        for decoder_layer in self.layers:
            hidden_states = decoder_layer(hidden_states)
        hidden_states = self.norm(hidden_states)
        return hidden_states


class CohereForCausalLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.model = CohereModel(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.logit_scale = config.logit_scale

    def forward(self, input_ids):
        hidden_states = self.model(input_ids)
        logits = self.lm_head(hidden_states)
        logits = logits * self.logit_scale
        return logits


def build(config, seed):
    return init_weights(CohereForCausalLM(config), seed).eval()
