"""gnnjit._layer_cache._flat_args, which turns each call's tensors into the (pointer, rows, cols, row stride)
the CUDA runner reads in place: what it reads without a copy and what it copies. Plain tensor metadata, so it
runs on the CPU."""

import torch

from gnnjit._layer_cache import _flat_args


def flat_of(t):
    flat = []
    (read,) = _flat_args([t], flat)
    return read, flat


def test_contiguous_rows_are_read_in_place():
    t = torch.randn(5, 3)
    read, flat = flat_of(t)
    assert read is t and flat == [t.data_ptr(), 5, 3, 3]


def test_a_column_slice_is_read_in_place_with_its_row_stride():
    wide = torch.randn(5, 8)
    t = wide[:, 2:5]
    read, flat = flat_of(t)
    assert read is t and flat == [t.data_ptr(), 5, 3, 8]


def test_one_row_reports_its_width_as_row_stride():
    t = torch.randn(4, 8)[1:2, :3]
    read, flat = flat_of(t)
    assert read is t and flat == [t.data_ptr(), 1, 3, 3]


def test_layouts_the_kernels_cannot_read_are_copied_to_contiguous_rows():
    cases = {
        "transposed": torch.randn(3, 5).t(),
        "stride-0 rows (out.sum()'s gradient)": torch.ones(()).expand(5, 3),
        "one column of stride 0": torch.ones(()).expand(5, 1),
        "overlapping rows": torch.randn(10).as_strided((5, 3), (1, 1)),
    }
    for what, t in cases.items():
        read, flat = flat_of(t)
        assert read.is_contiguous() and read.data_ptr() != t.data_ptr(), what
        assert flat == [read.data_ptr(), 5, t.size(1), t.size(1)], what
        assert torch.equal(read, t), what


def test_other_ranks_become_rows_of_their_first_dimension():
    t = torch.randn(4, 2, 3)
    read, flat = flat_of(t)
    assert read.shape == (4, 6) and flat == [read.data_ptr(), 4, 6, 6]
    v = torch.randn(6)
    read, flat = flat_of(v)
    assert read.shape == (6, 1) and flat == [read.data_ptr(), 6, 1, 1]


def test_the_copies_stay_alive_with_the_returned_list():
    t = torch.randn(3, 5).t()
    flat = []
    read = _flat_args([t, torch.randn(2, 2)], flat)
    assert len(read) == 2 and flat[0] == read[0].data_ptr() and len(flat) == 8
