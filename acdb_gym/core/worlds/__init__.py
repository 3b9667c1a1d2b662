"""How a world is drawn: from a level's recipe to a frozen instance with its data.

- :mod:`~acdb_gym.core.worlds.spec`: :class:`LevelSpec`, the recipe (sizes, noise, family, ...);
- :mod:`~acdb_gym.core.worlds.linear`: the linear-Gaussian SCM (sampling, do(), covariance);
- :mod:`~acdb_gym.core.worlds.mechanisms`: the other SCM families (non-Gaussian, nonlinear);
- :mod:`~acdb_gym.core.worlds.normal_scores`: the nonlinear family's normal-score maps;
- :mod:`~acdb_gym.core.worlds.faithfulness`: partial correlations and the faithfulness check;
- :mod:`~acdb_gym.core.worlds.acceptance`: drawing a family's world and its acceptance rule;
- :mod:`~acdb_gym.core.worlds.dependence`: the nonlinear rule's dependence measures;
- :mod:`~acdb_gym.core.worlds.instance`: :class:`Instance` and :func:`generate_instance`;
- :mod:`~acdb_gym.core.worlds.soft`: soft interventions (shift, scale);
- :mod:`~acdb_gym.core.worlds.sampler`: the cached interventional sampler a session owns.

Ladders (named levels and their manifests of seeds) are built on top, in
:mod:`acdb_gym.core.ladders`.
"""

from acdb_gym.core.worlds.instance import Instance, InstanceGenerationError, generate_instance
from acdb_gym.core.worlds.spec import LevelSpec

__all__ = ["Instance", "InstanceGenerationError", "LevelSpec", "generate_instance"]
