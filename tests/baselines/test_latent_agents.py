"""``fci`` and ``fci_active``: causal-learn's FCI decoded, and experiments that settle its PAG."""

from __future__ import annotations

import numpy as np
import pytest

from acdb_gym.agents.base import run_episode
from acdb_gym.baselines.latent import FCIActiveAgent, FCIAgent, resolve_pag
from acdb_gym.core.graphs import ADMG, PAG, PDAG
from acdb_gym.core.ladders.custom import resolve_level
from acdb_gym.discovery.fci import codable_graph, fci_pag, pag_from_causallearn
from acdb_gym.envs.acdb_env import ACDBEnv
from acdb_gym.registry import get_agent

LATENT = "d=7,k=6,n_obs=1000,n_int=200,slack=1,standardized=true,latent=2"


def _pag(n: int, edges: dict[tuple[int, int], str]) -> PAG:
    """``edges[(i, j)] = "o->"`` etc.: the marks at i and at j."""
    adjacent = np.zeros((n, n), dtype=bool)
    head = np.zeros_like(adjacent)
    tail = np.zeros_like(adjacent)
    for (i, j), text in edges.items():
        adjacent[i, j] = adjacent[j, i] = True
        left, right = text[0], text[-1]
        head[j, i], tail[j, i] = left == "<", left == "-"
        head[i, j], tail[i, j] = right == ">", right == "-"
    return PAG(adjacent, head, tail)


def test_causallearn_marks_decode_into_a_pag() -> None:
    marks = np.array([[0, 2, 0], [1, 0, -1], [0, 1, 0]])  # X0 o-> X1 --> X2
    assert pag_from_causallearn(marks).edge_strings() == ["X0 o-> X1", "X1 --> X2"]
    with pytest.raises(ValueError, match="one end only"):
        pag_from_causallearn(np.array([[0, 2], [0, 0]]))
    with pytest.raises(ValueError, match="-1, 0, 1 or 2"):
        pag_from_causallearn(np.array([[0, 3], [3, 0]]))


def test_fci_finds_a_hidden_confounder_on_a_large_sample() -> None:
    rng = np.random.default_rng(0)
    n = 20_000
    latent = rng.normal(size=n)
    x0, x3 = rng.normal(size=n), rng.normal(size=n)
    x1 = x0 + latent + rng.normal(size=n)
    x2 = x3 + latent + rng.normal(size=n)
    pag = fci_pag(np.column_stack([x0, x1, x2, x3]))
    assert pag.edge_strings() == ["X0 o-> X1", "X1 <-> X2", "X2 <-o X3"]
    assert isinstance(codable_graph(pag), PAG)  # <-> with o-o: neither a PDAG nor an ADMG


def test_codable_graph_keeps_only_what_the_codes_carry() -> None:
    assert isinstance(codable_graph(_pag(3, {(0, 1): "-->", (1, 2): "o->"})), PDAG)
    admg = codable_graph(_pag(3, {(0, 1): "-->", (1, 2): "<->"}))
    assert admg == ADMG.from_edges(3, directed=[(0, 1)], bidirected=[(1, 2)])


def test_experiments_settle_circles_and_bidirected_candidates() -> None:
    pag = _pag(4, {(0, 1): "o->", (1, 2): "<->", (2, 3): "o-o"})
    ancestor = np.full((4, 4), -1)
    ancestor[0] = [-1, 1, 1, 0]  # do(X0) shifts X1 (and X2): X0 -> X1
    ancestor[1] = [0, -1, 0, 0]  # do(X1) shifts nothing
    ancestor[3] = [0, 0, 0, -1]  # do(X3) does not shift X2; the PAG has no arrowhead at X2
    graph = resolve_pag(pag, ancestor)
    # X1 - X2: do(X1) no shift and the PAG's arrowhead at X2: <->; X2 - X3: X2 -> X3.
    assert graph == ADMG.from_edges(4, directed=[(0, 1), (2, 3)], bidirected=[(1, 2)])
    untouched = resolve_pag(pag, np.full((4, 4), -1))
    assert untouched == codable_graph(pag)


@pytest.mark.slow
def test_fci_active_beats_fci_on_directed_f1_and_both_are_registered() -> None:
    level = resolve_level("custom", "LAT", LATENT, 6)
    fci, active = [], []
    for index in range(6):
        fci.append(run_episode(ACDBEnv(level), FCIAgent(), manifest_index=index).score)
        result = run_episode(ACDBEnv(level, panel="active"), FCIActiveAgent(), manifest_index=index)
        assert 0 < result.score.interventions_used <= level.instance(index).budget
        active.append(result.score)
    assert np.mean([s.directed_f1 for s in active]) > np.mean([s.directed_f1 for s in fci])
    assert np.mean([s.bidirected_f1 for s in fci]) > 0  # the random DAG floor is 0
    assert type(get_agent("fci").build(0, {})).__name__ == "FCIAgent"
    assert type(get_agent("fci_active").build(0, {})).__name__ == "FCIActiveAgent"
