"""The `// roofline` lines, read once (`roofline.declarations`) for the GEMM reader
(`ladder.user`) and the workload reader (`workload.spec`) alike."""

from pathlib import Path

import pytest

from roofline.declarations import GEMM, WORKLOAD, Declaration, kind, scan, without_comment
from roofline.errors import UsageError
from roofline.ladder import user
from roofline.workload import spec


@pytest.mark.parametrize("value, kept", [
    ("cdiv(N,128)//2", "cdiv(N,128)//2"),  # floor division, not a comment
    ("R // 16384", "R // 16384"),
    ("2*B*H*S*S*D // 2", "2*B*H*S*S*D // 2"),
    ("2 // cdiv(N, 2)", "2 // cdiv(N, 2)"),
    ("fp32=R*C//2, bf16_tensor=4*R", "fp32=R*C//2, bf16_tensor=4*R"),
    ("n i32 = R*C//2", "n i32 = R*C//2"),
    ("256   // a trailing comment", "256"),
    ("cdiv(N,128)//2 // half the tiles", "cdiv(N,128)//2"),
    ("x f32[R, C] in // the input, drawn", "x f32[R, C] in"),
    ("my_sgemm<64,64,8,8,8> // it", "my_sgemm<64,64,8,8,8>"),
    ("torch.softmax(x, dim=-1)  // per row", "torch.softmax(x, dim=-1)"),
    ("k //", "k"),
])
def test_one_rule_for_a_comment_after_a_value(value, kept):
    assert without_comment(value) == kept


def test_a_text_is_scanned_once_into_ordered_declarations():
    text = ("\ufeff#include <x.h>\n// roofline arg: x f32[N] in\n// a roofline of it: later\n"
            "//roofline block 16\n// ROOFLINE Block: 4\n// roofline grid: cdiv(N,128)//2  // halved, rounded down\n"
            "// ROOFLINE thread-tile: 8x8\n")
    assert scan(text) == [Declaration("arg", "x f32[N] in", 2), Declaration("block", "", 4, "colon"),
                          Declaration("Block", "", 5, "case"), Declaration("grid", "cdiv(N,128)//2", 6),
                          Declaration("thread-tile", "", 7, "case")]
    assert kind(scan(text)) == WORKLOAD and kind(scan("// roofline entry: k\n")) == GEMM
    assert kind(scan("// roofline arg x f32[N] in\n")) == GEMM  # a malformed line declares nothing


def test_both_readers_read_the_same_lines_alike():
    text = "// roofline grid: cdiv(N,128)//2  // halved, rounded down\n// roofline block: 256   // threads of a block\n"
    assert user.read_header(text) == {"grid": "cdiv(N,128)//2", "block": "256"}
    assert spec.read_lines(text, "w.cu") == {"grid": "cdiv(N,128)//2", "block": "256"}
    for reader in (lambda t: user.read_header(t, "x.cu"), lambda t: spec.read_lines(t, "x.cu")):
        with pytest.raises(UsageError, match="x.cu:1: expected '// roofline KEY: VALUE', with a colon"):
            reader("//roofline block 16,16\n")
        with pytest.raises(UsageError, match="x.cu:2: write 'roofline' and the key in lower case"):
            reader("// roofline block: 1\n// ROOFLINE Grid: 4\n")
        reader("// roofline of this file: notes\n// roofline is a tool\n")  # no key of theirs: other comments


def test_a_workload_file_is_read_once(tmp_path, monkeypatch):
    from roofline import files
    path = tmp_path / "w.cu"
    path.write_text("// roofline entry: k\n// roofline sizes: N=1024\n// roofline arg: x f32[N] in\n"
                    "// roofline arg: y f32[N] out\n// roofline arg: n i32 = N\n// roofline block: 256\n"
                    "// roofline grid: cdiv(N, 256)\n// roofline reference: x * 2\n"
                    'extern "C" __global__ void k(const float* x, float* y, int n) {}\n')
    reads = []
    real = files.read_source
    monkeypatch.setattr(user, "read_source", lambda p: reads.append(p) or real(p))
    monkeypatch.setattr(spec, "read_source", lambda p: reads.append(p) or real(p))
    k = user.load(Path(path))
    assert k.workload and k.grid_text == "4, 1, 1" and len(reads) == 1
