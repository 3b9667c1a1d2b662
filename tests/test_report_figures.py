"""The plots' fixed layout (acdb_gym/report/figures.py): axes sit where the margins, in inches,
say, and margins that leave no room are refused."""

from __future__ import annotations

import pytest

from acdb_gym.report.figures import Margins, fixed_figure


def test_the_axes_sit_at_the_margins() -> None:
    margins = Margins(0.5, 0.25, 0.4, 0.8, between_columns=0.3, between_lines=0.6)
    figure = fixed_figure(8.0, 6.0, margins, columns=2, lines=2)
    boxes = [figure.add_subplot(2, 2, k).get_position() for k in (1, 2, 3, 4)]
    inches = [(b.x0 * 8.0, b.x1 * 8.0, b.y0 * 6.0, b.y1 * 6.0) for b in boxes]
    assert inches[0][0] == pytest.approx(0.5) and inches[1][1] == pytest.approx(8.0 - 0.25)
    assert inches[0][3] == pytest.approx(6.0 - 0.4) and inches[2][2] == pytest.approx(0.8)
    assert inches[1][0] - inches[0][1] == pytest.approx(0.3)  # between the columns
    assert inches[0][2] - inches[2][3] == pytest.approx(0.6)  # between the lines
    widths = {round(right - left, 9) for left, right, _, _ in inches}
    assert widths == {round((8.0 - 0.5 - 0.25 - 0.3) / 2, 9)}


def test_margins_that_leave_no_room_are_refused() -> None:
    with pytest.raises(ValueError, match="leave no room"):
        fixed_figure(1.0, 4.0, Margins(0.6, 0.5, 0.1, 0.1))
