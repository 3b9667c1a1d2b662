"""Train an RL intervention policy (the same trainer as ``acdb train``).

    python experiments/train_rl.py --help
    python experiments/train_rl.py --level L1 --total-timesteps 80000 --out runs/rl_l1

The trainer itself is :mod:`acdb_gym.agents.rl.train` (a library module, so that the installed
``acdb`` command can run it); read it top to bottom.
"""

from __future__ import annotations

from acdb_gym.agents.rl.train import main
from acdb_gym.core.scripts import run_script

if __name__ == "__main__":
    run_script(main)
