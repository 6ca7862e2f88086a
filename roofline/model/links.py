"""The GPU-to-GPU link a collective's bus bandwidth is read against: NVLink's bandwidth per
direction per GPU (link count x per-link rate), from NVIDIA's datasheets, which quote both
directions together (A100 SXM: "NVLink 600 GB/s" is 12 links x 25 GB/s each way).

nccl-tests' bus bandwidth is the rate each GPU's links carry in one direction, so this is its
ceiling: on eight A100 SXM GPUs an all-reduce's busbw tops out near 230 GB/s of the 300.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Link:
    """A GPU's NVLink: `links` x `per_link_gbps` each way; `source` the datasheet figure."""

    name: str
    links: int
    per_link_gbps: float
    source: str

    @property
    def gbps(self) -> float:
        """Bandwidth per direction per GPU, GB/s."""
        return self.links * self.per_link_gbps


# (substrings all found in the GPU's name, in lower case) -> its link; the first match wins
LINKS = (
    (("b200",), Link("NVLink 5", 18, 50.0, "B200 datasheet: NVLink 1.8 TB/s (both directions)")),
    (("h200",), Link("NVLink 4", 18, 25.0, "H200 datasheet: NVLink 900 GB/s (both directions)")),
    (("h100", "nvl"), Link("NVLink 4 bridge", 6, 50.0, "H100 NVL datasheet: NVLink 600 GB/s (both directions)")),
    (("h100", "pcie"), Link("NVLink 4 bridge", 6, 50.0, "H100 PCIe datasheet: NVLink bridge 600 GB/s")),
    (("h100",), Link("NVLink 4", 18, 25.0, "H100 SXM datasheet: NVLink 900 GB/s (both directions)")),
    (("a100", "pcie"), Link("NVLink 3 bridge", 12, 25.0, "A100 PCIe datasheet: NVLink bridge 600 GB/s for 2 GPUs")),
    (("a100", "sxm"), Link("NVLink 3", 12, 25.0, "A100 SXM datasheet: NVLink 600 GB/s (both directions)")),
    (("v100", "sxm"), Link("NVLink 2", 6, 25.0, "V100 SXM2 datasheet: NVLink 300 GB/s (both directions)")),
)


def link_of(gpu_name: str | None) -> Link | None:
    """The NVLink of the GPU named `gpu_name` (as NVML or the trace names it), None where the
    table has none (a PCIe-only board, an unknown name)."""
    low = (gpu_name or "").lower()
    return next((link for keys, link in LINKS if all(k in low for k in keys)), None)
