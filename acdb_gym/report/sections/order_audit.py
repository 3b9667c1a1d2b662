"""The marginal-order audit in each ladder's block (:mod:`acdb_gym.report.order_audit`: the
sortability of six marginal features and what regressing in each one's order buys over a
random order). File: ``order_audit.csv``."""

from __future__ import annotations

from acdb_gym.report.audit_cache import AUDIT_CACHE_FILE
from acdb_gym.report.document import Part
from acdb_gym.report.order_audit import order_audit_parts, order_audit_rows, write_order_audit_csv
from acdb_gym.report.section import ReportContext, SectionFiles, Slot
from acdb_gym.report.types import MarginalOrderRow

__all__ = ["OrderAudit"]


class OrderAudit:
    """The marginal-order audit of each ladder."""

    name = "order_audit"
    slot: Slot = "ladder"
    files_order = 40

    def compute(self, context: ReportContext) -> tuple[MarginalOrderRow, ...]:
        return order_audit_rows(context.prepared, cache=context.run_dir / AUDIT_CACHE_FILE)

    def write(self, result: tuple[MarginalOrderRow, ...], context: ReportContext) -> SectionFiles:
        path = context.run_dir / "order_audit.csv"
        return SectionFiles(csvs=(write_order_audit_csv(path, result),))

    def parts(
        self, result: tuple[MarginalOrderRow, ...], context: ReportContext, ladder: str | None
    ) -> list[Part]:
        return order_audit_parts([row for row in result if row.ladder == ladder])
