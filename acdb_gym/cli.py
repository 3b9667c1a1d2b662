"""The ``acdb`` command: ``acdb sweep``, ``acdb report``, ``acdb train``, ``acdb levels``."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

from acdb_gym import __version__
from acdb_gym.core.ladder import ALL_LADDERS, LEVEL_NAMES, MANIFEST_SIZE
from acdb_gym.core.types import PANELS
from acdb_gym.registry import OFFLINE_AGENTS, agent_help
from acdb_gym.results import RESULTS_FILE
from acdb_gym.run_lock import RunDirectoryBusyError

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


def _sweep_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
        help="ladder (large: d = 20 to 500, levels L0-L4, 50 seeds each)",
    )
    p.add_argument(
        "--levels",
        default=",".join(LEVEL_NAMES),
        help="comma-separated levels (with --ladder large, the default is its L0-L4)",
    )
    p.add_argument(
        "--seeds", type=int, default=8, help=f"first N manifest seeds per level (1-{MANIFEST_SIZE})"
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


def _report_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "report",
        help="write report.md, CSVs and PNG plots for a run directory",
        description=f"Aggregate RUN_DIR/{RESULTS_FILE} into the paper-style tables and plots.",
    )
    p.add_argument("run_dir", type=Path, help="a sweep's --out directory")
    p.add_argument(
        "--compare",
        action="append",
        default=[],
        metavar="A,B",
        help="extra paired sign-flip test between two agent labels (repeatable)",
    )


def _sweep(args: argparse.Namespace) -> int:
    from acdb_gym.sweep import SweepConfig, parse_list, parse_panels, run_sweep

    options = {
        "provider": args.provider,
        "model": args.model,
        "base_url": args.base_url,
        "temperature": args.temperature,
        "cache_dir": str(args.cache_dir) if args.cache_dir else None,
        "timeout": args.timeout,
        "max_retries": args.max_retries,
        "trust_model": True if args.trust_model else None,
    }
    config = SweepConfig(
        out=args.out,
        ladder=args.ladder,
        levels=parse_list(_levels_of(args), ALL_LADDERS[args.ladder], what="levels"),
        seeds=args.seeds,
        agents=parse_list(args.agents, what="agents"),
        panels=parse_panels(args.panels),
        repeats=args.repeats,
        workers=args.workers,
        backend=args.backend,
        agent_options={k: v for k, v in options.items() if v is not None},
        progress=not args.no_progress,
    )
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
    if not args.no_report:
        _write_report(args.out, [])
    return 1 if summary.failed or summary.not_run else 0


def _write_report(run_dir: Path, compare: Sequence[str]) -> None:
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
        files = report.write_report(run_dir, compare=pairs)
    for problem in files.problems:
        print(f"acdb: warning: {problem}", file=sys.stderr)
    print(report.format_terminal(files.summary))
    print(f"report written to {files.markdown}")


def _report(args: argparse.Namespace) -> int:
    if not (args.run_dir / RESULTS_FILE).exists():
        raise ValueError(f"no {RESULTS_FILE} in {args.run_dir}")
    _write_report(args.run_dir, args.compare)
    return 0


def _levels_of(args: argparse.Namespace) -> str:
    """``--levels``, where the default L0-L5 means every level of a ladder that has fewer."""
    if args.levels == ",".join(LEVEL_NAMES):
        return ",".join(ALL_LADDERS[args.ladder])
    return str(args.levels)


def _levels(args: argparse.Namespace) -> int:
    print("| ladder | level | axis | d | k | n_obs | n_int | noise_var | slack | random floor |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for ladder, levels in ALL_LADDERS.items():
        for level in levels.values():
            s = level.spec
            print(
                f"| {ladder} | {level.name} | {level.axis} | {s.d} | {s.k} | {s.n_obs} | "
                f"{s.n_int} | {s.noise_var} | {s.slack} | {s.random_floor:.1%} |"
            )
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``acdb`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="acdb", description="Active Causal Discovery Benchmark (ACDB) command line."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    _sweep_parser(sub)
    _report_parser(sub)
    sub.add_parser("levels", help="print both ladders' level tables")
    sub.add_parser(
        "train",
        help="train an RL intervention policy on ACDB-Design-* (acdb train --help)",
        add_help=False,
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``acdb`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv[:1] == ["train"]:
            # The trainer owns its options (its config dataclass is its --help).
            from acdb_gym.agents.rl_train import main as train_main

            return train_main(argv[1:])
        args = build_parser().parse_args(argv)
        if args.command == "sweep":
            return _sweep(args)
        if args.command == "report":
            return _report(args)
        return _levels(args)
    except (ValueError, RunDirectoryBusyError) as error:
        print(f"acdb: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
