"""A parametric model of clustered ordinal ratings: a judge and an expert consensus.

Each item has a latent true value ``z = u_g + e`` (``u_g`` shared by the items of a cluster,
so ``icc`` of the latent variance lies between clusters). The consensus cuts ``z`` plus
expert noise at fixed thresholds into ``levels`` ordered categories, the judge cuts ``z`` plus
its own noise plus a per-cluster bias (``judge_icc`` of the judge's error variance is shared
within a cluster: a judge that misreads a session misreads all its checkpoints). The
population kappa is that of the expected contingency table, computed once on a large sample.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from judge.reliability._paired import kappa_from_counts, weight_matrix

IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class OrdinalModel:
    levels: int = 5
    icc: float = 0.3
    expert_noise: float = 0.45
    judge_noise: float = 0.6
    judge_icc: float = 0.3
    #: latent-scale thresholds (None: equally likely levels under the latent distribution)
    cuts: tuple[float, ...] | None = None

    def thresholds(self) -> NDArray[np.float64]:
        if self.cuts is not None:
            return np.asarray(self.cuts, dtype=np.float64)
        from scipy.special import ndtri

        spread = np.sqrt(1 + self.expert_noise**2)
        return np.asarray(ndtri(np.arange(1, self.levels) / self.levels) * spread)

    def draw(
        self, rng: np.random.Generator, sizes: IntArray
    ) -> tuple[IntArray, IntArray, IntArray]:
        """(judge codes, consensus codes, cluster of each item) for clusters of ``sizes``."""
        g = len(sizes)
        cluster = np.repeat(np.arange(g), sizes)
        n = int(sizes.sum())
        u = rng.normal(0, np.sqrt(self.icc), g)[cluster]
        z = u + rng.normal(0, np.sqrt(1 - self.icc), n)
        bias = rng.normal(0, self.judge_noise * np.sqrt(self.judge_icc), g)[cluster]
        own = rng.normal(0, self.judge_noise * np.sqrt(1 - self.judge_icc), n)
        cuts = self.thresholds()
        expert = np.searchsorted(cuts, z + rng.normal(0, self.expert_noise, n))
        judge = np.searchsorted(cuts, z + bias + own)
        return judge.astype(np.int64), expert.astype(np.int64), cluster

    def population_kappa(self, weights: str | None = "quadratic", n: int = 2_000_000) -> float:
        rng = np.random.default_rng(20240601)
        judge, expert, _ = self.draw(rng, np.full(n // 10, 10))
        k = self.levels
        table = np.bincount(judge * k + expert, minlength=k * k).astype(np.float64)
        return float(kappa_from_counts(table[None, :], k, weight_matrix(k, weights))[0])  # type: ignore[arg-type]


def cluster_sizes(rng: np.random.Generator, clusters: int, low: int, high: int) -> IntArray:
    """Cluster sizes drawn uniformly from low..high (sessions differ in length)."""
    return rng.integers(low, high + 1, size=clusters).astype(np.int64)
