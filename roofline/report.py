"""Terminal rendering: rich tables built from plain data (results documents, occupancy, devices).

Functions here return `rich.table.Table` objects and never print; the CLI prints them. Numbers are
converted for display only here (ms, GFLOP/s, %, GB/s).
"""

from __future__ import annotations

from rich import box
from rich.table import Table

from .occupancy import percent
from .timing import NOISY_SPREAD


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


SHORT = {"registers": "regs", "shared_memory": "smem", "warps": "warps", "blocks": "blocks"}


def occupancy_cell(o: dict | None) -> str:
    """'25 % regs' from an occupancy JSON object (limiters abbreviated); '-' when absent."""
    if not o:
        return "-"
    limiters = "+".join(SHORT.get(x, x) for x in o["limiters"]) or "-"
    return f"{percent(o['occupancy'])} % {limiters}"


def _num(x: float) -> str:
    """Thousands separators for large figures, three significant digits for small ones."""
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def run_table(doc: dict) -> Table:
    """The run summary: one row per kernel plus the cuBLAS reference, from a results document.

    Columns: median ms, spread ((max - min) / median, '(!)' when noisy), GFLOP/s, % of cuBLAS,
    registers, occupancy and its limiters, model arithmetic intensity, and the binding floor with
    the measured time over it ('mem 2.42' = memory-bound, 2.42 times its floor)."""
    p = doc["problem"]
    dev = doc["device"]
    measured = "measured_fp32_gflops" in dev
    peaks = f"{dev['peak_fp32_gflops']:,.0f} GFLOP/s, {dev['peak_dram_gbps']:,.0f} GB/s"
    if measured:
        peaks += f"; measured {dev['measured_fp32_gflops']:,.0f} GFLOP/s, {dev['measured_dram_gbps']:,.0f} GB/s"
    t = Table(title=f"SGEMM {p['m']}x{p['n']}x{p['k']} on {dev['name']} ({peaks})", box=box.SIMPLE_HEAD)
    cols = [("kernel", "left"), ("ms", "right"), ("spread", "right"), ("GFLOP/s", "right"),
            ("% cuBLAS", "right"), ("regs", "right"), ("occupancy", "left"), ("AI", "right"), ("floor x", "left")]
    if measured:
        cols.append(("measured x", "left"))
    for col, just in cols + [("check", "left")]:
        t.add_column(col, justify=just, overflow="fold")
    for k in doc["kernels"]:
        timing = k.get("timing") or {}
        spread = ""
        if timing:
            s = (timing["max_ms"] - timing["min_ms"]) / timing["median_ms"]
            spread = f"{100 * s:.1f}%" + ("(!)" if s > NOISY_SPREAD else "")
        floors = k.get("floors") or {}
        ok = k["verified"] and k["gflops"] is not None
        if not ok:
            check = "[red]FAILED[/red]"
        elif k["rel_error"] == 0:
            check = "= cuBLAS"  # same FMA order along K: bit-for-bit the reference
        else:
            check = f"{k['rel_error']:.0e}"
        floor = "-"
        if ok and "times_floor" in floors:
            floor = f"{'mem' if floors['binding'] == 'memory' else 'fp32'} {floors['times_floor']:.2f}"
        cells = [
            k["name"],
            f"{k['time_ms']:.3f}" if ok else "-",
            spread,
            f"{k['gflops']:,.0f}" if ok else "-",
            f"{k['pct_of_reference']:.1f}" if ok else "-",
            str(k["registers"]) if k["registers"] is not None else "-",
            occupancy_cell(k["occupancy"]),
            _num(k["model"]["arithmetic_intensity"]),
            floor,
        ]
        if measured:
            v = k.get("verdict")
            cells.append(f"{v['binding'].lower()} {v['times_floor']:.2f}" if ok and v else "-")
        t.add_row(*cells, check)
    ref = doc["reference"]
    t.add_row("cublas", f"{ref['time_ms']:.3f}", "", f"{ref['gflops']:,.0f}", "100.0",
              "-", "-", "-", "-", *(["-"] if measured else []), "reference", style="bold")
    return t


def verdict_lines(doc: dict) -> list[str]:
    """One line per timed kernel: the binding ceiling, the distance to it, occupancy and limiter."""
    return [k["verdict"]["text"] for k in doc["kernels"] if k.get("verdict")]


def profile_table(doc: dict) -> Table | None:
    """Model bytes against the bytes Nsight Compute counted, per level, for profiled kernels;
    None when no kernel was profiled. Ratios are model / measured."""
    rows = [k for k in doc["kernels"] if k.get("measured")]
    if not rows:
        return None
    t = Table(title="model against Nsight Compute (GB; ratio = model / measured)", box=box.SIMPLE_HEAD)
    for col in ("kernel", "model GMEM", "L2", "ratio", "DRAM", "ratio", "L1", "model SMEM", "SMEM",
                "ratio", "bank conflicts", "FLOP meas/model"):
        t.add_column(col, justify="left" if col == "kernel" else "right")
    n = doc["problem"]["m"] * doc["problem"]["n"]
    for k in rows:
        me, mo = k["measured"], k["model"]
        gmem = mo["gmem_bytes"]
        smem = 4 * mo["smem_accesses_per_result"] * n if mo.get("smem_accesses_per_result") else None

        def gb(x):
            return f"{x / 1e9:,.2f}" if x is not None else "-"

        def ratio(a, b):
            return f"{a / b:.2f}" if a is not None and b else "-"

        t.add_row(k["name"], gb(gmem), gb(me.get("l2_bytes")), ratio(gmem, me.get("l2_bytes")),
                  gb(me.get("dram_bytes")), ratio(gmem, me.get("dram_bytes")), gb(me.get("l1_bytes")),
                  gb(smem), gb(me.get("smem_bytes")), ratio(smem, me.get("smem_bytes")),
                  f"{me['bank_conflicts']:,}" if "bank_conflicts" in me else "-",
                  ratio(me.get("fp32_flops"), mo["flops"]))
    return t


def kernels_table(doc: dict) -> Table:
    """The ladder with its model figures (and floors, when the document has a device)."""
    n = doc["size"]
    where = f" on {doc['device']}" if doc.get("device") else ""
    if doc.get("arch"):
        where += f" ({doc['arch']}, compiled through NVRTC)"
    t = Table(title=f"SGEMM ladder, model at {n}x{n}x{n}{where}", box=box.SIMPLE_HEAD)
    compiled = any("registers" in r for r in doc["kernels"])
    cols = ["kernel", "threads"]
    if compiled:
        cols += ["regs", "spill B", "smem B", "occupancy"]
    cols += ["GMEM acc/result", "SMEM acc/result", "GMEM GB", "AI"]
    for col in cols:
        t.add_column(col, justify="left" if col in ("kernel", "occupancy") else "right", overflow="fold")
    with_floors = any("floors" in r for r in doc["kernels"])
    if with_floors:
        for col in ("memory ms", "FP32 ms", "binds"):
            t.add_column(col, justify="right")
    for r in doc["kernels"]:
        mo = r["model"]
        smem = mo["smem_accesses_per_result"]
        cells = [r["name"], str(r["threads_per_block"])]
        if compiled and "registers" not in r:
            cells += ["-", "-", "-", "[red]does not compile[/red]" if "error" in r else "n/a on this target"]
        elif compiled:
            spill = r["spill_bytes"]
            smem_text = f"{r['static_smem_bytes'] + r.get('dynamic_smem_bytes', 0):,}"
            if r.get("dynamic_smem_bytes"):
                smem_text += " dyn"
            cells += [str(r["registers"]), f"[red]{spill}[/red]" if spill else "0", smem_text,
                      occupancy_cell(r["occupancy"])]
        cells += [_num(mo["gmem_accesses_per_result"]), _num(smem) if smem is not None else "-",
                  _num(mo["gmem_bytes"] / 1e9), _num(mo["arithmetic_intensity"])]
        if with_floors:
            fl = r["floors"]
            cells += [_num(fl["memory_floor_ms"]), _num(fl["compute_floor_ms"]), fl["binding"]]
        t.add_row(*cells)
    return t



def occupancy_table(o: dict) -> Table:
    """Block limit per resource, allocation per block, and the result, from occupancy JSON."""
    t = Table(title=f"{o['arch']}: {o['registers_per_thread']} regs x {o['threads_per_block']} threads, "
                    f"{o['static_smem_bytes'] + o['dynamic_smem_bytes']:,} B smem")
    t.add_column("resource")
    t.add_column("blocks/SM", justify="right")
    t.add_column("per block", justify="right")
    per_block = {
        "registers": f"{o['registers_per_block']:,} registers",
        "shared_memory": f"{o['smem_per_block_bytes']:,} B" + (" (opt-in)" if o.get("smem_opt_in") else ""),
        "warps": f"{-(-o['threads_per_block'] // 32)} warps",
        "blocks": "per block",
    }
    for res, blocks in o["block_limits"].items():
        mark = " <" if res in o["limiters"] else ""
        t.add_row(res + mark, str(blocks), per_block[res])
    t.add_section()
    t.add_row("active", f"{o['active_blocks_per_sm']}",
              f"{o['active_warps_per_sm']} of {o['max_warps_per_sm']} warps = {_pct(o['occupancy'])}", style="bold")
    return t


def device_table(d: dict) -> Table:
    """A device's peaks and per-SM limits, from `DeviceSpec.to_dict()`."""
    t = Table(title=d["name"], show_header=False)
    t.add_column("what")
    t.add_column("value", justify="right")
    lim = d["limits"]
    rows = [
        ("compute capability", f"{d['compute_capability']} ({d['arch']})"),
        ("SMs", str(d["sm_count"])),
        ("FP32 cores", f"{d['fp32_cores']:,}" if d.get("fp32_cores") else "-"),
        ("max SM clock", f"{d['max_sm_clock_mhz']:,.0f} MHz" if d.get("max_sm_clock_mhz") else "-"),
        ("max memory clock", f"{d['max_mem_clock_mhz']:,.0f} MHz" if d.get("max_mem_clock_mhz") else "-"),
        ("memory bus", f"{d['memory_bus_width_bits']:,} bit" if d.get("memory_bus_width_bits") else "-"),
        ("memory", f"{d['memory_bytes'] / 1e9:,.1f} GB" if d.get("memory_bytes") else "-"),
        ("peak FP32", f"{d['peak_fp32_gflops']:,.0f} GFLOP/s"),
        ("peak DRAM bandwidth", f"{d['peak_dram_gbps']:,.0f} GB/s"),
        *([("measured FP32", f"{d['measured_fp32_gflops']:,.0f} GFLOP/s "
                             f"({100 * d['measured_fp32_gflops'] / d['peak_fp32_gflops']:.0f} %)"),
           ("measured DRAM (copy)", f"{d['measured_dram_gbps']:,.0f} GB/s "
                                    f"({100 * d['measured_dram_gbps'] / d['peak_dram_gbps']:.0f} %)"),
           ("measured at", d["measured_at"])] if "measured_fp32_gflops" in d else []),
        ("ridge point", f"{d['ridge_point_flop_per_byte']:.1f} FLOP/B"),
        ("registers per SM", f"{lim['registers_per_sm']:,}"),
        ("shared memory per SM", f"{lim['smem_per_sm_bytes']:,} B"),
        ("shared memory per block (opt-in)", f"{lim['max_smem_per_block_optin_bytes']:,} B"),
        ("max warps per SM", str(lim["max_warps_per_sm"])),
        ("max blocks per SM", str(lim["max_blocks_per_sm"])),
        ("source", d["source"]),
    ]
    for row in rows:
        t.add_row(*row)
    return t
