"""LLM cost from a user-supplied price table: per job (``costs.csv``) and per agent (report.md).

No price is built in: prices change and differ by contract, so the table comes from a file
(``acdb report --prices FILE``), JSON or TOML, one entry per model name as sent to the API::

    [models."claude-sonnet-4-6"]            # TOML; JSON: {"models": {"claude-...": {...}}}
    input = 3.0          # USD per million uncached prompt tokens
    cached_input = 0.3   # per million prompt tokens read from the prompt cache
    cache_write = 3.75   # per million prompt tokens written to the prompt cache
    output = 15.0        # per million completion tokens (thinking/reasoning included)

``cached_input`` and ``cache_write`` default to ``input`` (no discount, no surcharge). A row's
prompt tokens split into cached (``tokens_cached_in``), written (``tokens_cache_write``) and the
rest; rows written before these counts existed are priced as uncached. The cost *without
caching* prices every prompt token at ``input``: the difference is what caching saved.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomllib

from acdb_gym.core.untrusted import loads
from acdb_gym.report.document import Part, Table, markdown_text
from acdb_gym.results import ResultRow

__all__ = [
    "MAX_PRICES_BYTES",
    "JobCost",
    "Price",
    "check_prices_cover",
    "cost_parts",
    "job_costs",
    "load_prices",
    "markdown_costs",
    "write_costs_csv",
]

PER_TOKEN = 1e-6
"""Prices are per million tokens."""


@dataclass(frozen=True)
class Price:
    """USD per million tokens of one model."""

    input: float
    cached_input: float
    cache_write: float
    output: float


@dataclass(frozen=True)
class JobCost:
    """The tokens and cost of one LLM job (one result row)."""

    job_id: str
    agent: str
    panel: str
    model: str
    tokens_in: int
    tokens_cached_in: int
    tokens_cache_write: int
    tokens_out: int
    cost: float
    cost_uncached: float


def _price(model: str, entry: Any) -> Price:
    if not isinstance(entry, Mapping):
        raise ValueError(f"prices for model {model!r} must be a table, got {entry!r}")
    unknown = sorted(set(entry) - {"input", "cached_input", "cache_write", "output"})
    if unknown:
        raise ValueError(f"prices for model {model!r}: unknown keys {unknown}")
    values = {}
    for key in ("input", "output"):
        if key not in entry:
            raise ValueError(f"prices for model {model!r} need {key!r}")
    for key in ("input", "cached_input", "cache_write", "output"):
        value = entry.get(key, entry["input"])
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"price {key!r} of model {model!r} must be a number, got {value!r}")
        if not (math.isfinite(value) and value >= 0):
            raise ValueError(f"price {key!r} of model {model!r} must be >= 0, got {value!r}")
        values[key] = float(value)
    return Price(**values)


MAX_PRICES_BYTES = 1_000_000
"""The largest price table read (a real one is a few kilobytes)."""


def load_prices(path: str | Path) -> dict[str, Price]:
    """Read a price table (``.toml``, else JSON) as ``{model: Price}``.

    Raises:
        ValueError: not a table of models, or a model with a missing, unknown or negative price;
            a file past :data:`MAX_PRICES_BYTES`, not UTF-8, or nested too deeply to parse.
        OSError: the file cannot be read (missing, a directory, no permission).
    """
    file = Path(path)
    with file.open("rb") as handle:
        raw = handle.read(MAX_PRICES_BYTES + 1)
    if len(raw) > MAX_PRICES_BYTES:
        raise ValueError(f"{file}: a price table is at most {MAX_PRICES_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
        toml = file.suffix.lower() == ".toml"
        data = tomllib.loads(text) if toml else loads(raw, max_bytes=MAX_PRICES_BYTES)
    except (ValueError, tomllib.TOMLDecodeError) as error:
        raise ValueError(f"{file}: not a valid price table: {error}") from None
    except RecursionError:
        raise ValueError(f"{file}: not a valid price table: nested too deeply") from None
    models = data.get("models", data) if isinstance(data, dict) else None
    if not isinstance(models, dict) or not models:
        raise ValueError(f"{file}: expected a table of models with their prices")
    return {str(model): _price(str(model), entry) for model, entry in models.items()}


def check_prices_cover(rows: Sequence[ResultRow], prices: Mapping[str, Price]) -> None:
    """Raise ``ValueError`` when a price table could price nothing of the run: the run has no
    ``ok`` row with a model and token counts, or the table names none of its models (a table
    for other models, or model names spelled otherwise, would else give an empty section)."""
    models = {
        row.model for row in rows if row.ok and row.model is not None and row.tokens_in is not None
    }
    if not models:
        raise ValueError("a price table was given, but the run has no LLM rows with token counts")
    if not models & set(prices):
        raise ValueError(
            f"the price table names none of the run's models {sorted(models)}; "
            f"it names {sorted(prices)}"
        )


def token_cost(
    price: Price, tokens_in: int, tokens_out: int, *, cached: int = 0, written: int = 0
) -> float:
    """USD for ``tokens_in`` prompt tokens (``cached`` of them read from the prompt cache,
    ``written`` written to it) and ``tokens_out`` completion tokens.

    >>> price = Price(input=2.0, cached_input=0.5, cache_write=2.5, output=8.0)
    >>> token_cost(price, 1_000_000, 0, cached=500_000)
    1.25
    """
    plain = max(tokens_in - cached - written, 0)
    cost = plain * price.input + cached * price.cached_input + written * price.cache_write
    return (cost + tokens_out * price.output) * PER_TOKEN


def job_costs(rows: Sequence[ResultRow], prices: Mapping[str, Price]) -> list[JobCost]:
    """The cost of every ``ok`` row whose ``agent_config["model"]`` has a price."""
    costs = []
    for row in rows:
        model = row.model
        if not row.ok or model is None or model not in prices or row.tokens_in is None:
            continue
        price = prices[model]
        total, out = row.tokens_in, row.tokens_out or 0
        cached, written = row.tokens_cached_in or 0, row.tokens_cache_write or 0
        costs.append(
            JobCost(
                job_id=row.job_id,
                agent=row.agent,
                panel=row.panel,
                model=model,
                tokens_in=total,
                tokens_cached_in=cached,
                tokens_cache_write=written,
                tokens_out=out,
                cost=token_cost(price, total, out, cached=cached, written=written),
                cost_uncached=(total * price.input + out * price.output) * PER_TOKEN,
            )
        )
    return costs


_CSV_FIELDS = tuple(JobCost.__dataclass_fields__)


def write_costs_csv(path: Path, costs: Sequence[JobCost]) -> Path:
    """One line per priced job."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(_CSV_FIELDS)
        for cost in costs:
            writer.writerow([getattr(cost, name) for name in _CSV_FIELDS])
    return path


COST_HEADERS = (
    "agent",
    "panel",
    "model",
    "jobs",
    "tokens in",
    "cached",
    "cache write",
    "tokens out",
    "cost",
    "cost / job",
    "without caching",
)
"""The columns of the report's cost table."""


def markdown_costs(costs: Sequence[JobCost]) -> str:
    """The report's cost section as Markdown: one line per agent, panel and model."""
    return markdown_text(cost_parts(costs))


def cost_parts(costs: Sequence[JobCost]) -> list[Part]:
    """The report's cost section (:mod:`acdb_gym.report.document`): one row per agent, panel
    and model."""
    lines: list[Part] = [
        "## Cost",
        "",
        "From the price table given with `--prices` (USD; per-job costs in `costs.csv`).",
        "",
    ]
    groups: dict[tuple[str, str, str], list[JobCost]] = {}
    for cost in costs:
        groups.setdefault((cost.agent, cost.panel, cost.model), []).append(cost)
    body = []
    for (agent, panel, model), group in sorted(groups.items()):
        total = sum(c.cost for c in group)
        body.append(
            [
                agent,
                panel,
                model,
                str(len(group)),
                str(sum(c.tokens_in for c in group)),
                str(sum(c.tokens_cached_in for c in group)),
                str(sum(c.tokens_cache_write for c in group)),
                str(sum(c.tokens_out for c in group)),
                f"{total:.4f}",
                f"{total / len(group):.4f}",
                f"{sum(c.cost_uncached for c in group):.4f}",
            ]
        )
    if not groups:
        body.append(["(no LLM job with a priced model)", *[""] * (len(COST_HEADERS) - 1)])
    return [*lines, Table.of(COST_HEADERS, body)]
