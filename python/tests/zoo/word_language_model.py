"""pytorch/examples' word_language_model (model.py), written in its authors'
style: an embedding, a recurrent net (or a transformer encoder) and a
decoder to the vocabulary, log-softmax over it. Sized as its main.py runs
it on Wikitext-2 (33278 tokens, --emsize 200 --nhid 200 --nlayers 2
--nhead 2 --bptt 35); inputs are (sequence, batch), the batch dynamic."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import Case, calibrate


class RNNModel(nn.Module):
    """Embedding -> dropout -> multi-layer RNN (LSTM, GRU or Elman) ->
    dropout -> Linear to the vocabulary, log-softmax over it."""

    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super(RNNModel, self).__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        if rnn_type == 'LSTM':
            self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        elif rnn_type == 'GRU':
            self.rnn = nn.GRU(ninp, nhid, nlayers, dropout=dropout)
        elif rnn_type in ('RNN_TANH', 'RNN_RELU'):
            self.rnn = nn.RNN(ninp, nhid, nlayers, dropout=dropout,
                              nonlinearity=rnn_type[4:].lower())
        else:
            raise ValueError("rnn_type: one of 'LSTM', 'GRU', 'RNN_TANH', 'RNN_RELU'")
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            # One matrix for the input and the output embedding
            # (Press & Wolf 2016, Inan et al. 2016): sizes must agree.
            if nhid != ninp:
                raise ValueError('tie_weights needs nhid == emsize')
            self.decoder.weight = self.encoder.weight
        self.init_weights()
        self.rnn_type = rnn_type
        self.nhid = nhid
        self.nlayers = nlayers

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        decoded = self.decoder(self.drop(output))
        # (seq * batch, ntoken) rows, as the loss wants them.
        decoded = decoded.view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        shape = (self.nlayers, bsz, self.nhid)
        if self.rnn_type == 'LSTM':
            return (weight.new_zeros(shape), weight.new_zeros(shape))
        return weight.new_zeros(shape)


class PositionalEncoding(nn.Module):
    """Adds sin(pos / 10000^(2i/d)) to the even and cos(...) to the odd
    features of each position; x is (sequence, batch, d_model)."""

    def __init__(self, d_model, dropout=0.1, max_len=5000):
        super(PositionalEncoding, self).__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(max_len, dtype=torch.float).unsqueeze(1)
        freq = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(position * freq)
        pe[:, 1::2] = torch.cos(position * freq)
        # (max_len, 1, d_model): broadcast over the batch.
        self.register_buffer('pe', pe.unsqueeze(1))

    def forward(self, x):
        return self.dropout(x + self.pe[:x.size(0), :])


class TransformerModel(nn.Transformer):
    """Embedding -> positional encoding -> nn.Transformer's encoder (causal
    mask) -> Linear to the vocabulary, log-softmax over it."""

    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
        super(TransformerModel, self).__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid,
                                               num_encoder_layers=nlayers)
        self.model_type = 'Transformer'
        self.src_mask = None
        self.pos_encoder = PositionalEncoding(ninp, dropout)
        self.input_emb = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)
        self.init_weights()

    def _generate_square_subsequent_mask(self, sz):
        # 0 on and below the diagonal, -inf above it.
        allowed = torch.tril(torch.ones(sz, sz)) == 1
        return torch.zeros(sz, sz).masked_fill(~allowed, float('-inf'))

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.input_emb.weight, -initrange, initrange)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)

    def forward(self, src, has_mask=True):
        if not has_mask:
            self.src_mask = None
        elif self.src_mask is None or self.src_mask.size(0) != len(src):
            self.src_mask = self._generate_square_subsequent_mask(len(src)).to(src.device)
        src = self.pos_encoder(self.input_emb(src) * math.sqrt(self.ninp))
        output = self.decoder(self.encoder(src, mask=self.src_mask))
        return F.log_softmax(output, dim=-1)


# main.py's defaults on Wikitext-2.
NTOKENS = 33278
EMSIZE, NHID, NLAYERS, NHEAD, DROPOUT, BPTT = 200, 200, 2, 2, 0.2, 35


def _tokens(batch, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, NTOKENS, (BPTT, batch), generator=g, dtype=torch.int64)


def _hidden(batch, seed):
    g = torch.Generator().manual_seed(seed + 1)
    return torch.randn(NLAYERS, batch, NHID, generator=g) * 0.5


def build_transformer(seed=0):
    torch.manual_seed(seed)
    model = TransformerModel(NTOKENS, EMSIZE, NHEAD, NHID, NLAYERS, DROPOUT)
    return calibrate(model, example_transformer)


def example_transformer(batch, seed=0):
    return (_tokens(batch, seed),)


def build_lstm(seed=0):
    torch.manual_seed(seed)
    model = RNNModel('LSTM', NTOKENS, EMSIZE, NHID, NLAYERS, DROPOUT)
    return calibrate(model, example_lstm)


def example_lstm(batch, seed=0):
    # A hidden state carried over from the previous bptt chunk.
    return (_tokens(batch, seed), (_hidden(batch, seed), _hidden(batch, seed + 7)))


HIDDEN = (NLAYERS, None, NHID)

CASES = [
    Case("word_language_model_transformer", build_transformer,
         [((BPTT, None), torch.int64)], example_transformer,
         "word_language_model"),
    Case("word_language_model_lstm", build_lstm,
         [((BPTT, None), torch.int64), (HIDDEN, HIDDEN)], example_lstm,
         "word_language_model"),
]
