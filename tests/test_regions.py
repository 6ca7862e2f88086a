"""The bytes of a tensor its ops read through views (`workload.regions`): runs of addresses from a
view's geometry, their union, and the floor for a view too fragmented to split; worked by hand."""

import numpy as np

from roofline.workload.regions import Regions, least_bytes, runs, union_bytes


def test_a_contiguous_or_transposed_tensor_is_one_run():
    starts, length = runs(0, (64, 128), (128, 1), 4)
    assert starts.tolist() == [0] and length == 64 * 128 * 4
    starts, length = runs(0, (128, 64), (1, 128), 4)  # its transpose: the same addresses
    assert starts.tolist() == [0] and length == 64 * 128 * 4


def test_a_column_slice_is_a_run_per_row_and_a_broadcast_adds_no_address():
    starts, length = runs(16, (3, 4), (10, 1), 2)  # x[:3, 16:20] of a 10-wide fp16 x (offset 16 elements)
    assert starts.tolist() == [32, 52, 72] and length == 8
    starts, length = runs(0, (5, 3), (0, 1), 4)  # a row of 3 broadcast over 5
    assert starts.tolist() == [0] and length == 12
    assert runs(0, (0, 7), (7, 1), 4)[0].size == 0


def test_the_union_counts_each_byte_once():
    assert union_bytes(np.array([0, 10, 5, 30]), np.array([10, 20, 12, 31])) == 21  # [0, 20) and [30, 31)
    assert union_bytes(np.array([0, 2]), np.array([100, 3])) == 100  # one inside the other
    assert union_bytes(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)) == 0


def test_slices_add_up_to_the_whole_and_a_region_read_twice_counts_once():
    r = Regions(4 * 1024 * 4)  # a 4 x 1024 fp32 x, read as x[0] + x[1] + x[2] + x[3]
    for i in range(3):
        r.read(i * 1024, (1024,), (1,), 4)
        r.read(i * 1024, (1024,), (1,), 4)
    assert r.bytes() == 3 * 4096
    r.read(3 * 1024, (1024,), (1,), 4)
    assert r.bytes() == 4 * 4096
    halves = Regions(8 * 64 * 4)  # chunk(2, dim=-1) of an 8 x 64 x: 8 runs of 32 each, twice
    halves.read(0, (8, 32), (64, 1), 4)
    assert halves.bytes() == 8 * 32 * 4
    halves.read(32, (8, 32), (64, 1), 4)
    assert halves.bytes() == 8 * 64 * 4


def test_a_view_read_whole_is_the_whole_and_nothing_goes_past_the_source():
    r = Regions(1000)
    r.read(0, (250,), (1,), 4)
    assert r.whole and r.bytes() == 1000
    r.floor(5000)
    assert r.bytes() == 1000


def test_a_view_too_fragmented_to_split_counts_its_fewest_bytes(monkeypatch):
    from roofline.workload import regions

    monkeypatch.setattr(regions, "MAX_RUNS", 4)
    r = Regions(4 * 100 * 100)
    r.read(0, (100,), (100,), 4)  # a column of a 100 x 100 fp32 matrix: 100 runs of one element
    assert r.bytes() == 100 * 4
    assert least_bytes(0, (100, 5), (1, 1), 4) == 100 * 4  # overlapping windows (unfold): its longest dimension
    assert least_bytes(0, (20000, 20000), (1000, 1000), 4) == 20000 * 4  # 39,999 distinct elements, not 40 million
    assert least_bytes(0, (7, 3), (0, 1), 4) == 12  # a broadcast: its distinct elements
    assert least_bytes(0, (64, 512), (1024, 2), 4) == 64 * 512 * 4  # every other element of each row: nested


def test_a_strided_read_moves_whole_sectors():
    column = Regions(64 * 1024 * 4)  # x[:, 0] of a 64 x 1024 fp32 x: a 32-byte sector of every row
    column.read(0, (64,), (1024,), 4)
    assert column.bytes() == 64 * 32
    every_other = Regions(64 * 1024 * 4)  # x[:, ::2]: every sector of x
    every_other.read(0, (64, 512), (1024, 2), 4)
    assert every_other.bytes() == 64 * 1024 * 4
    tail = Regions(100)  # the last 4 bytes of a 100-byte tensor: its last sector, but no more than the tensor
    tail.read(24, (1,), (1,), 4)
    assert tail.bytes() == 32
