"""Results files on disk: read and checked (files of schemas 1 to 3 migrated on the way, with a
note), written atomically, merged. Every refusal is one line naming the file and, for a bad value,
the field's path (`kernels[3].gflops: Input should be a valid number`).

Reading needs nothing but the file: no kernel family or measuring module is imported here. What
an older file lacks and only the kernel families can work out (the model at each size of a
sweep, before schema 4) is filled by an `upgrade` the caller passes (`ladder.upgrade.fill`, which
`roofline.api` passes); without one, those figures stay missing and the note says so."""

from __future__ import annotations

import gzip
import json
import math
import os
import re
from pathlib import Path
from typing import Callable

from pydantic import ValidationError

from .. import files
from ..defaults import DEFAULT_GRADES, DEFAULT_PROFILE, DEFAULT_RESULTS
from ..errors import UsageError
from ..model.device import DeviceSpec
from ..model.arch import parse_arch
from .grades import GradeResults
from .profile import ProfileResults
from .schema import SCHEMA, Results

DEFAULT_PATH = DEFAULT_RESULTS
MAX_BYTES = 256 * 2**20  # a sweep of every kernel at a dozen sizes is a few MB
_REMADE = "re-create it with roofline run"
# The documents other than a run's, by "kind": their model, and what a caller that reads only runs is told.
OTHER_KINDS = {
    "profile": (ProfileResults, "a profile of a program (roofline profile), not the results of a run; show, plot, "
                                "compare, whatif and project read it"),
    "grade": (GradeResults, "grades of kernels against their speed of light (roofline run), not the results of a "
                            "run; show, plot and compare read it"),
}
# What roofline prints with --json and does not read back, each told by a field of its own (those of
# compare, whatif and project carry the "kind" of the file they read) or by its "kind".
PRINTED = (
    (lambda d: "before_device" in d, "the comparison `roofline compare A B --json` prints"),
    (lambda d: "step_ms_after_all" in d, "the what-if `roofline whatif FILE --json` prints"),
    (lambda d: "measured_on" in d, "the projection `roofline project FILE --json` prints"),
    (lambda d: d.get("kind") == "problems", "the speed-of-light listing `roofline kernels PROBLEM.py --json` prints"),
    (lambda d: d.get("kind") == "owners", "the op or module table `roofline show FILE --by op|module --json` prints"),
    (lambda d: d.get("kind") == "owner-changes",
     "the op or module changes `roofline compare A B --by op|module --json` prints"),
    (lambda d: "kind" not in d and "schema" not in d and "arch" in d and isinstance(d.get("kernels"), list),
     "the kernel listing `roofline kernels --json` prints"),
)
# Each kind of document by what `kind_of` calls it, as a refusal names it.
KIND_NAMES = {
    "run": "a run's results (roofline run)",
    "profile": "a profile of a program (roofline profile)",
    "grade": "a grade file (roofline run)",
}
TRACE = "a PyTorch profiler trace (roofline comms reads it), not a results file"


def kind_of(doc: Results | ProfileResults | GradeResults) -> str:
    """'run' (a run, a size sweep or a tile search), 'profile' or 'grade': a `KIND_NAMES` key, as the
    document says it (`kind_name`)."""
    return doc.kind_name


def _also(reads: str | None) -> str:
    """What a caller reads, after a refusal of a file of another kind: '; whatif reads ...'."""
    return f"; {reads}" if reads else ""


def _gzipped_trace(path: Path) -> bool:
    """Whether the gzip-compressed file at `path` opens as a PyTorch profiler trace (its first 64 KiB)."""
    try:
        with gzip.open(path) as f:
            head = f.read(65536)
    except (OSError, EOFError):
        return False
    return b'"traceEvents"' in head or b'"schemaVersion"' in head


# Fills, in an older document (plain JSON data, already at the current schema's keys), the figures
# only the kernel families can work out; returns what it filled, as phrases for the note.
Upgrade = Callable[[dict], list[str]]
# How an Upgrade's answer begins where it replaced figures an older model recorded, or filled ones the
# file never recorded that change its reading (a schema 4 file is read with today's model, and its
# reading says so).
REFRESHED = "today's model "


def field_path(loc: tuple) -> str:
    """A pydantic error location as a path: ('kernels', 3, 'gflops') -> 'kernels[3].gflops'."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not str(part).startswith("function-") and "[" not in str(part):
            out += f".{part}" if out else str(part)
    return out


def one_line(exc: ValidationError) -> str:
    """A pydantic error as one line: the first error's field path and message."""
    err = exc.errors(include_url=False)[0]
    msg = str(err["msg"]).removeprefix("Value error, ")
    path = field_path(err["loc"])
    if err["type"] == "missing":
        return f"{path}: missing, a field this kind of file requires (roofline schema prints them all)"
    given = err.get("input")
    if path and isinstance(given, float) and math.isnan(given):  # JSON's NaN: no figure at all
        return f"{path}: NaN, not a number; the file looks hand-edited or corrupt"
    if path and isinstance(given, (int, float, str, bool, type(None))) and not msg.startswith(path):
        return f"{path}: {msg}, got {json.dumps(given)[:60]}"
    return f"{path}: {msg}" if path and not msg.startswith(path) else msg


def _upgraded(upgrade: Upgrade, doc: dict, source: str) -> list[str]:
    """`upgrade(doc)`, its refusal (UsageError: a record no kernel family takes) naming the file."""
    try:
        return upgrade(doc)
    except UsageError as exc:
        raise UsageError(f"{source}: {exc}") from None


def _brought_up(doc: dict, schema: int, source: str, upgrade: Upgrade | None) -> tuple[dict, list[str]]:
    """`parse`'s steps before the schema's check: a schema-`SCHEMA` document's sweep models checked
    and today's model figures filled in by `upgrade`; an older one migrated and filled in. Returns
    the document and the notes on what was changed."""
    notes = []
    if schema == SCHEMA:
        _check_sweep_models(doc, source)
        if upgrade is not None:  # figures the model learnt since (its DRAM bytes): worked out, as in a run
            doc = json.loads(json.dumps(doc))
            again = [f for f in _upgraded(upgrade, doc, source) if f.startswith(REFRESHED)]
            if again:  # an older model's figures replaced: said, since the file itself holds others
                notes.append(f"{source}: {'; '.join(again)} (docs/model.md)")
    if schema < SCHEMA:
        doc = migrate(doc, source)
        filled = _upgraded(upgrade, doc, source) if upgrade is not None else []
        notes.append(_migrated_note(source, schema, doc, filled, upgrade is not None))
    return doc, notes


def parse(doc, source: str = "results", profile: bool = False,
          upgrade: Upgrade | None = None, reads: str | None = None) -> Results | ProfileResults:
    """A results document (already parsed JSON) checked against the schema. Documents of schemas
    1 to 3 are migrated first (`migrate`; schemas 2 and 3 only lacked fields), `upgrade` filling
    what only the kernel families can (`Upgrade`), and the document's `read_notes` say so; a
    schema 4 document gets from `upgrade` the model figures written after it (each kernel's
    `model.dram_bytes`), as a run today records them, and today's DRAM bytes where it recorded an
    older model's (a note names the kernels). A
    profile (`"kind": "profile"`, `results.profile`) or grade file is read when `profile` allows it.
    Raises UsageError (one line, naming `source` and the field) otherwise; a document of another
    kind is refused with `reads` (what the caller reads: 'whatif reads a run's results or a
    profile') after the line."""
    if not isinstance(doc, dict):
        raise UsageError(f"{source}: not a roofline results file (top level is not an object){_also(reads)}")
    printed = next((what for test, what in PRINTED if test(doc)), None)
    if printed is not None:
        raise UsageError(f"{source}: {printed}, a listing that is not read back{_also(reads)}")
    if doc.get("kind") in OTHER_KINDS:
        model, what = OTHER_KINDS[doc["kind"]]
        if not profile:
            raise UsageError(f"{source}: {what}{_also(reads)}")
        if "schema" not in doc:  # as a run's file: every file roofline writes says its schema
            raise UsageError(f"{source}: a {doc['kind']} file without its schema field; the file looks hand-edited")
        try:
            return model.model_validate_json(json.dumps(doc), strict=True)
        except ValidationError as exc:
            raise UsageError(f"{source}: {one_line(exc)}") from None
    if doc.get("kind") == "trace":
        raise UsageError(f"{source}: what roofline show prints for a profiler trace with --json, a summary it does "
                         f"not read back; give the trace itself{_also(reads)}")
    if doc.get("kind") is not None:
        raise UsageError(f"{source}: kind {doc.get('kind')!r} is not one roofline writes ('profile', 'grade', or none "
                         f"for a run){_also(reads)}")
    if "kind" not in doc and "entries" in doc and "problem" not in doc:
        raise UsageError(f"{source}: looks like a grade file but has no \"kind\": \"grade\"; the file looks hand-edited")
    if "kind" not in doc and "launches_profiled" in doc and "problem" not in doc:
        raise UsageError(f"{source}: looks like a profile but has no \"kind\": \"profile\"; the file looks hand-edited")
    schema = doc.get("schema")
    if schema is None and "traceEvents" in doc:  # a well-formed trace is its own kind (`documents.trace`)
        raise UsageError(f"{source}: a PyTorch profiler trace whose traceEvents is not a list of events{_also(reads)}")
    if schema is None and "schemaVersion" in doc:
        raise UsageError(f"{source}: {TRACE}{_also(reads)}")
    if schema is None:
        raise UsageError(f"{source}: not a roofline results file (no schema field){_also(reads)}")
    if type(schema) is not int:
        raise UsageError(f"{source}: schema {json.dumps(schema)[:40]} is not a whole number; expected {SCHEMA} (or 1 to "
                         f"{SCHEMA - 1}) as a number; the file looks hand-edited")
    if not 1 <= schema <= SCHEMA:
        raise UsageError(f"{source}: schema {schema!r} is not supported; expected {SCHEMA} (or 1 to {SCHEMA - 1}); "
                         f"{_REMADE}")
    raw = doc
    try:
        doc, notes = _brought_up(doc, schema, source, upgrade)
    except UsageError:
        raise
    except (TypeError, AttributeError, KeyError, IndexError, ValueError) as exc:
        # a field of the wrong type met before the schema's check (a name that is a list): the schema
        # names it, where this schema's document is at hand; else what the reading met
        if schema == SCHEMA:
            try:
                Results.model_validate_json(json.dumps(raw), strict=True)
            except ValidationError as bad:
                raise UsageError(f"{source}: {one_line(bad)}") from None
        raise UsageError(f"{source}: a field of the wrong type or shape ({type(exc).__name__}: "
                         f"{str(exc).splitlines()[0][:120] if str(exc) else 'no message'}); the file looks hand-edited "
                         "or corrupt") from None
    try:
        results = Results.model_validate_json(json.dumps(doc), strict=True)
    except ValidationError as exc:
        raise UsageError(f"{source}: {one_line(exc)}") from None
    results._read_notes.extend(notes)
    return results


def _check_sweep_models(doc: dict, source: str) -> None:
    """A file written at schema 4 records, at every size of its sweep, the model of each timed
    kernel that has a model in `kernels` (schema 3's files lacked them and are migrated instead):
    one that lacks it has lost part of what its reading needs. Raises UsageError naming the first."""
    kernels = doc.get("kernels") if isinstance(doc.get("kernels"), list) else []
    modelled = {k.get("name") for k in kernels if isinstance(k, dict) and isinstance(k.get("model"), dict)}
    for i, j, k in _sweep_kernels(doc):
        timed = k.get("verified") is True and k.get("gflops") is not None
        if timed and k.get("name") in modelled and k.get("model") is None:
            raise UsageError(f"{source}: sweep[{i}].kernels[{j}].model: missing, but {k.get('name')} has a model "
                             f"in kernels[], and a schema {SCHEMA} sweep records it at every size; the file looks "
                             f"edited ({_REMADE})")


def _sweep_kernels(doc: dict):
    """(i, j, kernel) for each kernel record (a dict) at each size of `doc`'s sweep, in raw JSON
    data that the schema has not checked yet (anything malformed is skipped, for it to name)."""
    sweep = doc.get("sweep") if isinstance(doc.get("sweep"), list) else []
    for i, point in enumerate(sweep):
        kernels = point.get("kernels") if isinstance(point, dict) else None
        for j, k in enumerate(kernels if isinstance(kernels, list) else []):
            if isinstance(k, dict):
                yield i, j, k


def _migrated_note(source: str, schema: int, doc: dict, filled: list[str], upgraded: bool) -> str:
    """The note on a file read from an older schema: what was filled, and by what."""
    note = f"{source}: written as schema {schema}, read as schema {SCHEMA}"
    if filled:
        return f"{note}; {' and '.join(filled)} worked out from today's kernel families"
    lacking = any(k.get("model") is None for _, _, k in _sweep_kernels(doc))
    if lacking and not upgraded:
        return (f"{note}; its sweep records no model at each size, so the sweep's readings are missing "
                "(read it through roofline.api, or roofline show, to have them worked out)")
    return note


def migrate(doc: dict, source: str = "results") -> dict:
    """An older document (schema 1, 2 or 3) rewritten at schema 4's keys, as a copy. From schema 1:
    `unwritten_elements` renamed, `model.smem_bytes` added, stored floors and verdicts dropped
    (they are derived), occupancy's reserved bytes filled in from the architecture. Schemas 2 and
    3 only lacked fields (3's the model at each size of a sweep: `Upgrade` fills it). Raises
    UsageError when the document is too malformed to migrate (it then fails the schema's checks
    with its field path)."""
    doc = json.loads(json.dumps(doc))  # a deep copy
    if doc.get("schema") == 1:
        _from_schema_1(doc)
    doc["schema"] = SCHEMA
    return doc


def _from_schema_1(doc: dict) -> None:
    problem = doc.get("problem") if isinstance(doc.get("problem"), dict) else {}
    results = problem.get("m", 0) * problem.get("n", 0) if all(
        type(problem.get(x)) is int for x in ("m", "n")) else 0
    for k in doc.get("kernels") if isinstance(doc.get("kernels"), list) else []:
        if not isinstance(k, dict):
            continue
        if "unwritten_elements" in k:
            k["nan_or_unwritten_elements"] = k.pop("unwritten_elements")
        k.pop("floors", None)
        k.pop("verdict", None)
        model = k.get("model")
        smem = model.get("smem_accesses_per_result") if isinstance(model, dict) else None
        if isinstance(smem, (int, float)) and not isinstance(smem, bool) and results:
            model.setdefault("smem_bytes", 4.0 * smem * results)
        occ = k.get("occupancy")
        if isinstance(occ, dict) and isinstance(occ.get("arch"), str):
            try:
                occ.setdefault("reserved_smem_bytes", parse_arch(occ["arch"]).reserved_smem_per_block_bytes)
            except UsageError:
                pass


def load(path: Path, profile: bool = False, upgrade: Upgrade | None = None,
         reads: str | None = None) -> Results | ProfileResults | GradeResults:
    """Read and check a results file (a profile or grade file too when `profile`); an older file is
    migrated (`parse`, with `upgrade`). Raises UsageError for a missing, unreadable, non-JSON or
    invalid file, with a one-line message naming it; for a file of another kind (binary data, a
    trace, an Nsight Compute export), the line ends with `reads`, what the caller reads."""
    return parse(read_json(path, reads), str(path), profile, upgrade, reads)


def read_json(path: Path, reads: str | None = None):
    """The JSON data of the results file at `path`, not yet checked against any schema. Raises
    UsageError as `load` does for a file that is missing, unreadable, too large or not JSON."""
    path = Path(path)
    if not str(path).strip() or str(path) == ".":
        raise UsageError("a results file name is empty")
    try:
        if path.is_dir():
            raise UsageError(f"{path}: is a folder, not a results file")
        if path.exists() and not path.is_file():
            raise UsageError(f"{path}: not a regular file, so not a results file")
        if path.exists() and path.stat().st_size > MAX_BYTES:
            raise UsageError(f"{path}: larger than {MAX_BYTES // 2**20} MiB, too large for a results file")
        raw = path.read_bytes()
        # a PyTorch profiler trace is often gzipped (tensorboard_trace_handler's .json.gz), and a results
        # file may be kept so: read as such (no more than the limit unpacked)
        # an editor on Windows may start the text with a byte-order mark, which says nothing: read past it
        packed = raw[:2] == b"\x1f\x8b"
        if packed:
            try:
                with gzip.open(path) as f:
                    raw = f.read(8 * MAX_BYTES + 1)
            except (OSError, EOFError):
                raise UsageError(f"{str(path)[:80]}: a gzip-compressed file that does not unpack (cut short or "
                                 f"damaged){_also(reads)}") from None
        text = raw if packed and _gzipped_trace(path) else raw.decode("utf-8-sig")
        if len(text) > 8 * MAX_BYTES:
            raise UsageError(f"{path}: over {8 * MAX_BYTES // 2**30} GiB uncompressed, too large to read")
    except FileNotFoundError:
        make = {DEFAULT_PROFILE.name: "profile file; create one with `roofline profile -- COMMAND` (or `--import "
                                      "REPORT`)",
                DEFAULT_GRADES.name: "grade file; create one with `roofline run KERNEL.cu` or `roofline run PROBLEM.py "
                                     "NEW.py`"}
        how = make.get(Path(path).name, "results file; create one with `roofline run --all`, or a profile with "
                                        "`roofline profile -- COMMAND`")
        here = [p.name for p in (DEFAULT_PROFILE, DEFAULT_GRADES) if p.exists()]
        if Path(path) == DEFAULT_RESULTS and len(here) > 1:  # the default read where several others are: ask
            raise UsageError(f"{path}: no such file here, and {' and '.join(here)} are: name the one to read") from None
        raise UsageError(f"{path}: no such {how}") from None
    except UnicodeDecodeError:
        if _gzipped_trace(path):
            raise UsageError(f"{str(path)[:80]}: {TRACE}{_also(reads)}") from None
        if raw[:3] == b"NVR":  # a binary Nsight Compute report's first bytes
            raise UsageError(f"{str(path)[:80]}: an Nsight Compute report (.ncu-rep), not a results file; it is read "
                             f"with roofline profile --import {path}") from None
        raise UsageError(f"{str(path)[:80]}: not a results file (binary data, not JSON text){_also(reads)}") from None
    except (PermissionError, OSError, EOFError) as exc:
        raise UsageError(f"{str(path)[:80]}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    if not (text.strip() if isinstance(text, str) else text.strip()):
        raise UsageError(f"{path}: the file is empty, so not a results file{_also(reads)}")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        if isinstance(text, str) and text.lstrip().startswith("HloModule"):
            raise UsageError(f"{path}: XLA's HLO text, not a results file; it names the ops of a JAX program's kernels "
                             "in a profile: roofline profile --import REPORT --trace FOLDER_OF_IT") from None
        if re.match(r"module_\d+\.", Path(path).name):  # XLA names every file of its dump so
            raise UsageError(f"{path}: a file of an XLA dump folder, not a results file; the folder names the ops "
                             "of a JAX program's kernels in a profile: roofline profile --import REPORT --trace "
                             "FOLDER") from None
        hint = f"; an Nsight Compute report is read with roofline profile --import {path}" \
            if isinstance(text, str) and _ncu_text(text) else ""
        raise UsageError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}){hint}"
                         f"{_also(reads)}") from None
    except RecursionError:
        raise UsageError(f"{path}: not a roofline results file (nested too deeply to read){_also(reads)}") from None
    return doc


def _ncu_text(text: str) -> bool:
    """Whether `text` reads as Nsight Compute's output (a CSV export's header row, its text output's
    launch and section lines, or its `==PROF==` lines), whatever the file is named: a text file of
    anything else is not sent to `profile --import`."""
    from ..nsight.pages import header_row
    from ..nsight.text import looks_like_text

    head = text[:1 << 20]
    lines = [line for line in head.splitlines()[:200] if len(line) < 1 << 16]  # a header row is short; csv refuses a field over 128 KiB
    return "==PROF==" in head or header_row(lines) is not None or looks_like_text(head)


def dump(results: Results | ProfileResults) -> dict:
    """The document as plain JSON data (keys as in the file)."""
    return results.model_dump(mode="json", by_alias=True)


def save(results: Results | ProfileResults, path: Path) -> None:
    """Write `results` as JSON to `path` atomically (`roofline.files.write_atomic`): an interrupted
    write never leaves a half-written file, and an earlier file stays whole. Raises UsageError for
    a path that cannot be written, RunError when the write fails."""
    text = json.dumps(dump(results), indent=1, allow_nan=False) + "\n"

    def write(tmp: str) -> None:
        with open(tmp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())

    files.write_atomic(path, write)


# What files drawn on one chart must share: the GPU and its roofs; and, merged into one run, the
# ceilings measured on it.
DEVICE_KEYS = ("name", "peak_fp32_gflops", "peak_dram_gbps")
MEASURED_KEYS = ("measured_fp32_gflops", "measured_dram_gbps")


def _differences(a: DeviceSpec, b: DeviceSpec, keys: tuple[str, ...]) -> list[str]:
    """The fields among `keys` in which devices `a` and `b` differ, in the order of `keys`."""
    return [key for key in keys if getattr(a, key) != getattr(b, key)]


def merge(docs: list[Results], sources: list[str], notes: list[str] | None = None) -> Results:
    """One document from several results files of the same device and problem (e.g. runs of
    different `--kernel`s): kernels in file order, a later file's kernel replacing an earlier one of
    the same name (each replacement is said in `notes`, when given); device and reference from the
    first. Raises UsageError when the files disagree on device or problem, or when a size sweep is
    given with other files."""
    first = docs[0]
    if len(docs) == 1:
        return first
    swept = [src for doc, src in zip(docs, sources) if doc.sweep]
    if swept:
        raise UsageError(f"{swept[0]} holds a size sweep, which is not merged with other results files; "
                         "give it alone")
    kernels = {}
    for doc, src in zip(docs, sources):
        differ = _differences(doc.device, first.device, DEVICE_KEYS + MEASURED_KEYS)
        if differ:
            measured = differ[0] in MEASURED_KEYS
            raise UsageError(f"{src}: device {differ[0]} differs from {sources[0]}'s; files read together share "
                             "one device and one set of ceilings" + (
                                 " (each run measured its own): read each alone, or set them side by side with "
                                 f"roofline compare {sources[0]} {src}" if measured else ""))
        if doc.problem.dtype != first.problem.dtype:
            raise UsageError(f"{src}: a {doc.problem.dtype} problem, {sources[0]}'s is {first.problem.dtype}; files of "
                             "different precisions are not merged: each is read against its own compute roof")
        if doc.problem.problem != first.problem.problem:
            raise UsageError(f"{src} solves {doc.problem.problem.text()} and {sources[0]} {first.problem.problem.text()}: runs "
                             "read together merge into one table and chart of one problem; read each alone, or set "
                             f"them side by side with roofline compare {sources[0]} {src} --across-sizes")
        if doc.l2 != first.l2:
            raise UsageError(f"{src}: timed with the L2 {doc.l2 or 'not recorded'}, {sources[0]} with it "
                             f"{first.l2 or 'not recorded'}; merge runs of one session only")
        if doc.reference.gflops != first.reference.gflops:
            raise UsageError(f"{src}: its cuBLAS reference ({doc.reference.gflops:,.0f} GFLOP/s) differs from "
                             f"{sources[0]}'s ({first.reference.gflops:,.0f}); merge runs of one session only")
        again = [k.name for k in doc.kernels if k.name in kernels]
        if again and notes is not None:  # one note per file: a file given twice is said once, not per kernel
            seen = "all its kernels are" if len(again) == len(doc.kernels) else f"{', '.join(again)} {'is' if len(again) == 1 else 'are'}"
            notes.append(f"{src}: {seen} in an earlier results file too; read from {src}, the last given")
        for k in doc.kernels:
            kernels[k.name] = k
    return first.model_copy(update={"kernels": list(kernels.values())})


def by_precision(docs: list[Results], sources: list[str], notes: list[str] | None = None) -> list[Results]:
    """The results files `docs` (read from `sources`) as one document per precision of their
    problems, in the order each precision first appears: the files of one precision merged
    (`merge`, with its checks and `notes`), files of different precisions kept apart, since each
    is read against its own compute roof (an FP32 ladder and a BF16 one, at the same size or
    not). Raises UsageError as `merge` does, or when the files were run on different devices
    (one chart holds one device's roofs); ceilings measured apart on the same GPU get a note."""
    groups: dict[str, tuple[list[Results], list[str]]] = {}
    for doc, src in zip(docs, sources):
        mine, where = groups.setdefault(doc.problem.dtype, ([], []))
        mine.append(doc)
        where.append(src)
    out = [merge(mine, where, notes) for mine, where in groups.values()]
    first = out[0]
    for doc, (_, where) in zip(out[1:], list(groups.values())[1:]):
        differ = _differences(doc.device, first.device, DEVICE_KEYS)
        if differ:
            raise UsageError(f"{where[0]}: device {differ[0]} differs from {sources[0]}'s; files read together share "
                             "one device and one set of roofs")
        measured = _differences(doc.device, first.device, MEASURED_KEYS)
        if measured and notes is not None:  # the same GPU, its ceilings measured on another day
            notes.append(f"{where[0]} was measured with other ceilings ({', '.join(measured)}) than {sources[0]}; "
                         f"the chart draws {sources[0]}'s, and each table its own")
    return out
