#!/usr/bin/env python3
"""Runs every fenced code block of README.md and docs/*.md, so none can rot.

    tests/docs/run_doc_blocks.py                       # every block this machine can run
    tests/docs/run_doc_blocks.py --lang sh,cmake,cpp   # what ctest runs (doc_blocks)
    tests/docs/run_doc_blocks.py --lang python         # what pytest runs (python/tests/test_doc_blocks.py)
    tests/docs/run_doc_blocks.py --gpu-only --build BIN_DIR   # on a GPU machine: only the blocks marked gpu
    tests/docs/run_doc_blocks.py --list                # what each block is and how it would run

A block's info string says what it is: a language, then flags.

  sh, bash   run by bash (-e -o pipefail) in a scratch copy of the repository's root (every top-level
             entry linked, `build` linked to --build, `../shared` linked to the one beside the checkout),
             with --build's cli/ first on PATH: `build/cli/gnnjit ...` works as written, and what a
             command writes stays in the scratch folder.
  python     run by --python (default: this interpreter, which must have gnnjit installed) in the same
             scratch folder. CPU tensors run gnnjit's float64 reference: keep CPU blocks' graphs small.
  cpp        compiled against the installed C++ package (`cmake --install BUILD` into a scratch
             prefix, then find_package(gnnjit)), and run. A block with main() is a program; a block
             flagged layer=NAME defines `dsl::Layer NAME(int64_t heads, int64_t dim)`, which a harness
             builds (2 heads of 8), evaluates on the reference forward and backward, lowers, and then
             runs and checks on a GPU or, without one, compiles with NVRTC. A block flagged file=PATH
             is a source of the cmake project just before it.
  cmake      a whole CMakeLists.txt of a project that uses the installed package, configured, built and
             its targets run; the cpp blocks flagged file= right after it are its sources.
  text, console-output
             never run: output samples, grammar, diagrams.

Any other language, or none, is refused: nothing escapes silently. Flags:

  gpu          needs a CUDA device: run with --gpu-only on a GPU machine; skipped, saying so, elsewhere
  venv         (sh) runs a Python program that needs the gnnjit package: --python's folder comes first on
               PATH, so `python` is that interpreter; it belongs to the python blocks' suite
  data         needs gnnjit's dataset folder ($GNNJIT_DATA or ../shared/datasets); skipped, saying so, without it
  norun="WHY"  documented but not run here, and why (a command CI runs itself, one that installs)
  timeout=S    seconds before the block fails (default 600)
  exit=N       the exit status the block must end with (an error shown on purpose)

Prints one line per block and closes with 'N passed, N failed, N skipped'; exits 1 when a block failed
or a block's info string is not one of the above.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RUN_LANGS = {"sh", "bash", "python", "cpp", "cmake"}
QUIET_LANGS = {"text", "console-output"}
FLAGS = {"gpu", "data", "venv", "norun", "timeout", "exit", "layer", "file"}
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


@dataclass
class Block:
    path: Path  # relative to the repository
    line: int  # of the opening fence, 1-based
    lang: str
    flags: dict
    text: str
    problem: str = ""  # why the info string is refused
    sources: list = field(default_factory=list)  # a cmake block's file= blocks

    @property
    def suite(self) -> str:
        """Which run takes the block: 'python' (pytest's, with the package installed), 'sh', 'cpp' or 'cmake'."""
        if self.lang == "python" or "venv" in self.flags:
            return "python"
        return "sh" if self.lang == "bash" else self.lang

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    def label(self) -> str:
        marks = " ".join(f"{k}" if v is True else f"{k}={v}" for k, v in self.flags.items())
        return f"{self.where} {self.lang}{' ' + marks if marks else ''}"


def parse_info(info: str) -> tuple[str, dict, str]:
    """(language, flags, problem) of a fence's info string."""
    try:
        words = shlex.split(info)
    except ValueError as e:
        return "", {}, f"info string {info!r} does not parse: {e}"
    if not words:
        return "", {}, "a block without a language: mark it (sh, python, cpp, cmake; text or console-output if not run)"
    lang, flags = words[0], {}
    if lang not in RUN_LANGS | QUIET_LANGS:
        return lang, {}, (f"language {lang!r} is neither run ({', '.join(sorted(RUN_LANGS))}) nor marked as "
                          f"not run ({', '.join(sorted(QUIET_LANGS))})")
    for w in words[1:]:
        key, _, value = w.partition("=")
        if key not in FLAGS:
            return lang, flags, f"unknown flag {key!r} (known: {', '.join(sorted(FLAGS))})"
        flags[key] = value if value else True
    if flags.get("norun") is True:
        return lang, flags, 'norun needs its reason: norun="why this block is not run here"'
    for key in ("timeout", "exit"):
        if key in flags and not str(flags[key]).isdigit():
            return lang, flags, f"{key}= takes a number"
    if ("layer" in flags or "file" in flags) and lang != "cpp":
        return lang, flags, "layer= and file= are for cpp blocks"
    if "venv" in flags and lang not in ("sh", "bash"):
        return lang, flags, "venv is for sh blocks (python blocks always run with --python)"
    return lang, flags, ""


def extract(path: Path) -> list[Block]:
    """Every fenced block of a Markdown file (fences may be indented, as in list items)."""
    blocks, lines, i = [], path.read_text(encoding="utf-8").splitlines(), 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence = len(m["indent"]), m["fence"]
        start, body, i = i + 1, [], i + 1
        while i < len(lines):
            close = FENCE.match(lines[i])
            if close and close["fence"][0] == fence[0] and len(close["fence"]) >= len(fence) and not close["info"].strip():
                break
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
            i += 1
        i += 1
        lang, flags, problem = parse_info(m["info"].strip())
        shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
        blocks.append(Block(shown, start, lang, flags, "\n".join(body) + "\n", problem))
    # A cmake block takes the file= cpp blocks that follow it as its sources.
    owner = None
    for b in blocks:
        if b.lang == "cmake":
            owner = b
        elif b.lang == "cpp" and "file" in b.flags:
            if owner is None:
                b.problem = "a cpp block with file= belongs to a cmake block before it; there is none"
            else:
                owner.sources.append(b)
            continue
        elif b.lang not in QUIET_LANGS:
            owner = None
    return blocks


def doc_files() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def all_blocks(files=None) -> list[Block]:
    return [b for f in (files or doc_files()) for b in extract(Path(f).resolve())]


def has_gpu() -> bool:
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and "GPU" in out.stdout


def datasets_folder() -> Path | None:
    for entry in filter(None, os.environ.get("GNNJIT_DATA", "").split(":")):
        if Path(entry).is_dir():
            return Path(entry)
    shared = REPO.parent / "shared" / "datasets"
    return shared if shared.is_dir() else None


def build_view(build: Path, root: Path) -> Path:
    """What `build/` is to the blocks: the build tree itself, or, for the flat folder of binaries a GPU machine is
    given (gnnjit, bench_*, custom_layer side by side, as scripts/gpu_checks.sh takes), a tree of links laid out as
    the build's (cli/, bench/, examples/)."""
    if (build / "cli" / "gnnjit").exists() or not (build / "gnnjit").exists():
        return build
    view = root / "build-view"
    for sub, names in (("cli", ["gnnjit"]), ("bench", [p.name for p in build.glob("bench_*")]),
                       ("examples", ["custom_layer"])):
        (view / sub).mkdir(parents=True, exist_ok=True)
        for name in names:
            if (build / name).exists():
                (view / sub / name).symlink_to(build / name)
    return view


def is_built(build: Path) -> bool:
    return (build / "cli" / "gnnjit").exists() or (build / "gnnjit").exists()


class Workspace:
    """A scratch view of the repository's root: what blocks write stays here."""

    def __init__(self, build: Path, keep: bool):
        self.root = Path(tempfile.mkdtemp(prefix="gnnjit-doc-blocks-"))
        self.keep, self.build = keep, build
        self.repo = self.root / "repo"
        self.repo.mkdir()
        for entry in REPO.iterdir():
            if entry.name not in (".git", "build"):
                (self.repo / entry.name).symlink_to(entry)
        (self.repo / "build").symlink_to(build_view(build, self.root))
        shared = REPO.parent / "shared"
        if shared.is_dir():
            (self.root / "shared").symlink_to(shared)
        self.env = dict(os.environ)
        self.env["PATH"] = f"{self.repo / 'build' / 'cli'}{os.pathsep}{self.env.get('PATH', '')}"
        self.env["GNNJIT_NO_PROGRESS"] = "1"
        self.env["GNNJIT_CACHE_DIR"] = str(self.root / "kernel-cache")
        self.prefix = None
        self.cpp = {}  # a cpp block's FILE:LINE -> its program, or the BlockFailed saying why there is none

    def close(self):
        if self.keep:
            print(f"scratch kept: {self.root}")
        else:
            shutil.rmtree(self.root, ignore_errors=True)

    def installed_prefix(self) -> Path:
        """The C++ package installed from --build into a scratch prefix (once)."""
        if self.prefix is None:
            prefix = self.root / "prefix"
            run(["cmake", "--install", str(self.build), "--prefix", str(prefix)], self.root, self.env, 900)
            self.prefix = prefix
        return self.prefix


def run(cmd, cwd, env, timeout, stdin=None) -> subprocess.CompletedProcess:
    out = subprocess.run(cmd, cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0 and stdin is None:
        raise BlockFailed(f"{' '.join(map(str, cmd))} exited {out.returncode}\n{out.stdout}{out.stderr}")
    return out


class BlockFailed(Exception):
    pass


LAYER_HARNESS = r"""
int main() try {
  using namespace gnnjit;
  const dsl::Layer layer = @LAYER@(2, 8);
  const graph::Graph g = graph::Graph::fromEdges(graph::loadGraphSource("rmat:scale=8,ef=4,seed=1").edges);
  Rng rng(3);
  auto random = [&](int64_t rows, int64_t cols) {
    ref::Tensor t(rows, cols);
    for (double &v : t.values)
      v = 2 * rng.uniform() - 1;
    return t;
  };
  ref::TensorMap inputs;
  for (const dsl::InputPtr &in : layer.inputs()) {
    const int64_t rows = in->kind == dsl::InputKind::Node ? g.numNodes()
                         : in->kind == dsl::InputKind::Edge ? g.numEdgeIds() : 1;
    inputs[in->name] = random(rows, in->shape.size());
  }
  ref::TensorMap backwardInputs = inputs;
  for (const dsl::LayerOutput &out : layer.outputs())
    backwardInputs["d_" + out.name] = random(g.numNodes(), out.value->shape().size());
  const ref::TensorMap outputs = ref::forward(layer, g, inputs);
  const ref::TensorMap gradients = ref::backward(layer, dsl::differentiate(layer), g, backwardInputs);
  fmt::print("layer {}: reference forward ({} outputs) and backward ({} gradients) on {} nodes\n", layer.name(),
             outputs.size(), gradients.size(), g.numNodes());
  const lower::LoweredLayer lowered = lower::lowerLayer(layer);
  const exec::LayerPrograms programs = autotune::rulePrograms(lowered, g);
  if (!runtime::hasCudaDevice()) {
    exec::CompileReport report;
    for (const codegen::ProgramPtr &program : {programs.forward, programs.backward})
      exec::compileProgram(*program, {}, report);
    fmt::print("no GPU: {} kernel modules compiled for {} by NVRTC\n", report.modules, runtime::targetArch());
    return 0;
  }
  exec::DeviceGraph device(g);
  exec::LayerRunner runner(lowered, device, programs);
  const exec::UploadedTensors in(inputs), backwardIn(backwardInputs);
  auto agrees = [](const ref::TensorMap &expected, const exec::DeviceTensors &actual) {
    bool ok = true;
    for (const auto &[name, t] : expected) {
      const double worst = exec::compare(t, actual.at(name)).worst;
      fmt::print("check {}: worst scaled error {:.2e}\n", name, worst);
      ok = ok && worst <= 1e-4;
    }
    return ok;
  };
  const bool forwardOk = agrees(outputs, runner.forward(in.tensors()));
  const bool ok = agrees(gradients, runner.backward(backwardIn.tensors())) && forwardOk;
  return ok ? 0 : 3;
} catch (const std::exception &e) {
  fmt::print(stderr, "{}\n", e.what());
  return 1;
}
"""

LAYER_INCLUDES = """#include "autotune/PlanLayer.h"
#include "dsl/Differentiate.h"
#include "dsl/Layer.h"
#include "dsl/Ops.h"
#include "exec/HostTransfer.h"
#include "exec/LayerRunner.h"
#include "graph/GraphSource.h"
#include "lower/Pipeline.h"
#include "ref/Executor.h"
#include "runtime/Device.h"
#include "support/Random.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <utility>

using namespace gnnjit;
"""


def layer_harness(name: str) -> str:
    return LAYER_HARNESS.replace("@LAYER@", name)


def cmake_prefix_args(ws: Workspace) -> list[str]:
    return [f"-DCMAKE_PREFIX_PATH={ws.installed_prefix()}", "-DCMAKE_BUILD_TYPE=Release", "-G", "Ninja"]


def cpp_source(block: Block) -> str:
    source = f'#line {block.line + 1} "{block.path}"\n{block.text}'
    if "layer" in block.flags:
        return LAYER_INCLUDES + source + f'#line 1 "{block.where} (harness)"\n' + layer_harness(block.flags["layer"])
    if not re.search(r"\bint\s+main\s*\(", block.text):
        raise BlockFailed("a cpp block needs main(), layer=NAME (a layer function) or file=PATH (a cmake project's)")
    return source


def build_cpp_blocks(blocks: list[Block], ws: Workspace, timeout: int) -> None:
    """Every cpp block as one program of one project (one configure, compiled in parallel); ws.cpp maps each
    block to its program, or to why it did not build."""
    project = ws.root / "cpp"
    project.mkdir()
    lines = ["cmake_minimum_required(VERSION 3.25)", "project(doc_blocks LANGUAGES C CXX)",
             "set(CMAKE_CXX_STANDARD 20)", "set(CMAKE_CXX_STANDARD_REQUIRED ON)", "find_package(gnnjit CONFIG REQUIRED)"]
    targets = {}
    for k, b in enumerate(blocks):
        try:
            (project / f"block{k}.cpp").write_text(cpp_source(b))
        except BlockFailed as e:
            ws.cpp[b.where] = e
            continue
        targets[b.where] = f"block{k}"
        lines += [f"add_executable(block{k} block{k}.cpp)", f"target_link_libraries(block{k} PRIVATE gnnjit::gnnjit)"]
    (project / "CMakeLists.txt").write_text("\n".join(lines) + "\n")
    build = project / "build"
    run(["cmake", "-S", str(project), "-B", str(build), *cmake_prefix_args(ws)], project, ws.env, timeout)
    # Keep going past a block that does not compile; its own error is read again below.
    subprocess.run(["cmake", "--build", str(build), "-j", "2", "--", "-k", "0"], cwd=project, env=ws.env,
                   capture_output=True, timeout=timeout)
    for where, target in targets.items():
        if (build / target).exists():
            ws.cpp[where] = build / target
            continue
        out = subprocess.run(["cmake", "--build", str(build), "--target", target], cwd=project, env=ws.env,
                             capture_output=True, text=True, timeout=timeout)
        ws.cpp[where] = BlockFailed(f"did not compile\n{out.stdout}{out.stderr}")


def run_cpp(block: Block, ws: Workspace, timeout: int) -> str:
    built = ws.cpp.get(block.where)
    if built is None:  # not built with the others (a run of this block alone)
        build_cpp_blocks([block], ws, timeout)
        built = ws.cpp[block.where]
    if isinstance(built, BlockFailed):
        raise built
    return run([str(built)], ws.repo, ws.env, timeout).stdout


def run_cmake(block: Block, ws: Workspace, timeout: int) -> str:
    project = ws.root / "cmake" / f"{block.path.stem}-{block.line}"
    project.mkdir(parents=True)
    (project / "CMakeLists.txt").write_text(block.text)
    for src in block.sources:
        target = project / src.flags["file"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f'#line {src.line + 1} "{src.path}"\n{src.text}')
    targets = re.findall(r"add_executable\(\s*([A-Za-z0-9_.+-]+)", block.text)
    return build_and_run(project, targets, ws, timeout)


def build_and_run(project: Path, programs: list[str], ws: Workspace, timeout: int) -> str:
    build = project / "build"
    run(["cmake", "-S", str(project), "-B", str(build), *cmake_prefix_args(ws)], project, ws.env, timeout)
    run(["cmake", "--build", str(build), "-j", "2"], project, ws.env, timeout)
    out = ""
    for p in programs:
        out += run([str(build / p)], ws.repo, ws.env, timeout).stdout
    return out


def run_block(block: Block, ws: Workspace, python: str) -> str:
    """The block's output; raises BlockFailed."""
    timeout = int(block.flags.get("timeout", 600))
    expected = int(block.flags.get("exit", 0))
    if block.lang in ("cpp", "cmake"):
        return run_cpp(block, ws, timeout) if block.lang == "cpp" else run_cmake(block, ws, timeout)
    cmd = ["bash", "-e", "-o", "pipefail", "-s"] if block.lang in ("sh", "bash") else [python, "-"]
    env = dict(ws.env)
    if "venv" in block.flags:
        env["PATH"] = f"{Path(python).parent}{os.pathsep}{env['PATH']}"
    try:
        out = run(cmd, ws.repo, env, timeout, stdin=block.text)
    except subprocess.TimeoutExpired:
        raise BlockFailed(f"still running after {timeout} s")
    if out.returncode != expected:
        raise BlockFailed(f"exited {out.returncode} (expected {expected})\n{out.stdout}{out.stderr}")
    return out.stdout + out.stderr


def skip_reason(block: Block, gpu: bool, data: bool, built: bool = True) -> str:
    if "norun" in block.flags:
        return f"not run here: {block.flags['norun']}"
    if not built and (block.lang in ("cpp", "cmake") or re.search(r"(^|[\s/])build/", block.text)):
        return "needs the C++ build (build/, or --build DIR)"
    if "gpu" in block.flags and not gpu:
        return "needs a GPU (run with --gpu-only on a GPU machine)"
    if "data" in block.flags and not data:
        return "needs gnnjit's dataset folder ($GNNJIT_DATA or ../shared/datasets)"
    return ""


def selected(blocks: list[Block], langs: set[str], gpu_only: bool, pattern: str) -> list[Block]:
    out = []
    for b in blocks:
        if b.problem:
            out.append(b)  # always reported
        elif b.lang in QUIET_LANGS or (b.lang == "cpp" and "file" in b.flags):
            continue
        elif langs and b.suite not in langs:
            continue
        elif gpu_only and "gpu" not in b.flags:
            continue
        elif pattern and pattern not in b.where:
            continue
        else:
            out.append(b)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*", help="Markdown files (default: README.md and docs/*.md)")
    parser.add_argument("--build", default=str(REPO / "build"),
                        help="the build tree (default: build/), or a flat folder of its binaries (gnnjit, bench_*, "
                        "custom_layer) as a GPU machine gets them")
    parser.add_argument("--python", default=sys.executable, help="the interpreter for python blocks")
    parser.add_argument("--lang", default="", help="only these suites, comma-separated: sh, cpp, cmake, python (python "
                        "blocks and sh blocks flagged venv)")
    parser.add_argument("--gpu-only", action="store_true", help="only the blocks marked gpu")
    parser.add_argument("-k", dest="pattern", default="", help="only blocks whose FILE:LINE contains this")
    parser.add_argument("--list", action="store_true", help="list the blocks and how each would run")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args(argv)

    blocks = all_blocks(args.files)
    langs = {w.strip() for w in args.lang.split(",") if w.strip()}
    gpu, data = has_gpu(), datasets_folder() is not None
    build = Path(args.build).resolve()
    built = is_built(build)
    if args.list:
        for b in blocks:
            why = b.problem or skip_reason(b, gpu, data, built) or ("never run" if b.lang in QUIET_LANGS else "runs")
            print(f"{b.label():60} {why}")
        return 1 if any(b.problem for b in blocks) else 0

    todo = selected(blocks, langs, args.gpu_only, args.pattern)
    if any(b.suite != "python" for b in todo if not b.problem) and not built:
        print(f"doc blocks: no {build}/cli/gnnjit: build first (cmake --build build --target gnnjit)", file=sys.stderr)
        return 1
    print(f"doc blocks: {len(todo)} to consider ({'a GPU' if gpu else 'no GPU'}, "
          f"{'datasets found' if data else 'no dataset folder'}, build {build})", flush=True)
    passed = failed = skipped = 0
    ws = Workspace(build, args.keep)
    try:
        cpp = [b for b in todo if b.lang == "cpp" and not b.problem and not skip_reason(b, gpu, data, built)]
        if cpp:
            print(f"doc blocks: building the {len(cpp)} cpp blocks against the installed package", flush=True)
            try:
                build_cpp_blocks(cpp, ws, 1800)
            except (BlockFailed, subprocess.TimeoutExpired) as e:
                for b in cpp:
                    ws.cpp[b.where] = BlockFailed(f"the cpp blocks' project did not build: {e}")
        for b in todo:
            if b.problem:
                print(f"REFUSED {b.where}: {b.problem}", flush=True)
                failed += 1
                continue
            why = skip_reason(b, gpu, data, built)
            if why:
                print(f"SKIPPED {b.label()}: {why}", flush=True)
                skipped += 1
                continue
            start = time.monotonic()
            try:
                run_block(b, ws, args.python)
                print(f"PASSED  {b.label()} ({time.monotonic() - start:.1f} s)", flush=True)
                passed += 1
            except (BlockFailed, subprocess.TimeoutExpired) as e:
                print(f"FAILED  {b.label()} ({time.monotonic() - start:.1f} s)\n{b.text}---\n{e}", flush=True)
                failed += 1
    finally:
        ws.close()
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
