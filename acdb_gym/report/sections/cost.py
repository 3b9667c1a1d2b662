"""What the LLM rows cost (:mod:`acdb_gym.report.cost`), per job and per agent row; only when
a price table is given. File: ``costs.csv``."""

from __future__ import annotations

from acdb_gym.report.cost import JobCost, check_prices_cover, cost_parts, job_costs, write_costs_csv
from acdb_gym.report.document import Part
from acdb_gym.report.section import ReportContext, SectionFiles, Slot

__all__ = ["Cost"]


class Cost:
    """The cost section."""

    name = "cost"
    slot: Slot = "run"
    files_order = 90

    def compute(self, context: ReportContext) -> list[JobCost] | None:
        if context.prices is None:
            return None
        check_prices_cover(context.rows, context.prices)
        return job_costs(context.rows, context.prices)

    def write(self, result: list[JobCost], context: ReportContext) -> SectionFiles:
        return SectionFiles(csvs=(write_costs_csv(context.run_dir / "costs.csv", result),))

    def parts(
        self, result: list[JobCost], context: ReportContext, ladder: str | None
    ) -> list[Part]:
        return ["", *cost_parts(result)]
