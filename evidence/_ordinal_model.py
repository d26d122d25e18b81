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


#: pooled share of each level of the 1-5 expert ratings in Kumar et al.'s Lend an Ear release
#: (3 experts x 6 dimensions x 50 conversations): 0.477, 0.259, 0.157, 0.072, 0.036
LEND_AN_EAR_SHARES = (0.477, 0.259, 0.157, 0.072, 0.036)


@dataclass(frozen=True)
class ExpertPanelModel:
    """Several experts and a panel rating the same independent items on one ordinal scale.

    Latent ``z ~ N(0, 1)``; expert j says ``cut(z + N(0, expert_noise))``, the panel
    ``cut(z + N(0, panel_noise))``; the cut points give the experts' marginal ``shares``.
    """

    panel_noise: float
    expert_noise: float = 0.75
    experts: int = 3
    shares: tuple[float, ...] = LEND_AN_EAR_SHARES

    def cuts(self) -> NDArray[np.float64]:
        from scipy.special import ndtri

        spread = np.sqrt(1 + self.expert_noise**2)
        return np.asarray(ndtri(np.cumsum(self.shares)[:-1]) * spread, dtype=np.float64)

    def draw(self, rng: np.random.Generator, n: int) -> tuple[IntArray, IntArray]:
        """(panel codes of n items, experts x n codes)."""
        z = rng.normal(0, 1, n)
        cuts = self.cuts()
        experts = np.searchsorted(cuts, z + rng.normal(0, self.expert_noise, (self.experts, n)))
        panel = np.searchsorted(cuts, z + rng.normal(0, self.panel_noise, n))
        return panel.astype(np.int64), experts.astype(np.int64)

    def population(self, n: int = 1_000_000) -> dict[str, float]:
        """Population quadratic kappas: panel vs one expert, expert vs expert, panel vs the
        median of the experts."""
        rng = np.random.default_rng(7)
        panel, experts = self.draw(rng, n)
        k = len(self.shares)
        w = weight_matrix(k, "quadratic")

        def kappa(a: IntArray, b: IntArray) -> float:
            table = np.bincount(a * k + b, minlength=k * k).astype(np.float64)
            return float(kappa_from_counts(table[None, :], k, w)[0])

        median = np.median(experts, axis=0)
        return {
            "panel_single": kappa(panel, experts[0]),
            "expert_expert": kappa(experts[0], experts[1]),
            "panel_median": kappa(panel, np.round(median).astype(np.int64)),
        }


def panel_noise_for(kappa: float, expert_noise: float = 0.75, tolerance: float = 0.002) -> float:
    """The panel noise whose population kappa against a single expert is ``kappa``."""
    low, high = 0.0, 5.0
    while high - low > 1e-3:
        mid = (low + high) / 2
        value = ExpertPanelModel(mid, expert_noise).population(200_000)["panel_single"]
        if abs(value - kappa) < tolerance:
            return mid
        low, high = (mid, high) if value > kappa else (low, mid)
    return (low + high) / 2
