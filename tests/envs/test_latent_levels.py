"""The env on a level with hidden confounders: bidirected submissions and their scores."""

from __future__ import annotations

import numpy as np
import pytest

from acdb_gym.agents.base import run_episode
from acdb_gym.baselines.classical import OracleAgent, PCAgent
from acdb_gym.core.graphs import ADMG, PAG, PDAG
from acdb_gym.core.ladders.custom import resolve_level
from acdb_gym.core.scoring import LATENT_SCORE_FIELDS, SCORE_FIELDS
from acdb_gym.envs import actions
from acdb_gym.envs.acdb_env import ACDBEnv
from acdb_gym.testing import check_acdb_env

LATENT = "d=6,k=5,n_obs=200,n_int=50,slack=1,standardized=true,latent=2"


@pytest.fixture(scope="module")
def level():  # type: ignore[no-untyped-def]
    return resolve_level("custom", "LAT", LATENT, 4)


def test_the_latent_env_keeps_the_contract(level) -> None:  # type: ignore[no-untyped-def]
    check_acdb_env(ACDBEnv(level), n_random_steps=30)


def test_the_oracle_scores_every_field_perfectly(level) -> None:  # type: ignore[no-untyped-def]
    for index in range(4):
        result = run_episode(ACDBEnv(level), OracleAgent(), manifest_index=index)
        assert result.score.is_latent
        assert tuple(result.score.to_dict()) == SCORE_FIELDS + LATENT_SCORE_FIELDS
        for name, value in result.score.to_dict().items():
            if name.endswith(("precision", "recall", "f1")):
                assert value == 1.0, (index, name)
        assert result.score.shd == 0
    # PC ignores the confounders: it finds no bidirected edge.
    pc = run_episode(ACDBEnv(level), PCAgent(), manifest_index=0)
    assert pc.score.bidirected_f1 == 0.0 and pc.score.bidirected_recall == 0.0


def test_bidirected_codes_decode_to_admgs_and_pags(level) -> None:  # type: ignore[no-untyped-def]
    env = ACDBEnv(level)
    env.reset(seed=0)
    admg = ADMG.from_edges(6, directed=[(0, 1)], bidirected=[(2, 3)])
    encoded = actions.submit(admg)
    assert env.action_space.contains(encoded)
    assert actions.decode(encoded, n_nodes=6, latent=True) == actions.Submit(admg)
    assert isinstance(actions.graph_from_codes(np.zeros((6, 6)), latent=True), PDAG)
    codes = actions.graph_to_codes(admg)
    codes[4, 5] = codes[5, 4] = actions.UNDIRECTED
    pag = actions.graph_from_codes(codes, latent=True)
    assert isinstance(pag, PAG)
    assert pag.edge_strings() == ["X0 --> X1", "X2 <-> X3", "X4 o-o X5"]
    _, _, terminated, _, _info = env.step(actions.submit(pag))
    assert terminated and "bidirected_f1" in env.unwrapped.details()["score"]


def test_a_sufficient_level_refuses_bidirected_codes() -> None:
    env = ACDBEnv("L0", ladder="v0")
    env.reset(seed=0)
    codes = np.zeros((5, 5), dtype=np.int64)
    codes[0, 1] = codes[1, 0] = actions.BIDIRECTED
    with pytest.raises(ValueError, match="not an element"):
        env.step((int(actions.ActionKind.SUBMIT_GRAPH), {"graph": codes}))
    with pytest.raises(ValueError, match="only on levels with hidden confounders"):
        actions.graph_from_codes(codes)
    session_error = env.unwrapped._session  # the session refuses typed ADMGs too
    assert session_error is not None
    with pytest.raises(ValueError, match="causally sufficient"):
        session_error.submit_graph(ADMG.from_edges(5, bidirected=[(0, 1)]))
    assert not session_error.sealed


def test_a_typed_pag_submission_keeps_its_circle_marks(level) -> None:  # type: ignore[no-untyped-def]
    env = ACDBEnv(level)
    _, info = env.reset(seed=0)
    assert info["latent"] == 2
    truth = env.unwrapped.hidden_instance().latent_truth
    _, _, terminated, _, info = env.step(actions.Submit(truth.pag))
    assert terminated and env.details()["score"]["pag_arrowhead_f1"] == 1.0
    assert env.details()["score"]["compelled_f1"] == 1.0
    assert info["score"].shape == (len(SCORE_FIELDS) + len(LATENT_SCORE_FIELDS),)
    sufficient = ACDBEnv("L0", ladder="v0")
    _, info = sufficient.reset(seed=0)
    assert info["latent"] == 0
    with pytest.raises(ValueError, match="not an element"):
        sufficient.step(actions.Submit(PDAG.empty(5)))


def test_the_flat_layout_refuses_what_it_cannot_encode() -> None:
    from acdb_gym.envs.wrappers import FlatLayout

    layout = FlatLayout(4, 3, tuple(range(len(actions.kind_names()))), 10.0)
    with pytest.raises(ValueError, match="PDAG submissions only"):
        layout.encode(actions.Submit(ADMG.from_edges(4, bidirected=[(0, 1)])))
