"""Per-unit kappa tables: the linearised SE against statsmodels, the jackknife and resamples
against recomputation, AC2 against irrCAC."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from irrCAC.raw import CAC  # type: ignore[import-untyped]

from judge.reliability import kappa_from_table, scale_kappa
from judge.reliability._cluster_kappa import MeanStatistic, cluster_kappa


def _ratings(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 5, n)
    return a, np.clip(a + rng.integers(-1, 2, n), 0, 4)


@pytest.mark.parametrize("weights", ["quadratic", "linear", None])
def test_linearised_se_of_independent_items_is_statsmodels_std_kappa(weights: str | None) -> None:
    a, b = _ratings(1, 80)
    table = np.zeros((5, 5))
    np.add.at(table, (a, b), 1)
    ours = cluster_kappa(a.tolist(), b.tolist(), 5, weights)  # type: ignore[arg-type]
    reference = kappa_from_table(table, weights)  # type: ignore[arg-type]
    assert ours.point() == pytest.approx(reference.kappa, abs=1e-12)
    assert ours.std_err()[0] == pytest.approx(reference.std_err, rel=1e-9)


def test_cluster_se_exceeds_the_naive_one_when_clusters_repeat_items() -> None:
    a, b = _ratings(2, 40)
    naive = cluster_kappa(a.tolist(), b.tolist(), 5, "quadratic").std_err()[0]
    # every item three times in its own cluster: same kappa, three times the items
    a3, b3 = np.repeat(a, 3), np.repeat(b, 3)
    groups = np.repeat(np.arange(40), 3).tolist()
    clustered = cluster_kappa(a3.tolist(), b3.tolist(), 5, "quadratic", groups)
    ignored = cluster_kappa(a3.tolist(), b3.tolist(), 5, "quadratic")
    assert clustered.point() == pytest.approx(ignored.point())
    # the cluster-robust SE sees 40 units, the naive one 120 items
    assert clustered.std_err()[0] == pytest.approx(naive * np.sqrt(40 / 39), rel=1e-9)
    assert ignored.std_err()[0] == pytest.approx(naive / np.sqrt(3), rel=1e-9)


def test_jackknife_and_resamples_equal_recomputed_kappas() -> None:
    a, b = _ratings(3, 30)
    groups = [i // 3 for i in range(30)]
    engine = cluster_kappa(a.tolist(), b.tolist(), 5, "quadratic", groups)
    levels = [0, 1, 2, 3, 4]
    for g, value in enumerate(engine.jackknife()):
        keep = [i for i in range(30) if groups[i] != g]
        assert value == pytest.approx(scale_kappa(a[keep].tolist(), b[keep].tolist(), levels))
    draws = np.zeros((1, 10))
    draws[0, 0] = 2  # unit 0 drawn twice, unit 3 once
    draws[0, 3] = 1
    items = [i for i in range(30) if groups[i] == 0] * 2 + [i for i in range(30) if groups[i] == 3]
    expected = scale_kappa(a[items].tolist(), b[items].tolist(), levels)
    assert engine.resampled(draws)[0] == pytest.approx(expected)


def test_undefined_tables_are_nan() -> None:
    engine = cluster_kappa([0, 0, 0], [0, 0, 0], 3, "quadratic")
    assert np.isnan(engine.point())


@pytest.mark.parametrize(
    ("weights", "irr"), [("quadratic", "quadratic"), ("linear", "linear"), (None, "identity")]
)
def test_ac2_equals_irrcac_to_its_rounding(weights: str | None, irr: str) -> None:
    for seed in range(5):
        a, b = _ratings(10 + seed, 45)
        engine = cluster_kappa(a.tolist(), b.tolist(), 5, weights, coefficient="ac2")  # type: ignore[arg-type]
        frame = pd.DataFrame({"a": a + 1, "b": b + 1})
        reference = CAC(frame, weights=irr, categories=[1, 2, 3, 4, 5]).gwet()["est"]
        assert engine.point() == pytest.approx(reference["coefficient_value"], abs=5e-6)


def test_mean_statistic_averages_parts_and_needs_equal_units() -> None:
    a, b = _ratings(4, 20)
    c = np.clip(b + 1, 0, 4)
    first = cluster_kappa(a.tolist(), b.tolist(), 5, "quadratic")
    second = cluster_kappa(a.tolist(), c.tolist(), 5, "quadratic")
    mean = MeanStatistic((first, second))
    assert mean.point() == pytest.approx((first.point() + second.point()) / 2)
    assert np.allclose(mean.jackknife(), (first.jackknife() + second.jackknife()) / 2)
    with pytest.raises(ValueError, match="same units"):
        MeanStatistic((first, cluster_kappa(a[:10].tolist(), b[:10].tolist(), 5, "quadratic")))
