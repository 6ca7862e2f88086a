"""Problems in a kernel benchmark's format (a PyTorch Model with get_inputs and get_init_inputs):
loaded, drawn as the benchmark draws them, and their work read on PyTorch's meta device, checked
against figures worked by hand. Skipped where PyTorch is not installed."""

import json
from pathlib import Path

import pytest

from roofline.errors import RunError, UsageError
from roofline.workload import problem

PROBLEMS = Path(__file__).resolve().parent / "fixtures" / "problems"


def test_without_pytorch_a_problem_is_refused_in_one_line(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    with pytest.raises(RunError, match=r"a problem in PyTorch needs torch; install it"):
        problem.load(PROBLEMS / "matmul_bf16.py")


def test_what_was_replaced_is_named_and_put_back_and_the_rest_left_alone(monkeypatch):
    # put_back reads each owner once: a module's function, a class's static method (read from the
    # class's own dictionary, as harness() reads it), a switch's value; a name now missing is left
    import sys
    import types

    space = types.ModuleType("fake_space")

    def clock():
        return 1.0

    class Timer:
        @staticmethod
        def elapsed():
            return 2.0

    space.clock, space.Timer, space.fast = clock, Timer, False
    monkeypatch.setitem(sys.modules, "fake_space", space)
    before = {"fake_space.clock": clock, "fake_space.Timer.elapsed": Timer.__dict__["elapsed"],
              "fake_space.fast": False, "fake_space.gone": clock}
    assert problem.put_back(before) == []
    space.clock, space.fast = (lambda: 0.0), True
    Timer.elapsed = staticmethod(lambda: 0.0)
    assert sorted(problem.put_back(before)) == ["fake_space.Timer.elapsed", "fake_space.clock", "fake_space.fast"]
    assert space.clock is clock and space.fast is False and Timer.__dict__["elapsed"] is before["fake_space.Timer.elapsed"]
    assert problem.put_back(before) == []  # the same dict again: its grouping kept, nothing left to put back
    assert problem.put_back(dict(before)) == []  # another dict: grouped anew


try:
    import torch
except ImportError:  # every test below needs it
    torch = None


@pytest.mark.skipif(torch is None, reason="needs PyTorch")
def test_pytorchs_own_wrapper_of_what_it_replaces_is_no_change_and_a_forged_one_is(monkeypatch):
    # torch.compile's first run wraps torch.nn.Module.__init__ and __setstate__ (torch._dynamo's generation
    # tagging: the original in its closure); a function compiled under a file name of the torch package, or
    # PyTorch's own code run with other globals, is not PyTorch's
    import types

    from torch._dynamo import mutation_guard

    init, setstate = torch.nn.Module.__init__, torch.nn.Module.__setstate__
    before = {"torch.nn.Module.__init__": init, "torch.nn.Module.__setstate__": setstate}
    monkeypatch.setattr(torch.nn.Module, "__init__", init)
    monkeypatch.setattr(torch.nn.Module, "__setstate__", setstate)
    monkeypatch.setattr(torch.nn.Module, "___needs_generation_tag_patch", True, raising=False)
    mutation_guard.install_generation_tagging_init()
    assert torch.nn.Module.__init__ is not init and problem.put_back(before) == []
    wrapped = torch.nn.Module.__init__
    forged_file = compile("def patched_init(self, *a, **k):\n    pass\n", mutation_guard.__file__, "exec")
    forged = types.FunctionType(forged_file.co_consts[0], {}, "patched_init")
    forged.__wrapped__ = init
    other_globals = types.FunctionType(wrapped.__code__, {"GenerationTracker": None}, "patched_init", None,
                                       wrapped.__closure__)
    for fake in (forged, other_globals):
        torch.nn.Module.__init__ = fake
        assert problem.put_back(before) == ["torch.nn.Module.__init__"] and torch.nn.Module.__init__ is init


def test_without_pytorch_kernels_refuses_a_problem_in_one_line(monkeypatch):
    import importlib.util

    from typer.testing import CliRunner

    from roofline.cli import app

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    r = CliRunner().invoke(app, ["kernels", str(PROBLEMS / "matmul_bf16.py"), "--gpu", "h200"])
    # a missing dependency is a runtime failure, exit 1, as a missing ncu is
    assert r.exit_code == 1 and "a problem in PyTorch needs torch" in r.output and "Traceback" not in r.output


needs_torch = pytest.mark.skipif(torch is None, reason="needs PyTorch")


@needs_torch
def test_a_bf16_matmul_is_tensor_core_work_and_its_operands_bytes():
    w = problem.work(problem.load(PROBLEMS / "matmul_bf16.py"))
    m, n, k = 1024, 2048, 512
    assert w.work.flops == {"bf16_tensor": 2 * m * n * k}
    assert w.work.bytes_read == 2 * (m * k + k * n) and w.work.bytes_written == 2 * m * n
    assert [(t.shape, t.dtype) for t in w.inputs] == [((m, k), "bfloat16"), ((k, n), "bfloat16")]
    assert [t.shape for t in w.outputs] == [(m, n)] and w.parameters == () and "mm" in w.counted


@needs_torch
def test_a_convolutions_work_and_its_parameters_bytes():
    w = problem.work(problem.load(PROBLEMS / "conv_relu.py"))
    out = 8 * 128 * 56 * 56
    assert w.work.flops == {"tf32_tensor": 2 * out * 64 * 3 * 3}  # cuDNN's TF32, on by default for FP32
    params = 4 * (128 * 64 * 3 * 3 + 128)
    assert w.work.bytes_read == 4 * 8 * 64 * 56 * 56 + params and w.work.bytes_written == 4 * out
    assert {t.name for t in w.parameters} == {"parameter conv.weight", "parameter conv.bias"}
    assert "the reference on PyTorch's meta device: convolution counted" in w.work.source


@needs_torch
def test_a_problem_written_for_a_gpu_is_read_without_one():
    w = problem.work(problem.load(PROBLEMS / "cuda_written.py"))
    assert w.work.flops == {"fp32": 2 * 256 * 512 * 128}  # TF32 matmuls off, as the benchmarks time them
    assert w.work.bytes_read == 4 * (256 * 512 + 512 * 128 + 128) and w.work.bytes_written == 4 * 256 * 128
    assert [t.shape for t in w.inputs] == [(256, 512), (512, 128)]


@needs_torch
def test_an_attention_is_read_at_its_inputs_precision_and_causal_share():
    w = problem.work(problem.load(PROBLEMS / "attention_causal_fp16.py"))
    b, h, n, d = 4, 16, 2048, 64
    full = 2 * (2 * b * h * n * n * d)  # Q K^T and P V
    assert w.work.flops == {"fp16_tensor": pytest.approx(full * (n + 1) / (2 * n))}
    assert "causal: 0.500 of its queries-by-keys products" in w.work.source
    assert w.work.bytes_read == 3 * 2 * b * h * n * d and w.work.bytes_written == 2 * b * h * n * d


@needs_torch
def test_a_causal_attention_with_fewer_queries_than_keys_reads_the_keys_they_attend(tmp_path):
    path = tmp_path / "prefix_attention.py"
    path.write_text("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n"
                    "class Model(nn.Module):\n    def forward(self, q, k, v):\n"
                    "        return F.scaled_dot_product_attention(q, k, v, is_causal=True)\n\n"
                    "def get_inputs():\n    return [torch.randn(2, 8, 1024, 64, dtype=torch.bfloat16),\n"
                    "            torch.randn(2, 8, 4096, 64, dtype=torch.bfloat16),\n"
                    "            torch.randn(2, 8, 4096, 64, dtype=torch.bfloat16)]\n\n"
                    "def get_init_inputs():\n    return []\n")
    w = problem.work(problem.load(path))
    b, h, lq, lk, d = 2, 8, 1024, 4096, 64
    pairs = lq * (lq + 1) // 2  # query i attends keys 0..i (top-left): keys 1024..4095 by none
    assert w.work.flops == {"bf16_tensor": pytest.approx(2 * 2 * b * h * pairs * d)}
    assert w.work.bytes_read == 2 * b * h * d * (lq + 2 * lq)  # Q, and the first lq rows of K and V
    assert w.work.bytes_written == 2 * b * h * lq * d
    assert "causal: 0.125 of its queries-by-keys products, the first 1,024 of its 4,096 keys and values read" \
        in w.work.source and "causal_lower_right" in w.work.source
    assert [t.shape for t in w.inputs] == [(b, h, lq, d), (b, h, lk, d), (b, h, lk, d)]
    assert w.warnings == ("its causal attention has 1,024 queries and 4,096 keys: PyTorch's is_causal lets query i "
                          "attend keys 0 to i, so keys 1,024 to 4,095 are attended by none (for queries at the end "
                          "of the keys, as in decoding, the mask is torch.nn.attention.bias.causal_lower_right)",)
    from typer.testing import CliRunner

    from roofline.cli import app
    r = CliRunner().invoke(app, ["kernels", str(path), "--gpu", "h200"])
    assert r.exit_code == 0 and "prefix_attention: its causal attention has 1,024 queries" in r.output


@needs_torch
def test_a_weight_held_as_a_plain_attribute_is_read():
    w = problem.work(problem.load(PROBLEMS / "held_weight.py"))
    assert w.work.flops == {"fp32": 2 * 2048 * 1024 * 1024}
    assert w.work.bytes_read == 4 * (2048 * 1024 + 1024 * 1024)
    assert [t.name for t in w.parameters] == ["attribute w"]


@needs_torch
def test_weights_in_a_list_and_a_sync_in_the_constructor_are_read(tmp_path):
    path = tmp_path / "listed.py"
    path.write_text("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
                    "    def __init__(self):\n        super().__init__()\n        torch.cuda.synchronize()\n"
                    "        self.ws = [torch.randn(64, 32)]\n        self.named = {'b': torch.randn(32)}\n\n"
                    "    def forward(self, x):\n        return x @ self.ws[0] + self.named['b']\n\n\n"
                    "def get_inputs():\n    return [torch.randn(16, 64)]\n\n\ndef get_init_inputs():\n    return []\n")
    w = problem.work(problem.load(path))
    assert w.work.bytes_read == 4 * (16 * 64 + 64 * 32 + 32)
    assert [t.name for t in w.parameters] == ["attribute ws[0]", "attribute named['b']"]


@needs_torch
@pytest.mark.parametrize("forward, keys", [
    # FP16 tensors the reference widens to FP32 (or to FP64), a view between: FP16 tensor-core products, all a kernel
    # must do to answer as the reference does (FP32 accumulation)
    ("return a.float() @ b.float().t().t()", {"fp16_tensor": 2 * 32 * 64 * 16}),
    ("return a.to(torch.float64) @ b.double()", {"fp16_tensor": 2 * 32 * 64 * 16}),
    # a value computed in FP32 after the cast is FP32 work; so is a product of which one operand is
    ("return (a.float() * 1.5) @ b.float()", {"fp32": 2 * 32 * 64 * 16}),
    ("return a.float() @ c", {"fp32": 2 * 32 * 64 * 16}),
])
def test_a_product_of_tensors_the_reference_widens_is_counted_in_the_type_they_are_held_in(tmp_path, forward, keys):
    path = tmp_path / "widened.py"
    path.write_text("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
                    f"    def forward(self, a, b, c):\n        {forward}\n\n\n"
                    "def get_inputs():\n    return [torch.randn(32, 64).half(), torch.randn(64, 16).half(), "
                    "torch.randn(64, 16)]\n\n\ndef get_init_inputs():\n    return []\n")
    w = problem.work(problem.load(path))
    assert {k: v for k, v in w.work.flops.items() if v} == keys
    widened = "products of float16 tensors the reference widens to" in w.work.source
    assert widened == ("fp16_tensor" in keys)


@needs_torch
def test_how_a_references_work_was_read_beyond_the_usual_is_a_note_of_kernels(tmp_path):
    # the text table shows no work source; what was read unusually (here, FP16 products widened to FP32) is a note
    from roofline.analysis.problems import bounds
    from roofline.model.device import from_preset

    path = tmp_path / "widened.py"
    path.write_text("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
                    "    def forward(self, a, b):\n        return a.float() @ b.float()\n\n\n"
                    "def get_inputs():\n    return [torch.randn(32, 64).half(), torch.randn(64, 16).half()]\n\n\n"
                    "def get_init_inputs():\n    return []\n")
    found = bounds([path], from_preset("h200"))
    assert found.rows[0].work.details == ("products of float16 tensors the reference widens to float32 counted in "
                                          "float16, the type they are held in",)
    assert "widened: the work: products of float16 tensors the reference widens to float32" in " ".join(found.notes)



@needs_torch
def test_each_problem_read_is_a_step_of_the_progress_bar(tmp_path):
    # kernels over a level of KernelBench takes minutes (its RNNs): each problem a step, a failed one too
    from roofline.analysis.problems import bounds
    from roofline.model.device import from_preset
    from roofline.progress import Progress

    class Steps(Progress):
        def __init__(self):
            self.expected, self.steps = 0, []

        def expect(self, steps):
            self.expected += steps

        def step(self, text):
            self.steps.append(text)

    good = tmp_path / "square.py"
    good.write_text("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
                    "    def forward(self, a):\n        return a @ a\n\n\n"
                    "def get_inputs():\n    return [torch.randn(64, 64)]\n\n\ndef get_init_inputs():\n    return []\n")
    bad = tmp_path / "broken.py"
    bad.write_text("import torch\nraise ValueError('no')\n")
    seen = Steps()
    found = bounds([good, bad], from_preset("h200"), progress=seen)
    assert seen.expected == 2 and seen.steps == ["square.py: its work", "broken.py: its work"]
    assert len(found.rows) == 1 and len(found.errors) == 1


FP8_FP4 = "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def forward(self, a, b, sa, sb):\n" \
    "        {forward}\n\n\ndef get_inputs():\n    m, n, k = 128, 256, 512\n{draw}\n\n\ndef get_init_inputs():\n    return []\n"
F8 = "    a, b = torch.randn(m, k).to(torch.float8_e4m3fn), torch.randn(n, k).to(torch.float8_e4m3fn)\n"
F4 = ("    a = torch.randint(0, 255, (m, k // 2), dtype=torch.uint8).view(torch.float4_e2m1fn_x2)\n"
      "    b = torch.randint(0, 255, (n, k // 2), dtype=torch.uint8).view(torch.float4_e2m1fn_x2)\n")


I8 = ("    a = torch.randint(-128, 128, (m, k), dtype=torch.int8)\n"
      "    b = torch.randint(-128, 128, (n, k), dtype=torch.int8)\n")
BF = "    a, b = torch.randn(m, k).bfloat16(), torch.randn(n, k).bfloat16()\n"
ROWS = "    return [a, b, torch.randn(m, 1), torch.randn(n, 1)]"  # a scale a row of each
AB = 128 * 512 + 256 * 512  # an 8-bit a (m x k) and b (n x k), in bytes
MNK = 2 * 128 * 256 * 512


@needs_torch
@pytest.mark.parametrize("forward, draw, keys, read, dequantized", [
    # an FP8 product (torch._scaled_mm, per-tensor scales): 2 m n k FP8 tensor FLOPs, not FP32 ones
    ("return torch._scaled_mm(a, b.t(), sa, sb, out_dtype=torch.bfloat16)",
     F8 + "    return [a, b, torch.tensor(1.0), torch.tensor(1.0)]", {"fp8_tensor": MNK}, AB + 4 + 4, False),
    # NVFP4 (GPU MODE's nvfp4_gemm): two E2M1 values a byte, so the counter's k of k / 2 elements is doubled
    ("return torch._scaled_mm(a, b.t(), sa, sb, out_dtype=torch.float16)",
     F4 + "    return [a, b, torch.ones(m * k // 16).to(torch.float8_e4m3fn), torch.ones(n * k // 16).to(torch.float8_e4m3fn)]",
     {"fp4_tensor": MNK}, AB // 2 + (128 + 256) * 512 // 16, False),
    # blockwise FP8 dequantized before a product in FP32 (GPU MODE's fp8-mm): its values are still FP8 ones
    ("return ((a.to(torch.float32) * sa) @ (sb * b.float()).t()).to(torch.bfloat16)",
     F8 + ROWS, {"fp8_tensor": MNK}, AB + 4 * (128 + 256), True),
    # a 16-bit tensor scaled after its cast is FP32 work (the scaling keeps the held type only for 8 bits or fewer)
    ("return (a.half().float() * sa) @ b.float().t()",
     "    a, b = torch.randn(m, k), torch.randn(n, k)\n    return [a, b, torch.randn(m, 1), None]",
     {"fp32": MNK}, 4 * (AB + 128), False),
    # int8: torch._int_mm, which PyTorch's FLOP counter has no formula for, and W8A8 dequantized (exact in int32)
    ("return torch._int_mm(a, b.t())", I8 + ROWS, {"int8_tensor": MNK}, AB, False),
    ("return (a.float() * sa) @ (b.float() * sb).t()", I8 + ROWS, {"int8_tensor": MNK}, AB + 4 * (128 + 256), True),
    # no dequantization (helper trial, 2026-12-07): a full-size 'scale' is data, as is another FP8 tensor; a
    # reciprocal is no scaling; an op done in place after the cast (A += 1) makes new values
    ("return (a.float() * sa) @ b.float().t()", F8 + "    return [a, b, torch.randn(m, k), None]",
     {"fp32": MNK}, AB + 4 * 128 * 512, False),
    ("return (a.float() * sa.float()) @ b.float().t()", F8 + "    return [a, b, torch.randn(m, k).to(torch.float8_e4m3fn), None]",
     {"fp32": MNK}, AB + 128 * 512, False),
    ("return (sa / a.float()) @ b.float().t()", F8 + ROWS, {"fp32": MNK}, AB + 4 * 128, False),
    ("A = a.float()\n        A += 1.0\n        return A @ b.float().t()", F8 + ROWS, {"fp32": MNK}, AB, False),
    ("A = a.float()\n        A.mul_(sa)\n        return A @ b.float().t()", F8 + ROWS, {"fp8_tensor": MNK}, AB + 4 * 128,
     True),
    # a bias is no operand of the product: F.linear (addmm) of dequantized FP8, and addmm of widened BF16
    ("return torch.nn.functional.linear(a.float() * sa, b.float() * sb, sb[:, 0])", F8 + ROWS, {"fp8_tensor": MNK},
     AB + 4 * (128 + 256), True),
    ("return torch.addmm(sb[:, 0], a.float(), b.float().t())", BF + ROWS, {"bf16_tensor": MNK}, 2 * AB + 4 * 256, False),
], ids=["fp8_scaled_mm", "nvfp4_scaled_mm", "fp8_dequantized", "fp16_scaled_is_fp32", "int_mm", "int8_w8a8",
        "full_size_scale_is_data", "fp8_times_fp8", "reciprocal", "inplace_add", "inplace_mul_dequantized",
        "linear_with_bias", "addmm_bias_widened_bf16"])
def test_fp8_fp4_and_int8_products_are_counted_at_their_own_precision(tmp_path, forward, draw, keys, read, dequantized):
    if not hasattr(torch, "float4_e2m1fn_x2") and "float4" in draw:
        pytest.skip("this PyTorch has no float4_e2m1fn_x2")
    path = tmp_path / "low.py"
    path.write_text(FP8_FP4.format(forward=forward, draw=draw))
    w = problem.work(problem.load(path))
    assert {k: v for k, v in w.work.flops.items() if v} == keys
    assert w.work.bytes_read == read
    assert ("a dequantization" in w.work.source) == dequantized, w.work.source


@needs_torch
def test_fp4_work_on_a_gpu_without_an_fp4_roof_keeps_its_counted_precision_in_json(tmp_path):
    # an H200 has no FP4 tensor roof: the bound reads the NVFP4 product at FP8's, and --json says both
    if not hasattr(torch, "float4_e2m1fn_x2"):
        pytest.skip("this PyTorch has no float4_e2m1fn_x2")
    from roofline.analysis.problems import bounds
    from roofline.model.device import from_preset

    path = tmp_path / "nvfp4.py"
    path.write_text(FP8_FP4.format(forward="return torch._scaled_mm(a, b.t(), sa, sb, out_dtype=torch.float16)", draw=F4
                                   + "    return [a, b, torch.ones(m * k // 16).to(torch.float8_e4m3fn), "
                                   "torch.ones(n * k // 16).to(torch.float8_e4m3fn)]"))
    row = bounds([path], from_preset("h200")).rows[0].to_json()
    assert row["flops"] == {"fp8_tensor": MNK} and row["flops_counted"] == {"fp4_tensor": MNK}
    b200 = bounds([path], from_preset("b200")).rows[0].to_json()
    assert b200["flops"] == b200["flops_counted"] == {"fp4_tensor": MNK}


@needs_torch
def test_an_input_drawn_transposed_is_read_in_that_layout(tmp_path):
    # the timed calls get it in that layout (`problem_grade.rolled`): a column of a transposed matrix is a row of memory
    path = tmp_path / "column.py"
    path.write_text("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
                    "    def forward(self, x):\n        return x[:, 0] * 2\n\n\n"
                    "def get_inputs():\n    return [torch.randn(64, 4096).t()]\n\n\ndef get_init_inputs():\n    return []\n")
    w = problem.work(problem.load(path))
    assert w.work.bytes_read == 4 * 4096  # not a 32-byte sector of each of 4,096 rows (131,072 B)


@needs_torch
def test_what_the_reference_warns_of_is_a_note_not_a_line_on_stderr(tmp_path, recwarn):
    # KernelBench's level-2 28_BMM_InstanceNorm builds an InstanceNorm2d whose forward warns in PyTorch 2.13
    path = tmp_path / "warns.py"
    path.write_text("import warnings\nimport torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
                    "    def forward(self, x):\n        warnings.warn('size does not match\\nsecond line')\n"
                    "        warnings.warn('size does not match\\nagain')\n        return x * 2\n\n\n"
                    "def get_inputs():\n    return [torch.randn(16, 64)]\n\n\ndef get_init_inputs():\n    return []\n")
    w = problem.work(problem.load(path))
    assert w.warnings == ("the reference warned on the meta device: size does not match",)
    assert not [r for r in recwarn if "size does not match" in str(r.message)]


def test_a_candidate_given_as_a_problem_is_named_so_before_it_is_imported(tmp_path):
    # read, not run (no PyTorch needed): KernelBench's inline-CUDA candidate builds with load_inline when
    # imported, and fails without a CUDA toolkit; a file binding both Model and ModelNew is a problem
    examples = Path(__file__).resolve().parents[1] / "examples" / "kernelbench"
    for name in ("level1_19_ReLU_cuda.py", "level1_19_ReLU_triton.py"):
        with pytest.raises(UsageError, match=rf"{name} is a candidate \(a ModelNew, or a GPU MODE submission's custom_kernel\), not a problem: "
                                            "give the problem"):
            problem.load(examples / name)
    (tmp_path / "both.py").write_text("class Model: pass\nModelNew = Model\ndef get_inputs(): return []\n"
                                      "def get_init_inputs(): return []\n")
    assert problem.is_problem(tmp_path / "both.py") and problem.is_candidate(tmp_path / "both.py")
    # a star import may bring the problem in: such a file is imported, not refused unread
    (tmp_path / "starred.py").write_text("from base_problem import *\nclass ModelNew: pass\n")
    cannot = r"starred.py: (it imports base_problem, which this Python cannot find|a problem in PyTorch needs)"
    with pytest.raises((UsageError, RunError), match=cannot):
        problem.load(tmp_path / "starred.py")


@needs_torch
def test_a_problem_that_exits_or_a_candidate_given_as_one_is_refused_in_one_line(tmp_path):
    (tmp_path / "exits.py").write_text("import sys\nsys.exit(3)\n")
    with pytest.raises(UsageError, match=r"exits.py: importing it raised SystemExit: 3"):
        problem.load(tmp_path / "exits.py")
    with pytest.raises(UsageError, match=r"matmul_honest.py is a candidate \(a ModelNew, or a GPU MODE"):
        problem.load(PROBLEMS / "candidates" / "matmul_honest.py")


@needs_torch
def test_a_gather_reads_the_rows_it_returns_not_its_table():
    w = problem.work(problem.load(PROBLEMS / "embedding_rows.py"))
    rows = 8 * 512 * 4096 * 4
    assert w.work.bytes_read == 8 * 512 * 8 + rows and w.work.bytes_written == rows  # int64 ids, then the rows
    assert [t.shape for t in w.parameters] == [(50_000, 4096)]  # the table is still listed, 819 MB


def _problem(tmp_path, name: str, init: str, forward: str, inputs: str, init_inputs: str = "[]"):
    path = tmp_path / f"{name}.py"
    path.write_text("import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n"
                    f"    def __init__(self, *args):\n        super().__init__()\n{init}\n"
                    f"    def forward(self, *xs):\n{forward}\n\n"
                    f"def get_inputs():\n    return {inputs}\n\ndef get_init_inputs():\n    return {init_inputs}\n")
    return problem.work(problem.load(path)).work


@needs_torch
def test_an_input_read_in_pieces_is_read_whole_and_a_piece_read_twice_once(tmp_path):
    x = "[torch.randn(4, 1024, 256)]"
    rows = _problem(tmp_path, "rows", "        pass", "        x = xs[0]\n        return x[0] + x[1] + x[2] + x[3]", x)
    assert rows.bytes_read == 4 * 1024 * 256 * 4 and rows.bytes_written == 1024 * 256 * 4
    pieces = _problem(tmp_path, "pieces", "        pass",
                      "        a, b = xs[0].chunk(2, dim=-1)\n        c, d, e, f = xs[0].unbind(0)\n"
                      "        return (a + b).sum() + (c * d - e / f).sum()", x)
    assert pieces.bytes_read == 4 * 1024 * 256 * 4
    twice = _problem(tmp_path, "twice", "        pass", "        x = xs[0]\n        return x[1] * x[1] + x[1]", x)
    assert twice.bytes_read == 1024 * 256 * 4
    columns = _problem(tmp_path, "columns", "        pass", "        return xs[0][..., :64] * 2", x)
    assert columns.bytes_read == 4 * 1024 * 64 * 4  # a quarter of every row


@needs_torch
def test_a_view_of_a_weight_held_beside_it_reads_the_weights_bytes_once(tmp_path):
    # a plain attribute that is a view of a parameter (or of another attribute) shares its storage:
    # what both read of it is read once
    init = "        self.w = nn.Parameter(torch.randn(1024, 1024))\n        self.top = self.w[:512]"
    both = _problem(tmp_path, "both", init, "        return xs[0] @ self.w + xs[1] @ self.top",
                    "[torch.randn(64, 1024), torch.randn(64, 512)]")
    assert both.bytes_read == 4 * (1024 * 1024 + 64 * 1024 + 64 * 512)
    half = _problem(tmp_path, "half", init, "        return xs[1] @ self.top", "[torch.randn(64, 1024), torch.randn(64, 512)]")
    assert half.bytes_read == 4 * (512 * 1024 + 64 * 512)  # the view alone: its half of the weight
    held = "        self.a = torch.randn(256, 256)\n        self.b = self.a.t()"
    twice = _problem(tmp_path, "held", held, "        return xs[0] @ self.a + xs[0] @ self.b", "[torch.randn(8, 256)]")
    assert twice.bytes_read == 4 * (256 * 256 + 8 * 256)


@needs_torch
def test_bytes_are_read_as_timed_calls_lay_inputs_out_and_a_like_op_reads_none(tmp_path):
    # a transposed input: every timed call gets a new copy in its layout, whose row 0 is a column of memory, 2^20 floats
    # 64 bytes apart: a 32-byte sector each (until 2026-12-07 the copies were contiguous, and the row 4 MiB in a row)
    t = _problem(tmp_path, "transposed", "        pass", "        return xs[0][0] * 2", "[torch.randn(1 << 20, 16).t()]")
    assert t.bytes_read == 32 * (1 << 20)
    like = _problem(tmp_path, "like", "        pass", "        return torch.zeros_like(xs[0]) + xs[1]",
                    "[torch.randn(4096, 1024), torch.randn(4096, 1024)]")
    assert like.bytes_read == 4 * 4096 * 1024  # x[1] alone: zeros_like reads x[0]'s shape
    with pytest.raises(UsageError, match=r"empty.py: its reference does no work to bound"):
        _problem(tmp_path, "empty", "        pass", "        return xs[0] * 2", "[torch.randn(0, 16)]")


@needs_torch
def test_an_lstm_reads_its_input_its_state_and_its_weights(tmp_path):
    # batch 4, 16 steps, 32 features in, 64 hidden, 2 layers, batch first; h0 and c0 held as plain attributes
    init = ("        self.lstm = nn.LSTM(32, 64, 2, batch_first=True)\n"
            "        self.h0 = torch.randn(2, 4, 64)\n        self.c0 = torch.randn(2, 4, 64)")
    w = _problem(tmp_path, "lstm", init, "        out, _ = self.lstm(xs[0], (self.h0, self.c0))\n        return out",
                 "[torch.randn(4, 16, 32)]")
    weights = 4 * 64 * (32 + 64 + 2) + 4 * 64 * (64 + 64 + 2)  # each layer: W_ih, W_hh, two biases, four gates
    assert w.bytes_read == 4 * (4 * 16 * 32 + 2 * 2 * 4 * 64 + weights)
    assert w.bytes_written == 4 * 4 * 16 * 64


@needs_torch
def test_fp32_matmul_counts_tf32_only_where_pytorch_allows_it():
    assert problem.precision_of("mm", torch.float32) == "fp32"
    allowed = torch.backends.cuda.matmul.allow_tf32
    try:
        torch.backends.cuda.matmul.allow_tf32 = True
        assert problem.precision_of("mm", torch.float32) == "tf32_tensor"
    finally:
        torch.backends.cuda.matmul.allow_tf32 = allowed


@needs_torch
def test_work_without_a_counted_op_is_its_bytes_and_scalar_arguments_pass_through():
    w = problem.work(problem.load(PROBLEMS / "row_sums.py"))
    assert w.work.flops == {} and w.scalars == (1,)
    assert w.work.bytes_read == 4 * 4096 * 1000 and w.work.bytes_written == 4 * 4096
    assert "no op PyTorch's FLOP counter knows" in w.work.source


@needs_torch
def test_draws_follow_the_benchmarks_seeding():
    p = problem.with_candidate(problem.load(PROBLEMS / "conv_relu.py"), PROBLEMS / "conv_relu_new.py")
    a, b = p.inputs(seed=3), p.inputs(seed=3)
    assert torch.equal(a[0], b[0]) and not torch.equal(a[0], p.inputs(seed=4)[0])
    ref, new = p.model(seed=7), p.model(seed=7, candidate=True)
    assert torch.equal(ref.conv.weight, new.conv.weight)  # the same weights from the same seed
    small = torch.randn(1, 64, 6, 6)
    with torch.no_grad():
        assert torch.allclose(ref(small), new(small))


@needs_torch
@pytest.mark.parametrize("name, says", [
    ("no_inputs.py", "lacks get_inputs, get_init_inputs"),
    ("missing.py", "no such file"),
])
def test_a_file_that_is_not_a_problem_is_refused_in_one_line(name, says):
    with pytest.raises(UsageError, match=says):
        problem.load(PROBLEMS / name)


@needs_torch
def test_a_reference_the_meta_device_cannot_run_is_refused_in_one_line():
    # its 400 MB input is above what is drawn on the CPU to read it with its values, which the line says
    with pytest.raises(UsageError, match=r"cannot run on PyTorch's meta device \(shapes without data\), so its work "
                                         r"cannot be read \(its inputs, 381 MiB, are above the 256 MiB drawn on the "
                                         r"CPU to read it with their values\): "):
        problem.work(problem.load(PROBLEMS / "data_dependent.py"))


@needs_torch
def test_a_candidate_without_modelnew_is_refused():
    p = problem.load(PROBLEMS / "conv_relu.py")
    with pytest.raises(UsageError, match="defines class ModelNew"):
        problem.with_candidate(p, PROBLEMS / "row_sums.py")


def test_files_are_told_apart_by_their_text():
    assert problem.is_problem(PROBLEMS / "conv_relu.py") and not problem.is_problem(PROBLEMS / "conv_relu_new.py")
    assert problem.is_candidate(PROBLEMS / "conv_relu_new.py") and not problem.is_candidate(PROBLEMS / "row_sums.py")


@needs_torch
def test_kernels_lists_each_problems_speed_of_light_on_a_gpu():
    import json

    from typer.testing import CliRunner

    from roofline.cli import app
    from roofline.model.device import from_preset

    files = [str(PROBLEMS / n) for n in ("matmul_bf16.py", "conv_relu.py", "row_sums.py")]
    r = CliRunner().invoke(app, ["kernels", *files, "--gpu", "h200", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    h200 = from_preset("h200").roofs
    bf16, tf32, dram = (h200.roof(k, True).value for k in ("bf16_tensor", "tf32_tensor", "DRAM"))
    matmul, conv, sums = doc["problems"]
    assert doc["kind"] == "problems" and doc["device"] == "H200"
    assert matmul["bound"] == "BF16 tensor" and matmul["t_sol_ms"] == pytest.approx(2 * 1024 * 2048 * 512 / bf16 / 1e6)
    assert conv["bound"] == "TF32 tensor" and conv["t_sol_ms"] == pytest.approx(2 * 8 * 128 * 56 * 56 * 64 * 9 / tf32 / 1e6)
    assert sums["bound"] == "DRAM" and sums["t_sol_ms"] == pytest.approx(4 * 4096 * 1001 / dram / 1e6)
    assert any(n.startswith("no launch floor: T_SOL here is the work's alone") for n in doc["notes"])  # a preset: none
    assert any(n.startswith("FP32 convolutions are read as TF32 tensor work") for n in doc["notes"])  # conv_relu
    # the table: each size of bytes with its unit (MB, or B for a few)
    table = " ".join(CliRunner().invoke(app, ["kernels", *files, "--gpu", "h200"], env={"COLUMNS": "200"}).output.split())
    assert "GFLOP read written T_SOL ms bound" in table and table.count(" MB ") >= 6
    schema = CliRunner().invoke(app, ["schema", "problems"])
    assert schema.exit_code == 0 and "ProblemJson" in schema.stdout
    # a problem that cannot be read among others: one line of its own, the others listed, exit 2
    some = CliRunner().invoke(app, ["kernels", files[0], str(PROBLEMS / "data_dependent.py"), "--gpu", "h200", "--json"])
    assert some.exit_code == 2 and [p["name"] for p in json.loads(some.stdout)["problems"]] == ["matmul_bf16"]
    assert "data_dependent.py: its forward cannot run on PyTorch's meta device" in some.stderr
    mixed = CliRunner().invoke(app, ["kernels", files[0], str(PROBLEMS.parent / "nvcc" / "tile_sgemm_macro.cu"),
                                     "--gpu", "h200"])
    assert mixed.exit_code == 2 and "give problems (.py) alone" in mixed.output


@needs_torch
def test_problems_from_several_folders_are_named_by_their_folder_too(tmp_path):
    import json
    import shutil

    from typer.testing import CliRunner

    from roofline.cli import app

    for level in ("level1", "level2"):
        (tmp_path / level).mkdir()
        shutil.copy(PROBLEMS / "row_sums.py", tmp_path / level / "1_sums.py")
    r = CliRunner().invoke(app, ["kernels", str(tmp_path / "level1" / "1_sums.py"), str(tmp_path / "level2" / "1_sums.py"),
                                 "--gpu", "h200", "--json"])
    assert [p["name"] for p in json.loads(r.stdout)["problems"]] == ["level1/1_sums", "level2/1_sums"]
    alone = CliRunner().invoke(app, ["kernels", str(tmp_path / "level1" / "1_sums.py"), "--gpu", "h200", "--json"])
    assert [p["name"] for p in json.loads(alone.stdout)["problems"]] == ["1_sums"]


def test_a_problem_without_a_gpu_to_read_is_refused_in_one_line(monkeypatch):
    from typer.testing import CliRunner

    from roofline.cli import app
    from roofline.measure import nvml

    monkeypatch.setattr(nvml, "nvml_compute_capability", lambda *a, **k: None)
    r = CliRunner().invoke(app, ["kernels", str(PROBLEMS / "matmul_bf16.py")])
    assert r.exit_code == 2 and "give --gpu NAME" in r.output


def test_problems_and_candidates_are_told_by_what_they_bind_not_by_their_spelling(tmp_path):
    spaced = tmp_path / "spaced.py"
    spaced.write_text("import torch.nn as nn\nclass Model (nn.Module):\n    pass\n"
                      "def get_inputs ():\n    return []\ndef get_init_inputs():\n    return []\n")
    assigned = tmp_path / "assigned.py"
    assigned.write_text("from spaced import Model\nclass Fast(Model):\n    pass\nModelNew = Fast\n")
    imported = tmp_path / "imported.py"
    imported.write_text("from elsewhere import Fast as ModelNew\n")
    commented = tmp_path / "commented.py"
    commented.write_text("# class ModelNew(nn.Module) is what a candidate defines; this file does not\nx = 1\n")
    assert problem.is_problem(spaced) and not problem.is_candidate(spaced)
    assert problem.is_candidate(assigned) and problem.is_candidate(imported) and not problem.is_candidate(commented)
    for f in (assigned, imported):
        problem.declares_candidate(f)
    with pytest.raises(UsageError, match="defines class ModelNew"):
        problem.declares_candidate(commented)


def test_names_bound_inside_if_and_try_blocks_count(tmp_path):
    guarded = tmp_path / "guarded.py"
    guarded.write_text("try:\n    from fastmod import Fast as ModelNew\nexcept ImportError:\n"
                       "    class ModelNew:\n        pass\nModelNew2, VERSION = 1, 2\n")
    problem_file = tmp_path / "guarded_problem.py"
    problem_file.write_text("if True:\n    class Model:\n        pass\n"
                            "def get_inputs():\n    return []\ndef get_init_inputs():\n    return []\n")
    assert problem.is_candidate(guarded) and problem.is_problem(problem_file)
    assert {"ModelNew", "ModelNew2", "VERSION"} <= problem.top_level_names(guarded)


def test_grading_a_problem_without_a_gpu_says_what_can_be_done_without_one(monkeypatch, tmp_path):
    pytest.importorskip("torch")
    from typer.testing import CliRunner

    from roofline.cli import app
    from roofline.measure import nvml
    monkeypatch.setattr(nvml, "gpu_available", lambda: False)
    new = tmp_path / "new.py"
    new.write_text("import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x.clamp(0, 1)\n")
    r = CliRunner().invoke(app, ["run", str(PROBLEMS / "clamp.py"), str(new), "--out", str(tmp_path / "g.json")])
    assert r.exit_code == 1 and "Traceback" not in r.output
    line = " ".join(r.output.split())
    assert "no CUDA GPU with a working driver found" in line
    assert (f"the reference and the candidates are checked and timed on a GPU only; without one, `roofline kernels "
            f"{PROBLEMS / 'clamp.py'} --gpu NAME` gives the problem's work and speed of light") in line


def test_a_triangles_share_is_counted_from_its_geometry():
    # no torch needed: tril keeps j <= i + d, triu keeps j >= i + d, over rows x cols
    from roofline.workload.masks import Triangle

    assert Triangle(True, 0).within(4, 4) == 1 + 2 + 3 + 4
    assert Triangle(False, 1).within(4, 4) == 3 + 2 + 1 + 0  # strictly above the diagonal
    assert Triangle(True, 0).within(2, 5) == 1 + 2  # fewer queries than keys, aligned top-left
    assert Triangle(True, 3).within(2, 5) == 4 + 5  # aligned bottom-right: the last two queries of five
    assert Triangle(True, -5).within(3, 3) == 0 and Triangle(False, -5).within(3, 3) == 9
    assert Triangle(True, 0, inside=False).true_share(4, 4) == 6 / 16  # `tril(ones) == 0`: true above it
    band = Triangle.between(-2, 0)  # a window of three keys: j from i - 2 to i
    assert band.within(4, 4) == 1 + 2 + 3 + 3 and band.turned().within(4, 4) == 3 + 3 + 2 + 1
    assert band.shifted(1).within(2, 4) == 2 + 3 and band.flipped().true_share(4, 4) == 7 / 16
    # `&` and `|` of two patterns: a triangle less a lower one is a band; a band less a narrower one is not one
    lower, below = Triangle(True, 0), Triangle(True, -3)
    assert Triangle.both(lower, below.flipped()) == Triangle.between(-2, 0)
    assert Triangle.either(lower.flipped(), below) == Triangle.between(-2, 0, inside=False)
    assert Triangle.both(band, Triangle.between(-1, 0).flipped()) is None
    assert Triangle.both(lower.flipped(), Triangle(False, 5).flipped()) == Triangle.between(1, 4)
    assert Triangle.both(band.flipped(), Triangle.between(-1, 3).flipped()) == Triangle.between(-2, 3, inside=False)
    assert Triangle.both(Triangle.between(0, 1).flipped(), Triangle.between(5, 6).flipped()) is None  # two gaps
    assert Triangle.both(Triangle(False, 4), Triangle(True, 1)).within(8, 8) == 0  # disjoint: nothing kept


@needs_torch
def test_a_causal_mask_written_out_counts_the_products_it_keeps(tmp_path):
    # minGPT's form: a tril buffer sliced to T, `== 0` filled with -inf, softmax, then att @ v
    init = ("        self.register_buffer('bias', torch.tril(torch.ones(1024, 1024)).view(1, 1, 1024, 1024))")
    qkv = "[torch.randn(2, 4, 256, 64) for _ in range(3)]"
    product = 2 * 4 * 256 * 256 * 64 * 2  # each of q @ k^T and att @ v
    kept = (256 * 257 // 2) / 256 ** 2
    body = ("        q, k, v = xs\n        att = (q @ k.transpose(-2, -1)) * 0.125\n"
            "        att = att.masked_fill(self.bias[:, :, :256, :256] == 0, float('-inf'))\n"
            "        return torch.softmax(att, dim=-1) @ v")
    w = _problem(tmp_path, "mingpt", init, body, qkv)
    assert w.flops == {"fp32": pytest.approx(2 * product * kept)}
    assert "an attention mask written out (masked_fill with a triangular mask over 256 x 256 scores): 0.502" in w.source
    # the same with `where` and a triu of bools made in the forward, its rows from 128 (the last 128 queries)
    late = sum(129 + i for i in range(128)) / (128 * 256)  # query i of the last 128 attends keys 0..128+i
    body = ("        q, k, v = xs\n        s = q[:, :, :128] @ k.transpose(-2, -1)\n"
            "        m = torch.triu(torch.ones(256, 256, dtype=torch.bool, device=q.device), diagonal=1)[128:]\n"
            "        return torch.softmax(torch.where(m, float('-inf'), s), dim=-1) @ v")
    w = _problem(tmp_path, "where", "        pass", body, qkv)
    assert w.flops == {"fp32": pytest.approx(product * late)}
    # Hugging Face GPT-2's form: the bool tril buffer's rows of the last 128 queries of 256 keys, where()
    # against a full([]) of the type's lowest
    body = ("        q, k, v = xs\n        s = q[:, :, 128:] @ k.transpose(-2, -1)\n"
            "        low = torch.full([], torch.finfo(s.dtype).min, dtype=s.dtype, device=s.device)\n"
            "        s = torch.where(self.bias[:, :, 128:256, :256].bool(), s, low)\n"
            "        return torch.softmax(s, dim=-1) @ v")
    w = _problem(tmp_path, "gpt2", init, body, qkv)
    assert w.flops == {"fp32": pytest.approx(product * late)}
    # in place, the mask made in the forward
    body = ("        q, k, v = xs\n        att = q @ k.transpose(-2, -1)\n"
            "        att.masked_fill_(torch.ones(256, 256, device=q.device).tril_() == 0, float('-inf'))\n"
            "        return torch.softmax(att, dim=-1) @ v")
    w = _problem(tmp_path, "in_place", "        pass", body, qkv)
    assert w.flops == {"fp32": pytest.approx(2 * product * kept)}
    # turned by a permute: the strict upper triangle of a 256 x 128 mask is the strict lower one of its 128 x 256
    body = ("        q, k, v = xs\n        s = q[:, :, :128] @ k.transpose(-2, -1)\n"
            "        m = torch.ones(256, 128, device=q.device).triu(1).bool().permute(1, 0)\n"
            "        return torch.softmax(s.masked_fill(m, float('-inf')), dim=-1) @ v")
    w = _problem(tmp_path, "permuted", "        pass", body, qkv)
    assert w.flops == {"fp32": pytest.approx(product * sum(256 - i for i in range(128)) / (128 * 256))}
    # scores also read whole (their sum returned beside the attention) need every product of q @ k^T
    body = ("        q, k, v = xs\n        s = q @ k.transpose(-2, -1)\n"
            "        att = torch.softmax(s.masked_fill(self.bias[:, :, :256, :256] == 0, float('-inf')), -1)\n"
            "        return att @ v, s.sum()")
    w = _problem(tmp_path, "whole", init, body, qkv)
    assert w.flops == {"fp32": pytest.approx(product + product * kept)}
    assert ("0.502 of its products counted, but for the product that made the scores: they are also read whole by "
            "another op, which needs every one") in w.source
    # a tril of values (an input's), a mask given as an input, or one filled after the softmax: not read
    body = ("        q, k, v, m = xs\n        s = (q @ k.transpose(-2, -1)).masked_fill(torch.tril(m) == 0, -1e9)\n"
            "        return torch.softmax(s, -1) @ v")
    values = _problem(tmp_path, "values", "        pass", body,
                      "[torch.randn(2, 4, 256, 64) for _ in range(3)] + [torch.rand(256, 256)]")
    assert values.flops == {"fp32": 2 * product}
    body = "        q, k, v, m = xs\n        return torch.softmax((q @ k.transpose(-2, -1)).masked_fill(m, -1e9), -1) @ v"
    given = _problem(tmp_path, "given", "        pass", body,
                     "[torch.randn(2, 4, 256, 64) for _ in range(3)] + [torch.rand(256, 256) > 0.5]")
    assert given.flops == {"fp32": 2 * product} and "causal mask" not in given.source
    told = problem.work(problem.load(tmp_path / "given.py")).warnings
    assert told == ("scores filled with -1e+09 by masked_fill through a mask not read (an input, drawn at random, or "
                    "computed from either): their products counted whole (a causal mask is read as such from tril or "
                    "triu, from values made of numbers alone, or from scaled_dot_product_attention's is_causal)",)
    body = ("        q, k, v = xs\n        att = torch.softmax(q @ k.transpose(-2, -1), -1)\n"
            "        return att.masked_fill(self.bias[:, :, :256, :256] == 0, 0.0) @ v")
    after = _problem(tmp_path, "after", init, body, qkv)
    assert after.flops == {"fp32": 2 * product}


@needs_torch
def test_an_additive_causal_mask_counts_the_products_it_keeps(tmp_path):
    # -inf above the diagonal, 0 on and below it, added to the scores: nn.Transformer's square
    # subsequent mask (a triu of a full of -inf), sliced to T from a longer buffer
    qkv = "[torch.randn(2, 4, 256, 64) for _ in range(3)]"
    product = 2 * 4 * 256 * 256 * 64 * 2  # each of q @ k^T and att @ v
    kept = (256 * 257 // 2) / 256 ** 2
    square = "        self.register_buffer('m', nn.Transformer.generate_square_subsequent_mask({}))"
    body = ("        q, k, v = xs\n        att = (q @ k.transpose(-2, -1)) * 0.125 + self.m[:256, :256]\n"
            "        return torch.softmax(att, dim=-1) @ v")
    w = _problem(tmp_path, "square", square.format(1024), body, qkv)
    assert w.flops == {"fp32": pytest.approx(2 * product * kept)}
    assert "(add with an additive triangular mask over 256 x 256 scores): 0.502 of its products counted" in w.source
    body = ("        q, k, v = xs\n        att = q @ k.transpose(-2, -1)\n        att += self.m[:256, :256]\n"
            "        return torch.softmax(att, dim=-1) @ v")  # in place
    assert _problem(tmp_path, "in_place", square.format(1024), body, qkv).flops == {"fp32": pytest.approx(2 * product * kept)}
    # PyTorch's language-model tutorial: a bool triangle transposed, cast, filled with -inf, then 0.0 on its
    # other side, added first; and where(mask, 0, -inf) of the last 128 rows
    body = ("        q, k, v = xs\n        mask = (torch.triu(torch.ones(256, 256, device=q.device)) == 1).transpose(0, 1)\n"
            "        mask = mask.float().masked_fill(mask == 0, float('-inf')).masked_fill(mask == 1, float(0.0))\n"
            "        return torch.softmax(mask + q @ k.transpose(-2, -1), dim=-1) @ v")
    assert _problem(tmp_path, "tutorial", "        pass", body, qkv).flops == {"fp32": pytest.approx(2 * product * kept)}
    late = sum(129 + i for i in range(128)) / (128 * 256)  # query i of the last 128 attends keys 0..128+i
    body = ("        q, k, v = xs\n        m = torch.tril(torch.ones(256, 256, dtype=torch.bool, device=q.device))[128:]\n"
            "        s = q[:, :, 128:] @ k.transpose(-2, -1) + torch.where(m, 0.0, float('-inf'))\n"
            "        return torch.softmax(s, dim=-1) @ v")
    assert _problem(tmp_path, "where0", "        pass", body, qkv).flops == {"fp32": pytest.approx(product * late)}
    # the mask as baddbmm's addend, and as scaled_dot_product_attention's attn_mask (float and bool)
    body = ("        q, k, v = [x.reshape(8, 256, 64) for x in xs]\n"
            "        s = torch.baddbmm(self.m, q * 0.125, k.transpose(-2, -1))\n        return torch.bmm(torch.softmax(s, -1), v)")
    assert _problem(tmp_path, "baddbmm", square.format(256), body, qkv).flops == {"fp32": pytest.approx(2 * product * kept)}
    body = "        q, k, v = xs\n        return nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=self.m)"
    w = _problem(tmp_path, "sdpa_float", square.format(256), body, qkv)
    assert w.flops == {"fp32": pytest.approx(2 * product * kept)}
    assert "its attn_mask an attention mask written out: 0.502 of its queries-by-keys products" in w.source
    body = ("        q, k, v = xs\n        m = torch.ones(256, 256, dtype=torch.bool, device=q.device).tril()\n"
            "        return nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m)")
    assert _problem(tmp_path, "sdpa_bool", "        pass", body, qkv).flops == {"fp32": pytest.approx(2 * product * kept)}
    # nn.MultiheadAttention given the mask (it takes its products through baddbmm, or SDPA without weights):
    # its four projections whole, its two products the kept share
    projections = 4 * 2 * 512 * 256 * 256
    for weights in ("True", "False"):
        init = ("        self.mha = nn.MultiheadAttention(256, 4, batch_first=True)\n" + square.format(256))
        body = f"        x = xs[0].reshape(2, 256, 256)\n        return self.mha(x, x, x, attn_mask=self.m, need_weights={weights})[0]"
        w = _problem(tmp_path, f"mha{weights}", init, body, qkv)
        assert w.flops == {"fp32": pytest.approx(projections + 2 * product * kept)}, weights
    # not read: a mask of zeros and ones added (no -inf), an input's triangle, -1 (softmax keeps what it fills)
    for i, body in enumerate([
            "        q, k, v, _ = xs\n        return torch.softmax(q @ k.transpose(-2, -1) + torch.ones(256, 256, device=q.device).tril(), -1) @ v",
            "        q, k, v, m = xs\n        return torch.softmax(q @ k.transpose(-2, -1) + torch.triu(m, 1), -1) @ v",
            "        q, k, v, _ = xs\n        return torch.softmax(q @ k.transpose(-2, -1) + torch.full((256, 256), -1.0, device=q.device).triu(1), -1) @ v"]):
        w = _problem(tmp_path, f"not{i}", "        pass", body, qkv + " + [torch.randn(256, 256)]")
        assert w.flops == {"fp32": 2 * product} and "causal mask" not in w.source, i


@needs_torch
def test_attention_inside_torchs_own_modules_is_read_at_its_precision_and_causal_share(tmp_path):
    # nn.MultiheadAttention calls scaled_dot_product_attention from inside F.multi_head_attention_forward:
    # its products at BF16 (not the meta device's FP32 fallback), and the out projection after it counted
    T, E = 256, 256
    projections = 4 * 2 * 2 * T * E * E  # q, k, v and out, batch 2
    products = 2 * 2 * 2 * T * T * E  # q @ k^T and att @ v over 4 heads of 64, batch 2
    kept = (T * (T + 1) // 2) / T ** 2
    x = "[torch.randn(2, 256, 256, dtype=torch.bfloat16)]"
    init = "        self.mha = nn.MultiheadAttention(256, 4, batch_first=True, dtype=torch.bfloat16)"
    body = "        x = xs[0]\n        return self.mha(x, x, x, need_weights=False)[0]"
    assert _problem(tmp_path, "mha", init, body, x).flops == {"bf16_tensor": pytest.approx(projections + products)}
    body = ("        x = xs[0]\n        m = nn.Transformer.generate_square_subsequent_mask(256, device=x.device, dtype=x.dtype)\n"
            "        return self.mha(x, x, x, attn_mask=m, is_causal=True, need_weights=False)[0]")
    w = _problem(tmp_path, "mha_causal", init, body, x)
    assert w.flops == {"bf16_tensor": pytest.approx(projections + products * kept)}
    # PyTorch's tutorial model: nn.TransformerEncoder given the square subsequent mask and no is_causal (PyTorch
    # compares the mask's values with a causal one's, which the meta device has not): its attention the kept share
    init = ("        layer = nn.TransformerEncoderLayer(256, 4, 512, dropout=0.1)\n"
            "        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)")
    body = "        src = xs[0]\n        return self.encoder(src, nn.Transformer.generate_square_subsequent_mask(src.size(0), device=src.device))"
    w = _problem(tmp_path, "tutorial", init, body, "[torch.randn(256, 2, 256)]")
    layer = projections + products * kept + 2 * (2 * 2 * T * E * 512)
    assert w.flops == {"fp32": pytest.approx(2 * layer)}
    # causal_lower_right: the last 64 queries of 256 keys, query i attending keys 0 to 192 + i
    body = ("        q, k, v = xs\n        from torch.nn.attention.bias import causal_lower_right\n"
            "        return nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=causal_lower_right(64, 256))")
    qkv = "[torch.randn(2, 4, 64, 32), torch.randn(2, 4, 256, 32), torch.randn(2, 4, 256, 32)]"
    w = _problem(tmp_path, "lower_right", "        pass", body, qkv)
    share = sum(193 + i for i in range(64)) / (64 * 256)
    assert w.flops == {"fp32": pytest.approx(2 * (2 * 2 * 4 * 64 * 256 * 32) * share)}
    # the same bias made once, in the constructor
    init = "        from torch.nn.attention.bias import causal_lower_right\n        self.bias = causal_lower_right(64, 256)"
    body = "        return nn.functional.scaled_dot_product_attention(*xs, attn_mask=self.bias)"
    w = _problem(tmp_path, "lower_right_made_once", init, body, qkv)
    assert w.flops == {"fp32": pytest.approx(2 * (2 * 2 * 4 * 64 * 256 * 32) * share)}


@needs_torch
def test_a_causal_mask_is_followed_through_the_forms_attention_code_writes(tmp_path):
    qkv = "[torch.randn(2, 4, 128, 32) for _ in range(3)]"
    product = 2 * 2 * 4 * 128 * 128 * 32
    kept = (128 * 129 // 2) / 128 ** 2
    forms = {
        # einsum's views and permutes around its bmm, a triu of bools filled with -finfo.max
        "einsum": ("        q, k, v = xs\n        s = torch.einsum('bhid,bhjd->bhij', q, k)\n"
                   "        m = torch.ones(128, 128, dtype=torch.bool, device=q.device).triu(1)\n"
                   "        a = s.masked_fill(m, -torch.finfo(s.dtype).max).softmax(-1)\n"
                   "        return torch.einsum('bhij,bhjd->bhid', a, v)"),
        # a softmax written out: x - max, exp, over the row sums
        "softmax": ("        q, k, v = xs\n        s = (q @ k.transpose(-2, -1)).masked_fill(torch.ones(128, 128, device=q.device)"
                    ".tril() == 0, float('-inf'))\n        e = torch.exp(s - s.amax(-1, keepdim=True))\n"
                    "        return (e / e.sum(-1, keepdim=True)) @ v"),
        # a bias added first (ALiBi), then the additive mask
        "alibi": ("        q, k, v, bias = xs\n        s = q @ k.transpose(-2, -1) + bias\n"
                  "        s = s + torch.full((128, 128), float('-inf'), device=q.device).triu(1)\n"
                  "        return torch.softmax(s, -1) @ v"),
        # filled by indexing with the mask
        "index": ("        q, k, v = xs\n        s = q @ k.transpose(-2, -1)\n"
                  "        s[:, :, ~torch.ones(128, 128, dtype=torch.bool, device=q.device).tril()] = float('-inf')\n"
                  "        return torch.softmax(s, -1) @ v"),
        # the fill value a one-element tensor made on the CPU and moved
        "tensor_value": ("        q, k, v = xs\n        s = q @ k.transpose(-2, -1)\n"
                         "        low = torch.tensor(torch.finfo(s.dtype).min).to(s.device)\n"
                         "        m = torch.ones(128, 128, dtype=torch.bool, device=q.device).tril()\n"
                         "        return torch.softmax(torch.where(m, s, low), -1) @ v"),
    }
    for name, body in forms.items():
        inputs = qkv + (" + [torch.randn(4, 128, 128)]" if name == "alibi" else "")
        assert _problem(tmp_path, name, "        pass", body, inputs).flops == {"fp32": pytest.approx(2 * product * kept)}, name
    # Hugging Face GPT-2's older form: the fill value a one-element buffer (`masked_bias`), the model built on the
    # meta device, or on the CPU where its constructor reads a value (`.item()`) and then moved
    held = ("        q, k, v = xs\n        s = q @ k.transpose(-2, -1)\n"
            "        m = torch.ones(128, 128, dtype=torch.bool, device=q.device).tril()\n"
            "        return torch.softmax(torch.where(m, s, self.low.to(s.dtype)), -1) @ v")
    buffer = "        self.register_buffer('low', torch.tensor(-1e4))"
    for name, init in [("held", buffer), ("held_on_cpu", buffer + "\n        self.n = int(torch.ones(2).sum().item())")]:
        assert _problem(tmp_path, name, init, held, qkv).flops == {"fp32": pytest.approx(2 * product * kept)}, name
    # a band (a sliding window: the triu of a tril, or the tril of a triu, its rows sliced): query i attends
    # keys i - 32 to i, the share of pairs counted from both bounds
    window = sum(min(i, 32) + 1 for i in range(128)) / 128 ** 2
    ones = "torch.ones(128, 128, dtype=torch.bool, device=q.device)"
    for name, m in [("band", "torch.ones(128, 128, device=q.device).tril().triu(-32)"),
                    ("band_other_order", "torch.ones(256, 128, device=q.device).triu(-32).tril()[:128]"),
                    ("band_and", f"{ones}.tril() & ~{ones}.tril(-33)"),
                    ("band_logical_and", f"torch.logical_and({ones}.tril(), {ones}.triu(-32))"),
                    ("band_or", f"~({ones}.triu(1) | {ones}.tril(-33))")]:
        body = (f"        q, k, v = xs\n        m = {m}\n"
                "        return torch.softmax((q @ k.transpose(-2, -1)).masked_fill(m == 0, float('-inf')), -1) @ v")
        w = _problem(tmp_path, name, "        pass", body, qkv)
        assert w.flops == {"fp32": pytest.approx(2 * product * window)}, name
    # two additive masks added (-inf where either is), one of them in place
    added = ("        q, k, v = xs\n        inf = torch.full((128, 128), float('-inf'), device=q.device)\n"
             "        m = inf.triu(1)\n        m += inf.tril(-33)\n"
             "        return torch.softmax(q @ k.transpose(-2, -1) + m, -1) @ v")
    assert _problem(tmp_path, "added", "        pass", added, qkv).flops == {"fp32": pytest.approx(2 * product * window)}
    # masks no triangle describes, read from their values (made of numbers alone): a prefix language model's (a
    # causal mask written in place, its first 64 keys seen by every query), a window made by comparing positions
    # (boolean, or added as -inf), the same given to scaled_dot_product_attention broadcast over heads
    prefix = ("        q, k, v = xs\n        m = torch.ones(128, 128, dtype=torch.bool, device=q.device).tril()\n"
              "        m[:, :64] = True\n"
              "        return torch.softmax((q @ k.transpose(-2, -1)).masked_fill(~m, float('-inf')), -1) @ v")
    seen = sum(max(i + 1, 64) for i in range(128)) / 128 ** 2
    assert _problem(tmp_path, "prefix", "        pass", prefix, qkv).flops == {"fp32": pytest.approx(2 * product * seen)}
    positions = "        q, k, v = xs\n        i = torch.arange(128, device=q.device)\n        d = i[:, None] - i[None, :]\n"
    for name, rest in [
            ("compared", "        s = (q @ k.transpose(-2, -1)).masked_fill((d < 0) | (d > 32), float('-inf'))\n"
                         "        return torch.softmax(s, -1) @ v"),
            ("compared_added", "        bias = torch.zeros(128, 128, device=q.device).masked_fill((d < 0) | (d > 32), "
                               "float('-inf'))\n        return torch.softmax(q @ k.transpose(-2, -1) + bias, -1) @ v"),
            ("compared_sdpa", "        ok = ((d >= 0) & (d <= 32))[None, None]\n"
                              "        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=ok)")]:
        w = _problem(tmp_path, name, "        pass", positions + rest, qkv)
        assert w.flops["fp32"] == pytest.approx(2 * product * window, rel=1e-6), name
    # not read, counted whole and said: a mask written in place from an input's values, a random mask, a fill value
    # the meta device does not hold
    from_input = ("        q, k, v = xs\n        m = torch.ones(128, 128, dtype=torch.bool, device=q.device).tril()\n"
                  "        m[:, :64] = q[0, 0, :, :1] > 0\n"
                  "        return torch.softmax((q @ k.transpose(-2, -1)).masked_fill(~m, torch.finfo(q.dtype).min), -1) @ v")
    drawn = ("        q, k, v = xs\n        m = torch.rand(128, 128, device=q.device) > 0.5\n"
             "        return torch.softmax((q @ k.transpose(-2, -1)).masked_fill(m, float('-inf')), -1) @ v")
    given = ("        q, k, v, low = xs\n        s = q @ k.transpose(-2, -1)\n"
             "        m = torch.ones(128, 128, dtype=torch.bool, device=q.device).tril()\n"
             "        return torch.softmax(torch.where(m, s, low), -1) @ v")
    for name, init, body, said in [
            ("from_input", "        pass", from_input, "filled with torch.finfo(torch.float32).min by masked_fill through a "
                                                       "mask not read"),
            ("drawn", "        pass", drawn, "scores filled with -inf by masked_fill through a mask not read"),
            ("given", "        pass", given, "a value the meta device does not hold")]:
        _problem(tmp_path, name, init, body, qkv + (" + [torch.tensor(-1e4)]" if name == "given" else ""))
        found = problem.work(problem.load(tmp_path / f"{name}.py"))
        assert found.work.flops == {"fp32": 2 * product} and any(said in w for w in found.warnings), name


@needs_torch
def test_a_problem_that_prints_or_ends_the_process_leaves_the_listing_whole(tmp_path):
    # what a problem prints goes to standard error (--json stays one document); os._exit, at import or in its
    # forward, is one line for that file, and the other files are read
    from typer.testing import CliRunner

    from roofline.cli import app

    good = tmp_path / "good.py"
    good.write_text((PROBLEMS / "matmul_bf16.py").read_text())
    source = (PROBLEMS / "clamp.py").read_text()
    (tmp_path / "prints.py").write_text("print('hello from import')\n" + source)
    (tmp_path / "ends.py").write_text("import os\nos._exit(0)\n" + source)
    r = CliRunner().invoke(app, ["kernels", str(good), str(tmp_path / "prints.py"), str(tmp_path / "ends.py"),
                                 "--gpu", "h200", "--json"])
    assert r.exit_code == 2
    doc = json.loads(r.stdout)
    assert [p["name"] for p in doc["problems"]] == ["good", "prints"]
    assert doc["errors"] == [f"{tmp_path / 'ends.py'}: importing it raised ExitCalled: it called os._exit(0)"]


@needs_torch
def test_a_problem_needing_a_package_to_install_fails_the_listing_as_a_run_not_as_bad_input(tmp_path):
    from typer.testing import CliRunner

    from roofline.cli import app

    good = tmp_path / "good.py"
    good.write_text((PROBLEMS / "matmul_bf16.py").read_text())
    needs = tmp_path / "needs.py"
    needs.write_text("import roofline_no_such_package\n" + (PROBLEMS / "matmul_bf16.py").read_text())
    broken = tmp_path / "broken.py"
    broken.write_text("def (:\n")
    r = CliRunner().invoke(app, ["kernels", str(good), str(needs), "--gpu", "h200"], env={"COLUMNS": "200"})
    assert r.exit_code == 1 and "good" in r.output and "Traceback" not in r.output
    assert "it imports roofline_no_such_package, which this Python cannot find" in r.output
    r = CliRunner().invoke(app, ["kernels", str(good), str(needs), str(broken), "--gpu", "h200"])
    assert r.exit_code == 2  # a file that is no problem at all is bad input, whatever else failed


@needs_torch
def test_a_mask_reading_that_trips_counts_every_product_whole_and_says_so(tmp_path, monkeypatch):
    from roofline.workload import masks

    def trips(self, name, args, out):
        raise IndexError("tuple index out of range")
    monkeypatch.setattr(masks.MaskTracker, "_filled", trips)
    init = "        self.register_buffer('bias', torch.tril(torch.ones(64, 64)))"
    body = ("        q, k, v = xs\n        att = (q @ k.transpose(-2, -1)).masked_fill(self.bias == 0, float('-inf'))\n"
            "        return torch.softmax(att, -1) @ v")
    _problem(tmp_path, "trips", init, body, "[torch.randn(2, 64, 32) for _ in range(3)]")
    found = problem.work(problem.load(tmp_path / "trips.py"))
    assert found.work.flops == {"fp32": 2 * (2 * 64 * 64 * 32 * 2)}
    assert found.warnings == ("reading its causal masks stopped at masked_fill: IndexError: every product counted whole",)


@needs_torch
def test_masks_in_the_forms_of_public_attention_code_count_the_products_they_keep(tmp_path):
    # forms from public models (a new user's trial): each mask's kept pairs hand-counted, 128 x 128 scores
    qkv = "[torch.randn(2, 4, 128, 32) for _ in range(3)]"
    product = 2 * 2 * 4 * 128 * 128 * 32
    causal = (128 * 129 // 2) / 128 ** 2
    window = sum(min(i, 32) + 1 for i in range(128)) / 128 ** 2  # query i attends keys i - 32 to i
    head = "        q, k, v = xs\n        s = q @ k.transpose(-2, -1)\n"
    tri = "torch.ones(128, 128, dtype=torch.bool, device=q.device).tril()"
    forms = {
        # a padding mask written as constants (batch 1 padded to 100 keys), with the causal one: batch 0 keeps the
        # triangle, batch 1 its first 100 keys
        "constants": ("        lengths = torch.tensor([[1] * 128, [1] * 100 + [0] * 28], device=q.device)\n"
                      f"        keep = {tri} & (lengths[:, None, None, :] == 1)\n"
                      "        return torch.softmax(s.masked_fill(~keep, float('-inf')), -1) @ v",
                      (128 * 129 // 2 + sum(min(i + 1, 100) for i in range(128))) / 2 / 128 ** 2),
        # BLOOM's: a causal mask written into torch.empty whole
        "empty": ("        i = torch.arange(128, device=q.device)\n"
                  "        m = torch.empty((128, 128), dtype=torch.bool, device=q.device)\n"
                  "        m[:, 0:] = i[:, None] < i[None, :]\n"
                  "        return torch.softmax(s.masked_fill(m, float('-inf')), -1) @ v", causal),
        # two fills, the second narrowing the first (a window after the causal triangle)
        "two_fills": (f"        s = s.masked_fill(~{tri}, float('-inf'))\n"
                      "        s = s.masked_fill(torch.ones(128, 128, dtype=torch.bool, device=q.device).tril(-33), "
                      "float('-inf'))\n        return torch.softmax(s, -1) @ v", window),
        # scaled in place first, clamped at the type's lowest after (OPT's torch.max), a soft cap before (Gemma 2)
        "in_place": (f"        s.mul_(0.125)\n        s.masked_fill_(~{tri}, float('-inf'))\n"
                     "        return torch.softmax(s, -1) @ v", causal),
        "clamped": (f"        s = s.masked_fill(~{tri}, torch.finfo(s.dtype).min)\n"
                    "        s = torch.max(s, torch.tensor(torch.finfo(s.dtype).min, device=s.device))\n"
                    "        return torch.softmax(s, -1) @ v", causal),
        "soft_cap": (f"        s = torch.tanh(s / 50.0) * 50.0\n        s = s.masked_fill(~{tri}, float('-inf'))\n"
                     "        return torch.softmax(s, -1) @ v", causal),
        # OpenAI GPT's multiplicative form, and GPT-2's TF port of it subtracting
        "times_mask": (f"        b = {tri}.float()\n        s = s * b + -1e4 * (1 - b)\n"
                       "        return torch.softmax(s, -1) @ v", causal),
        "minus": (f"        b = {tri}.float()\n        s = s * b - 1e10 * (1 - b)\n"
                  "        return torch.softmax(s, -1) @ v", causal),
        # an integer index fill of the upper triangle
        "indices": ("        iu = torch.triu_indices(128, 128, 1, device=q.device)\n"
                    "        s[:, :, iu[0], iu[1]] = float('-inf')\n        return torch.softmax(s, -1) @ v", causal),
        # T5's: a learned bias plus the mask, added to the scores
        "bias_plus_mask": ("        m = torch.full((128, 128), float('-inf'), device=q.device).triu(1)\n"
                           "        return torch.softmax(s + (self.rel + m), -1) @ v", causal),
    }
    init = "        self.rel = nn.Parameter(torch.randn(4, 128, 128))"
    for name, (body, share) in forms.items():
        w = _problem(tmp_path, name, init, head + body, qkv)
        assert w.flops == {"fp32": pytest.approx(2 * product * share)}, name
    # probabilities times a 0/1 mask after the softmax: the softmax reads every score (the first product whole),
    # the second product multiplies the kept ones alone
    after = f"        p = torch.softmax(s, -1) * {tri}.float()\n        return p @ v"
    assert _problem(tmp_path, "after", init, head + after, qkv).flops == {"fp32": pytest.approx(product * (1 + causal))}
    # a bias known by its values (ALiBi's slopes times positions, zero on the diagonal) added before the mask: a bias
    alibi = ("        pos = torch.arange(128, device=q.device)\n"
             "        bias = torch.tensor([0.5, 0.25, 0.125, 0.0625], device=q.device)[:, None, None] * "
             "(pos[None, :] - pos[:, None]).float()\n"
             f"        s = (s + bias).masked_fill(~{tri}, float('-inf'))\n        return torch.softmax(s, -1) @ v")
    assert _problem(tmp_path, "alibi_known", init, head + alibi, qkv).flops == {"fp32": pytest.approx(2 * product * causal)}


@needs_torch
def test_kernels_json_carries_each_problems_warnings(tmp_path):
    from typer.testing import CliRunner

    from roofline.cli import app

    body = "        q, k, v, m = xs\n        return torch.softmax((q @ k.transpose(-2, -1)).masked_fill(m, -1e9), -1) @ v"
    _problem(tmp_path, "given", "        pass", body, "[torch.randn(2, 4, 64, 32) for _ in range(3)] + [torch.rand(64, 64) > 0.5]")
    _problem(tmp_path, "plain", "        pass", "        return xs[0] @ xs[1]", "[torch.randn(64, 64), torch.randn(64, 64)]")
    r = CliRunner().invoke(app, ["kernels", str(tmp_path / "given.py"), str(tmp_path / "plain.py"), "--gpu", "h200",
                                 "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    given, plain = doc["problems"]
    assert len(given["warnings"]) == 1 and given["warnings"][0].startswith("scores filled with -1e+09 by masked_fill")
    assert plain["warnings"] == [] and f"given: {given['warnings'][0]}" in doc["notes"]



@needs_torch
def test_scores_added_to_a_mask_given_as_an_input_count_whole_and_say_so_once(tmp_path):
    # BERT's extended attention mask, (1 - mask) * -10000 of an integer input, in two layers
    body = ("        q, k, v, mask = xs\n        ext = (1.0 - mask[:, None, None, :].to(q.dtype)) * -10000.0\n"
            "        for _ in range(2):\n            q = torch.softmax(q @ k.transpose(-2, -1) + ext, -1) @ v\n"
            "        return q")
    _problem(tmp_path, "bert", "        pass", body,
             "[torch.randn(2, 4, 64, 32) for _ in range(3)] + [torch.ones(2, 64, dtype=torch.long)]")
    found = problem.work(problem.load(tmp_path / "bert.py"))
    assert found.work.flops == {"fp32": 2 * 2 * (2 * 2 * 4 * 64 * 64 * 32)}
    assert found.warnings == ("scores added to a mask given as an input (whatever get_inputs draws, its values are not "
                              "read): their products counted whole",)
    # token ids, an integer input embedded: the scores of what is made of them are no mask, and a causal mask reads
    init = "        self.emb = nn.Embedding(100, 32)"
    body = ("        x = self.emb(xs[0])\n        s = x @ x.transpose(-2, -1)\n"
            "        s = s + torch.full((64, 64), float('-inf'), device=s.device).triu(1)\n"
            "        return torch.softmax(s, -1) @ x")
    _problem(tmp_path, "ids", init, body, "[torch.randint(0, 100, (64,))]")
    found = problem.work(problem.load(tmp_path / "ids.py"))
    assert found.warnings == () and found.work.flops == {"fp32": pytest.approx(2 * (2 * 64 * 64 * 32) * 65 / 128)}


@needs_torch
def test_a_forward_that_branches_on_its_inputs_values_is_read_with_one_draws(tmp_path):
    # Hugging Face's masks skip a padding mask whose every value is 1 (`padding_mask.all()`): on the meta device no
    # value is held; the inputs of one draw, drawn on the CPU, answer the branch, and it is said
    body = ("        x, mask = xs\n        if mask.all():\n            return x @ x.transpose(-2, -1)\n"
            "        return (x @ x.transpose(-2, -1)) * mask[:, None, :]")
    _problem(tmp_path, "branch", "        pass", body, "[torch.randn(2, 64, 32), torch.ones(2, 64, dtype=torch.long)]")
    found = problem.work(problem.load(tmp_path / "branch.py"))
    assert found.work.flops == {"fp32": 2 * 2 * 64 * 64 * 32}
    assert found.warnings == ("its forward branches on its inputs' values (a tensor's truth or .item(), 1 time): read "
                              "with those of draw 0, drawn on the CPU; another draw may take another branch",)
    # a mask given as an input is never read from those values: its products count whole, and it is said
    body = ("        q, mask = xs\n        s = (q @ q.transpose(-2, -1)).masked_fill(mask == 0, float('-inf'))\n"
            "        if mask.any():\n            s = s * 1.0\n        return torch.softmax(s, -1) @ q")
    _problem(tmp_path, "padded", "        pass", body,
             "[torch.randn(2, 64, 32), torch.ones(64, 64, dtype=torch.long).tril()]")
    found = problem.work(problem.load(tmp_path / "padded.py"))
    assert found.work.flops == {"fp32": 2 * (2 * 2 * 64 * 64 * 32)} and len(found.warnings) == 2


def test_a_grouped_products_flops_are_counted_from_its_shapes():
    # torch._grouped_mm, a mixture of experts' products, has no formula in PyTorch's FLOP counter
    from roofline.workload.problem import grouped_mm_flops

    assert grouped_mm_flops((256, 128), (4, 128, 64), (256, 64)) == 2 * 256 * 128 * 64  # rows of all experts
    assert grouped_mm_flops((4, 32, 128), (4, 128, 64), (4, 32, 64)) == 2 * 4 * 32 * 128 * 64
    assert grouped_mm_flops((32, 512), (512, 64), (4, 32, 64)) == 2 * 32 * 512 * 64  # the contraction split


@needs_torch
def test_a_mixture_of_experts_grouped_product_is_counted(tmp_path):
    body = ("        a, b = xs\n        offs = torch.tensor([16, 32, 48, 64], dtype=torch.int32, device=a.device)\n"
            "        return torch._grouped_mm(a, b, offs=offs)")
    inputs = "[torch.randn(64, 32, dtype=torch.bfloat16), torch.randn(4, 32, 16, dtype=torch.bfloat16)]"
    assert _problem(tmp_path, "moe", "        pass", body, inputs).flops == {"bf16_tensor": 2 * 64 * 32 * 16}


@needs_torch
def test_a_mask_made_in_part_of_an_input_counts_at_its_known_parts_share_and_says_so(tmp_path):
    # a causal or window mask combined with a padding mask given as an input (Hugging Face's eager and SDPA masks
    # with an attention_mask): the known part bounds what is kept, so the work counted is a bound above the work
    qkv = "[torch.randn(2, 4, 128, 32) for _ in range(3)] + [torch.ones(2, 128, dtype=torch.long)]"
    product = 2 * 2 * 4 * 128 * 128 * 32
    causal = (128 * 129 // 2) / 128 ** 2
    window = sum(min(i + 32, 127) - max(i - 32, 0) + 1 for i in range(128)) / 128 ** 2  # |i - j| <= 32
    head = ("        q, k, v, am = xs\n        i = torch.arange(128, device=q.device)\n"
            "        pad = am.bool()[:, None, None, :]\n")
    scores = "        s = q @ k.transpose(-2, -1)\n"
    low = "torch.finfo(q.dtype).min"
    forms = {
        "additive": (scores + f"        m = torch.full((128, 128), {low}, device=q.device).triu(1)\n"
                     f"        p = torch.zeros(2, 1, 1, 128, device=q.device).masked_fill(~pad, {low})\n"
                     "        return torch.softmax(s + (m + p), -1) @ v", causal),
        "filled": (scores + "        keep = (i[:, None] >= i[None, :]) & pad\n"
                   "        return torch.softmax(s.masked_fill(~keep, float('-inf')), -1) @ v", causal),
        "where": (scores + "        keep = (i[:, None] >= i[None, :]) & pad\n"
                  f"        return torch.softmax(s + torch.where(keep, 0.0, {low}), -1) @ v", causal),
        "sdpa": ("        keep = ((i[:, None] - i[None, :]).abs() <= 32) & pad\n"
                 "        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=keep)", window),
    }
    said = ("scores filled through a mask made in part of one given as an input (a padding mask): counted at the share "
            "its known part keeps, a bound above the work (the input's part may keep less)")
    for name, (body, share) in forms.items():
        _problem(tmp_path, name, "        pass", head + body, qkv)
        found = problem.work(problem.load(tmp_path / f"{name}.py"))
        assert found.work.flops == {"fp32": pytest.approx(2 * product * share)}, name
        assert said in found.warnings, name
    # either of the two true (`|`): the known part bounds nothing of what is kept; counted whole, and said
    body = "        keep = (i[:, None] >= i[None, :]) | pad\n" \
           "        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=keep)"
    _problem(tmp_path, "either", "        pass", head + body, qkv)
    found = problem.work(problem.load(tmp_path / "either.py"))
    assert found.work.flops == {"fp32": 2 * product} and found.warnings == (
        "scaled_dot_product_attention's attn_mask made of a mask given as an input (whatever get_inputs draws, its "
        "values are not read): its products counted whole",)


@needs_torch
def test_a_learned_bias_where_a_mask_keeps_and_the_lowest_elsewhere_is_read(tmp_path):
    # T5's SDPA mask: torch.where(causal, position_bias, finfo.min), given as attn_mask or added to the scores
    qkv = "[torch.randn(2, 4, 64, 32) for _ in range(3)]"
    product = 2 * 2 * 4 * 64 * 64 * 32
    init = "        self.bias = nn.Parameter(torch.randn(1, 4, 64, 64))"
    head = ("        q, k, v = xs\n        i = torch.arange(64, device=q.device)\n"
            "        m = torch.where((i[:, None] >= i[None, :])[None, None], self.bias, torch.finfo(q.dtype).min)\n")
    for name, body in [("sdpa", "        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m)"),
                       ("eager", "        return torch.softmax(q @ k.transpose(-2, -1) + m, -1) @ v")]:
        w = _problem(tmp_path, name, init, head + body, qkv)
        assert w.flops == {"fp32": pytest.approx(2 * product * (64 * 65 // 2) / 64 ** 2)}, name


@needs_torch
def test_a_forward_failing_on_the_meta_device_says_its_first_failure_when_reading_it_again_fails_too(tmp_path):
    # read again with one draw's values, it fails again (here: its draw needs a GPU): the meta device's failure is said
    body = "        x = xs[0]\n        return x[x > 0]"  # a shape that depends on values: no meta kernel gives it
    path = tmp_path / "gpu_draw.py"
    path.write_text("import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n    def forward(self, *xs):\n"
                    f"{body}\n\ndef get_inputs():\n    if torch.empty(0).device.type == 'cpu':\n"
                    "        raise RuntimeError('drawn on a GPU only')\n    return [torch.randn(64)]\n\n"
                    "def get_init_inputs():\n    return []\n")
    with pytest.raises(UsageError, match="its forward cannot run on PyTorch's meta device"):
        problem.work(problem.load(path))


@needs_torch
def test_an_op_whose_output_shape_its_inputs_decide_is_read_from_one_draw(tmp_path):
    # bincount, a boolean index and nonzero have no meta kernel: answered from the draw's values on the CPU,
    # their shapes those of draw 0 (2,040 of the 4,096 normal draws above zero, 85 of the 1,000 ints equal to 3)
    work = _problem(tmp_path, "shapes", "        pass", "        x, y = xs\n        return torch.bincount(x, minlength=16), "
                    "y[y > 0], torch.nonzero(x == 3)", "[torch.randint(0, 16, (1000,)), torch.randn(4096)]")
    w = problem.work(problem.load(tmp_path / "shapes.py"))
    torch.manual_seed(0)
    x, y = torch.randint(0, 16, (1000,)), torch.randn(4096)
    positive, threes = int((y > 0).sum()), int((x == 3).sum())
    assert [t.shape for t in w.outputs] == [(16,), (positive,), (threes, 1)]
    assert work.bytes_read == 1000 * 8 + 4096 * 4 and work.bytes_written == 16 * 8 + positive * 4 + threes * 8
    assert any("bincount, index and nonzero have no meta kernel (no run on shapes alone): run on the CPU on the "
               "values of draw 0; where an output's shape follows those values" in m
               for m in w.warnings)


@needs_torch
def test_an_input_written_into_is_not_read(tmp_path):
    # c overwritten by copy_ and by an out= product: a and b read (2 x 256 B), c written (256 B), never read
    w = _problem(tmp_path, "into", "        pass", "        a, b, c = xs\n        c.copy_(a + b)\n"
                 "        torch.mul(a, b, out=c[:8])\n        return c", "[torch.randn(64), torch.randn(64), torch.empty(64)]")
    assert w.bytes_read == 2 * 64 * 4 and w.bytes_written == 64 * 4


@needs_torch
def test_what_a_problems_import_starts_writes_to_stdout_leaves_the_json_whole(tmp_path):
    # a file that builds an extension when imported (torch's load_inline runs ninja, which writes to descriptor 1)
    import subprocess
    import sys

    path = tmp_path / "builds.py"
    path.write_text("import subprocess, sys\nimport torch\n"
                    "subprocess.run([sys.executable, '-c', 'print(\"[1/3] c++ -c main.cpp\")'])\n\n"
                    "class Model(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n\n"
                    "def get_inputs():\n    return [torch.randn(256)]\n\ndef get_init_inputs():\n    return []\n")
    r = subprocess.run([sys.executable, "-m", "roofline", "kernels", str(path), "--gpu", "h200", "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and json.loads(r.stdout)["problems"][0]["bytes_read"] == 256 * 4
    assert "[1/3] c++ -c main.cpp" in r.stderr
