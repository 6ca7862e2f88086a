"""Loaded by Python at start-up in a program `roofline profile` runs with op attribution (this
folder first on its PYTHONPATH, ROOFLINE_OPS=1 in its environment); inert anywhere else, and when
imported under its package name.

Once the program has imported `torch`, it turns on what Nsight Compute reads back as each launch's
NVTX stack (`ncu --nvtx`), on the thread that imported torch and the autograd threads its backward
passes run on:

- PyTorch's own NVTX annotation (`torch.autograd.profiler.emit_nvtx`, without shapes): a range
  around every op, `aten::addmm, seq = 41`, whose autograd sequence number ties a backward node to
  the forward op that made it; the backward node's own range `autograd::engine::evaluate_function:
  AddmmBackward0` and the optimizer's `Optimizer.step#AdamW.step` come with it;
- a range around every nn.Module call, `roofline.module <path>` with the module's place in its
  model (`LlamaForCausalLM.model.layers.3.mlp`: the outermost module's class, then attribute
  names, through containers that are not called themselves, a ModuleList's `layers.3`), from
  global forward hooks (`torch.nn.modules.module.register_module_forward_pre_hook`).

emit_nvtx is entered without its `torch.cuda.synchronize()`, so that importing torch does not start
CUDA. A program that turns on PyTorch's profiler itself then finds one on (PyTorch refuses two on a
thread): profile it with `--no-ops`. Then Python's next `sitecustomize` on the path, if any, is run.
"""

import os
import sys

MODULE_PREFIX = "roofline.module "
_HERE = os.path.dirname(os.path.abspath(__file__))


def _say(text):
    sys.stderr.write(f"roofline: {text}\n")


def _install(torch):
    """Turn on the op and module ranges in the program whose `torch` module was just imported."""
    import threading
    try:
        from torch.autograd.profiler import emit_nvtx
        sync = torch.cuda.synchronize
        torch.cuda.synchronize = lambda *args, **kwargs: None  # no CUDA start at import time
        try:
            emit_nvtx(record_shapes=False).__enter__()
        finally:
            torch.cuda.synchronize = sync
    except Exception as exc:  # an old or unusual torch: kernels are not owned by ops, said once
        _say(f"PyTorch's NVTX op ranges could not be turned on ({type(exc).__name__}: {exc}); kernels will not "
             "be owned by ops")
    try:
        from torch.nn.modules import module as nn_module
        push, pop = torch.cuda.nvtx.range_push, torch.cuda.nvtx.range_pop
    except Exception as exc:
        _say(f"module ranges could not be turned on ({type(exc).__name__}: {exc})")
        return
    local = threading.local()
    names = {}  # (id(parent), id(child)) -> attribute name

    def place(parent, child):
        """`child`'s attribute path under `parent`: a child ('mlp'), or a module inside children
        that are never called themselves ('layers.3' in a ModuleList), breadth first."""
        key = (id(parent), id(child))
        name = names.get(key)
        if name is None:
            queue, seen = [("", parent)], {id(parent)}
            while queue and name is None:
                prefix, module = queue.pop(0)
                for k, m in module._modules.items():
                    if m is None or id(m) in seen:
                        continue
                    if m is child:
                        name = prefix + k
                        break
                    seen.add(id(m))
                    queue.append((f"{prefix}{k}.", m))
            name = name if name is not None else f"<{type(child).__name__}>"
            names[key] = name
        return name

    def before(module, args):
        stack = getattr(local, "stack", None)
        if stack is None:
            stack = local.stack = []
        path = f"{stack[-1][1]}.{place(stack[-1][0], module)}" if stack else type(module).__name__
        stack.append((module, path))
        push(MODULE_PREFIX + path)

    def after(module, args, output):
        stack = getattr(local, "stack", None)
        if stack and stack[-1][0] is module:
            stack.pop()
            pop()

    try:
        nn_module.register_module_forward_pre_hook(before)
        try:
            nn_module.register_module_forward_hook(after, always_call=True)
        except TypeError:  # torch before 2.1: no always_call
            nn_module.register_module_forward_hook(after)
    except Exception as exc:
        _say(f"module ranges could not be turned on ({type(exc).__name__}: {exc})")


class _AfterTorch:
    """A meta-path finder that lets `torch` import as it would, then calls `_install` on it."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        import importlib.util
        sys.meta_path.remove(self)  # once: torch's own import goes on as it would
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader = spec.loader
        run = loader.exec_module

        def exec_module(module):
            run(module)
            _install(module)

        loader.exec_module = exec_module
        return spec


def _next_sitecustomize():
    """Run the next `sitecustomize` on the path after this folder's, as Python would have."""
    import importlib.machinery
    import importlib.util
    rest = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


if __name__ == "sitecustomize":
    if os.environ.get("ROOFLINE_OPS") == "1":
        if "torch" in sys.modules:
            _install(sys.modules["torch"])
        else:
            sys.meta_path.insert(0, _AfterTorch())
    try:
        _next_sitecustomize()
    except Exception as exc:
        _say(f"the program's own sitecustomize failed: {type(exc).__name__}: {exc}")
