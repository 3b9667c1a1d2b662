"""What a rewritten report does not redo: plots drawn once per content
(acdb_gym/report/png_cache.py) and the order audit's instances kept in the run directory
(acdb_gym/report/audit_cache.py), with the same numbers and files as a first report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acdb_gym.report import order_audit, write_report
from acdb_gym.report.aggregation import prepare
from acdb_gym.report.audit_cache import AUDIT_CACHE_FILE
from acdb_gym.report.png_cache import KEY_FIELD, plot_key, png_text, save_png
from tests.test_report import make_row, write_jsonl


def _rows() -> list[dict[str, object]]:
    return [
        make_row(agent, level=level, index=index, f1=0.2 + 0.1 * index)
        for agent in ("pc", "random")
        for level in ("L0", "L1")
        for index in range(3)
    ]


def test_a_plot_is_drawn_once_per_content(tmp_path: Path) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    drawn: list[int] = []

    def figure() -> Figure:
        drawn.append(1)
        result = Figure(figsize=(2, 2))
        FigureCanvasAgg(result)
        result.add_subplot().plot([0, 1], [0, len(drawn)])
        return result

    path = tmp_path / "plot.png"
    key = plot_key("test", (1.0, "a"))
    save_png(path, key, figure, dpi=50)
    assert png_text(path, KEY_FIELD) == key and drawn == [1]
    written = path.read_bytes()
    save_png(path, key, figure, dpi=50)  # the same content: kept, not drawn
    assert drawn == [1] and path.read_bytes() == written
    other = plot_key("test", (2.0, "a"))
    assert other != key
    save_png(path, other, figure, dpi=50)  # another content: drawn again
    assert drawn == [1, 1] and png_text(path, KEY_FIELD) == other


def test_a_file_that_is_no_png_or_has_no_key_reads_none(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(b"not a png")
    assert png_text(tmp_path / "a.png", KEY_FIELD) is None
    assert png_text(tmp_path / "missing.png", KEY_FIELD) is None


def test_a_rewritten_report_computes_no_audit_and_writes_the_same_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = write_jsonl(tmp_path / "run", _rows())
    write_report(run)
    first = {path.name: path.read_bytes() for path in run.iterdir() if path.is_file()}
    assert AUDIT_CACHE_FILE in first
    plots = sorted(name for name in first if name.endswith(".png"))
    assert plots and all(png_text(run / name, KEY_FIELD) for name in plots)

    def refuse(*args: object) -> None:
        raise AssertionError("an instance audit was computed again")

    monkeypatch.setattr(order_audit, "instance_order_audit", refuse)
    write_report(run)
    again = {path.name: path.read_bytes() for path in run.iterdir() if path.is_file()}
    assert again == first


def test_a_cache_of_another_version_or_a_broken_entry_is_recomputed(tmp_path: Path) -> None:
    run = write_jsonl(tmp_path / "run", _rows())
    prepared = prepare([json.loads(line) for line in (run / "results.jsonl").open()])
    cache = run / AUDIT_CACHE_FILE
    truth = order_audit.order_audit_rows(prepared, cache=cache)
    payload = json.loads(cache.read_text())
    name = sorted(payload["instances"])[0]
    payload["instances"][name]["random_f1"] = "nan"  # not a number: this entry is recomputed
    cache.write_text(json.dumps(payload))
    assert order_audit.order_audit_rows(prepared, cache=cache) == truth
    assert json.loads(cache.read_text())["instances"][name]["random_f1"] != "nan"
    payload = json.loads(cache.read_text())
    payload["key"] = "another version"
    for entry in payload["instances"].values():
        entry["random_f1"] = 0.123  # would change the numbers if it were read
    cache.write_text(json.dumps(payload))
    assert order_audit.order_audit_rows(prepared, cache=cache) == truth
    cache.write_text("{ not json")
    assert order_audit.order_audit_rows(prepared, cache=cache) == truth
