"""Recurrent layers (nn.LSTM, nn.GRU, nn.RNN, LSTMCell, GRUCell, RNNCell):
exported as nnx.lstm / gru / rnn / *_cell layer ops with batch and sequence
dynamic, compiled once (a loop over the run-time sequence length), run at
two sequence lengths and two batches against PyTorch (atol = rtol = 1e-5),
rebuilt by nnx.to_torch, and probed on their outputs."""

import json
import os
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import nnx  # noqa: E402
from nnx.torch_export import ExportError, Input, export  # noqa: E402
from nnx.torch_import import to_torch  # noqa: E402

TOL = dict(atol=1e-5, rtol=1e-5)
# (sequence, batch) pairs: two lengths, two batches, none the export's.
SHAPES = [(5, 3), (11, 1)]


def _flat(out):
    """The tensors (or arrays) of a nested output, in order."""
    if isinstance(out, (torch.Tensor, np.ndarray)):
        return [out]
    return [t for o in out for t in _flat(o)]


def _check(model, make_inputs, specs, shapes=SHAPES, probes=()):
    model.eval()
    compiled = nnx.compile(model, inputs=specs, probes=probes)
    for seq, batch in shapes:
        inputs = make_inputs(seq, batch)
        with torch.no_grad():
            want = _flat(model(*inputs))
        got, probed = compiled(*[i.numpy() for i in inputs])
        got = _flat(got)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w.numpy(), **TOL)
    return compiled, probed


def _randn(*shape, seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.randn(*shape, generator=g)


class Seq(nn.Module):
    """The layer called on x alone; returns everything it returns."""

    def __init__(self, layer):
        super().__init__()
        self.rnn = layer

    def forward(self, x):
        return self.rnn(x)


class WithLSTMState(nn.Module):
    def __init__(self, layer):
        super().__init__()
        self.rnn = layer

    def forward(self, x, h, c):
        out, (h_n, c_n) = self.rnn(x, (h, c))
        return out, h_n, c_n


class WithState(nn.Module):
    def __init__(self, layer):
        super().__init__()
        self.rnn = layer

    def forward(self, x, h):
        out, h_n = self.rnn(x, h)
        return out, h_n


def _seq_spec(layer):
    if layer.batch_first:
        return Input(("batch", "seq", layer.input_size))
    return Input(("seq", "batch", layer.input_size))


def _seq_input(layer, seq, batch):
    shape = (batch, seq) if layer.batch_first else (seq, batch)
    return _randn(*shape, layer.input_size)


def _state_spec(layer):
    stacked = layer.num_layers * (2 if layer.bidirectional else 1)
    return Input((stacked, "batch", layer.hidden_size))


def _state(layer, batch, seed):
    stacked = layer.num_layers * (2 if layer.bidirectional else 1)
    return _randn(stacked, batch, layer.hidden_size, seed=seed)


LSTMS = {
    "lstm": lambda: nn.LSTM(4, 6),
    "lstm_batch_first": lambda: nn.LSTM(4, 6, batch_first=True),
    "lstm_2_layers": lambda: nn.LSTM(4, 6, num_layers=2),
    "lstm_bidirectional": lambda: nn.LSTM(4, 5, bidirectional=True),
    "lstm_2_layers_bidir_batch_first": lambda: nn.LSTM(
        3, 5, num_layers=2, bidirectional=True, batch_first=True),
    "lstm_no_bias": lambda: nn.LSTM(4, 6, bias=False, num_layers=2),
}
GRUS = {
    "gru": lambda: nn.GRU(4, 6),
    "gru_2_layers_bidir": lambda: nn.GRU(4, 5, num_layers=2,
                                         bidirectional=True),
    "gru_batch_first_no_bias": lambda: nn.GRU(4, 6, batch_first=True,
                                              bias=False),
    "rnn_tanh": lambda: nn.RNN(4, 6),
    "rnn_relu_2_layers": lambda: nn.RNN(4, 6, num_layers=2,
                                        nonlinearity="relu"),
    "rnn_relu_bidir_batch_first": lambda: nn.RNN(
        4, 5, nonlinearity="relu", bidirectional=True, batch_first=True),
}


@pytest.mark.parametrize("name", sorted(LSTMS) + sorted(GRUS))
def test_sequence_alone(name):
    torch.manual_seed(0)
    layer = (LSTMS.get(name) or GRUS.get(name))()
    _check(Seq(layer), lambda s, b: [_seq_input(layer, s, b)],
           [_seq_spec(layer)])


@pytest.mark.parametrize("name", sorted(LSTMS))
def test_lstm_state_in_and_out(name):
    torch.manual_seed(1)
    layer = LSTMS[name]()
    _check(WithLSTMState(layer),
           lambda s, b: [_seq_input(layer, s, b), _state(layer, b, 1),
                         _state(layer, b, 2)],
           [_seq_spec(layer), _state_spec(layer), _state_spec(layer)])


@pytest.mark.parametrize("name", sorted(GRUS))
def test_gru_rnn_state_in_and_out(name):
    torch.manual_seed(2)
    layer = GRUS[name]()
    _check(WithState(layer),
           lambda s, b: [_seq_input(layer, s, b), _state(layer, b, 3)],
           [_seq_spec(layer), _state_spec(layer)])


def test_unbatched_sequence():
    torch.manual_seed(3)
    layer = nn.LSTM(4, 6, num_layers=2, bidirectional=True)
    _check(Seq(layer), lambda s, b: [_randn(s, 4)], [Input(("seq", 4))],
           shapes=[(5, 0), (9, 0)])


class CellLoop(nn.Module):
    """A cell stepped in Python over a fixed number of steps."""

    def __init__(self, cell, steps=4):
        super().__init__()
        self.cell = cell
        self.steps = steps

    def forward(self, x, h):
        outs = []
        for t in range(self.steps):
            h = self.cell(x[t], h)
            outs.append(h)
        return torch.stack(outs), h


class LSTMCellLoop(nn.Module):
    def __init__(self, cell, steps=4):
        super().__init__()
        self.cell = cell
        self.steps = steps

    def forward(self, x, h, c):
        outs = []
        for t in range(self.steps):
            h, c = self.cell(x[t], (h, c))
            outs.append(h)
        return torch.stack(outs), h, c


@pytest.mark.parametrize("cell", [nn.GRUCell(4, 6), nn.RNNCell(4, 6),
                                  nn.RNNCell(4, 6, nonlinearity="relu",
                                             bias=False)],
                         ids=["gru_cell", "rnn_cell", "rnn_cell_relu"])
def test_cell_loop(cell):
    _check(CellLoop(cell),
           lambda s, b: [_randn(4, b, 4), _randn(b, 6, seed=4)],
           [Input((4, "batch", 4)), Input(("batch", 6))],
           shapes=[(4, 3), (4, 1)])


def test_lstm_cell_loop():
    torch.manual_seed(4)
    cell = nn.LSTMCell(4, 6)
    _check(LSTMCellLoop(cell),
           lambda s, b: [_randn(4, b, 4), _randn(b, 6, seed=5),
                         _randn(b, 6, seed=6)],
           [Input((4, "batch", 4)), Input(("batch", 6)), Input(("batch", 6))],
           shapes=[(4, 3), (4, 1)])


def test_probes_on_lstm_results(tmp_path):
    """`rnn.output` reads the LSTM's output; select=1 / 2 its h_n / c_n."""
    torch.manual_seed(5)
    layer = nn.LSTM(4, 6, num_layers=2)

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = layer
            self.head = nn.Linear(6, 3)

        def forward(self, x):
            out, _ = self.rnn(x)
            return self.head(out)

    family = tmp_path / "tagger.json"
    family.write_text(json.dumps({"name": "tagger", "hosts": {"model": ""},
                                  "values": {
        f"rnn_{n}": {"host": "model", "path": "rnn.output", "select": i}
        for i, n in enumerate(["output", "h_n", "c_n"])}}))
    model = Tagger().eval()
    compiled = nnx.compile(model, inputs=[_seq_spec(layer)],
                           family=str(family),
                           probes=["rnn_output", "rnn_h_n", "rnn_c_n"])
    for seq, batch in SHAPES:
        x = _seq_input(layer, seq, batch)
        with torch.no_grad():
            out, (h_n, c_n) = model.rnn(x)
            logits = model(x)
        got, probed = compiled(x.numpy())
        np.testing.assert_allclose(got, logits.numpy(), **TOL)
        for name, want in [("output", out), ("h_n", h_n), ("c_n", c_n)]:
            np.testing.assert_allclose(probed["rnn_" + name], want.numpy(),
                                       **TOL)


@pytest.mark.parametrize("make", [
    lambda: nn.LSTM(4, 6, num_layers=2, bidirectional=True, dropout=0.25),
    lambda: nn.GRU(3, 5, bias=False, batch_first=True),
    lambda: nn.RNN(4, 6, nonlinearity="relu"),
    lambda: nn.LSTMCell(4, 6), lambda: nn.GRUCell(4, 6, bias=False),
    lambda: nn.RNNCell(4, 6, nonlinearity="relu")])
def test_to_torch_round_trip(make, tmp_path):
    torch.manual_seed(6)
    layer = make()
    cell = isinstance(layer, nn.RNNCellBase)
    spec = Input(("batch", layer.input_size)) if cell else _seq_spec(layer)
    path = tmp_path / "m.mlir"
    path.write_text(export(Seq(layer), inputs=[spec]))
    back = to_torch(str(path))
    assert type(back.rnn) is type(layer)
    assert back.rnn.state_dict().keys() == layer.state_dict().keys()
    for k, v in layer.state_dict().items():
        assert torch.equal(back.rnn.state_dict()[k], v), k
    for attr in ("input_size", "hidden_size", "bias", "num_layers",
                 "batch_first", "bidirectional", "dropout", "nonlinearity"):
        assert getattr(back.rnn, attr, None) == getattr(layer, attr, None), attr


def test_lstm_proj_size_is_refused():
    with pytest.raises(ExportError, match=r"'rnn'.*proj_size=3"):
        export(Seq(nn.LSTM(4, 6, proj_size=3)),
               inputs=[Input(("seq", "batch", 4))])


# PyTorch's examples/word_language_model/model.py, RNNModel, in its authors'
# style: the zoo's copy (python/tests/zoo/word_language_model.py).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from zoo.word_language_model import RNNModel  # noqa: E402


def _hidden_spec(lstm):
    state = Input((2, "batch", 8))
    return (state, state) if lstm else state


@pytest.mark.parametrize("rnn_type", ["LSTM", "GRU", "RNN_TANH", "RNN_RELU"])
def test_word_language_model(rnn_type):
    """RNNModel called as its authors call it, model(data, hidden), an
    LSTM's hidden state the tuple (h, c): compiled from specs nested like
    the call, it takes that nesting and returns (decoded, hidden) nested as
    PyTorch does; the hidden state it returns goes into the next call."""
    torch.manual_seed(7)
    model = RNNModel(rnn_type, ntoken=50, ninp=8, nhid=8, nlayers=2,
                     dropout=0.2, tie_weights=rnn_type == "GRU").eval()
    lstm = rnn_type == "LSTM"
    compiled = nnx.compile(model, inputs=[
        Input(("seq", "batch"), torch.int64), _hidden_spec(lstm)])
    for seq, batch in SHAPES:
        data = torch.randint(0, 50, (seq, batch),
                             generator=torch.Generator().manual_seed(seq))
        want_hidden = got_hidden = model.init_hidden(batch)
        for _ in range(2):  # the next chunk starts from the last state
            with torch.no_grad():
                want, want_hidden = model(data, want_hidden)
            (got, got_hidden), _ = compiled(data, got_hidden)
            assert type(got_hidden) is type(want_hidden)
            np.testing.assert_allclose(got, want, **TOL)
            for g, w in zip(_flat(got_hidden), _flat(want_hidden)):
                np.testing.assert_allclose(g, w, **TOL)


def test_word_language_model_from_nested_examples():
    """examples= as real calls: (data, (h, c)) twice, other batches."""
    torch.manual_seed(8)
    model = RNNModel("LSTM", ntoken=50, ninp=8, nhid=8, nlayers=2).eval()

    def call(seq, batch):
        data = torch.randint(0, 50, (seq, batch),
                             generator=torch.Generator().manual_seed(batch))
        return data, (_randn(2, batch, 8, seed=1), _randn(2, batch, 8, seed=2))
    text = export(model, examples=(call(5, 2), call(7, 3)))
    assert 'nnx.input_names = ["0", "1.0", "1.1"]' in text
    assert 'nnx.output_names = ["0", "1.0", "1.1"]' in text
    compiled = nnx.compile(model, examples=(call(5, 2), call(7, 3)))
    args = call(6, 4)
    with torch.no_grad():
        want = model(*args)
    got, _ = compiled(*args)
    assert len(got) == 2 and len(got[1]) == 2
    for g, w in zip(_flat(got), _flat(want)):
        np.testing.assert_allclose(g, w, **TOL)
    with pytest.raises(TypeError, match=r"argument 1 must be a tuple or a "
                       r"list of 2, as the exported call took it; got Tensor"):
        compiled(args[0], args[1][0])
