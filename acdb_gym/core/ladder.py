"""Level specifications and the two difficulty ladders (DESIGN §7).

Each level carries a manifest of 8 preflighted seeds, each stored with the digest of the
instance it generates; ``tests/core/test_instance.py`` regenerates them so that any change
to generation is caught. Regenerate the table after an intended change with
``python -m acdb_gym.core.ladder``.

>>> LADDERS["v0"]["L0"].spec.d, LADDERS["v1"]["L5"].spec.k
(5, 45)
>>> round(LADDERS["v0"]["L0"].spec.random_floor, 3)
0.275
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass
from typing import Literal

from acdb_gym.core.instance import Instance, InstanceGenerationError, generate_instance
from acdb_gym.core.level_spec import LevelSpec

__all__ = ["LADDERS", "LEVEL_NAMES", "Level", "LevelSpec", "ManifestEntry", "get_level"]

LadderName = Literal["v0", "v1"]
LEVEL_NAMES = ("L0", "L1", "L2", "L3", "L4", "L5")


@dataclass(frozen=True)
class ManifestEntry:
    """A preflighted seed and the digest of the instance it generates."""

    seed: int
    digest: str


@dataclass(frozen=True)
class Level:
    """A named level of a ladder: its axis, spec and manifest."""

    ladder: str
    name: str
    axis: str
    spec: LevelSpec
    manifest: tuple[ManifestEntry, ...]

    @property
    def env_id(self) -> str:
        """The Gymnasium id, e.g. ``ACDB-L2-v0``."""
        return f"ACDB-{self.name}-{self.ladder}"

    def manifest_seed(self, index: int) -> int:
        """The ``index``-th preflighted seed."""
        if not 0 <= index < len(self.manifest):
            raise ValueError(
                f"manifest_index must be in [0, {len(self.manifest)}) for "
                f"{self.ladder} {self.name}, got {index}"
            )
        return self.manifest[index].seed

    def instance(self, index: int) -> Instance:
        """Generate the ``index``-th manifest instance."""
        return generate_instance(self.spec, self.manifest_seed(index))


def _manifest(seeds_and_digests: str) -> tuple[ManifestEntry, ...]:
    entries = []
    for item in seeds_and_digests.split():
        seed, digest = item.split(":")
        entries.append(ManifestEntry(int(seed), digest))
    return tuple(entries)


# v0: the paper's ladder, reconstructed (DESIGN §7). Random floors: 27.5, 24.3, 24.3, 21.5,
# 24.3, 21.0 %.
_V0_SPECS = {
    "L0": ("easy", LevelSpec(d=5, k=8, n_obs=500, n_int=100, noise_var=1.0, slack=2)),
    "L1": ("base", LevelSpec(d=6, k=9, n_obs=200, n_int=50, noise_var=2.0, slack=1)),
    "L2": ("statistical power", LevelSpec(d=6, k=9, n_obs=50, n_int=20, noise_var=4.0, slack=1)),
    "L3": ("structure", LevelSpec(d=8, k=13, n_obs=200, n_int=50, noise_var=2.0, slack=1)),
    "L4": ("budget", LevelSpec(d=6, k=9, n_obs=200, n_int=50, noise_var=2.0, slack=0)),
    "L5": (
        "structure + low sample",
        LevelSpec(d=10, k=20, n_obs=50, n_int=20, noise_var=4.0, slack=0),
    ),
}

# v1: calibrated (beyond the paper). Standardized SCMs and sparse graphs; random floors 11.7,
# 11.9, 11.9, 10.8, 11.9, 7.8 %.
_V1_SPECS = {
    "L0": ("easy", LevelSpec(10, 8, 1000, 200, 1.0, 2, standardized=True)),
    "L1": ("base", LevelSpec(12, 12, 1000, 200, 1.0, 1, standardized=True)),
    "L2": ("statistical power", LevelSpec(12, 12, 100, 50, 1.0, 1, standardized=True)),
    "L3": ("structure", LevelSpec(20, 30, 1000, 200, 1.0, 1, standardized=True)),
    "L4": ("budget", LevelSpec(12, 12, 1000, 200, 1.0, 0, standardized=True)),
    "L5": ("structure + low sample", LevelSpec(30, 45, 200, 50, 1.0, 0, standardized=True)),
}

# Manifest seeds: ladder v0 uses 1000 * level + i, v1 uses 100000 + 1000 * level + i.
_MANIFESTS: dict[str, dict[str, str]] = {
    "v0": {
        "L0": (
            "0:4eb785b776df0d1b 1:7f2741e26ed5252d 2:9fa96dbf7e87070a "
            "3:06520ccfaee8bc26 4:3ba5812bf5898717 5:3f0bea31e5d0f11f "
            "6:9beed80027e1affa 7:b8043d7566d6b18a "
        ),
        "L1": (
            "1000:6811b907f1c6055d 1001:6b5fc4c9f3765432 1002:62d1c56c09b07b1b "
            "1003:e95bd5be6e67cf5e 1004:d498c6b373e423ba 1005:4fc58024c26230ab "
            "1006:a0dfe08d299a764a 1007:ccde9b4804a4b083 "
        ),
        "L2": (
            "2000:964b35d5542d5805 2001:f3181c848f2d8d3a 2002:6f8b8d3574fed3ea "
            "2003:be504cc99c6cfb83 2004:51055ec03c5b0f93 2005:534dea3b1f414179 "
            "2006:b2e4383ca64fdb6f 2007:d9f39715bcfbec6f "
        ),
        "L3": (
            "3000:e3643be2d02de7ba 3001:27ae23677dc1da06 3002:269c54139b3e4eea "
            "3003:28e43a564d9f0e3a 3004:0afc937736fecf46 3005:915cd16674d05766 "
            "3006:38ab0d3803db915b 3007:d5382a2d5d466132 "
        ),
        "L4": (
            "4000:e6cc3037f1a7677f 4001:fd926de561313cd6 4002:e82cf8ab2c395e21 "
            "4003:ef2c5d6006ff7876 4004:a9b22762e66d77c3 4005:54edb9d77f2b9324 "
            "4006:47b714b70cacebcb 4007:b7b16513a23833fa "
        ),
        "L5": (
            "5000:16403bd418fbaa57 5001:a6d835257013ad37 5002:24bfc5160fcc9249 "
            "5003:c77eb94e924173ed 5004:88e6dea89e49eb7d 5005:65f5c3fd4749f321 "
            "5006:5f04e210f659649f 5007:22907595650ce955 "
        ),
    },
    "v1": {
        "L0": (
            "100000:d9340d9e8464b10d 100001:49a37bec41980813 100002:a65ea4902e499dcc "
            "100003:bd56798050112d2f 100004:e6bcce70f9a84514 100005:a0d768f433a9c05c "
            "100006:6747f3bf5bdbb67e 100007:09b7d7fe8d6115e0 "
        ),
        "L1": (
            "101000:4b739c46d29fad73 101001:30df1025113fcc2d 101002:9359de3b889660a3 "
            "101003:736fcbcd768b1503 101004:55134f2e34f68716 101005:654cbf613db88e60 "
            "101006:c5908d719c54623c 101007:08e0f9f3212460f4 "
        ),
        "L2": (
            "102000:c2d882793b66da02 102001:badca82b48e7092b 102002:bb577aa4cb4defca "
            "102003:f61c124040f35a23 102004:eb86fa00668ccb5f 102005:324d73af929430ad "
            "102006:c4b07767d33edfa0 102007:9cac5b7d1ac6a7bc "
        ),
        "L3": (
            "103000:cd064b0b4794fd96 103001:19c0e99b06875fdf 103002:ea8f613b0f19bdbf "
            "103003:75ebddbc6c676b42 103004:0fb4741af29392cd 103005:078bb29c7ca4db7e "
            "103006:9cb3972cbf833b8e 103007:45e5e9a09f570752 "
        ),
        "L4": (
            "104000:d9172980274c4bb2 104001:1e479008d828a6d4 104002:ccde6d15694112e9 "
            "104003:0b42e88813427edc 104004:c195146451b81836 104005:ab8dba2b451df0b6 "
            "104006:91f072db84affeb0 104007:9b98d9966341ab56 "
        ),
        "L5": (
            "105000:f7c18a516397c054 105001:fcde32c47d2f462d 105002:e5532fd066d320e8 "
            "105003:9fe6c1a90054fbe7 105004:5ba79093689acf50 105005:c9b874ebd5e61279 "
            "105006:eaef0cac6747cafe 105007:36b468d651635cc8 "
        ),
    },
}


def _build(ladder: str, specs: Mapping[str, tuple[str, LevelSpec]]) -> dict[str, Level]:
    return {
        name: Level(ladder, name, axis, spec, _manifest(_MANIFESTS[ladder][name]))
        for name, (axis, spec) in specs.items()
    }


LADDERS: dict[str, dict[str, Level]] = {
    "v0": _build("v0", _V0_SPECS),
    "v1": _build("v1", _V1_SPECS),
}


def get_level(ladder: str, level: str) -> Level:
    """Look up a level, with an error that lists what exists."""
    if ladder not in LADDERS:
        raise ValueError(f"ladder must be one of {sorted(LADDERS)}, got {ladder!r}")
    if level not in LADDERS[ladder]:
        raise ValueError(f"level must be one of {list(LADDERS[ladder])}, got {level!r}")
    return LADDERS[ladder][level]


def _preflight(ladder: str, level_index: int, spec: LevelSpec, count: int = 8) -> list[str]:
    base = (0 if ladder == "v0" else 100_000) + 1000 * level_index
    entries: list[str] = []
    seed = base
    while len(entries) < count:
        with suppress(InstanceGenerationError):
            entries.append(f"{seed}:{generate_instance(spec, seed).digest()}")
        seed += 1
    return entries


if __name__ == "__main__":  # pragma: no cover - maintenance entry point
    for ladder_name, specs in (("v0", _V0_SPECS), ("v1", _V1_SPECS)):
        print(f'    "{ladder_name}": {{')
        for index, (level_name, (_, level_spec)) in enumerate(specs.items()):
            items = _preflight(ladder_name, index, level_spec)
            print(f'        "{level_name}": (')
            for start in range(0, len(items), 3):
                print(f'            "{" ".join(items[start : start + 3])} "')
            print("        ),")
        print("    },")
