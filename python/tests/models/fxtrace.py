"""torch.fx tracing of the reference modules one forward at a time, as an
exporter sees them: every child module stays a `call_module`, the shared
functions (`attention_interface`, `dropout_add`) stay `call_function`s.

Three things torch.fx (1.13) does not do on its own, done here:

- `b, t, d = x.shape` on Python 3.11: `Proxy.__iter__` finds UNPACK_SEQUENCE
  by indexing the bytecode with f_lasti // 2, which 3.11's inline caches
  break (IndexError or a wrong instruction); while tracing it finds the
  instruction by offset instead.
- factory functions with traced sizes (`torch.ones(t, t)`, `torch.arange(t)`,
  `torch.zeros`, `torch.full`) do not take Proxies: they are recorded as
  `call_function` nodes while tracing.
- `a += b` on a Proxy falls back to `a = a + b`; while tracing, `Proxy.__iadd__`
  records `operator.iadd` (Falcon's in-place add) instead.
"""

import dis
import inspect
import operator

import torch
import torch.fx as fx

from . import common

FACTORIES = ("ones", "zeros", "arange", "full")


class ChildTracer(fx.Tracer):
    """Traces one module's forward; its children are leaves."""

    def __init__(self):
        super().__init__(autowrap_functions=(common.attention_interface, common.dropout_add))
        # Buffers (alibi slopes, rotary inv_freq) as get_attr nodes, not
        # constants folded from their indexed views.
        self.proxy_buffer_attributes = True

    def is_leaf_module(self, m, module_qualified_name):
        return True

    def trace(self, root, concrete_args=None):
        saved = {name: getattr(torch, name) for name in FACTORIES}
        saved_iadd = fx.Proxy.__dict__.get("__iadd__")
        saved_iter = fx.Proxy.__iter__

        def factory(orig):
            def wrapper(*args, **kwargs):
                leaves = list(args) + list(kwargs.values())
                flat = []
                for a in leaves:
                    flat.extend(a if isinstance(a, (tuple, list)) else [a])
                if any(isinstance(a, fx.Proxy) for a in flat):
                    return self.create_proxy("call_function", orig, args, kwargs)
                return orig(*args, **kwargs)
            return wrapper

        def proxy_iter(proxy):
            frame = inspect.currentframe().f_back  # the traced code
            for inst in dis.get_instructions(frame.f_code):
                if inst.offset == frame.f_lasti and inst.opname == "UNPACK_SEQUENCE":
                    return (proxy[i] for i in range(inst.argval))
            return proxy.tracer.iter(proxy)

        def iadd(proxy, other):
            return proxy.tracer.create_proxy("call_function", operator.iadd, (proxy, other), {})

        try:
            for name, orig in saved.items():
                setattr(torch, name, factory(orig))
            fx.Proxy.__iadd__ = iadd
            fx.Proxy.__iter__ = proxy_iter
            return super().trace(root, concrete_args)
        finally:
            for name, orig in saved.items():
                setattr(torch, name, orig)
            fx.Proxy.__iter__ = saved_iter
            if saved_iadd is None:
                del fx.Proxy.__iadd__
            else:
                fx.Proxy.__iadd__ = saved_iadd


def trace_module(module):
    """A GraphModule running `module`'s forward with its children as calls."""
    graph = ChildTracer().trace(module)
    return fx.GraphModule(module, graph, type(module).__name__)


def trace_attention_interface(scaling, dropout=0.0):
    """The body of `attention_interface` for one constant scaling."""
    graph = ChildTracer().trace(common.attention_interface,
                                concrete_args={"scaling": scaling, "dropout": dropout})
    return fx.GraphModule(torch.nn.Module(), graph, "attention_interface")
