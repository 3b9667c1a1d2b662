"""The sizes a saved flat policy declares, checked before anything is built from them.

A policy's ``data`` member (SB3's JSON) names its ``policy_kwargs``, and its metadata its
``n_nodes``: together they decide how large the network is. A crafted file could declare a
network of billions of parameters in a few bytes (``net_arch: [30000, 30000]``, or
``n_nodes = 900`` with a flat observation of two million features), so
:func:`check_policy_size` counts the parameters from the declared sizes
(:func:`flat_policy_parameters`) and refuses more than
:data:`~acdb_gym.agents.rl._format.MAX_POLICY_PARAMETERS` before torch allocates any;
:func:`check_policy_kwargs` accepts only the keys a saved policy may set, of their JSON types;
:func:`load_state` turns weights that do not fit the network into a ``ValueError``.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

from acdb_gym.agents.rl._format import MAX_POLICY_PARAMETERS
from acdb_gym.envs.design.observation import observation_size

__all__ = ["check_policy_kwargs", "check_policy_size", "flat_policy_parameters", "load_state"]


def check_policy_kwargs(path: Path, kwargs: dict[str, Any]) -> None:
    """Refuse a ``policy_kwargs`` key a saved policy may not set, or a value of the wrong type
    (``net_arch`` is checked by :func:`check_policy_size`).

    Raises:
        ValueError: naming the key.
    """
    for key, value in kwargs.items():
        kind = _POLICY_KWARGS.get(key)
        if kind is None or (key != "net_arch" and not _is_kind(value, kind)):
            raise ValueError(
                f"{path}: policy_kwargs {key!r} is not one a saved policy may set "
                f"({sorted(_POLICY_KWARGS)}, of their types)"
            )


_POLICY_KWARGS: dict[str, type | tuple[type, ...]] = {
    "net_arch": (list, dict),
    "ortho_init": bool,
    "share_features_extractor": bool,
    "normalize_images": bool,
    "log_std_init": (int, float),
    "full_std": bool,
    "use_expln": bool,
    "squash_output": bool,
}
"""The ``policy_kwargs`` a policy rebuilt without unpickling may set, and their JSON types."""


def _is_kind(value: Any, kind: type | tuple[type, ...]) -> bool:
    if isinstance(value, bool) and kind is not bool:
        return False
    return isinstance(value, kind) and not (isinstance(value, float) and not math.isfinite(value))


def _layer_sizes(path: Path, policy_kwargs: dict[str, Any]) -> tuple[list[int], list[int]]:
    """The policy and value networks' hidden layer widths, checked: SB3's list (both networks
    alike) or ``{"pi": [...], "vf": [...]}``, each width an integer in [1, 4096], at most 32
    layers."""
    arch = policy_kwargs.get("net_arch", {"pi": [64, 64], "vf": [64, 64]})
    nets = (arch, arch) if isinstance(arch, list) else (arch.get("pi"), arch.get("vf"))
    if isinstance(arch, dict) and set(arch) - {"pi", "vf"}:
        nets = (None, None)
    for widths in nets:
        if (
            not isinstance(widths, list)
            or len(widths) > 32
            or not all(_is_kind(w, int) and 1 <= w <= 4096 for w in widths)
        ):
            raise ValueError(
                f"{path}: policy_kwargs net_arch must be at most 32 widths in [1, 4096] (or "
                f"pi and vf lists of them), got {str(arch)[:80]}"
            )
    return list(nets[0]), list(nets[1])


def flat_policy_parameters(n_nodes: int, net_arch: list[int] | dict[str, list[int]]) -> int:
    """The parameters of SB3's actor-critic MLP on the flat design observation of ``n_nodes``
    variables: the policy and value networks of ``net_arch`` (a list: both alike), the action
    head (``n_nodes + 1`` actions) and the value head, weights and biases.

    >>> flat_policy_parameters(6, [64, 64])
    21000
    """
    arch = net_arch if isinstance(net_arch, dict) else {"pi": net_arch, "vf": net_arch}
    total = 0
    for widths, outputs in ((arch["pi"], n_nodes + 1), (arch["vf"], 1)):
        sizes = [observation_size(n_nodes), *widths, outputs]
        total += sum(a * b + b for a, b in itertools.pairwise(sizes))
    return total


def check_policy_size(path: Path, n_nodes: int, policy_kwargs: dict[str, Any]) -> None:
    pi, vf = _layer_sizes(path, policy_kwargs)
    parameters = flat_policy_parameters(n_nodes, {"pi": pi, "vf": vf})
    if parameters > MAX_POLICY_PARAMETERS:
        raise ValueError(
            f"{path}: a policy of n_nodes={n_nodes} and net_arch {pi} / {vf} has {parameters} "
            f"parameters, more than {MAX_POLICY_PARAMETERS}: refused before it is built"
        )


def load_state(path: Path, module: Any, state: dict[str, Any]) -> None:
    """Load a state dict into a network, a ``ValueError`` when its tensors do not fit."""
    try:
        module.load_state_dict(state)
    except (RuntimeError, TypeError, ValueError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ValueError(f"{path}: the weights do not fit the network ({reason[:200]})") from None
