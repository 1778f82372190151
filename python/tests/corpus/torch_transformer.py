"""PyTorch's own transformer layers, each wrapped the way the PyTorch
tutorials wrap them (an embedding, a positional encoding, a head):

- ``encoder``: ``nn.TransformerEncoder`` of ``nn.TransformerEncoderLayer(...,
  batch_first=True)`` with a final norm, given a causal ``mask`` from
  ``nn.Transformer.generate_square_subsequent_mask`` and a boolean
  ``src_key_padding_mask`` made from a 0/1 padding input;
- ``decoder``: ``nn.TransformerDecoderLayer(..., batch_first=True,
  norm_first=True)`` over a target and a memory of another length, with a
  ``torch.triu`` ``-inf`` causal ``tgt_mask``;
- ``mha``: a bare ``nn.MultiheadAttention`` with batch_first False (inputs
  (T, B, E)), a boolean causal ``attn_mask``, and its head-averaged weights
  returned with the logits.
"""

import math
from dataclasses import dataclass

import torch
from torch import nn, Tensor

from . import Case, randomize, token_ids


@dataclass
class Config:
    ntoken: int = 100
    d_model: int = 32
    nhead: int = 4
    d_hid: int = 64
    nlayers: int = 2
    dropout: float = 0.1
    max_len: int = 64


class PositionalEncoding(nn.Module):

    def __init__(self, d_model: int, dropout: float = 0.1, max_len: int = 5000, batch_first: bool = True):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        self.batch_first = batch_first

        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = torch.sin(position * div_term)
        pe[:, 0, 1::2] = torch.cos(position * div_term)
        self.register_buffer('pe', pe)

    def forward(self, x: Tensor) -> Tensor:
        """
        Arguments:
            x: Tensor, shape ``[batch_size, seq_len, embedding_dim]`` (batch_first)
               or ``[seq_len, batch_size, embedding_dim]``
        """
        if self.batch_first:
            x = x + self.pe[:x.size(1)].transpose(0, 1)
        else:
            x = x + self.pe[:x.size(0)]
        return self.dropout(x)


class TransformerModel(nn.Module):

    def __init__(self, ntoken: int, d_model: int, nhead: int, d_hid: int,
                 nlayers: int, dropout: float = 0.5, max_len: int = 5000):
        super().__init__()
        self.model_type = 'Transformer'
        self.pos_encoder = PositionalEncoding(d_model, dropout, max_len)
        encoder_layers = nn.TransformerEncoderLayer(d_model, nhead, d_hid, dropout, activation="gelu",
                                                    batch_first=True)
        self.transformer_encoder = nn.TransformerEncoder(encoder_layers, nlayers, norm=nn.LayerNorm(d_model))
        self.embedding = nn.Embedding(ntoken, d_model)
        self.d_model = d_model
        self.linear = nn.Linear(d_model, ntoken)

        self.init_weights()

    def init_weights(self) -> None:
        initrange = 0.1
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.linear.bias.data.zero_()
        self.linear.weight.data.uniform_(-initrange, initrange)

    def forward(self, src: Tensor, padding_mask: Tensor) -> Tensor:
        """
        Arguments:
            src: Tensor, shape ``[batch_size, seq_len]``
            padding_mask: Tensor, shape ``[batch_size, seq_len]``, 1 for tokens, 0 for padding

        Returns:
            output Tensor of shape ``[batch_size, seq_len, ntoken]``
        """
        src = self.embedding(src) * math.sqrt(self.d_model)
        src = self.pos_encoder(src)
        src_mask = nn.Transformer.generate_square_subsequent_mask(src.size(1)).to(src.device)
        output = self.transformer_encoder(src, mask=src_mask, src_key_padding_mask=padding_mask == 0)
        output = self.linear(output)
        return output


class Seq2SeqDecoder(nn.Module):
    """A one-layer decoder over a memory of embedded source tokens."""

    def __init__(self, ntoken: int, d_model: int, nhead: int, d_hid: int, dropout: float = 0.1,
                 max_len: int = 5000):
        super().__init__()
        self.src_embedding = nn.Embedding(ntoken, d_model)
        self.tgt_embedding = nn.Embedding(ntoken, d_model)
        self.pos_encoder = PositionalEncoding(d_model, dropout, max_len)
        self.memory_proj = nn.Sequential(nn.Linear(d_model, d_model), nn.ReLU())
        self.decoder_layer = nn.TransformerDecoderLayer(d_model, nhead, d_hid, dropout, batch_first=True,
                                                        norm_first=True)
        self.norm = nn.LayerNorm(d_model)
        self.generator = nn.Linear(d_model, ntoken)
        self.d_model = d_model

    def forward(self, src: Tensor, tgt: Tensor) -> Tensor:
        memory = self.memory_proj(self.pos_encoder(self.src_embedding(src)))
        tgt_len = tgt.shape[1]
        tgt_mask = torch.triu(torch.full((tgt_len, tgt_len), float('-inf'), device=tgt.device), diagonal=1)
        x = self.pos_encoder(self.tgt_embedding(tgt) * math.sqrt(self.d_model))
        x = self.decoder_layer(x, memory, tgt_mask=tgt_mask)
        return self.generator(self.norm(x))


class AttentionLM(nn.Module):
    """Sequence-first self-attention, as nn.MultiheadAttention defaults to."""

    def __init__(self, ntoken: int, d_model: int, nhead: int, dropout: float = 0.0, max_len: int = 5000):
        super().__init__()
        self.embedding = nn.Embedding(ntoken, d_model)
        self.pos_encoder = PositionalEncoding(d_model, dropout, max_len, batch_first=False)
        self.attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout)
        self.ln = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, ntoken)

    def forward(self, tokens: Tensor):
        x = self.embedding(tokens.t())  # (T, B, E)
        x = self.pos_encoder(x)
        T = x.size(0)
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=1)
        attn_output, attn_weights = self.attn(x, x, x, attn_mask=causal)
        x = self.ln(x + attn_output)
        logits = self.head(x).transpose(0, 1)  # (B, T, ntoken)
        return logits, attn_weights


def build_encoder(seed=0):
    c = Config()
    torch.manual_seed(seed)
    model = TransformerModel(c.ntoken, c.d_model, c.nhead, c.d_hid, c.nlayers, c.dropout, c.max_len)
    return randomize(model, seed).eval()


def build_decoder(seed=0):
    c = Config()
    torch.manual_seed(seed)
    model = Seq2SeqDecoder(c.ntoken, c.d_model, c.nhead, c.d_hid, c.dropout, c.max_len)
    return randomize(model, seed).eval()


def build_mha(seed=0):
    c = Config()
    torch.manual_seed(seed)
    model = AttentionLM(c.ntoken, c.d_model, c.nhead, 0.0, c.max_len)
    return randomize(model, seed).eval()


def padding_mask(batch, seq):
    """1 for tokens, 0 for padding: row i ends in i padded positions."""
    mask = torch.ones(batch, seq, dtype=torch.int64)
    for i in range(batch):
        if i:
            mask[i, seq - min(i, seq - 1):] = 0
    return mask


def example_encoder(batch, seq, seed=0):
    return [token_ids(batch, seq, Config.ntoken, seed), padding_mask(batch, seq)]


def example_decoder(batch, seq, seed=0):
    # a source one token longer than the target
    return [token_ids(batch, seq + 1, Config.ntoken, seed),
            token_ids(batch, seq, Config.ntoken, seed + 1)]


def example_mha(batch, seq, seed=0):
    return [token_ids(batch, seq, Config.ntoken, seed)]


IDS = ((None, None), torch.int64)
# Source and target lengths differ: named, so the export keeps them apart.
SRC, TGT = (("batch", "src_len"), torch.int64), (("batch", "tgt_len"), torch.int64)
SHAPES = [(1, 5), (3, 9)]

CASES = [
    Case("torch_transformer.encoder", build_encoder, [IDS, IDS], example_encoder, SHAPES),
    Case("torch_transformer.decoder", build_decoder, [SRC, TGT], example_decoder, SHAPES),
    Case("torch_transformer.mha", build_mha, [IDS], example_mha, SHAPES),
]
