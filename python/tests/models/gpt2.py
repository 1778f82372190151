"""GPT-2 (GPT2LMHeadModel): transformer.{wte, wpe, drop, h.N, ln_f}, lm_head.

Block `transformer.h.N`: ln_1, attn (fused c_attn, c_proj, attn_dropout,
resid_dropout), ln_2, mlp (a named nn.Sequential: c_fc, act, c_proj, dropout).
Pre-norm, learned positions, GELU (tanh).
"""

import collections
from dataclasses import dataclass

import torch
from torch import nn

from .common import attention_interface, init_weights


@dataclass
class GPT2Config:
    vocab_size: int = 32
    n_positions: int = 16
    n_embd: int = 32
    n_layer: int = 2
    n_head: int = 4
    n_inner: int = None  # 4 * n_embd
    layer_norm_epsilon: float = 1e-5
    embd_pdrop: float = 0.1
    attn_pdrop: float = 0.1
    resid_pdrop: float = 0.1
    attn_implementation: str = "eager"
    reorder_and_upcast_attn: bool = False


def small_config():
    return GPT2Config()


def gpt2_small_config():
    """The 124M checkpoint's shape (openai-community/gpt2)."""
    return GPT2Config(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12)


class GPT2Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embed_dim = config.n_embd
        self.num_heads = config.n_head
        self.head_dim = self.embed_dim // self.num_heads
        self.split_size = self.embed_dim
        self.scaling = self.head_dim**-0.5

        self.c_attn = nn.Linear(self.embed_dim, 3 * self.embed_dim)
        self.c_proj = nn.Linear(self.embed_dim, self.embed_dim)
        # Kept for the checkpoint layout; the eager path runs dropout=0.0 in eval.
        self.attn_dropout = nn.Dropout(config.attn_pdrop)
        self.resid_dropout = nn.Dropout(config.resid_pdrop)

    def forward(self, hidden_states):
        b, t, d = hidden_states.shape
        query, key, value = self.c_attn(hidden_states).split(self.split_size, dim=2)
        query = query.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        key = key.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        value = value.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)

        causal = torch.tril(torch.ones(t, t, device=hidden_states.device))
        mask = torch.zeros(t, t, device=hidden_states.device).masked_fill(causal == 0, float("-inf"))

        attn_output, attn_weights = attention_interface(query, key, value, attention_mask=mask, scaling=self.scaling)

        attn_output = attn_output.reshape(b, t, d)
        attn_output = self.c_proj(attn_output)
        attn_output = self.resid_dropout(attn_output)
        return attn_output, attn_weights


class GPT2Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        hidden_size = config.n_embd
        inner_dim = config.n_inner if config.n_inner is not None else 4 * hidden_size
        self.ln_1 = nn.LayerNorm(hidden_size, eps=config.layer_norm_epsilon)
        self.attn = GPT2Attention(config)
        self.ln_2 = nn.LayerNorm(hidden_size, eps=config.layer_norm_epsilon)
        self.mlp = nn.Sequential(collections.OrderedDict([
            ("c_fc", nn.Linear(hidden_size, inner_dim)),
            ("act", nn.GELU(approximate="tanh")),
            ("c_proj", nn.Linear(inner_dim, hidden_size)),
            ("dropout", nn.Dropout(config.resid_pdrop)),
        ]))

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.ln_1(hidden_states)
        attn_output, attn_weights = self.attn(hidden_states)
        hidden_states = attn_output + residual

        residual = hidden_states
        hidden_states = self.ln_2(hidden_states)
        feed_forward_hidden_states = self.mlp(hidden_states)
        hidden_states = residual + feed_forward_hidden_states
        return hidden_states


class GPT2Model(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.wpe = nn.Embedding(config.n_positions, config.n_embd)
        self.drop = nn.Dropout(config.embd_pdrop)
        self.h = nn.ModuleList([GPT2Block(config) for _ in range(config.n_layer)])
        self.ln_f = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon)

    def forward(self, input_ids):
        b, t = input_ids.shape
        position_ids = torch.arange(t, device=input_ids.device)
        inputs_embeds = self.wte(input_ids)
        position_embeds = self.wpe(position_ids)
        hidden_states = inputs_embeds + position_embeds
        hidden_states = self.drop(hidden_states)
        for block in self.h:
            hidden_states = block(hidden_states)
        hidden_states = self.ln_f(hidden_states)
        return hidden_states


class GPT2LMHeadModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = GPT2Model(config)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)

    def forward(self, input_ids):
        hidden_states = self.transformer(input_ids)
        logits = self.lm_head(hidden_states)
        return logits


def build(config, seed):
    return init_weights(GPT2LMHeadModel(config), seed).eval()
