"""Every python block of README.md and docs/*.md, and every sh block flagged venv, runs with this installed
package (tests/docs/run_doc_blocks.py says how blocks are marked; ctest's doc_blocks runs the sh, cmake and cpp
ones). Blocks marked gpu skip, saying so, without a GPU."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "docs"))
import run_doc_blocks as docs  # noqa: E402

BLOCKS = [b for b in docs.all_blocks() if b.suite == "python" and not b.problem]


@pytest.fixture(scope="module")
def workspace():
    ws = docs.Workspace(REPO / "build", keep=False)
    yield ws
    ws.close()


@pytest.fixture(scope="module")
def machine():
    return {"gpu": docs.has_gpu(), "data": docs.datasets_folder() is not None, "built": docs.is_built(REPO / "build")}


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.where)
def test_doc_block(block, workspace, machine):
    why = docs.skip_reason(block, machine["gpu"], machine["data"], machine["built"])
    if why:
        pytest.skip(why)
    try:
        docs.run_block(block, workspace, sys.executable)
    except docs.BlockFailed as e:
        pytest.fail(f"{block.label()}\n{block.text}---\n{e}", pytrace=False)


def test_every_block_is_marked():
    """A block whose language is neither run nor marked as not run fails here, not silently."""
    problems = [f"{b.where}: {b.problem}" for b in docs.all_blocks() if b.problem]
    assert not problems, "\n".join(problems)
