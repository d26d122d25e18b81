"""Fast smoke runs of the evidence simulations (the full runs are scripts: evidence/TRUST.md),
so that they keep running and their pieces keep the meaning the note gives them."""

from __future__ import annotations

import numpy as np
import pytest

from evidence import level_minimum, trust_error_rate
from evidence._ordinal_model import ExpertPanelModel, OrdinalModel
from evidence.cluster_coverage import SETTINGS, simulate
from evidence.prevalence_paradox import binary, ordinal
from evidence.weighted_refit import binary_calibration
from judge.reliability import compare_weighted
from judge.reliability._cluster_kappa import ac2_from_counts
from judge.reliability._paired import kappa_from_counts, weight_matrix


def test_cluster_coverage_runs_every_method() -> None:
    model = OrdinalModel(judge_noise=0.8, expert_noise=0.6)
    rows = simulate(SETTINGS[1], model, 0.61, reps=3, resamples=100, seed=1)
    assert set(rows) >= {"robust", "percentile", "bca", "studentized", "jackknife_t"}
    for row in rows.values():
        assert row["runs"] == 3
        assert 0 <= row["coverage"] <= 1
    # the union is never narrower than either of its parts
    assert rows["robust"]["width"] >= rows["jackknife_t"]["width"] - 1e-12
    assert rows["robust"]["width"] >= rows["percentile"]["width"] - 1e-12


def test_trust_simulation_population_and_one_calibration() -> None:
    model = ExpertPanelModel(panel_noise=0.3, expert_noise=0.72)
    population = model.population(50_000)
    assert population["expert_expert"] == pytest.approx(0.58, abs=0.03)
    assert population["panel_median"] > population["panel_single"]
    out = trust_error_rate.one_calibration(np.random.default_rng(1), model, 200, 100, 0)
    assert set(out) == set(trust_error_rate.RULES)
    assert out["robust"] <= (out["jackknife_t"] and out["percentile"])


def test_category_kappa_of_the_level_minimum() -> None:
    # a judge that says L exactly on the L units: kappa 1
    assert level_minimum.category_kappa(5, 50, 1.0, 0.0) == pytest.approx(1.0)
    rows = level_minimum.coverage(5, 50, 0.75, 0.05, reps=5, resamples=50, seed=1)
    assert set(rows) == {"jackknife_t", "percentile", "robust"}


def test_prevalence_paradox_tables() -> None:
    k = 2
    table = binary(0.9).reshape(1, -1)
    assert kappa_from_counts(table, k, weight_matrix(k, None))[0] == pytest.approx(0.59, abs=0.01)
    assert ac2_from_counts(table, k, weight_matrix(k, None))[0] == pytest.approx(0.868, abs=0.01)
    assert ordinal(0.5).sum() == pytest.approx(1.0)


def test_weighted_refit_runs_on_a_tied_binary_calibration() -> None:
    d = binary_calibration(np.random.default_rng(2), 60)
    result = compare_weighted(d, n_resamples=30, repeats=1, seed=0)
    assert 0 < result.p_value <= 1
