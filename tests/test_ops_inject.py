"""The code `profile --ops` runs inside a profiled program (`nsight/inject/sitecustomize.py`), in a
real Python process started as `profile` starts one (`nsight.run.ops_env`), against a stand-in
torch (tests/fixtures/faketorch) that records what is called: the real PyTorch's ranges are read
from profiles made on the H200 (tests/test_ops_nvtx.py)."""

import json
import os
import subprocess
import sys
from pathlib import Path

from roofline.nsight.run import ops_env

FAKE = Path(__file__).resolve().parent / "fixtures" / "faketorch"
PROGRAM = """
import json, sys
{before}
import torch
from torch.nn.modules.module import Module

class Leaf(Module):
    def forward(self, x): return x

class Block(Module):
    def __init__(self):
        super().__init__(); self._modules["mlp"] = Leaf()
    def forward(self, x): return self._modules["mlp"](x)

class Layers(Module):  # a container that is never called itself, as a ModuleList
    def __init__(self):
        super().__init__(); self._modules["0"] = Block(); self._modules["1"] = Block()

class Net(Module):
    def __init__(self):
        super().__init__(); self._modules["layers"] = Layers(); self.free = Leaf()
    def forward(self, x):
        for block in self._modules["layers"]._modules.values():
            x = block(x)
        return self.free(x)

Net()(1)
print(json.dumps(torch.log))
"""


def _run(env: dict, before: str = "", cwd: Path | None = None) -> list:
    env = dict(env)
    env["PYTHONPATH"] = os.pathsep.join([*env.get("PYTHONPATH", "").split(os.pathsep), str(FAKE)]).strip(os.pathsep)
    proc = subprocess.run([sys.executable, "-c", PROGRAM.format(before=before)], env=env, capture_output=True,
                          text=True, cwd=cwd, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return [tuple(x) for x in json.loads(proc.stdout.strip().splitlines()[-1])]


def _base() -> dict:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ROOFLINE_OPS")}


def test_ops_turn_on_pytorchs_ranges_without_starting_cuda_and_name_each_module_by_its_place():
    log = _run(ops_env(_base()))
    assert log[0] == ("emit_nvtx", False)  # PyTorch's op ranges, without shapes
    assert ("sync",) not in log  # emit_nvtx's torch.cuda.synchronize() skipped: importing torch starts no CUDA
    pushed = [x[1] for x in log if x[0] == "push"]
    assert pushed == ["roofline.module Net", "roofline.module Net.layers.0", "roofline.module Net.layers.0.mlp",
                      "roofline.module Net.layers.1", "roofline.module Net.layers.1.mlp",
                      "roofline.module Net.<Leaf>"]  # called by its parent, but not one of its children
    assert sum(x[0] == "pop" for x in log) == len(pushed)  # every range closed


def test_without_ops_nothing_is_turned_on():
    assert _run(_base()) == []


def test_the_programs_own_sitecustomize_still_runs(tmp_path):
    # roofline's sitecustomize is first on the path; the one the program's environment has further
    # down is run after it, as Python would have run it
    (tmp_path / "sitecustomize.py").write_text("import os; os.environ['THEIRS'] = 'ran'\n")
    env = ops_env(_base())
    env["PYTHONPATH"] += os.pathsep + str(tmp_path)
    log = _run(env, before="import os; assert os.environ.get('THEIRS') == 'ran', 'their sitecustomize did not run'")
    assert log[0] == ("emit_nvtx", False)


def test_ops_env_keeps_the_programs_own_path():
    env = ops_env({"PYTHONPATH": "/theirs", "PATH": "/bin"})
    parts = env["PYTHONPATH"].split(os.pathsep)
    assert parts[0].endswith(os.path.join("nsight", "inject")) and parts[1:] == ["/theirs"]
    assert env["ROOFLINE_OPS"] == "1" and env["PATH"] == "/bin"


def test_a_command_is_read_as_python_by_its_program():
    from roofline.commands.profile import _python

    assert _python(["python3", "train.py"]) and _python(["/opt/venv/bin/python", "-m", "x"]) and _python(["torchrun"])
    assert _python(["./train.py"]) and not _python(["./my_binary"]) and not _python(["nsys"])
