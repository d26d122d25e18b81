"""Where does kappa's prevalence paradox set in (issue 23, part 4)?

Expected tables, no sampling: a judge whose accuracy is the same on every level (so its skill
does not change with the mix of items) rated against a consensus in which one level holds a
share ``p`` of the units. Printed per ``p``: kappa and AC1/AC2 of that judge, and of a judge
that always answers the dominant level (kappa 0 by construction).

- binary: accuracy 0.90 on each level;
- ordinal 1-5 (quadratic weights): the dominant level is 1, the rest spread evenly over 2-5;
  the judge is right with probability 0.70 and one level off otherwise (split between the
  neighbours, all on the one neighbour at the ends).

    uv run --group dev python -m evidence.prevalence_paradox
"""

from __future__ import annotations

import numpy as np

from judge.reliability._cluster_kappa import ac2_from_counts
from judge.reliability._paired import kappa_from_counts, weight_matrix

SHARES = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)


def _both(table: np.ndarray, weights: str | None) -> tuple[float, float]:
    k = table.shape[0]
    w = weight_matrix(k, weights)  # type: ignore[arg-type]
    flat = table.reshape(1, -1)
    return float(kappa_from_counts(flat, k, w)[0]), float(ac2_from_counts(flat, k, w)[0])


def binary(p: float, accuracy: float = 0.9) -> np.ndarray:
    """Rows: judge (dominant, other); columns: consensus."""
    return np.array(
        [[p * accuracy, (1 - p) * (1 - accuracy)], [p * (1 - accuracy), (1 - p) * accuracy]]
    )


def ordinal(p: float, right: float = 0.7) -> np.ndarray:
    consensus = np.r_[p, np.full(4, (1 - p) / 4)]
    table = np.zeros((5, 5))
    for c, mass in enumerate(consensus):
        table[c, c] += mass * right
        neighbours = [x for x in (c - 1, c + 1) if 0 <= x < 5]
        for x in neighbours:
            table[x, c] += mass * (1 - right) / len(neighbours)
    return table


def constant(table: np.ndarray) -> np.ndarray:
    out = np.zeros_like(table)
    out[0, :] = table.sum(axis=0)
    return out


def main() -> None:
    print(f"{'share':>5s}  binary: kappa  AC1  | const AC1   ordinal 1-5: kappa  AC2  | const AC2")
    for p in SHARES:
        bk, ba = _both(binary(p), None)
        _, bc = _both(constant(binary(p)), None)
        ok, oa = _both(ordinal(p), "quadratic")
        _, oc = _both(constant(ordinal(p)), "quadratic")
        print(
            f"{p:5.2f}  {'':8s}{bk:5.3f} {ba:5.3f} | {bc:9.3f}   {'':13s}{ok:5.3f} {oa:5.3f} | "
            f"{oc:9.3f}"
        )


if __name__ == "__main__":
    main()
