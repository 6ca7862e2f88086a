"""The one way roofline starts a Python process of its own (`roofline.child`): the request as JSON
on stdin (or in a file for a process under ncu), the answer the last line of stdout."""

import json
import subprocess
import sys

from roofline import child


def test_a_request_goes_in_on_stdin_and_the_answer_is_the_last_line(monkeypatch):
    seen = {}

    def fake(cmd, input, **kw):
        seen.update(cmd=cmd, request=json.loads(input), timeout=kw["timeout"], env=kw["env"])
        return subprocess.CompletedProcess(cmd, 0, stdout='printed by a kernel\n{"ok": 1}\n', stderr="")
    monkeypatch.setattr(child.subprocess, "run", fake)
    reply = child.ask("roofline.measure.isolated", {"a": 1}, 7.5, env={"X": "1"})
    assert reply.answer == {"ok": 1} and reply.failure is None and reply.returncode == 0
    assert seen["cmd"] == [sys.executable, "-m", "roofline.measure.isolated"]
    assert seen["request"]["a"] == 1 and "sent_at" in seen["request"] and seen["timeout"] == 7.5
    assert seen["env"] == {"X": "1"}


def test_a_child_without_an_answer_says_why_in_one_line(monkeypatch):
    for stdout, code in (("", -9), ("{not json", 1)):
        monkeypatch.setattr(child.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(
            a, code, stdout=stdout, stderr="Traceback\n  ...\nRuntimeError: boom\n\n"))
        reply = child.ask("m", {}, 1)
        assert (reply.answer, reply.failure, reply.returncode, reply.stderr_tail) == (None, "died", code,
                                                                                      "RuntimeError: boom")
        assert reply.why == f"its process died (exit code {code}) without a report: RuntimeError: boom"

    def slow(*a, **k):
        raise subprocess.TimeoutExpired(a, k["timeout"])
    monkeypatch.setattr(child.subprocess, "run", slow)
    reply = child.ask("m", {}, 3)
    assert (reply.failure, reply.why) == ("timeout", "timeout: its process was stopped after 3 s without an answer")


def test_a_child_under_ncu_reads_its_request_from_a_file(tmp_path, monkeypatch):
    path = child.write_request({"mode": "profile"}, tmp_path)
    cmd = child.command("roofline.measure.graded_child", path)
    assert cmd == [sys.executable, "-m", "roofline.measure.graded_child", "--request", str(path)]
    request = child.request(cmd[3:])
    assert request["mode"] == "profile" and child.seconds_before(request, 1e9) == 0.0
    monkeypatch.setattr(sys, "stdin", type("S", (), {"read": lambda self: '{"from": "stdin"}'})())
    assert child.request([]) == {"from": "stdin"}


def test_a_real_child_answers_through_the_protocol():
    """The binary report reader's child, started for real: a file that is no report is no answer."""
    reply = child.ask("roofline.nsight.binary", {"report": "/nonexistent.ncu-rep"}, 120)
    assert reply.answer is None and reply.failure == "died" and reply.returncode != 0


def test_the_measuring_children_answer_every_failure_in_their_report_format():
    """A user kernel's child and a graded workload's child, started for real without a usable GPU
    (or on a bus that holds none): each answers its own report, the failure named, exit code 0."""
    from roofline.measure import graded_child, isolated

    reply = child.ask(isolated.CHILD, {"pci_bus_id": "0000:ff:00.0", "kernel": {"name": "k"}}, 120,
                      isolated._REPORT.validate_json)
    assert reply.returncode == 0 and reply.answer.error.startswith("k: ") and reply.answer.failure in ("fault", "error")
    reply = child.ask(graded_child.CHILD, {"mode": "grade", "path": "/nonexistent.cu", "pci_bus_id": None}, 120,
                      graded_child._REPORT.validate_json)
    assert reply.returncode == 0 and (reply.answer.error or reply.answer.usage)
