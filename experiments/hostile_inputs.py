"""Hostile inputs against the ``acdb`` command and the file readers, each in its own process.

    python experiments/hostile_inputs.py [--only NAME ...] [--keep DIR]

Every case plants one input of the kinds an outside attack used (deeply nested JSON, integers
past Python's digit limit, rows that would allocate without bound, out-of-range scores, names
that climb out of the run directory, symbolic links, crafted policy files and instance banks,
decompression bombs, sizes within the bounds that add up to gigabytes, odd command-line
values), at the sizes the attack used, then runs one command on it in a fresh subprocess and
measures its wall time and peak resident memory (``ru_maxrss`` of that command, from GNU
``time``). A case passes when the command ends the way SECURITY.md says (an error line and
exit 2, or the line skipped with ``FILE:LINE`` and exit 0, or a bounded result), with no
traceback, within 1 GB and 60 s, and its own check holds (nothing written outside the run
directory, the victim of a link untouched, no ``javascript:`` link). Building the inputs is not
measured. A watchdog kills a child past 3 GB or 180 s, so a regression cannot take the machine
down. The table is Markdown; the exit status is 1 if any case failed.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acdb_gym.core.scripts import OneLineParser, run_script

ROOT = Path(__file__).resolve().parents[1]
POLICY = ROOT / "models" / "acdb_design_l1_v0" / "model.zip"
MEMORY_LIMIT = 1 << 30  # the promise: 1 GB
TIME_LIMIT = 60.0  # the promise: 60 s
KILL_MEMORY = 3 << 30  # the watchdog's
KILL_SECONDS = 180.0
NESTED = "[" * 100_000 + "]" * 100_000
LONG_INTEGER = '{"job_id": ' + "7" * 4301 + "}"
GIGABYTES_3 = 3 << 30


@dataclass(frozen=True)
class Outcome:
    """What one command did."""

    code: int
    stdout: str
    stderr: str
    seconds: float
    peak_bytes: int
    killed: str = ""


@dataclass(frozen=True)
class Case:
    """A hostile input (built by ``setup`` in a fresh folder, returning the command to run) and
    the end it must come to (``check`` returns what is wrong, or "")."""

    name: str
    item: int
    setup: Callable[[Path], list[str]]
    check: Callable[[Outcome, Path], str]
    expected: str


# ----------------------------------------------------------------------------- running
def _environment() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    for variable in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        env.pop(variable, None)
    return env


def _rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


TIME = Path("/usr/bin/time")
"""GNU time: it measures the command's peak RSS (``%M``, from ``wait4``) as a small parent of
its own. Measured from this script instead, a child's ``ru_maxrss`` would start at this
script's own size, which the inputs it builds make large (Linux carries the pre-``exec``
high-water mark over)."""


def run(argv: list[str], folder: Path, stdin: str | None = None) -> Outcome:
    """Run ``argv`` in ``folder``; its wall time and peak RSS, killed past the watchdog's
    bounds."""
    out, err, measured = folder / "stdout.txt", folder / "stderr.txt", folder / "time.txt"
    wrapped = [str(TIME), "-f", "%M", "-o", str(measured), *argv] if TIME.exists() else argv
    with out.open("wb") as stdout, err.open("wb") as stderr:
        start = time.perf_counter()
        process = subprocess.Popen(
            wrapped,
            cwd=folder,
            env=_environment(),
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
        killed: list[str] = []
        if stdin is not None:
            threading.Thread(target=_feed, args=(process, stdin), daemon=True).start()
        finished = threading.Event()
        watchdog = threading.Thread(
            target=_watch, args=(process.pid, start, killed, finished), daemon=True
        )
        watchdog.start()
        _, status, usage = os.wait4(process.pid, 0)
        finished.set()
        process.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - start
    peak = usage.ru_maxrss * 1024
    if TIME.exists() and measured.is_file():
        lines = measured.read_text().split()
        peak = int(lines[-1]) * 1024 if lines and lines[-1].isdigit() else peak
    return Outcome(
        process.returncode,
        out.read_text(errors="replace"),
        err.read_text(errors="replace"),
        seconds,
        peak,
        killed[0] if killed else "",
    )


def _feed(process: subprocess.Popen[bytes], text: str) -> None:
    try:
        assert process.stdin is not None
        process.stdin.write(text.encode())
        process.stdin.close()
    except OSError:
        pass


def _group_rss(pid: int) -> int:
    """The RSS of a process and its children (the command under ``time``)."""
    total = _rss(pid)
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    return total + sum(_group_rss(int(child)) for child in children)


def _watch(pid: int, start: float, killed: list[str], finished: threading.Event) -> None:
    """Kill the case's process group past the bounds. It never waits on the child (a poll
    would reap it before the main thread's ``wait4`` reads its usage)."""
    while not finished.wait(0.1):
        if _group_rss(pid) > KILL_MEMORY:
            killed.append("killed past 3 GB")
        elif time.perf_counter() - start > KILL_SECONDS:
            killed.append(f"killed past {KILL_SECONDS:g} s")
        if killed:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, 9)
            return


def acdb(*args: str) -> list[str]:
    return [sys.executable, "-m", "acdb_gym.cli", *args]


def python(code: str) -> list[str]:
    """A snippet that prints a ValueError as one line and exits 2 (any other exception is a
    traceback, which fails the case)."""
    wrapped = (
        "import sys\ntry:\n"
        + "".join(f"    {line}\n" for line in code.strip().splitlines())
        + "except ValueError as error:\n"
        + "    print(f'error: {type(error).__name__}: {error}', file=sys.stderr)\n"
        + "    sys.exit(2)\n"
    )
    return [sys.executable, "-c", wrapped]


# ----------------------------------------------------------------------------- checks
def error_line(*fragments: str) -> Callable[[Outcome, Path], str]:
    """Exit 2 with one line on stderr that holds every fragment."""

    def check(outcome: Outcome, _: Path) -> str:
        lines = outcome.stderr.strip().splitlines()
        if outcome.code != 2 or len(lines) != 1:
            return f"exit {outcome.code}, {len(lines)} stderr lines"
        missing = [f for f in fragments if f not in lines[0]]
        return f"missing {missing} in {lines[0][:200]!r}" if missing else ""

    return check


def skipped(*fragments: str, extra: Callable[[Path], str] | None = None) -> Any:
    """Exit 0 with a ``FILE:LINE: ...; skipped`` warning holding every fragment."""

    def check(outcome: Outcome, folder: Path) -> str:
        warned = [
            line
            for line in outcome.stderr.splitlines()
            if line.startswith("acdb: warning:") and line.endswith("; skipped")
        ]
        if outcome.code != 0 or not warned:
            return f"exit {outcome.code}, {len(warned)} skipped lines: {outcome.stderr[-300:]!r}"
        missing = [f for f in fragments if not any(f in line for line in warned)]
        if missing:
            return f"missing {missing} in {warned}"
        return extra(folder) if extra is not None else ""

    return check


def also(first: Callable[[Outcome, Path], str], second: Callable[[Path], str]) -> Any:
    def check(outcome: Outcome, folder: Path) -> str:
        return first(outcome, folder) or second(folder)

    return check


def untouched(name: str, content: str = "precious\n") -> Callable[[Path], str]:
    def check(folder: Path) -> str:
        return "" if (folder / name).read_text() == content else f"{name} was written"

    return check


def nothing_outside(folder: Path) -> str:
    found = [str(p) for p in folder.parent.rglob("PWNED*")]
    return f"written outside: {found}" if found else ""


# ----------------------------------------------------------------------------- inputs
BASE: dict[str, Path] = {}


def base_run(scratch: Path) -> Path:
    """A real run (pc_greedy with revision records and submissions, the oracle), built once."""
    if "run" not in BASE:
        out = scratch / "base"
        argv = acdb("sweep", "--levels", "L0", "--seeds", "2", "--agents", "pc_greedy,oracle")
        done = subprocess.run(
            [*argv, "--out", str(out), "--no-progress", "--no-report"],
            env=_environment(),
            capture_output=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        BASE["run"] = out
    return BASE["run"]


def rows_of(run: Path) -> list[dict[str, Any]]:
    lines = (run / "results.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


Line = str | Callable[[], str]
"""A planted line, or a function that makes it once the base run exists."""

DROP = object()
"""A value of :func:`with_row` that removes the key."""


def planted(folder: Path, *lines: Line) -> Path:
    """A copy of the base run with ``lines`` after its first row."""
    run = folder / "run"
    shutil.copytree(BASE["run"], run)
    rows = (BASE["run"] / "results.jsonl").read_text().splitlines()
    texts = [line() if callable(line) else line for line in lines]
    (run / "results.jsonl").write_text("\n".join([rows[0], *texts, *rows[1:]]) + "\n")
    return run


def with_row(**changes: Any) -> Callable[[], str]:
    """The base run's first row (pc_greedy's, with a revision record and a submission) with
    ``changes``, made when the case is set up."""

    def line() -> str:
        row = {**rows_of(BASE["run"])[0], "job_id": "planted", **changes}
        return json.dumps({key: value for key, value in row.items() if value is not DROP})

    return line


def report_of(*lines: Line) -> Callable[[Path], list[str]]:
    def setup(folder: Path) -> list[str]:
        return acdb("report", str(planted(folder, *lines)))

    return setup


def rewritten_policy(folder: Path, replace: dict[str, bytes]) -> Path:
    target = folder / "model.zip"
    with zipfile.ZipFile(POLICY) as old, zipfile.ZipFile(target, "w") as new:
        for name in old.namelist():
            new.writestr(name, replace.get(name, old.read(name)))
    return target


def policy_data(**kwargs: Any) -> bytes:
    with zipfile.ZipFile(POLICY) as archive:
        data = json.loads(archive.read("data"))
    data["policy_kwargs"] = kwargs
    return json.dumps(data).encode()


def add_bomb(archive_path: Path, name: str, size: int, header: bytes = b"") -> None:
    """Append a member of ``header`` and then zeros, ``size`` bytes in all, deflated."""
    with (
        zipfile.ZipFile(archive_path, "a", compression=zipfile.ZIP_DEFLATED) as archive,
        archive.open(name, "w", force_zip64=True) as member,
    ):
        member.write(header)
        block = bytes(1 << 24)
        left = size - len(header)
        while left:
            member.write(block[: min(left, len(block))])
            left -= min(left, len(block))


def policy_sweep(policy: Path) -> list[str]:
    args = ["sweep", "--levels", "L1", "--seeds", "1", "--agents", f"rl:{policy}"]
    return acdb(*args, "--out", "run", "--no-progress", "--no-report")


def bank_setup(kind: str) -> Callable[[Path], list[str]]:
    def setup(folder: Path) -> list[str]:
        code = f"""
from pathlib import Path
from acdb_gym.envs.design.bank import build_bank
bank = build_bank(Path({str(folder / "bank")!r}), ladder="v0", level="L1", seeds=range(900000, 900003))
print(bank.sha256)
"""
        done = subprocess.run(
            [sys.executable, "-c", code], env=_environment(), capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        digest = done.stdout.strip()
        bank = folder / "bank"
        _tamper(bank, kind)
        loader = "trust=True" if kind == "values" else f"sha256={digest!r}"
        if kind in ("bomb", "shape", "nested"):
            # The digest of the file as found: these must fail whatever digest is given.
            loader = f"sha256=bank_digest({str(bank)!r})"
        return python(
            "from acdb_gym.envs.design.bank import load_bank, bank_digest\n"
            f"load_bank({str(bank)!r}, {loader})"
        )

    return setup


def _tamper(bank: Path, kind: str) -> None:
    import numpy as np

    npz = bank / "worlds.npz"
    if kind == "bomb":
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            header, {"descr": "|u1", "fortran_order": False, "shape": (GIGABYTES_3,)}
        )
        add_bomb(npz, "extra.npy", GIGABYTES_3, header.getvalue())
    elif kind == "shape":
        with np.load(npz) as data:
            arrays = {name: data[name] for name in data.files}
        with zipfile.ZipFile(npz, "w") as archive:
            for name, array in arrays.items():
                buffer = io.BytesIO()
                if name == "d_obs":
                    np.lib.format.write_array_header_1_0(
                        buffer, {"descr": "<f8", "fortran_order": False, "shape": (10**12,)}
                    )
                else:
                    np.lib.format.write_array(buffer, array)
                archive.writestr(f"{name}.npy", buffer.getvalue())
    elif kind in ("edited", "values"):
        with np.load(npz) as data:
            arrays = {name: data[name] for name in data.files}
        arrays["budget"] = np.full_like(arrays["budget"], 10**6)
        arrays["d_obs"] = np.full_like(arrays["d_obs"], np.nan)
        with open(npz, "wb") as handle:
            np.savez(handle, **arrays)
    elif kind == "nested":
        (bank / "bank.json").write_text(NESTED)
        return
    index = json.loads((bank / "bank.json").read_text())
    index["sha256"] = hashlib.sha256(npz.read_bytes()).hexdigest()
    (bank / "bank.json").write_text(json.dumps(index))


INSPECT_LOG = """
from inspect_ai import eval as inspect_eval
from inspect_ai.log import write_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from acdb_gym.integrations.inspect_task import EPISODE_KEY, acdb
output = ModelOutput.for_tool_call("mockllm/model", "submit_graph",
                                   {{"directed_edges": [], "undirected_edges": []}})
output.usage = ModelUsage(input_tokens=10, output_tokens=2, total_tokens=12)
model = get_model("mockllm/model", custom_outputs=[output])
[log] = inspect_eval(acdb(ladder="v0", levels="L0", seeds=1), model=model,
                     log_dir={logs!r}, display="none")
[sample] = log.samples
{change}
write_eval_log(log, {path!r})
"""


def inspect_setup(change: str) -> Callable[[Path], list[str]]:
    def setup(folder: Path) -> list[str]:
        code = INSPECT_LOG.format(
            logs=str(folder / "logs"), path=str(folder / "log.json"), change=change
        )
        done = subprocess.run(
            [sys.executable, "-c", code], env=_environment(), capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return acdb("inspect-import", str(folder / "log.json"), "--out", "run")

    return setup


def transcripts_small(folder: Path) -> str:
    sizes = [p.stat().st_size for p in (folder / "run" / "transcripts").iterdir()]
    return "" if sizes and max(sizes) < 1_000_000 else f"transcripts of {sizes} bytes"


def imported(outcome: Outcome, folder: Path) -> str:
    if outcome.code != 0 or "1 rows appended" not in outcome.stdout:
        return f"exit {outcome.code}: {outcome.stderr[-300:]!r}"
    return transcripts_small(folder)


def mcp_reply(outcome: Outcome, _: Path) -> str:
    replies = {}
    for line in outcome.stdout.splitlines():
        try:
            reply = json.loads(line)
        except ValueError:
            continue
        replies[reply.get("id")] = reply
    error = replies.get(2, {}).get("error", {})
    if "nested" not in error.get("message", "") or "result" not in replies.get(3, {}):
        return f"no error reply to the nested request: {list(replies)}"
    return ""


def mcp_input() -> str:
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    deep: Any = "x"
    for _ in range(300):
        deep = [deep]
    call = {"name": "intervene", "arguments": {"variable": "X0", "value": 1.0, "deep": deep}}
    lines = [
        hello,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
    ]
    return "".join(json.dumps(line) + "\n" for line in lines)


def no_javascript_link(folder: Path) -> str:
    from html.parser import HTMLParser

    found: list[str] = []

    class Links(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.extend(v or "" for k, v in attrs if k in ("href", "src"))

    pages = [folder / "run" / "report.html", *(folder / "run" / "episodes").glob("*.html")]
    for page in pages:
        Links().feed(page.read_text())
    bad = [url for url in found if "javascript" in url.lower()]
    text = (folder / "run" / "report.html").read_text()
    if "javascript" not in text:
        return "the payload is not in the page at all (the case tests nothing)"
    return f"javascript links: {bad}" if bad else ""


def page_sizes_small(folder: Path) -> str:
    total = sum(p.stat().st_size for p in (folder / "run" / "episodes").glob("*.html"))
    return "" if total < 5_000_000 else f"episode pages of {total} bytes"


def symlinked(name: str, command: str) -> Callable[[Path], list[str]]:
    def setup(folder: Path) -> list[str]:
        run = planted(folder)
        (folder / "victim").write_text("precious\n")
        (run / name).unlink(missing_ok=True)
        (run / name).symlink_to(folder / "victim")
        if command == "report":
            return acdb("report", str(run))
        return acdb(*_resume_args(run))

    return setup


def _resume_args(run: Path) -> list[str]:
    return [
        "sweep",
        "--levels",
        "L0",
        "--seeds",
        "2",
        "--agents",
        "pc_greedy,oracle",
        "--out",
        str(run),
        "--no-progress",
        "--no-report",
    ]


def escape_setup(folder: Path) -> list[str]:
    (folder / "leakdir").mkdir()
    secret = json.dumps({"event": "message", "text": "SECRET-TOKEN"})
    (folder / "leakdir" / "secret.jsonl").write_text(secret + "\n")
    run = planted(
        folder,
        with_row(job_id="a", ladder="/../../PWNED"),
        with_row(job_id="../../leakdir/secret"),
    )
    for prefix in ("table2_", "table3_", "f1_per_level_", "precision_recall_", "anytime_"):
        (run / prefix).mkdir()
    return acdb("report", str(run))


def no_secret(folder: Path) -> str:
    pages = "".join(p.read_text() for p in (folder / "run" / "episodes").glob("*.html"))
    return nothing_outside(folder) or ("secret leaked" if "SECRET-TOKEN" in pages else "")


def transcript_setup(folder: Path) -> list[str]:
    run = planted(folder)
    job = rows_of(run)[0]["job_id"]
    (run / "transcripts").mkdir(exist_ok=True)
    first = json.dumps({"event": "message", "text": "kept"})
    (run / "transcripts" / f"{job}.jsonl").write_text(f"{first}\n{NESTED}\n{LONG_INTEGER}\n")
    return acdb("report", str(run))


def report_ok(outcome: Outcome, folder: Path) -> str:
    if outcome.code != 0:
        return f"exit {outcome.code}: {outcome.stderr[-300:]!r}"
    page = (folder / "run" / "episodes" / "e0.html").read_text()
    return "" if "2 lines skipped" in page else "the transcript's bad lines were not counted"


def bool_actions(folder: Path) -> list[str]:
    return python(
        "import numpy as np\n"
        "from acdb_gym.envs.design.vector import DesignVectorEnv\n"
        "env = DesignVectorEnv(2, 'L1', ladder='v0')\n"
        "env.reset(seed=0)\n"
        "env.step(np.array([True, False]))\n"
        "print('stepped')\n"
        "env.reset(seed=1.5)\n"
    )


def cache_setup(folder: Path) -> list[str]:
    key = "ab" * 32
    (folder / "cache" / "ab").mkdir(parents=True)
    (folder / "cache" / "ab" / f"{key}.json").write_text(NESTED)
    return python(
        "from acdb_gym.agents.llm.records import Redactor, ResponseCache\n"
        f"entry = ResponseCache({str(folder / 'cache')!r}, Redactor([])).get({key!r})\n"
        "print('miss' if entry is None else 'hit')\n"
    )


def printed(text: str) -> Callable[[Outcome, Path], str]:
    def check(outcome: Outcome, _: Path) -> str:
        ok = outcome.code == 0 and text in outcome.stdout
        return "" if ok else f"exit {outcome.code}: {outcome.stdout[-200:]!r}"

    return check


def stepped_then_error(outcome: Outcome, folder: Path) -> str:
    if "stepped" not in outcome.stdout:
        return "a boolean action array did not step"
    return error_line("seed must be")(outcome, folder)


def torn_setup(folder: Path) -> list[str]:
    run = planted(folder)
    with (run / "results.jsonl").open("a") as handle:
        handle.write('{"job_id": "torn", "stat')
    return acdb(*_resume_args(run))


def one_warning(outcome: Outcome, _: Path) -> str:
    lines = outcome.stderr.strip().splitlines()
    ok = outcome.code == 0 and len(lines) == 1 and lines[0].startswith("acdb: warning:")
    return "" if ok else f"stderr: {outcome.stderr[-400:]!r}"


def mcp_startup(folder: Path) -> list[str]:
    run = planted(folder, NESTED, LONG_INTEGER)
    return acdb("mcp", "--ladder", "v0", "--level", "L0", "--seed-index", "1", "--out", str(run))


def started(outcome: Outcome, _: Path) -> str:
    ok = outcome.code == 0 and "Traceback" not in outcome.stderr
    return "" if ok else f"exit {outcome.code}: {outcome.stderr[-300:]!r}"


def custom_sweep(spec: str, *extra: str) -> Callable[[Path], list[str]]:
    def setup(folder: Path) -> list[str]:
        return acdb("sweep", "--custom-level", spec, *extra, "--out", "run", "--no-progress")

    return setup


def resume_of(*lines: Line) -> Callable[[Path], list[str]]:
    def setup(folder: Path) -> list[str]:
        return acdb(*_resume_args(planted(folder, *lines)))

    return setup


def leaderboard_of(*lines: Line) -> Callable[[Path], list[str]]:
    def setup(folder: Path) -> list[str]:
        return acdb("leaderboard", str(planted(folder, *lines)), "--out", "board")

    return setup


def javascript_setup(folder: Path) -> list[str]:
    run = planted(folder)
    rows = rows_of(run)
    for row in rows:
        row["agent_config"] = {"model": "m[[x](\x01javascript:alert%281%29)]"}
    (run / "results.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return acdb("report", str(run))


def policy_case(**replace: Any) -> Callable[[Path], list[str]]:
    def setup(folder: Path) -> list[str]:
        members = {k: v() if callable(v) else v for k, v in replace.items()}
        return policy_sweep(rewritten_policy(folder, members))

    return setup


def bomb_policy(folder: Path) -> list[str]:
    target = rewritten_policy(folder, {})
    with zipfile.ZipFile(target) as old:
        kept = {name: old.read(name) for name in old.namelist() if name != "data"}
    with zipfile.ZipFile(target, "w") as new:
        for name, data in kept.items():
            new.writestr(name, data)
    add_bomb(target, "data", GIGABYTES_3)
    return policy_sweep(target)


def wrong_weights() -> bytes:
    import torch

    buffer = io.BytesIO()
    torch.save({"mlp_extractor.policy_net.0.weight": torch.zeros(3, 3)}, buffer)
    return buffer.getvalue()


def metadata_with(**changes: Any) -> bytes:
    with zipfile.ZipFile(POLICY) as archive:
        return json.dumps({**json.loads(archive.read("acdb_gym.json")), **changes}).encode()


REVISION_20K = {"n_nodes": 20000, "targets": [], "before": [], "final": ""}
REVISION_100K = {"n_nodes": 100000, "targets": [], "before": [], "final": ""}
CUSTOM_BIG = "d=2000,k=2000,n_obs=5000,n_int=500,noise_var=1.0,slack=0"
CUSTOM_NEVER = "d=300,k=40000,n_obs=1000,n_int=10,noise_var=1.0,slack=0,faithfulness_eps=0.5"

CASES: tuple[Case, ...] = (
    Case("javascript: in a model name", 1, javascript_setup,
         also(lambda o, f: "" if o.code == 0 else o.stderr[-300:], no_javascript_link),
         "report written, no javascript: link"),
    Case("nested line: report", 2, report_of(NESTED), skipped(":2: JSON nested 100000"),
         "line skipped"),
    Case("nested line: sweep resume", 2, resume_of(NESTED),
         error_line("results.jsonl:2: JSON nested 100000"), "error line"),
    Case("nested line: leaderboard", 2, leaderboard_of(NESTED),
         lambda o, f: "" if o.code == 0 and "skipped" in o.stderr else o.stderr[-300:],
         "line skipped"),
    Case("nested line: mcp start-up", 2, mcp_startup, started, "server starts"),
    Case("nested transcript line", 2, transcript_setup, report_ok, "line counted, page written"),
    Case("nested cache entry", 2, cache_setup, printed("miss"), "a miss"),
    Case("nested model zip data", 2,
         policy_case(data=b"[" * 100_000 + b"]" * 100_000), error_line("nested"), "error line"),
    Case("4,301-digit integer: report", 2, report_of(LONG_INTEGER),
         skipped(":2: an integer of 4301 digits"), "line skipped"),
    Case("4,301-digit integer: sweep resume", 2, resume_of(LONG_INTEGER),
         error_line("results.jsonl:2: an integer of 4301 digits"), "error line"),
    Case("revision.n_nodes = 20000", 3, report_of(with_row(revision=REVISION_20K)),
         skipped("revision n_nodes must be in [1, 2000]"), "line skipped"),
    Case("revision.n_nodes = 100000", 3, report_of(with_row(revision=REVISION_100K)),
         skipped("revision n_nodes must be in [1, 2000]"), "line skipped"),
    Case("submission.n_nodes = 20000", 3,
         report_of(with_row(submission={"n_nodes": 20000, "graph": ""})),
         skipped("submission n_nodes must be in [1, 2000]"), "line skipped"),
    Case("submission.n_nodes = 10**6", 3,
         report_of(with_row(submission={"n_nodes": 10**6, "graph": ""})),
         skipped("submission n_nodes must be in [1, 2000]"), "line skipped"),
    Case("custom row d=2000,k=2000,n_obs=5000,n_int=500", 3,
         report_of(with_row(ladder="custom", level="big", level_spec=CUSTOM_BIG, seed=300000)),
         skipped("an episode holds up to"), "line skipped"),
    Case("custom row that never generates", 3,
         report_of(with_row(ladder="custom", level="never", level_spec=CUSTOM_NEVER,
                            seed=300000, revision=DROP, submission=DROP)),
         lambda o, f: "" if o.code == 0 else o.stderr[-300:],
         "report written within the regeneration bound"),
    Case("over-long job_id", 3, report_of(with_row(job_id="j" * 100_000)),
         skipped("job_id must be 1-64 letters"), "line skipped"),
    Case("F1 NaN", 3, report_of(with_row(directed_f1=float("nan"))),
         skipped("directed_f1 must be in [0, 1], got nan"), "line skipped"),
    Case("F1 -5", 3, report_of(with_row(skeleton_f1=-5)),
         skipped("skeleton_f1 must be in [0, 1], got -5"), "line skipped"),
    Case("F1 1e308", 3, report_of(with_row(compelled_f1=1e308)),
         skipped("compelled_f1 must be in [0, 1], got 1e+308"), "line skipped"),
    Case("ladder /../../PWNED, job_id ../../leakdir/secret", 4, escape_setup,
         skipped("ladder must be 1-64 letters", "job_id must be 1-64 letters", extra=no_secret),
         "lines skipped, nothing outside"),
    Case(".sweep.lock -> victim", 4, symlinked(".sweep.lock", "sweep"),
         also(error_line("is a symbolic link"), untouched("victim")), "error line"),
    Case("report.md -> victim2", 4, symlinked("report.md", "report"),
         also(error_line("is a symbolic link"), untouched("victim")), "error line"),
    Case("model.zip net_arch [30000, 30000]", 5,
         policy_case(data=lambda: policy_data(net_arch=[30000, 30000])),
         error_line("net_arch must be at most 32 widths in [1, 4096]"), "error line"),
    Case("model.zip net_arch [4000, 4000, 4000]", 5,
         policy_case(data=lambda: policy_data(net_arch=[4000, 4000, 4000])),
         error_line("parameters, more than"), "error line"),
    Case("model.zip data inflating to 3 GB", 5, bomb_policy,
         error_line("member 'data' declares"), "error line"),
    Case("model.zip net_arch [-5]", 5, policy_case(data=lambda: policy_data(net_arch=[-5])),
         error_line("net_arch"), "error line"),
    Case("model.zip weights of the wrong shape", 5,
         policy_case(**{"policy.pth": wrong_weights}), error_line("do not fit the network"),
         "error line"),
    Case("bank member inflating to 3 GB", 6, bank_setup("bomb"),
         error_line("BankError", "unexpected member 'extra'"), "error line"),
    Case("bank declared shape 10**12", 6, bank_setup("shape"),
         error_line("BankError", "d_obs declares shape (1000000000000,)"), "error line"),
    Case("bank edited, digests recomputed", 6, bank_setup("edited"),
         error_line("BankError", "does not match the digest given"), "error line"),
    Case("bank edited, loaded with trust", 6, bank_setup("values"),
         error_line("BankError", "budget must be in"), "error line"),
    Case("bank.json nested", 6, bank_setup("nested"), error_line("BankError", "nested"),
         "error line"),
    Case("--custom-level d=100,n_obs=100000,n_int=10000,slack=1000", 7,
         custom_sweep("d=100,k=100,n_obs=100000,n_int=10000,slack=1000", "--agents",
                      "pc_active"),
         error_line("an episode holds up to"), "error line"),
    Case("--repeats 100000000", 7,
         lambda f: acdb("sweep", "--agents", "oracle", "--repeats", "100000000", "--out", "run"),
         error_line("jobs, more than"), "error line"),
    Case("policy n_nodes = 900", 7,
         policy_case(**{"acdb_gym.json": lambda: metadata_with(n_nodes=900)}),
         error_line("parameters, more than"), "error line"),
    Case("inspect-import 50 MB message", 7,
         inspect_setup("sample.messages[0].content = 'x' * 50_000_000"), imported,
         "imported, transcript under 1 MB"),
    Case("inspect-import manifest_index 10**30", 7,
         inspect_setup("sample.metadata['manifest_index'] = 10**30\n"
                       "sample.store[EPISODE_KEY]['manifest_index'] = 10**30"),
         error_line("manifest_index must be in [0, 999]"), "error line"),
    Case("row with a 50 MB error", 7,
         report_of(with_row(status="failed", error="e" * 50_000_000)),
         skipped("bytes, longer than 16777216", extra=page_sizes_small), "line skipped"),
    Case("row with a 1 MB error", 7,
         report_of(with_row(status="failed", error="e" * 1_000_000)),
         skipped("error must be at most 16384 characters", extra=page_sizes_small),
         "line skipped"),
    Case("MCP request nested 300 levels", 8,
         lambda f: acdb("mcp", "--ladder", "v0", "--level", "L0", "--out", "run"), mcp_reply,
         "error reply with its id"),
    Case("--indices ٣:٥", 8, lambda f: acdb("sweep", "--indices", "٣:٥", "--out", "run"),
         error_line("indices must be START:STOP"), "error line"),
    Case("--indices 1_0:12", 8, lambda f: acdb("sweep", "--indices", "1_0:12", "--out", "run"),
         error_line("indices must be START:STOP"), "error line"),
    Case("--named with --custom-level", 8,
         custom_sweep("d=5,k=4,n_obs=200,n_int=20,slack=0", "--named", "--agents", "llm_raw"),
         error_line("--named needs levels over a real topology"), "error line"),
    Case("torn last line on resume", 8, torn_setup, one_warning, "one warning line"),
    Case("vector env: bool actions, reset(seed=1.5)", 8, bool_actions, stepped_then_error,
         "steps; error line"),
)  # fmt: skip


# ----------------------------------------------------------------------------- main
def main() -> int:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", help="run only the cases whose name has a word")
    parser.add_argument("--keep", type=Path, help="keep every case's folder under DIR")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="hostile-")) if args.keep is None else args.keep
    scratch.mkdir(parents=True, exist_ok=True)
    base_run(scratch)
    cases = [c for c in CASES if not args.only or any(w in c.name for w in args.only)]
    print("| # | item | case | expected | outcome | wall s | peak RSS MB | verdict |")
    print("|---|---|---|---|---|---|---|---|")
    failed = 0
    for number, case in enumerate(cases, start=1):
        folder = scratch / f"case{number:02d}"
        folder.mkdir()
        argv = case.setup(folder)
        stdin = mcp_input() if case.name.startswith("MCP") else None
        outcome = run(argv, folder, stdin)
        problem = _verdict(case, outcome, folder)
        failed += bool(problem)
        shown = _shown(outcome, folder)
        print(
            f"| {number} | {case.item} | {case.name} | {case.expected} | {shown} | "
            f"{outcome.seconds:.1f} | {outcome.peak_bytes / 2**20:.0f} | "
            f"{'ok' if not problem else 'FAILED: ' + problem[:200]} |",
            flush=True,
        )
    if args.keep is None:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"\n{len(cases) - failed} of {len(cases)} cases held (1 GB, 60 s, no traceback).")
    return 1 if failed else 0


def _verdict(case: Case, outcome: Outcome, folder: Path) -> str:
    if outcome.killed:
        return outcome.killed
    if "Traceback" in outcome.stderr:
        return "traceback: " + outcome.stderr.strip().splitlines()[-1][:200]
    if outcome.peak_bytes > MEMORY_LIMIT:
        return f"peak RSS {outcome.peak_bytes / 2**20:.0f} MB"
    if outcome.seconds > TIME_LIMIT:
        return f"{outcome.seconds:.0f} s"
    return case.check(outcome, folder)


def _shown(outcome: Outcome, folder: Path) -> str:
    """The line the command ended with, shortened for the table (the case's folder as ``.``)."""
    lines = [
        line
        for line in outcome.stderr.splitlines()
        if line.startswith(("acdb: error:", "acdb: warning:", "error:"))
    ]
    text = lines[0] if lines else f"exit {outcome.code}"
    text = text.replace(str(folder), ".").replace("|", "\\|")
    return text if len(text) <= 90 else text[:87] + "..."


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    run_script(main)
