"""What an older results file lacks and only the kernel families can work out, filled in once when
it is read (`results.store.load`'s `upgrade`; `roofline.api` passes `fill`).

A file of schema 4 records everything its reading needs. One of schema 3 or older left some
figures to be rebuilt from the families of the day: the traffic model of each kernel at each size
of a sweep (and the waves its grid took there), and, in files written before the model knew them,
a ladder kernel's `model.smem_served_bytes`, `model.l1_bytes` and `model.dram_bytes` and its
`waves`. `fill` works them out from what the file holds (each kernel's family by its name, its recorded tile, the
problem, its occupancy and the device's SM count), exactly as the reading of such a file did
before schema 4, so an old file reads as it always did. A ladder kernel's DRAM bytes, the tool's
model rather than a measurement, are read at today's model whatever the file recorded (the reading's
note names the kernels whose recorded figure an older model gave).

The document is plain JSON data at schema 4's keys (`results.store.migrate` has run); anything
malformed is left for the schema's checks to name, except a ladder kernel's tile, which only the
families can check: one that no version of its family takes (a parameter below 1, split_k's
REDUCERS neither 1 nor SPLITS, a template naming another tile than the params) is refused.
"""

from __future__ import annotations

import re
from dataclasses import asdict

from ..errors import UsageError
from ..model.precision import BY_FILE_DTYPE
from ..model.dram import blocks_in_step, usable_l2_bytes
from ..model.problem import Problem
from ..model.waves import waves_of
from ..results.store import REFRESHED
from . import families
from .user import traffic_model_of


def fill(doc: dict) -> list[str]:
    """Fill, in place, what `doc` (an older results document, plain JSON data) lacks and its
    kernels' families can work out: each ladder kernel's missing `model.smem_served_bytes`,
    `model.l1_bytes`, `model.dram_bytes` and `waves`, and at each size of a sweep each ladder
    kernel's `model` (with its DRAM bytes) and `waves`. Returns what it filled, as phrases for the
    reading's note (empty when nothing). Raises UsageError, naming the field, for a ladder tile no
    version of its family takes (`_check_tiles`): nothing can be worked out from it."""
    problem = _problem(doc.get("problem"))
    kernels = doc.get("kernels") if isinstance(doc.get("kernels"), list) else []
    _check_tiles(doc, kernels, problem)
    device = doc.get("device") if isinstance(doc.get("device"), dict) else {}
    sms = device.get("sm_count") if type(device.get("sm_count")) is int and device["sm_count"] > 0 else None
    l2 = _usable_l2(device)
    filled, refreshed = [], []
    if problem is not None and any([_fill_kernel(k, problem, sms, l2, refreshed) for k in kernels
                                    if isinstance(k, dict)]):
        filled.append("kernels' missing model figures")
    sweep = doc.get("sweep") if isinstance(doc.get("sweep"), list) else []
    records = {k.get("name"): k for k in kernels if isinstance(k, dict)}
    if any([_fill_point(point, records, sms, l2, refreshed) for point in sweep if isinstance(point, dict)]):
        filled.append("the model at each size of its sweep")
    if refreshed:
        # each (kernel, size) once (a sweep's largest size is its kernels' and its last point's), the
        # size named where it is not the file's own
        unique = list({(name, p): (name, p, old, new) for name, p, old, new in refreshed}.values())
        at = lambda p: "" if p == problem else f" at {p.text()}"  # noqa: E731
        moved = sorted(unique, key=lambda r: -abs(r[3] - r[2]) / max(r[2], 1.0))
        shown = ", ".join(f"{name}{at(p)} {old / 1e9:,.3g} -> {new / 1e9:,.3g} GB" for name, p, old, new in moved[:3])
        more = f" and {len(moved) - 3} more" if len(moved) > 3 else ""
        filled.append(f"{REFRESHED}gives {len(moved)} DRAM figure(s) an older model recorded ({shown}{more}: "
                      "recorded -> today's, which the tables read, and the verdicts where nothing was counted)")
    unstaged = [k.get("name") for k in kernels if isinstance(k, dict) and _no_smem(k)]
    if unstaged:
        filled.append(f"{REFRESHED}has no shared-memory level for {', '.join(map(str, unstaged))}, whose compiled "
                      "code holds no shared memory")
    served = [k.get("name") for k in kernels if isinstance(k, dict) and problem is not None and _served(k, problem)]
    if served:
        filled.append(f"{REFRESHED}gives the shared-memory bytes served of {', '.join(map(str, served))}, which "
                      "the file did not record")
    return filled


_TEMPLATE = re.compile(r"\s*(?P<name>\w+)\s*<(?P<args>.*)>\s*")
_TYPE = re.compile(r"[A-Za-z_]\w*")  # an element type among a template's arguments: bf16, __nv_bfloat16, half


def _check_tiles(doc: dict, kernels: list, problem: Problem | None) -> None:
    """Refuse, in one line naming the field (UsageError), a ladder kernel's recorded tile that no
    version of its family takes: a parameter below 1, or today's parameters and more; where the
    parameters are today's family's (or today's without those added since), one
    `families.Family.spec` refuses (a thread tile not dividing its block tile, the family's rule
    between them: split_k's REDUCERS 1 or SPLITS); a template that is not `name<arguments>` with
    positive integers (one at least) and element types, or, beside today's parameters, one that
    names another template or other values. Likewise the tile a kernel chose at each size of a sweep. A tile an older version of the
    family took (other parameter names, an older template's spelling) is read as recorded, and a
    user's kernel records its own."""
    dtype = problem.dtype if problem is not None else None

    def spec_of(family, params, where: str):
        if not (isinstance(params, dict) and params and all(type(v) is int for v in params.values())):
            return None  # empty, or not integers: the schema's checks name the latter
        low = next(((n, v) for n, v in params.items() if v < 1), None)
        if low is not None:
            raise UsageError(f"{where}: {family.name} takes positive parameters, not {low[0]} = {low[1]}")
        today = set(family.params)
        if set(params) > today:  # today's and more: no version of the family
            raise UsageError(f"{where}: {family.name} takes {', '.join(family.params)}, not "
                             f"{', '.join(sorted(set(params) - today))}")
        if set(params) not in (today, today - {name for name, _ in family.added}):
            return None  # the family's parameters as they were: read as recorded
        try:
            return family.spec(params, dtype=dtype if family.tensor else None)
        except UsageError as exc:
            raise UsageError(f"{where}: {exc}") from None

    for i, k in enumerate(kernels):
        family = families.BY_NAME.get(k.get("name")) if isinstance(k, dict) else None
        if family is None or k.get("tile_source") == "user":
            continue
        spec = spec_of(family, k.get("params"), f"kernels[{i}].params")
        template = k.get("template")
        if not isinstance(template, str) or not template:
            continue
        m = _TEMPLATE.fullmatch(template)
        args = [a.strip() for a in m["args"].split(",")] if m else []
        if not m or not all(re.fullmatch(r"[-+]?\d+", a) or _TYPE.fullmatch(a) for a in args):
            raise UsageError(f"kernels[{i}].template: {template[:60]!r} is not a kernel's template (its name, then "
                             "its parameters in <>, e.g. warptiling<128,128,16,32,64,8,8>)")
        values = [int(a) for a in args if not _TYPE.fullmatch(a)]
        if not values or any(v < 1 for v in values):
            raise UsageError(f"kernels[{i}].template: {template[:60]} gives " +
                             ("no parameter" if not values else "a parameter below 1"))
        if spec is None:
            continue
        today = list(spec.params.values())  # the params as today's family takes them, or without those added since
        forms = [today] + ([today[:-len(family.added)]] if family.added else [])
        if m["name"] != family.template_name or values not in forms:
            raise UsageError(f"kernels[{i}]: its template {template[:60]} and its params "
                             f"{family.template_name}<{','.join(map(str, today))}> name different kernels or tiles")
    for j, point in enumerate(doc.get("sweep") if isinstance(doc.get("sweep"), list) else []):
        for i, k in enumerate(point.get("kernels") if isinstance(point, dict) and
                              isinstance(point.get("kernels"), list) else []):
            family = families.BY_NAME.get(k.get("name")) if isinstance(k, dict) else None
            if family is not None:
                spec_of(family, k.get("params"), f"sweep[{j}].kernels[{i}].params")


def _no_smem(k: dict) -> bool:
    """A user's kernel recorded with SMEM figures from its declared tiles although its compiled code
    holds no shared memory (0 bytes static and dynamic): the figures dropped, as a run today
    records them (`ModelFigures.without_smem`), and marked as reading A and B directly
    (`no_shared_memory`, which files written before it was recorded lack). True where figures were
    dropped (a note says so), False otherwise."""
    model = k.get("model")
    if k.get("tile_source") != "user" or not isinstance(model, dict):
        return False
    if k.get("static_smem_bytes") != 0 or k.get("dynamic_smem_bytes") not in (0, None):
        return False
    dropped = model.get("smem_bytes") is not None
    model.update(smem_accesses_per_result=None, smem_bytes=None, smem_served_bytes=None, no_shared_memory=True)
    return dropped


def _served(k: dict, p: Problem) -> bool:
    """A user's kernel's `model.smem_served_bytes`, where the file recorded none and its tiles are
    known: a warp's reads of one address served once (`user.traffic_model_of`, its threads along a row
    of thread tiles: the file keeps no block shape), as `roofline kernels` reads it today."""
    model, params = k.get("model"), k.get("params")
    if k.get("tile_source") != "user" or not isinstance(model, dict) or model.get("smem_served_bytes") is not None \
            or model.get("smem_bytes") is None or not isinstance(params, dict):  # no SMEM level: nothing served
        return False
    tiles = [params.get(x) for x in ("BM", "BN", "TM", "TN")]
    if not all(type(t) is int and t > 0 for t in tiles):
        return False
    traffic = traffic_model_of((tiles[0], tiles[1]), (tiles[2], tiles[3]))
    if traffic.warp_layout is None:
        return False
    served = traffic.figures(p).smem_served_bytes
    model["smem_served_bytes"] = served
    return served is not None


def _problem(record) -> Problem | None:
    """A file's problem record as the model's Problem; None where it is malformed."""
    if not isinstance(record, dict):
        return None
    try:
        dtype = BY_FILE_DTYPE[record.get("dtype", "float32")].dtype
        return Problem(int(record["m"]), int(record["n"]), int(record["k"]), dtype).validate()
    except (KeyError, TypeError, ValueError, UsageError):
        return None


def _usable_l2(device: dict) -> int | None:
    """The L2 bytes the DRAM model reads panels against (`model.dram.usable_l2_bytes`); None where
    the file's device has no L2 size."""
    size = device.get("l2_bytes")
    if type(size) is not int or size < 1:
        return None
    cc = device.get("compute_capability")
    return usable_l2_bytes(size, cc if isinstance(cc, str) else None)


# A recorded DRAM figure that differs from today's model is replaced; one further than this from it is
# named in the reading's note, with both figures.
REFRESH_NOTED = 0.02


def _dram(spec, figures: dict, p: Problem, waves: dict | None, l2: int | None, warps: int | None,
          refreshed: list | None = None) -> bool:
    """`figures["dram_bytes"]` from the wave model where the waves and the L2 are known (the blocks
    in step from the active `warps` per SM where known, else the slots): filled in where missing
    (True), or where the file recorded another (an older model's) replaced, and where that was
    further than REFRESH_NOTED from today's, counted in `refreshed` (the kernel, the recorded and
    today's bytes) rather than returned. The DRAM bytes are the tool's model, not a
    measurement: a file is read with today's, as `show` reads it with today's verdicts."""
    if l2 is None or not isinstance(waves, dict) or type(waves.get("block_slots")) is not int \
            or waves["block_slots"] < 1:
        return False
    slots = waves["block_slots"]
    sms = waves.get("sm_count") if type(waves.get("sm_count")) is int and waves["sm_count"] > 0 else slots
    blocks = waves["blocks"] if type(waves.get("blocks")) is int and waves["blocks"] > 0 else None
    in_step = slots if warps is None else blocks_in_step(slots, sms, warps, blocks)
    recorded = figures.get("dram_bytes")
    value = spec.model.dram(p, in_step, l2)
    if recorded is None:
        figures["dram_bytes"] = value
        return value is not None
    if not isinstance(recorded, (int, float)) or isinstance(recorded, bool) or not 0 <= recorded < float("inf"):
        return False  # no figure a model gives (negative, not finite, not a number): the schema's checks name it
    if value is not None and value != recorded:
        figures["dram_bytes"] = value
        if refreshed is not None and abs(value - recorded) > REFRESH_NOTED * max(abs(recorded), 1.0):
            refreshed.append((spec.name, p, float(recorded), float(value)))
    return False


def _warps_per_sm(k: dict | None) -> int | None:
    occ = k.get("occupancy") if isinstance(k, dict) else None
    return occ.get("active_warps_per_sm") if isinstance(occ, dict) and type(
        occ.get("active_warps_per_sm")) is int else None


def _point_warps(spec, rec, waves: dict | None = None) -> int | None:
    """Active warps per SM of `spec` at one size of a sweep: the blocks per SM its waves there
    recorded (block slots over SMs: a kernel that picks its tile by shape held, say, three 64 x 64
    blocks per SM at 512^3 where its run's record, at the last size, holds one of 128 x 256), else
    the blocks per SM the run's record `rec` holds, of `spec`'s threads."""
    slots = waves.get("block_slots") if isinstance(waves, dict) else None
    sms = waves.get("sm_count") if isinstance(waves, dict) else None
    if type(slots) is int and type(sms) is int and sms > 0 and slots >= sms:
        return slots // sms * spec.threads_per_block // 32
    blocks = _blocks_per_sm(rec) if isinstance(rec, dict) else None
    return None if blocks is None else blocks * spec.threads_per_block // 32


def _blocks_per_sm(k: dict) -> int | None:
    occ = k.get("occupancy")
    return occ.get("active_blocks_per_sm") if isinstance(occ, dict) and type(
        occ.get("active_blocks_per_sm")) is int else None


def _fill_kernel(k: dict, p: Problem, sms: int | None, l2: int | None, refreshed: list | None = None) -> bool:
    """A ladder kernel's model figures the model did not know when the file was written, from its
    family at its recorded tile."""
    family = families.BY_NAME.get(k.get("name"))
    if family is None or not isinstance(k.get("params"), dict) or not k["params"]:
        return False
    try:
        spec = family.spec(k["params"])
    except (UsageError, TypeError, ValueError, AttributeError):
        return False
    done = False
    model = k.get("model")
    for key in ("smem_served_bytes", "l1_bytes"):
        if isinstance(model, dict) and key not in model:
            value = getattr(spec.figures(p), key)
            if value is not None:
                model[key] = value
                done = True
    blocks = _blocks_per_sm(k)
    if "waves" not in k and blocks is not None and sms is not None:
        waves = waves_of(spec.tile_grid(p), sms, blocks)
        if waves is not None:
            k["waves"] = asdict(waves)
            done = True
    if isinstance(model, dict) and _dram(spec, model, p, k.get("waves"), l2, _warps_per_sm(k), refreshed):
        done = True
    return done


def _fill_point(point: dict, records: dict, sms: int | None, l2: int | None, refreshed: list | None = None) -> bool:
    """Each ladder kernel's model at one size of a sweep, and its waves there: its family at the
    tile it chose there (a kernel that picks its tile by shape records it), else at the run's
    tile, else at the ladder's; the waves at the blocks per SM the run's record holds."""
    p = _problem(point.get("problem"))
    done = False
    for k in point.get("kernels") if p is not None and isinstance(point.get("kernels"), list) else []:
        if not isinstance(k, dict):
            continue
        if isinstance(k.get("model"), dict):  # a schema 4 point: only the DRAM bytes can be missing
            rec = records.get(k.get("name"))
            spec = _spec_at(k, rec, p)
            done = (spec is not None and _dram(spec, k["model"], p, k.get("waves"), l2,
                                               _point_warps(spec, rec, k.get("waves")), refreshed)) or done
            continue
        if k.get("model") is not None:
            continue
        rec = records.get(k.get("name"))
        blocks = _blocks_per_sm(rec) if isinstance(rec, dict) else None
        spec = _spec_at(k, rec, p) if blocks is not None else None
        if spec is None:
            continue
        try:
            k["model"] = asdict(spec.figures(p))
        except (UsageError, TypeError, ValueError, AttributeError):
            continue
        if k.get("waves") is None and sms is not None:
            waves = waves_of(spec.tile_grid(p), sms, blocks)
            k["waves"] = asdict(waves) if waves is not None else None
        _dram(spec, k["model"], p, k.get("waves"), l2, _point_warps(spec, rec, k.get("waves")))
        done = True
    return done


def _spec_at(k: dict, rec, p: Problem):
    """The kernel spec one size of a sweep ran `k` at (the tile it chose there, else the run's);
    None where its family or tile is not known."""
    family = families.BY_NAME.get(k.get("name"))
    if family is None or not isinstance(rec, dict) or family.tensor != p.tensor:
        return None
    params = rec.get("params") if isinstance(rec.get("params"), dict) else {}
    chosen = k.get("params") if isinstance(k.get("params"), dict) else {}
    if not params and rec.get("tile_source", "ladder") != "ladder":
        return None  # its tile is not recorded: no model to read it with
    try:
        return family.spec(chosen or params or None, dtype=p.dtype if family.tensor else None)
    except (UsageError, TypeError, ValueError, AttributeError):
        return None
