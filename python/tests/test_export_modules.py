"""Modules as real code has them: modules the forward never calls (kept,
marked ``nnx.uncalled``), an entry point other than ``forward``, reads of
another module's tensors, ``nn.Sequential`` subclasses with their own
forward, ``len()`` of a dynamic dim, errors that name the model's line
(also in torchvision), and example sizes the model accepts."""

import math
import os
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import nnx  # noqa: E402
from nnx import tools  # noqa: E402
from nnx.recorder import is_user_file  # noqa: E402
from nnx.torch_export import ExportError, export  # noqa: E402

TOL = dict(atol=1e-5, rtol=1e-5)
HERE = os.path.abspath(__file__)


def line_of(fn, text):
    """`HERE:<line>` of the line of function `fn` that contains `text`."""
    import inspect
    src, start = inspect.getsourcelines(fn)
    for i, line in enumerate(src):
        if text in line:
            return f"{HERE}:{start + i}"
    raise AssertionError(text)


def have_bindings():
    try:
        from nnx import _nnx  # noqa: F401
        return True
    except ImportError:
        return False


needs_build = pytest.mark.skipif(
    not have_bindings(), reason="needs the nnx._nnx bindings (a build)")


def parse(text):
    from nnx import _nnx
    return _nnx.Model.parse(text, "<test>")


def run_compiled(model, inputs, xs, **kw):
    run = nnx.compile(model, inputs, threads=1, **kw)
    out, _ = run(*xs)
    return out


# -----------------------------------------------------------------------------
# Modules the forward never calls
# -----------------------------------------------------------------------------

class StochasticDepth(nn.Module):
    """torchvision.ops.StochasticDepth's shape: identity in eval."""

    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        keep = torch.empty(x.shape[0], 1).bernoulli_(1 - self.p)
        return x * keep / (1 - self.p)


class Block(nn.Module):
    """An MBConv-like block: the residual (and its StochasticDepth) only
    where the widths match, but StochasticDepth registered on every one."""

    def __init__(self, cin, cout):
        super().__init__()
        self.fc = nn.Linear(cin, cout)
        self.use_res = cin == cout
        self.stochastic_depth = StochasticDepth(0.2)

    def forward(self, x):
        y = torch.relu(self.fc(x))
        if self.use_res:
            y = self.stochastic_depth(y) + x
        return y


class Aux(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 3)
        self.drop = StochasticDepth(0.5)
        self.register_buffer("scale", torch.full((3,), 2.0))

    def forward(self, x):
        return self.drop(self.fc(x)) * self.scale


class WithAux(nn.Module):
    """GoogLeNet's shape: an auxiliary head that runs only in training."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(Block(4, 6), Block(6, 6))
        self.aux = Aux()
        self.head = nn.Linear(6, 2)

    def forward(self, x):
        h = self.blocks(x)
        aux = self.aux(h) if self.training else None
        out = self.head(h)
        return (out, aux) if self.training else out


def test_uncalled_modules_are_kept_with_their_tensors():
    torch.manual_seed(0)
    m = WithAux().eval()
    text = export(m, [(None, 4)])
    assert re.search(r'nnx.module @aux class = "Aux" attributes \{.*'
                     r'nnx.uncalled', text)
    assert re.search(r'nnx.module @stochastic_depth class = "StochasticDepth"'
                     r' attributes \{nnx.uncalled\}', text)
    # The called StochasticDepth (block 1, with the residual) has a forward.
    assert text.count("nnx.uncalled") == 3  # block 0's, aux, aux.drop
    assert "model_aux_fc_weight" in text and "model_aux_scale" in text
    body = text[text.index("nnx.module @aux"):]
    body = body[:body.index("nnx.linear @head")]
    assert "nnx.forward" not in body


@needs_build
def test_uncalled_modules_round_trip_compile_and_come_back():
    torch.manual_seed(0)
    m = WithAux().eval()
    text = export(m, [(None, 4)])
    printed = tools.nnx_opt(text)
    assert "nnx.uncalled" in printed
    model = parse(text)
    for batch in (1, 3):
        x = torch.randn(batch, 4)
        with torch.no_grad():
            want = m(x)
        got = run_compiled(m, [(None, 4)], [x])
        torch.testing.assert_close(torch.as_tensor(np.asarray(got)), want,
                                   **TOL)
    back = nnx.to_torch(model)
    assert list(back.state_dict()) == list(m.state_dict())
    for k, v in m.state_dict().items():
        assert torch.equal(back.state_dict()[k], v), k
    with torch.no_grad():
        x = torch.randn(2, 4)
        torch.testing.assert_close(back(x), m(x), **TOL)
    with pytest.raises(nnx.torch_import.ToTorchError,
                       match="'aux' .*never called"):
        back.aux(torch.ones(2, 6))


@needs_build
def test_surgery_keeps_an_uncalled_module():
    torch.manual_seed(0)
    m = WithAux().eval()
    aux = {k: v.clone() for k, v in m.aux.state_dict().items()}
    edited = nnx.drop_layer(m, layer_name="blocks.1", inputs=[(None, 4)])
    assert isinstance(edited.blocks[1], nn.Identity)
    assert type(edited.aux).__name__ == "Aux"
    for k, v in aux.items():
        assert torch.equal(edited.aux.state_dict()[k], v), k


def test_a_root_that_is_never_run_is_still_an_error():
    class Lazy(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.LazyLinear(3)

        def forward(self, x):
            return self.fc(x)
    with pytest.raises(ExportError, match="never called"):
        export(Lazy(), [(None, 4)])


# -----------------------------------------------------------------------------
# An entry point other than forward
# -----------------------------------------------------------------------------

class TwoTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.image = nn.Sequential(nn.Linear(4, 8), nn.ReLU(),
                                   nn.Linear(8, 5))
        self.text = nn.Embedding(10, 5)
        self.logit_scale = nn.Parameter(torch.tensor(2.0))

    def encode_image(self, x):
        z = self.image(x)
        return z / (z * z).sum(dim=-1, keepdim=True).sqrt() * self.logit_scale

    def encode_text(self, ids):
        return self.text(ids).mean(dim=1)

    def forward(self, x, ids):
        return self.encode_image(x) @ self.encode_text(ids).t()


def test_method_entry_exports_that_method():
    m = TwoTower().eval()
    for given in (dict(model=m, method="encode_image"),
                  dict(model=m.encode_image)):
        text = export(given.pop("model"), [(None, 4)], **given)
        assert 'nnx.entry = "encode_image"' in text
        assert "nnx.call @image" in text
        assert "model_text_weight" in text  # kept, not called
    with pytest.raises(ExportError, match="has no method 'encode_audio'"):
        export(m, [(None, 4)], method="encode_audio")


@needs_build
def test_method_entry_compiles_and_comes_back():
    torch.manual_seed(0)
    m = TwoTower().eval()
    x = torch.randn(3, 4)
    with torch.no_grad():
        want = m.encode_image(x)
    got = run_compiled(m.encode_image, [(None, 4)], [x])
    torch.testing.assert_close(torch.as_tensor(np.asarray(got)), want, **TOL)
    model = parse(export(m, [(None, 4)], method="encode_image"))
    back = nnx.to_torch(model)
    with torch.no_grad():
        torch.testing.assert_close(back.encode_image(x), want, **TOL)
        torch.testing.assert_close(back(x), want, **TOL)


# -----------------------------------------------------------------------------
# Reads of another module's tensors
# -----------------------------------------------------------------------------

class AttentionPool(nn.Module):
    """CLIP's AttentionPool2d, on a sequence: it passes the projections'
    tensors to F.multi_head_attention_forward itself."""

    def __init__(self, length, dim, heads):
        super().__init__()
        self.positional_embedding = nn.Parameter(
            torch.randn(length + 1, dim) / dim ** 0.5)
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.c_proj = nn.Linear(dim, 3)
        self.num_heads = heads

    def forward(self, x):  # (L, N, C)
        x = torch.cat([x.mean(dim=0, keepdim=True), x], dim=0)
        x = x + self.positional_embedding[:, None, :].to(x.dtype)
        x, _ = F.multi_head_attention_forward(
            query=x[:1], key=x, value=x,
            embed_dim_to_check=x.shape[-1], num_heads=self.num_heads,
            q_proj_weight=self.q_proj.weight,
            k_proj_weight=self.k_proj.weight,
            v_proj_weight=self.v_proj.weight, in_proj_weight=None,
            in_proj_bias=torch.cat([self.q_proj.bias, self.k_proj.bias,
                                    self.v_proj.bias]),
            bias_k=None, bias_v=None, add_zero_attn=False, dropout_p=0,
            out_proj_weight=self.c_proj.weight,
            out_proj_bias=self.c_proj.bias,
            use_separate_proj_weight=True, training=self.training,
            need_weights=False)
        return x.squeeze(0)


class TiedLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(11, 6)
        self.ln = nn.LayerNorm(6)

    def forward(self, ids):
        return F.linear(self.ln(self.wte(ids)), self.wte.weight)


class Parent(nn.Module):
    """A parent reading its child's positional_embedding."""

    def __init__(self):
        super().__init__()
        self.child = Child()

    def forward(self, x):
        return self.child(x) + self.child.positional_embedding[:x.shape[1]]


class Child(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.positional_embedding = nn.Parameter(torch.randn(16, 4))

    def forward(self, x):
        return self.fc(x)


def test_cross_module_reads_are_state_reads_of_that_module():
    text = export(AttentionPool(4, 8, 2).eval(), [(4, None, 8)])
    for name in ("q_proj", "k_proj", "v_proj"):
        assert f'nnx.state "bias" {{nnx.of = @{name}}}' in text
    text = export(TiedLM().eval(), [((None, None), torch.int64)])
    assert 'nnx.state "weight" {nnx.of = @wte}' in text
    text = export(Parent().eval(), [(None, None, 4)])
    assert 'nnx.state "positional_embedding" {nnx.of = @child}' in text


def test_a_read_of_a_module_outside_is_refused_with_the_line():
    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(4, 4)
            self.b = Reader(self.a)

        def forward(self, x):
            return self.b(self.a(x))

    class Reader(nn.Module):
        def __init__(self, other):
            super().__init__()
            self.other = [other]  # not registered here
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return self.fc(x) + self.other[0].bias

    with pytest.raises(ExportError, match=r"module at 'b': reads 'a.bias', a "
                       r"tensor of a module outside this one.*" +
                       re.escape(line_of(Reader.forward, "other[0].bias"))):
        export(Outer().eval(), [(None, 4)])


@needs_build
@pytest.mark.parametrize("make,inputs,shapes", [
    (lambda: AttentionPool(4, 8, 2), [(4, None, 8)], [(4, 1, 8), (4, 3, 8)]),
    (TiedLM, [((None, None), torch.int64)], [(1, 5), (2, 7)]),
    (Parent, [(None, None, 4)], [(1, 3, 4), (2, 9, 4)]),
])
def test_cross_module_reads_compile(make, inputs, shapes):
    torch.manual_seed(0)
    m = make().eval()
    run = nnx.compile(m, inputs, threads=1)
    for shape in shapes:
        x = torch.randint(0, 11, shape) if inputs[0][-1] is torch.int64 \
            else torch.randn(shape)
        with torch.no_grad():
            want = m(x)
        got, _ = run(x)
        torch.testing.assert_close(torch.as_tensor(np.asarray(got)), want,
                                   **TOL)


@needs_build
def test_surgery_on_a_tensor_read_elsewhere_is_refused():
    text = export(TiedLM().eval(), [((None, None), torch.int64)])
    with pytest.raises(tools.ToolError, match="target 'wte' .* read directly "
                       "by the forward of '<root>'"):
        tools.nnx_opt(text, ["--nnx-expand-embedding=layer=wte num=20"])
    text = export(AttentionPool(4, 8, 2).eval(), [(4, None, 8)])
    with pytest.raises(tools.ToolError, match="target 'q_proj' .* tensor "
                       "'bias' read directly by the forward of '<root>'"):
        tools.nnx_opt(text, ["--nnx-widen=layer=q_proj width=12"])


# -----------------------------------------------------------------------------
# nn.Sequential subclasses with their own forward
# -----------------------------------------------------------------------------

class ResidualSeq(nn.Sequential):
    def forward(self, x):
        for m in self:
            x = x + m(x)
        return x


def test_a_sequential_subclass_with_a_forward_is_a_custom_module():
    m = nn.Sequential(ResidualSeq(nn.Linear(4, 4), nn.Tanh()),
                      nn.Linear(4, 2)).eval()
    text = export(m, [(None, 4)])
    assert 'nnx.module @"0" class = "ResidualSeq"' in text
    assert "subclass" not in text
    assert re.search(r'nnx.call @"0"\(', text)


@needs_build
def test_a_sequential_subclass_with_a_forward_compiles():
    torch.manual_seed(0)
    m = nn.Sequential(ResidualSeq(nn.Linear(4, 4), nn.Tanh()),
                      nn.Linear(4, 2)).eval()
    x = torch.randn(3, 4)
    with torch.no_grad():
        want = m(x)
    got = run_compiled(m, [(None, 4)], [x])
    torch.testing.assert_close(torch.as_tensor(np.asarray(got)), want, **TOL)


# -----------------------------------------------------------------------------
# len() of a dynamic dim
# -----------------------------------------------------------------------------

class CachedMask(nn.Module):
    """PyTorch's word_language_model: a causal mask cached by len(src)."""

    def __init__(self):
        super().__init__()
        self.src_mask = None
        self.fc = nn.Linear(4, 4)

    @staticmethod
    def _generate_square_subsequent_mask(sz):
        return torch.log(torch.tril(torch.ones(sz, sz)))

    def forward(self, src):  # (S, N, 4)
        if self.src_mask is None or self.src_mask.size(0) != len(src):
            self.src_mask = self._generate_square_subsequent_mask(len(src))
        scores = torch.einsum("snd,tnd->nst", src, src) / math.sqrt(4)
        att = torch.softmax(scores + self.src_mask, dim=-1)
        return self.fc(torch.einsum("nst,tnd->snd", att, src))


def test_len_of_a_dynamic_dim_is_a_run_time_size():
    text = export(CachedMask().eval(), [(None, None, 4)])
    assert re.search(r"tensor.splat %\w+\[%src_d0, %src_d0\]", text)

    class Static(nn.Module):
        def forward(self, x):
            return x * len(x)
    # A static dim 0 stays a constant.
    assert "tensor.dim" not in export(Static(), [(3, None)])


@needs_build
def test_len_mask_is_not_stale_when_compiled():
    torch.manual_seed(0)
    m = CachedMask().eval()
    run = nnx.compile(m, [(None, None, 4)], threads=1)
    for s in (2, 5, 9):
        x = torch.randn(s, 2, 4)
        m.src_mask = None
        with torch.no_grad():
            want = m(x)
        got, _ = run(x)
        torch.testing.assert_close(torch.as_tensor(np.asarray(got)), want,
                                   **TOL)


# -----------------------------------------------------------------------------
# Errors name the model's line; torch errors are ExportErrors
# -----------------------------------------------------------------------------

def test_torchvision_frames_are_user_frames():
    torch_dir = os.path.dirname(os.path.abspath(torch.__file__))
    assert is_user_file(torch_dir + "vision/models/googlenet.py")
    assert not is_user_file(os.path.join(torch_dir, "nn", "functional.py"))
    assert not is_user_file(torch_dir)


class Bad(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        return h @ torch.ones(3, 2)  # shapes do not match


class TooSmall(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 7)

    def forward(self, x):
        return self.conv(x).relu()


def test_a_torch_error_in_the_forward_is_an_export_error_naming_the_line():
    with pytest.raises(ExportError, match=r"module at '<root>'.*"
                       r"RuntimeError.*" + re.escape(
                           line_of(Bad.forward, "torch.ones(3, 2)"))):
        export(Bad().eval(), [(None, 4)])
    # A layer run on an input too small for it: the line that calls it.
    with pytest.raises(ExportError, match=re.escape(
            line_of(TooSmall.forward, "self.conv(x)"))):
        export(TooSmall().eval(), [(None, 3, 4, 4)])


def test_a_user_exception_is_an_export_error_naming_the_line():
    class Raises(nn.Module):
        def forward(self, x):
            raise ValueError("no such mode")
    with pytest.raises(ExportError, match=r"ValueError.*no such mode.*" +
                       re.escape(HERE)):
        export(Raises(), [(None, 4)])


# -----------------------------------------------------------------------------
# Example sizes the model accepts
# -----------------------------------------------------------------------------

class NeedsSize(nn.Module):
    """A stem that needs at least 31 pixels (as SqueezeNet's and DenseNet's
    do), then a global pool."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 4, 7, stride=2), nn.ReLU(),
                                  nn.MaxPool2d(3, 2), nn.Conv2d(4, 4, 5))
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(self.stem(x).mean(dim=(2, 3)))


def test_dynamic_image_sizes_are_chosen_the_model_accepts():
    text = export(NeedsSize().eval(), [(None, 3, None, None)])
    assert "inputs(tensor<?x3x?x?xf32>)" in text


def test_two_examples_can_be_given():
    m = NeedsSize().eval()
    a, b = torch.randn(1, 3, 40, 44), torch.randn(2, 3, 64, 72)
    text = export(m, [(None, 3, None, None)], examples=(a, b))
    assert "inputs(tensor<?x3x?x?xf32>)" in text
    # Without inputs=, the dims that differ are the dynamic ones.
    assert export(m, examples=(a, b)) == text
    with pytest.raises(ExportError, match="dynamic dim 0 of input 0 has size "
                       "1 in both examples"):
        export(m, [(None, 3, None, None)], examples=(a, a))
    with pytest.raises(ExportError, match="static dim 1 of input 0 is 3"):
        export(m, [(None, 3, None, None)],
               examples=(a, torch.randn(2, 4, 64, 72)))


@needs_build
def test_a_model_that_needs_large_images_compiles():
    torch.manual_seed(0)
    m = NeedsSize().eval()
    run = nnx.compile(m, [(None, 3, None, None)], threads=1)
    for shape in ((1, 3, 31, 33), (2, 3, 57, 40)):
        x = torch.randn(shape)
        with torch.no_grad():
            want = m(x)
        got, _ = run(x)
        torch.testing.assert_close(torch.as_tensor(np.asarray(got)), want,
                                   **TOL)


# -----------------------------------------------------------------------------
# Tuple and list arguments and results
# -----------------------------------------------------------------------------

class Nested(nn.Module):
    """Takes a tuple and a list holding a tuple; returns a list in a
    tuple."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, pair, rest):
        a, b = pair
        c, (d,) = rest
        return self.fc(x) + a * b, [c + d, (a - d,)]


def _nested_call(batch, seed=0):
    g = torch.Generator().manual_seed(seed + batch)
    t = [torch.randn(batch, 4, generator=g) for _ in range(5)]
    return t[0], (t[1], t[2]), [t[3], (t[4],)]


NESTED_SPEC = [(None, 4), ((None, 4), (None, 4)), [(None, 4), ((None, 4),)]]


@pytest.mark.parametrize("given", ["inputs", "examples"])
def test_nested_arguments_are_flattened_in_order(given):
    kw = ({"inputs": NESTED_SPEC} if given == "inputs" else
          {"examples": (_nested_call(2), _nested_call(3))})
    text = export(Nested(), name="m", **kw)
    assert "nnx.model @m inputs(" + ", ".join(["tensor<?x4xf32>"] * 5) + ")" \
        in text
    assert 'nnx.input_names = ["0", "1.0", "1.1", "2.0", "2.1.0"]' in text
    assert 'nnx.output_names = ["0", "1.0", "1.1.0"]' in text


@needs_build
def test_nested_arguments_and_results_keep_their_nesting_when_compiled():
    model = Nested().eval()
    run = nnx.compile(model, NESTED_SPEC, threads=1)
    for batch in (1, 5):
        args = _nested_call(batch, seed=1)
        with torch.no_grad():
            want = model(*args)
        got, _ = run(*args)
        assert isinstance(got, tuple) and len(got) == 2
        y, (cd, (ad,)) = got  # the list comes back a tuple
        for g, w in zip((y, cd, ad), (want[0], want[1][0], want[1][1][0])):
            np.testing.assert_allclose(g, w, **TOL)
    with pytest.raises(TypeError, match=r"takes 3 arguments .*got 5"):
        run(args[0], *args[1], *args[2][:1], args[2][1][0])
    with pytest.raises(TypeError, match=r"argument 2\[1\] must be a tuple or "
                       r"a list of 1, as the exported call took it; got Tensor"):
        run(args[0], args[1], [args[2][0], args[2][1][0]])


@pytest.mark.parametrize("leaf,what", [({"h": (None, 4)}, "a dict"),
                                       (4, "an int")])
def test_an_unsupported_spec_names_the_argument_and_line(leaf, what):
    where = line_of(Nested.forward, "def forward")
    with pytest.raises(ExportError) as e:
        export(Nested(), [(None, 4), ((None, 4), leaf), [(None, 4)]])
    assert f"inputs[1][1]: {what}, not a shape" in str(e.value)
    assert f"argument 'pair[1]' of Nested.forward (at {where})" in str(e.value)


@pytest.mark.parametrize("leaf,what", [({"d": None}, "a dict"),
                                       (3, "an int")])
def test_an_unsupported_example_names_the_argument_and_line(leaf, what):
    where = line_of(Nested.forward, "def forward")
    calls = [_nested_call(2), _nested_call(3)]
    calls = [(x, pair, [c, leaf]) for x, pair, (c, _) in calls]
    with pytest.raises(ExportError) as e:
        export(Nested(), examples=calls)
    assert f"examples[0][2][1]: {what}, not a tensor" in str(e.value)
    assert f"argument 'rest[1]' of Nested.forward (at {where})" in \
        str(e.value)


def test_examples_must_nest_alike():
    a, b = _nested_call(2), _nested_call(3)
    b = (b[0], b[1], [b[2][0], b[2][1][0]])
    with pytest.raises(ExportError, match=r"must nest their tensors alike.*"
                       r"2\.1\.0 and at .*2\.1 of the call"):
        export(Nested(), examples=(a, b))
