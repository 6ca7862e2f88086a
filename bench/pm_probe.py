"""The launch commands of ladder kernels, one per line as `NAME<TAB>KERNEL<TAB>COMMAND-JSON`, for a
device visit that profiles them under ncu with sections of its own choosing (bench/pm_visit.sh):
each command launches its kernel once on random inputs (roofline.measure.counters' child).
    python bench/pm_probe.py DTYPE SIZE FOLDER [NAME ...]     (no names: the precision's whole ladder)
"""

import json
import sys
from pathlib import Path

from roofline.ladder import families
from roofline.measure.counters import launch_command
from roofline.model.problem import Problem


def main(dtype: str, size: int, folder: str, names: list[str]) -> None:
    for spec in families.select(names or None, dtype=dtype):
        where = Path(folder) / f"{spec.name}-{dtype}-{size}"
        where.mkdir(parents=True, exist_ok=True)
        command = launch_command(spec, Problem(size, size, size, dtype), where)
        print(f"{spec.name}\t{spec.kernel_name}\t{json.dumps(command)}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:])
