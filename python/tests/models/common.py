"""Pieces every family shares: the eager attention function, the rotary and
grouped-query helpers, seeded initialization."""

import torch
from torch import nn


def attention_interface(query, key, value, attention_mask, scaling, dropout=0.0):
    """The eager attention of the Hugging Face modeling files.

    query, key, value: (batch, heads, seq, head_dim) (keys and values already
    repeated to the query heads). attention_mask: an additive float mask
    broadcasting to (batch, heads, seq, seq), 0 where a query sees a key and
    -inf where it does not, or None. Returns (output, probabilities):
    output (batch, seq, heads, head_dim), probabilities (batch, heads, seq, seq).
    """
    attn_weights = torch.matmul(query, key.transpose(2, 3)) * scaling
    if attention_mask is not None:
        attn_weights = attn_weights + attention_mask

    attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
    if dropout > 0.0:
        attn_weights = nn.functional.dropout(attn_weights, p=dropout, training=True)
    attn_output = torch.matmul(attn_weights, value)
    attn_output = attn_output.transpose(1, 2).contiguous()
    return attn_output, attn_weights


def rotate_half(x):
    """Rotates half the hidden dims of the input."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin):
    """q, k: (batch, heads, seq, head_dim); cos, sin: (seq, head_dim)."""
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def repeat_kv(hidden_states, n_rep):
    """(batch, kv_heads, seq, head_dim) -> (batch, kv_heads * n_rep, seq, head_dim),
    as torch.repeat_interleave(hidden_states, n_rep, dim=1)."""
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


def init_weights(model, seed, std=0.2, bias_std=0.1, norm_std=0.1):
    """Draws every parameter from `seed`, in `named_parameters` order:
    matrices (Linear, Embedding) N(0, std), biases N(0, bias_std), 1-D weights
    (norm scales) 1 + N(0, norm_std), so that no norm is the identity."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=gen, dtype=torch.float32).to(p.dtype)
            if name.endswith("bias"):
                p.copy_(noise * bias_std)
            elif p.dim() >= 2:
                p.copy_(noise * std)
            else:
                p.copy_(1.0 + noise * norm_std)
    return model


def layer_norm(hidden_size, eps, bias=True):
    """nn.LayerNorm, without a bias when `bias` is false (nn.LayerNorm's
    `bias=False` of torch >= 2.1: the `bias` parameter is None)."""
    try:
        return nn.LayerNorm(hidden_size, eps=eps, bias=bias)
    except TypeError:  # torch < 2.1
        norm = nn.LayerNorm(hidden_size, eps=eps)
        if not bias:
            norm.register_parameter("bias", None)
        return norm


def dropout_add(x, residual, prob, training):
    """BLOOM's and Falcon's residual add: dropout on `x`, then the residual."""
    return nn.functional.dropout(x, p=prob, training=training) + residual
