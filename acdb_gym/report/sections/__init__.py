"""The report's sections, one module each, and :data:`SECTIONS`, the one table that lists them.

Each module holds one class meeting :class:`~acdb_gym.report.section.Section`: it computes its
result from the run's rows, writes its CSVs and plots, and gives its document parts (rendered
as ``report.md`` and ``report.html`` alike). Adding a section is one new module here and one
line in :data:`SECTIONS` (DESIGN §10 shows the recipe).
"""

from __future__ import annotations

from typing import Any, Final

from acdb_gym.report.section import Section
from acdb_gym.report.sections.anytime import Anytime
from acdb_gym.report.sections.commitment import Commitment
from acdb_gym.report.sections.cost import Cost
from acdb_gym.report.sections.failures import Failures
from acdb_gym.report.sections.files import FileList
from acdb_gym.report.sections.headroom import Headroom
from acdb_gym.report.sections.ladder_tables import LadderTables
from acdb_gym.report.sections.latent import HiddenConfounders
from acdb_gym.report.sections.level_plots import LevelPlots
from acdb_gym.report.sections.order_audit import OrderAudit
from acdb_gym.report.sections.paired_tests import PairedTests
from acdb_gym.report.sections.pairs import CauseEffectPairs
from acdb_gym.report.sections.random_floor import RandomFloor
from acdb_gym.report.sections.revision import Revision
from acdb_gym.report.sections.shortcuts import ShortcutChecks
from acdb_gym.report.sections.side_by_side import SideBySide
from acdb_gym.report.sections.transfer import Transfer

__all__ = ["SECTIONS"]

SECTIONS: Final[tuple[Section[Any], ...]] = (
    # In each ladder's block, in this order:
    LadderTables(),  # Tables 2 and 3, the skeleton table
    Headroom(),  # oracle − the best agent per level
    RandomFloor(),  # the random floor
    Commitment(),  # precision vs recall
    ShortcutChecks(),  # sortability, sort baselines, density leakage
    OrderAudit(),  # the marginal-order audit
    LevelPlots(),  # F1 per level, precision vs recall
    # After the ladder blocks, in this order:
    PairedTests(),
    Revision(),
    SideBySide(),
    Failures(),
    FileList(),
    Anytime(),
    HiddenConfounders(),
    CauseEffectPairs(),
    Transfer(),
    Cost(),
)
"""Every section of the report, in document order within each slot (ladder blocks, then the
run); :attr:`~acdb_gym.report.section.Section.files_order` orders their files."""
