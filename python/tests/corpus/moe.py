"""A small decoder with a top-2 mixture-of-experts MLP, in the style of a
Mixtral reference written for exportability (every expert evaluated densely,
stacked, and the chosen ones gathered): a softmax router, ``torch.topk``,
renormalised weights, ``torch.gather`` of the experts' outputs, SwiGLU
experts (w1/w2/w3), RMSNorm, rotary by rotate_half, a boolean ``tril``
mask, and ``(logits, router_logits)`` with the router logits a tuple."""

import math
from dataclasses import dataclass
from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from torch import nn

from . import randomize, token_ids


@dataclass
class MoeArgs:
    num_experts: int = 4
    num_experts_per_tok: int = 2


@dataclass
class ModelArgs:
    dim: int = 32
    n_layers: int = 2
    head_dim: int = 8
    hidden_dim: int = 48
    n_heads: int = 4
    n_kv_heads: int = 2
    norm_eps: float = 1e-5
    vocab_size: int = 100
    rope_theta: float = 1e6
    max_seq_len: int = 64
    moe: Optional[MoeArgs] = None

    def __post_init__(self):
        if self.moe is None:
            self.moe = MoeArgs()


Config = ModelArgs


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        output = self._norm(x.float()).type_as(x)
        return output * self.weight


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def precompute_rope(head_dim: int, end: int, theta: float):
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2).float() / head_dim))
    t = torch.arange(end).float()
    freqs = torch.einsum("i,j->ij", t, inv_freq)
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos(), emb.sin()


class Attention(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.args = args
        self.n_heads: int = args.n_heads
        self.head_dim: int = args.head_dim
        self.n_kv_heads: int = args.n_kv_heads
        self.repeats = self.n_heads // self.n_kv_heads
        self.scale = self.args.head_dim**-0.5

        self.wq = nn.Linear(args.dim, args.n_heads * args.head_dim, bias=False)
        self.wk = nn.Linear(args.dim, args.n_kv_heads * args.head_dim, bias=False)
        self.wv = nn.Linear(args.dim, args.n_kv_heads * args.head_dim, bias=False)
        self.wo = nn.Linear(args.n_heads * args.head_dim, args.dim, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        bsz, seqlen, _ = x.shape

        xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)
        xq = xq.view(bsz, seqlen, self.n_heads, self.head_dim).transpose(1, 2)
        xk = xk.view(bsz, seqlen, self.n_kv_heads, self.head_dim).transpose(1, 2)
        xv = xv.view(bsz, seqlen, self.n_kv_heads, self.head_dim).transpose(1, 2)

        xq = xq * cos + rotate_half(xq) * sin
        xk = xk * cos + rotate_half(xk) * sin

        if self.repeats > 1:
            xk = torch.repeat_interleave(xk, self.repeats, dim=1)
            xv = torch.repeat_interleave(xv, self.repeats, dim=1)

        scores = torch.matmul(xq, xk.transpose(-2, -1)) * self.scale
        causal = torch.ones(seqlen, seqlen, dtype=torch.bool, device=x.device).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        probs = F.softmax(scores, dim=-1)
        output = torch.matmul(probs, xv)
        output = output.transpose(1, 2).reshape(bsz, seqlen, self.n_heads * self.head_dim)
        return self.wo(output)


class FeedForward(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.w1 = nn.Linear(args.dim, args.hidden_dim, bias=False)
        self.w2 = nn.Linear(args.hidden_dim, args.dim, bias=False)
        self.w3 = nn.Linear(args.dim, args.hidden_dim, bias=False)

    def forward(self, x) -> torch.Tensor:
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class MoeLayer(nn.Module):
    """Top-k routing over `experts`. Every expert runs on every token (no
    data-dependent shapes, so the graph is static) and the outputs of the
    chosen ones are gathered and mixed by the renormalised router weights."""

    def __init__(self, experts, gate: nn.Module, moe_args: MoeArgs):
        super().__init__()
        assert len(experts) > 0
        self.experts = nn.ModuleList(experts)
        self.gate = gate
        self.args = moe_args

    def forward(self, inputs: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        batch_size, sequence_length, hidden_dim = inputs.shape
        inputs_squashed = inputs.view(-1, hidden_dim)
        router_logits = self.gate(inputs_squashed)  # (tokens, n_experts)

        routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
        routing_weights, selected_experts = torch.topk(routing_weights, self.args.num_experts_per_tok, dim=-1)
        routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
        routing_weights = routing_weights.to(inputs.dtype)

        # (tokens, n_experts, hidden)
        expert_outputs = torch.stack([expert(inputs_squashed) for expert in self.experts], dim=1)
        index = selected_experts.unsqueeze(-1).expand(-1, -1, hidden_dim)
        chosen = torch.gather(expert_outputs, 1, index)  # (tokens, k, hidden)
        results = (chosen * routing_weights.unsqueeze(-1)).sum(dim=1)

        return results.view(batch_size, sequence_length, hidden_dim), router_logits


class TransformerBlock(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.n_heads = args.n_heads
        self.dim = args.dim
        self.attention = Attention(args)
        self.feed_forward = MoeLayer(
            experts=[FeedForward(args=args) for _ in range(args.moe.num_experts)],
            gate=nn.Linear(args.dim, args.moe.num_experts, bias=False),
            moe_args=args.moe,
        )
        self.attention_norm = RMSNorm(args.dim, eps=args.norm_eps)
        self.ffn_norm = RMSNorm(args.dim, eps=args.norm_eps)
        self.args = args

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor):
        r = self.attention.forward(self.attention_norm(x), cos, sin)
        h = x + r
        r, router_logits = self.feed_forward.forward(self.ffn_norm(h))
        out = h + r
        return out, router_logits


class Transformer(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.args = args
        self.vocab_size = args.vocab_size
        self.n_layers = args.n_layers
        assert self.vocab_size > 0

        self.tok_embeddings = nn.Embedding(args.vocab_size, args.dim)
        self.layers = nn.ModuleList([TransformerBlock(args=args) for _ in range(args.n_layers)])
        self.norm = RMSNorm(args.dim, eps=args.norm_eps)
        self.output = nn.Linear(args.dim, args.vocab_size, bias=False)

        cos, sin = precompute_rope(args.head_dim, args.max_seq_len, args.rope_theta)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)

    def forward(self, input_ids: torch.Tensor):
        _, seqlen = input_ids.shape
        assert seqlen <= self.args.max_seq_len, f"sequence of {seqlen} > max_seq_len {self.args.max_seq_len}"
        h = self.tok_embeddings(input_ids)
        cos = self.rope_cos[:seqlen]
        sin = self.rope_sin[:seqlen]

        all_router_logits = ()
        for layer in self.layers:
            h, router_logits = layer(h, cos, sin)
            all_router_logits += (router_logits,)

        logits = self.output(self.norm(h)).float()
        return logits, all_router_logits


def build(seed=0):
    torch.manual_seed(seed)
    model = Transformer(ModelArgs())
    return randomize(model, seed).eval()


INPUTS = [((None, None), torch.int64)]
SHAPES = [(1, 5), (3, 9)]


def example(batch, seq, seed=0):
    return [token_ids(batch, seq, 100, seed)]
