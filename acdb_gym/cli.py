"""The ``acdb`` command: ``acdb sweep``, ``acdb report``, ``acdb leaderboard``, ``acdb train``,
``acdb levels``, ``acdb audit``, ``acdb mcp`` and ``acdb inspect-import``.

Over 500 lines because it holds one argument parser and one short handler per command, which
share the one-line error handling; the work of each command lives in its own package (the
sweep, the report, the integrations), so this module is only the command line.
"""

from __future__ import annotations

import argparse
import gc
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from acdb_gym import __version__
from acdb_gym.core.ladders.custom import (
    CUSTOM_LADDER,
    CUSTOM_SEED_BASE,
    MAX_CUSTOM_SEEDS,
    parse_custom_level,
)
from acdb_gym.core.ladders.shipped import ALL_LADDERS, FAMILY_LADDERS, LEVEL_NAMES, MANIFEST_SIZE
from acdb_gym.core.scripts import OneLineParser, one_line
from acdb_gym.core.types import PANELS
from acdb_gym.core.worlds.spec import FAMILIES, LevelSpec
from acdb_gym.registry import OFFLINE_AGENTS, agent_help
from acdb_gym.results import RESULTS_FILE
from acdb_gym.sweep.lock import RunDirectoryBusyError

__all__ = ["main"]


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Says every option's default; wraps one-paragraph texts and keeps the line breaks of a
    text laid out as a table."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        # Only real defaults: "(default: None)" and "(default: False)" say nothing.
        if action.default in (None, False, argparse.SUPPRESS) or action.required:
            return action.help
        return super()._get_help_string(action)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text:
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


_PRICES_HELP = (
    "JSON or TOML price table for LLM cost per job and agent in the report: per model, USD per "
    "million tokens of input, cached_input, cache_write and output"
)


def _sweep_parser(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "sweep",
        help="run agents on a ladder's preflighted seeds (resumable), then write the report",
        description="Run every agent on the same preflighted seeds and append one JSON line per "
        f"finished episode to OUT/{RESULTS_FILE}. Rerunning the same command skips finished jobs "
        "and retries failed ones. Jobs are levels x seeds x agents x the agent's panels x "
        "repeats: an agent that never intervenes runs once, in the observational panel; an "
        "active agent runs in the active panel; the llm_raw and llm_stats agents run in each "
        "requested panel (each agent's panels are listed below).",
        epilog=f"agents:\n{agent_help()}",
        formatter_class=_HelpFormatter,
    )
    p.add_argument(
        "--ladder",
        default="v0",
        choices=sorted(ALL_LADDERS),
        help="ladder (large: d = 20 to 2000, levels L0-L6, 50 seeds each; real: scale-free "
        "graphs, the Sachs and DREAM4 wirings and the fitted Sachs world)",
    )
    p.add_argument(
        "--families",
        help="comma-separated SCM families (" + ", ".join(FAMILIES) + "): run the v1 ladder of "
        "each (v1, " + ", ".join(FAMILY_LADDERS) + ") into the same run directory, in place of "
        "--ladder; the report puts the ladders side by side (the transfer table)",
    )
    p.add_argument(
        "--levels",
        default=",".join(LEVEL_NAMES),
        help="comma-separated levels (with --ladder large or real, the default is all its levels)",
    )
    p.add_argument(
        "--custom-level",
        action="append",
        metavar="[NAME:]SPEC",
        help="a custom level as LevelSpec fields, e.g. "
        "'D40:d=40,k=60,n_obs=1000,n_int=200,slack=0,standardized=true' (noise_var defaults "
        "to 1.0, other fields to LevelSpec's; without NAME: the level is named d<d>-<digest>); "
        "repeatable. Runs these levels (ladder 'custom'), in place of --ladder and --levels, on "
        f"the first seeds from {CUSTOM_SEED_BASE} up whose instance generates",
    )
    p.add_argument(
        "--seeds",
        type=int,
        default=None,
        help=f"first N manifest seeds per level (1-{MANIFEST_SIZE}; custom levels "
        f"1-{MAX_CUSTOM_SEEDS}) (default: 8)",
    )
    p.add_argument(
        "--indices",
        default=None,
        metavar="START:STOP",
        help="manifest indices START to STOP-1 of every level, in place of --seeds: 0:100 is "
        "the development split, 100:200 the test split that claims come from (DESIGN §7)",
    )
    p.add_argument(
        "--agents", default=",".join(OFFLINE_AGENTS), help="comma-separated agents, listed below"
    )
    p.add_argument(
        "--panels",
        default=",".join(PANELS),
        help="the panels to run: each agent runs in those of its panels asked for (see above)",
    )
    p.add_argument("--repeats", type=int, default=1, help="repeats of every job")
    p.add_argument("--workers", type=int, default=1, help="parallel worker processes")
    p.add_argument(
        "--concurrency",
        type=int,
        default=1,
        help="LLM episodes each worker runs at once (async HTTP; rows as in a serial run)",
    )
    p.add_argument(
        "--backend",
        default="process",
        choices=["process", "ray"],
        help="run jobs in a local process pool, or on Ray (pip install 'acdb_gym[ray]')",
    )
    p.add_argument("--out", type=Path, required=True, help="run directory, e.g. runs/NAME")
    p.add_argument("--provider", choices=["openai", "anthropic"], help="LLM provider")
    p.add_argument("--model", help="LLM model name")
    p.add_argument("--base-url", help="OpenAI-compatible server URL (vLLM, Ollama, llama.cpp)")
    p.add_argument(
        "--temperature",
        type=float,
        default=None,
        help="LLM temperature (default 0; dropped automatically where a model rejects it)",
    )
    p.add_argument("--cache-dir", type=Path, help="on-disk LLM response cache")
    p.add_argument(
        "--state-hypothesis",
        action="store_true",
        help="LLM agents also state their current graph with every intervention (the "
        "report's Revision section); part of the job id",
    )
    p.add_argument(
        "--named",
        action="store_true",
        help="LLM agents are told the variables' real names (levels over a real topology "
        "only: the real ladder's Sachs and DREAM4 levels); part of the job id",
    )
    p.add_argument(
        "--requests-per-minute",
        type=float,
        help="LLM request limit shared by all workers (state in OUT/llm_rate_limit.json)",
    )
    p.add_argument(
        "--tokens-per-minute",
        type=float,
        help="LLM prompt-token limit shared by all workers (estimated as characters / 4)",
    )
    p.add_argument(
        "--no-prompt-cache",
        action="store_true",
        help="do not mark the prompt prefix for Anthropic's prompt cache",
    )
    p.add_argument(
        "--text-turns",
        type=int,
        help="thinking mode: text-only LLM replies allowed per episode (tool_choice auto; "
        "each uses a step)",
    )
    p.add_argument(
        "--thinking-budget",
        type=int,
        help="Anthropic extended-thinking budget in tokens (>= 1024, below the output limit)",
    )
    p.add_argument("--reasoning-effort", help="OpenAI reasoning_effort, e.g. low, medium, high")
    p.add_argument("--prices", type=Path, help=_PRICES_HELP)
    p.add_argument(
        "--timeout", type=float, default=None, help="seconds per LLM HTTP request (default 60)"
    )
    p.add_argument(
        "--max-retries",
        type=int,
        default=None,
        help="retries of a transient LLM API failure before the job fails (default 4)",
    )
    p.add_argument(
        "--trust-model",
        action="store_true",
        help="load rl:PATH files that need unpickling (runs code from the file: only for "
        "files whose author you trust)",
    )
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.add_argument("--no-report", action="store_true", help="do not write the report at the end")


def _audit_parser(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "audit",
        help="run the shortcut gate on a ladder's development seeds",
        description=(
            "The shortcut gate (DESIGN §7): sweeps the ladder's reference agents and their "
            "capped twins (cap:AGENT) into OUT, then checks per level the 12 marginal orders, "
            "the hub order, the capped efficiency and, on ladders with design ids, the "
            "estimator-default probe. Writes OUT/audit.md and OUT/audit.csv and prints the "
            "table. Exit status 0, or 1 with --strict when a level fails."
        ),
        formatter_class=_HelpFormatter,
    )
    p.add_argument("--ladder", default="v1", choices=sorted(ALL_LADDERS))
    p.add_argument("--levels", default=None, help="comma-separated level names (default: all)")
    p.add_argument(
        "--indices",
        default="0:40",
        help="manifest indices START:STOP (development split 0-99; claims come from 100-199)",
    )
    p.add_argument("--workers", type=int, default=1)
    p.add_argument(
        "--out", type=Path, default=None, help="run directory (default runs/audit/LADDER)"
    )
    p.add_argument("--strict", action="store_true", help="exit 1 when a level fails")
    p.add_argument("--no-progress", action="store_true")


def _report_parser(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "report",
        help="write report.md, CSVs and PNG plots for a run directory",
        description=f"Aggregate RUN_DIR/{RESULTS_FILE} into the paper-style tables and plots.",
    )
    p.add_argument("run_dir", type=Path, help="a sweep's --out directory")
    p.add_argument("--prices", type=Path, help=_PRICES_HELP)
    p.add_argument(
        "--compare",
        action="append",
        default=[],
        metavar="A,B",
        help="extra paired sign-flip test between two agent labels (repeatable)",
    )


def _leaderboard_parser(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "leaderboard",
        help="merge runs of one ladder into leaderboard.html, .md and .csv",
        description="Pool the rows of several run directories (same ladders, same seeds per "
        "instance) into one leaderboard: agents x levels with 95%% CIs, the averages across "
        "levels and paired tests on the seeds both rows played. An agent row present in "
        "several runs is taken from the first one given.",
    )
    p.add_argument("run_dirs", type=Path, nargs="+", metavar="RUN", help="sweep run directories")
    p.add_argument(
        "--out", type=Path, default=Path("leaderboard"), help="folder to write the files into"
    )


def _mcp_parser(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "mcp",
        help="serve episodes' tools to an MCP client over stdio (pip install 'acdb_gym[mcp]')",
        description="Serve an ACDB episode over the Model Context Protocol (stdio): observe, "
        "intervene, the statistics tools (llm_stats) and submit_graph, with the LLM agents' "
        f"step limits and budgets. When it ends, its row is appended to OUT/{RESULTS_FILE} and "
        "its transcript written to OUT/transcripts/. With --multi, the start_episode tool "
        "starts the next episode (ladder, level, seed index) in the same process and run "
        "directory. The server holds OUT's lock while it runs and refuses a job that already "
        "has an ok row.",
        formatter_class=_HelpFormatter,
    )
    p.add_argument("--ladder", default="v1", choices=sorted(ALL_LADDERS), help="ladder")
    p.add_argument("--level", default="L0", help="level, e.g. L2")
    p.add_argument(
        "--seed-index", type=int, default=0, help=f"manifest seed index (0-{MANIFEST_SIZE - 1})"
    )
    p.add_argument(
        "--variant",
        default="llm_raw",
        choices=["llm_raw", "llm_stats", "llm_corr_obs"],
        help="the tools served, as the LLM agent of that name has them",
    )
    p.add_argument("--panel", default="active", choices=list(PANELS), help="panel")
    p.add_argument(
        "--out", type=Path, default=Path("runs") / "mcp", help="run directory, e.g. runs/NAME"
    )
    p.add_argument("--model", help="the model behind the client, to name the row in reports")
    p.add_argument(
        "--repeat", type=_non_negative_int, default=0, help="repeat number of the job (>= 0)"
    )
    p.add_argument(
        "--multi",
        action="store_true",
        help="also offer start_episode, to play many episodes in one server process",
    )


def _non_negative_int(text: str) -> int:
    """An argparse type: an integer >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {value}")
    return value


def _inspect_import_parser(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "inspect-import",
        help="append the rows of inspect_ai logs of the ACDB task to a run directory",
        description=f"Turn inspect_ai logs of the acdb_gym/acdb task into rows of OUT/{RESULTS_FILE} "
        "(agent inspect:<variant>, the inspect model in its config) for `acdb report`, and each "
        "sample's transcript to OUT/transcripts/; jobs that already have a successful row are "
        "skipped.",
    )
    p.add_argument("logs", type=Path, nargs="+", help="inspect log files (.eval or .json)")
    p.add_argument("--out", type=Path, required=True, help="run directory, e.g. runs/NAME")


def _mcp(args: argparse.Namespace) -> int:
    from acdb_gym.integrations import mcp_server

    return mcp_server.main(args)


def _inspect_import(args: argparse.Namespace) -> int:
    from acdb_gym.integrations.inspect_log import import_logs

    appended, skipped = import_logs(args.logs, args.out)
    print(f"{appended} rows appended to {args.out / RESULTS_FILE} ({skipped} already present)")
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from acdb_gym.sweep.run import SweepConfig, parse_list, parse_panels

    if args.prices is not None:
        # Checked before the first job: a paid sweep must not run in full and then fail here.
        from acdb_gym.report.cost import load_prices

        load_prices(args.prices)

    options = {
        "provider": args.provider,
        "model": args.model,
        "base_url": args.base_url,
        "temperature": args.temperature,
        "cache_dir": str(args.cache_dir) if args.cache_dir else None,
        "timeout": args.timeout,
        "max_retries": args.max_retries,
        "trust_model": True if args.trust_model else None,
        "state_hypothesis": True if args.state_hypothesis else None,
        "named": True if args.named else None,
        "prompt_cache": False if args.no_prompt_cache else None,
        "text_turns": args.text_turns,
        "thinking_budget": args.thinking_budget,
        "reasoning_effort": args.reasoning_effort,
        "requests_per_minute": args.requests_per_minute,
        "tokens_per_minute": args.tokens_per_minute,
    }
    if args.requests_per_minute is not None or args.tokens_per_minute is not None:
        options["rate_limit_file"] = str(args.out / "llm_rate_limit.json")
    first_index, seeds = _seed_range(args)
    common: dict[str, Any] = {
        "seeds": seeds,
        "first_index": first_index,
        "agents": parse_list(args.agents, what="agents"),
        "panels": parse_panels(args.panels),
        "repeats": args.repeats,
        "workers": args.workers,
        "concurrency": args.concurrency,
        "backend": args.backend,
        "agent_options": {k: v for k, v in options.items() if v is not None},
        "progress": not args.no_progress,
    }
    if args.custom_level:
        configs = [_custom_config(args, common)]
    else:
        configs = [
            SweepConfig(
                args.out,
                ladder,
                parse_list(_levels_of(args.levels, ladder), ALL_LADDERS[ladder], what="levels"),
                **common,
            )
            for ladder in _sweep_ladders(args)
        ]
    status = 0
    for config in configs:
        status = max(status, _run_one_sweep(config))
    if not args.no_report:
        _write_report(args.out, [], args.prices)
    return status


def _seed_range(args: argparse.Namespace) -> tuple[int, int]:
    """``(first_index, seeds)`` from ``--indices`` or ``--seeds``."""
    from acdb_gym.sweep.run import parse_indices

    if args.indices is None:
        return 0, 8 if args.seeds is None else args.seeds
    if args.seeds is not None:
        raise ValueError("--indices runs in place of --seeds; give one of them")
    return parse_indices(args.indices)


def _custom_config(args: argparse.Namespace, common: dict[str, Any]) -> Any:
    """The sweep of ``--custom-level``: its levels on ladder ``custom``."""
    from acdb_gym.sweep.run import SweepConfig

    if args.families:
        raise ValueError("--custom-level runs in place of --families; give one of them")
    if args.levels != ",".join(LEVEL_NAMES):
        raise ValueError(
            "--levels picks levels of --ladder; name a custom level with NAME: in --custom-level"
        )
    customs = tuple(parse_custom_level(text) for text in args.custom_level)
    names = tuple(custom.name for custom in customs)
    return SweepConfig(args.out, CUSTOM_LADDER, names, custom_levels=customs, **common)


def _sweep_ladders(args: argparse.Namespace) -> list[str]:
    """``--ladder``, or the v1 ladder of each of ``--families``."""
    if not args.families:
        return [args.ladder]
    by_family = {"linear_gaussian": "v1", **{f: ladder for ladder, f in FAMILY_LADDERS.items()}}
    ladders = []
    for family in (name.strip() for name in args.families.split(",")):
        if family not in by_family:
            raise ValueError(f"--families entries must be among {list(FAMILIES)}, got {family!r}")
        ladders.append(by_family[family])
    return ladders


def _run_one_sweep(config: Any) -> int:
    from acdb_gym.sweep.run import run_sweep

    summary = run_sweep(config)
    print(
        f"{summary.finished} jobs run ({summary.failed} failed), {summary.skipped} already done, "
        f"{summary.planned} planned; {summary.wall_time:.1f} s -> {summary.results}"
    )
    for agent, error in summary.stopped_agents.items():
        print(f"acdb: agent {agent} was stopped after repeated failures: {error}", file=sys.stderr)
    if summary.not_run:
        print(
            f"acdb: {summary.not_run} jobs were not run; the next run of this command retries them",
            file=sys.stderr,
        )
    return 1 if summary.failed or summary.not_run else 0


def _write_report(run_dir: Path, compare: Sequence[str], prices: Path | None = None) -> None:
    from acdb_gym import report

    pairs = []
    for item in compare:
        a, sep, b = item.partition(",")
        if not sep:
            raise ValueError(f"--compare takes 'A,B', got {item!r}")
        pairs.append((a.strip(), b.strip()))
    with warnings.catch_warnings():
        # The skipped lines are listed once below, and in report.md.
        warnings.simplefilter("ignore")
        files = report.write_report(run_dir, compare=pairs, prices=prices)
    for problem in files.problems:
        print(f"acdb: warning: {problem}", file=sys.stderr)
    print(report.format_terminal(files.summary))
    print(f"report written to {files.markdown} and {files.html}")


def _report(args: argparse.Namespace) -> int:
    if not (args.run_dir / RESULTS_FILE).exists():
        raise ValueError(f"no {RESULTS_FILE} in {args.run_dir}")
    _write_report(args.run_dir, args.compare, args.prices)
    return 0


def _audit(args: argparse.Namespace) -> int:
    from acdb_gym.report.aggregation import prepare
    from acdb_gym.report.gate import gate_agents, gate_levels, gate_markdown, write_gate_csv
    from acdb_gym.report.load import load_rows
    from acdb_gym.report.order_audit import row_instance
    from acdb_gym.report.order_shortcuts import prefetch_order_shortcuts
    from acdb_gym.sweep.run import SweepConfig, parse_indices, parse_list

    ladder = ALL_LADDERS[args.ladder]
    levels = parse_list(args.levels or ",".join(ladder), ladder, what="levels")
    first_index, seeds = parse_indices(args.indices)
    out = args.out or Path("runs") / "audit" / args.ladder
    groups: dict[tuple[str, ...], list[str]] = {}
    for level in levels:
        groups.setdefault(gate_agents(ladder[level].spec), []).append(level)
    status = 0
    for agents, group in groups.items():
        config = SweepConfig(
            out,
            args.ladder,
            tuple(group),
            seeds=seeds,
            first_index=first_index,
            agents=agents,
            workers=args.workers,
            progress=not args.no_progress,
        )
        status = max(status, _run_one_sweep(config))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a resumed run's repeated rows are reported by sweep
        rows = [row for row in load_rows(out) if row.ladder == args.ladder]
    indices = range(first_index, first_index + seeds)
    if args.workers > 1:  # the order checks regenerate every world: in the workers first
        found = (row_instance(row) for row in rows if row.status == "ok")
        prefetch_order_shortcuts((pair for pair in found if pair is not None), args.workers)
    gates = [
        gate for gate in gate_levels(prepare(rows), design_indices=indices) if gate.level in levels
    ]
    text = gate_markdown(gates)
    (out / "audit.md").write_text(
        f"# Shortcut gate: {args.ladder}, manifest indices {args.indices}\n\n{text}",
        encoding="utf-8",
    )
    write_gate_csv(gates, out / "audit.csv")
    print(text)
    failed = [f"{gate.level}" for gate in gates if not gate.passed]
    print(
        f"{len(gates) - len(failed)} of {len(gates)} levels pass"
        + (f"; failing: {', '.join(failed)}" if failed else "")
        + f" -> {out / 'audit.md'}"
    )
    if status:
        return status
    return 1 if args.strict and failed else 0


def _leaderboard(args: argparse.Namespace) -> int:
    from acdb_gym.report.leaderboard import write_leaderboard

    try:
        files = write_leaderboard(args.run_dirs, args.out)
    except FileNotFoundError as error:
        raise ValueError(str(error)) from error
    print(f"leaderboard written to {files.html}, {files.markdown.name} and {files.csv.name}")
    return 0


def _levels_of(levels: str, ladder: str) -> str:
    """``--levels``, where the default L0-L5 means every level of a ladder that has fewer."""
    if levels == ",".join(LEVEL_NAMES):
        return ",".join(ALL_LADDERS[ladder])
    return levels


def _levels(args: argparse.Namespace) -> int:
    print(
        "| ladder | level | axis | d | k | n_obs | n_int | noise_var | slack | random floor "
        "| world |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for ladder, levels in ALL_LADDERS.items():
        for level in levels.values():
            s = level.spec
            axis = f"{level.axis} ({s.latent} hidden)" if s.latent else level.axis
            world = _world_text(s)
            print(
                f"| {ladder} | {level.name} | {axis} | {s.d} | {s.k} | {s.n_obs} | "
                f"{s.n_int} | {s.noise_var} | {s.slack_text} | {s.random_floor:.1%} | {world} |"
            )
    return 0


def _world_text(spec: LevelSpec) -> str:
    """The ``world`` column of ``acdb levels``: the graph and how its data are made."""
    if spec.world == "sachs-cells":
        return "sachs, measured cells (real experiments)"
    if spec.world == "cause-effect-pairs":
        return "Tübingen cause-effect pairs (measured)"
    notes = [
        text
        for text, shown in (
            ("uniform order", spec.orientation != "model"),
            ("degree-scaled weights", spec.edge_scale != "none"),
        )
        if shown
    ]
    graph = spec.graph + (f" ({', '.join(notes)})" if notes else "")
    world = f"{graph}, " + (f"fitted ({spec.fit})" if spec.fit != "none" else spec.family)
    return world + (f", targets {spec.targets}" if spec.targets != "all" else "")


def build_parser() -> argparse.ArgumentParser:
    """The ``acdb`` argument parser."""
    parser = OneLineParser(
        prog="acdb", description="Active Causal Discovery Benchmark (ACDB) command line."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    _sweep_parser(sub)
    _report_parser(sub)
    _leaderboard_parser(sub)
    sub.add_parser("levels", help="print every ladder's level table")
    _audit_parser(sub)
    _mcp_parser(sub)
    _inspect_import_parser(sub)
    sub.add_parser(
        "train",
        help="train an RL intervention policy on ACDB-Design-* (acdb train --help)",
        add_help=False,
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``acdb`` console script (``argv`` None: the program's own arguments,
    and the process ends after the command)."""
    program = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    # Warnings print as the errors do; formatwarning, not showwarning, so that a caller that
    # records warnings (pytest.warns) still gets them.
    original = warnings.formatwarning
    warnings.formatwarning = _format_warning
    try:
        return _main(argv)
    finally:
        warnings.formatwarning = original
        if program:
            # The process ends next: its objects need no further cyclic collection. Frozen, they
            # are not walked again by the collections at exit (about 0.1 s CPU once matplotlib,
            # scipy and numpy are loaded; files and workers are closed by then).
            gc.freeze()


def _format_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    line: str | None = None,
) -> str:
    """A warning as one line, like the errors (no file, line or source text)."""
    return f"acdb: warning: {one_line(Exception(str(message)))}\n"


def _main(argv: list[str]) -> int:
    try:
        if argv[:1] == ["train"]:
            # The trainer owns its options (its config dataclass is its --help).
            from acdb_gym.agents.rl.train import main as train_main

            return train_main(argv[1:])
        args = build_parser().parse_args(argv)
        if args.command == "sweep":
            return _sweep(args)
        if args.command == "report":
            return _report(args)
        if args.command == "leaderboard":
            return _leaderboard(args)
        if args.command == "audit":
            return _audit(args)
        if args.command == "mcp":
            return _mcp(args)
        if args.command == "inspect-import":
            return _inspect_import(args)
        return _levels(args)
    except (ValueError, OSError, RunDirectoryBusyError) as error:
        print(f"acdb: error: {one_line(error)}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
