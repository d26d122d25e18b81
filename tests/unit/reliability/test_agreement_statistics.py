"""``judge.reliability`` against reference implementations and published or hand-computed values."""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from collections.abc import Hashable, Sequence

import krippendorff
import numpy as np
import pytest
from statsmodels.stats import inter_rater  # type: ignore[import-untyped]

from judge.reliability import (
    PRF,
    accuracy,
    binary_prf,
    bootstrap_ci,
    cohens_kappa,
    contingency_table,
    fleiss_kappa,
    is_missing,
    kappa_from_table,
    kappa_result,
    krippendorff_alpha,
    median_rater,
    mrr,
    recall_at_1,
    weighted_kappa,
)

NAN = float("nan")


# --------------------------------------------------------------------------- helpers


def kumar_statsmodels(a: Sequence[float], b: Sequence[float], wt: str | None) -> object:
    """Kumar et al.'s notebook recipe, in numpy: x100, round, union table, statsmodels."""
    keep = [(x, y) for x, y in zip(a, b, strict=True) if not is_missing(x) and not is_missing(y)]
    ra = np.round(np.array([x for x, _ in keep]) * 100).astype(np.int64)
    rb = np.round(np.array([y for _, y in keep]) * 100).astype(np.int64)
    values = np.unique(np.concatenate([ra, rb]))
    table = np.zeros((len(values), len(values)))
    for x, y in zip(ra, rb, strict=True):
        table[np.where(values == x)[0][0], np.where(values == y)[0][0]] += 1
    return inter_rater.cohens_kappa(table, wt=wt)


def random_ratings(rng: np.random.Generator, n: int, fractional: bool) -> list[float]:
    if not fractional:
        return [float(v) for v in rng.integers(1, 6, size=n)]
    # crowd means of 2 or 3 integer ratings: 3.5, 2.333..., 4.666...
    return [float(np.mean(rng.integers(1, 6, size=rng.integers(2, 4)))) for _ in range(n)]


def nominal_alpha_by_hand(data: Sequence[Sequence[Hashable]]) -> float:
    """Krippendorff's nominal alpha from the coincidence matrix (Krippendorff 2011, sec. C)."""
    units = list(zip(*data, strict=True))
    coincidences: defaultdict[tuple[Hashable, Hashable], float] = defaultdict(float)
    for unit in units:
        values = [v for v in unit if not is_missing(v)]
        m = len(values)
        if m < 2:
            continue
        for i, c in enumerate(values):
            for j, k in enumerate(values):
                if i != j:
                    coincidences[(c, k)] += 1 / (m - 1)
    n_c: defaultdict[Hashable, float] = defaultdict(float)
    for (c, _), count in coincidences.items():
        n_c[c] += count
    n = sum(n_c.values())
    observed = sum(count for (c, k), count in coincidences.items() if c != k)
    expected = sum(n_c[c] * n_c[k] for c in n_c for k in n_c if c != k) / (n - 1)
    return 1 - observed / expected


# --------------------------------------------------------------------------- missing values


def test_is_missing() -> None:
    assert is_missing(None)
    assert is_missing(NAN)
    assert is_missing(np.float64("nan"))
    assert is_missing(np.float32("nan"))
    assert not is_missing(0)
    assert not is_missing("nan")
    assert not is_missing("")


# --------------------------------------------------------------------------- Cohen's kappa


@pytest.mark.parametrize("wt", ["quadratic", "linear", None])
@pytest.mark.parametrize("fractional", [False, True])
@pytest.mark.parametrize("seed", range(8))
def test_weighted_kappa_matches_statsmodels(wt: str | None, fractional: bool, seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = random_ratings(rng, 40, fractional=False)
    b = random_ratings(rng, 40, fractional=fractional)
    ref = kumar_statsmodels(a, b, wt)
    got = kappa_result(a, b, wt)  # type: ignore[arg-type]
    assert got.n == 40
    assert got.kappa == pytest.approx(ref.kappa, rel=1e-12, abs=1e-12)  # type: ignore[attr-defined]
    assert weighted_kappa(a, b, wt) == got.kappa  # type: ignore[arg-type]
    assert got.std_err == pytest.approx(ref.std_kappa, rel=1e-10)  # type: ignore[attr-defined]
    assert got.std_err_null == pytest.approx(ref.std_kappa0, rel=1e-10)  # type: ignore[attr-defined]
    assert got.z == pytest.approx(ref.z_value, rel=1e-10)  # type: ignore[attr-defined]
    assert got.p_value == pytest.approx(ref.pvalue_two_sided, rel=1e-8, abs=1e-15)  # type: ignore[attr-defined]
    z_wald = ref.kappa / ref.std_kappa  # type: ignore[attr-defined]
    assert got.z_wald == pytest.approx(z_wald, rel=1e-10)
    assert got.p_value_wald == pytest.approx(math.erfc(abs(z_wald) / math.sqrt(2)), rel=1e-12)


@pytest.mark.parametrize("wt", ["quadratic", "linear", None])
def test_weighted_kappa_with_missing_ratings_uses_paired_items_only(wt: str | None) -> None:
    rng = np.random.default_rng(42)
    a: list[float | None] = list(random_ratings(rng, 30, fractional=True))
    b: list[float | None] = list(random_ratings(rng, 30, fractional=False))
    for i in (0, 5, 9):
        a[i] = None
    for i in (5, 12):
        b[i] = NAN
    got = kappa_result(a, b, wt)  # type: ignore[arg-type]
    assert got.n == 26
    ref = kumar_statsmodels(a, b, wt)  # type: ignore[arg-type]
    assert got.kappa == pytest.approx(ref.kappa, rel=1e-12)  # type: ignore[attr-defined]


def test_weights_use_category_index_not_value() -> None:
    # Categories {1, 2, 5}: statsmodels (and so Kumar et al.) put 5 at index 2, one step from 2.
    a = [1, 2, 5, 1, 2]
    b = [2, 5, 5, 1, 1]
    categories, table = contingency_table(a, b)
    assert categories.tolist() == [1.0, 2.0, 5.0]
    assert table.tolist() == [[1, 1, 0], [1, 0, 1], [0, 0, 1]]
    # By hand, index scores 0, 1, 2 and quadratic weights (i - j)^2 / 4: observed weighted
    # disagreement 0.25 * 3 / 5 = 0.15; margins rows (2, 2, 1)/5, columns (2, 1, 2)/5;
    # expected sum w_ij r_i c_j = (0.5 + 4 + 1 + 1 + 2 + 0.25) / 25 = 0.35 -> 1 - 0.15/0.35.
    assert weighted_kappa(a, b) == pytest.approx(1 - 0.15 / 0.35)
    # With value distances (1, 2, 5) it would be 1 - 0.1375 / 0.3675 instead.
    assert weighted_kappa(a, b) != pytest.approx(1 - 0.1375 / 0.3675, abs=1e-3)
    assert weighted_kappa(a, b) == pytest.approx(
        inter_rater.cohens_kappa(table, wt="quadratic").kappa
    )


def test_cohens_kappa_textbook_value() -> None:
    # Wikipedia's worked example: 50 items, yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> 0.4.
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohens_kappa(a, b) == pytest.approx(0.4)
    assert weighted_kappa(
        [1.0 if x == "yes" else 0.0 for x in a], [1.0 if x == "yes" else 0.0 for x in b], None
    ) == pytest.approx(0.4)


def test_cohens_kappa_matches_statsmodels_on_labels() -> None:
    rng = np.random.default_rng(7)
    labels = np.array(["a", "b", "c", "d"])
    a = list(labels[rng.integers(0, 4, 60)])
    b = list(labels[rng.integers(0, 4, 60)])
    table, _ = inter_rater.to_table(np.column_stack([a, b]))
    assert cohens_kappa(a, b) == pytest.approx(inter_rater.cohens_kappa(table).kappa, rel=1e-12)


def test_kappa_is_symmetric() -> None:
    rng = np.random.default_rng(3)
    a = random_ratings(rng, 25, fractional=True)
    b = random_ratings(rng, 25, fractional=False)
    for wt in ("quadratic", "linear", None):
        assert weighted_kappa(a, b, wt) == pytest.approx(weighted_kappa(b, a, wt), abs=1e-12)


def test_kappa_perfect_agreement_is_one() -> None:
    a = [1, 2, 3, 2, 1, 3]
    r = kappa_result(a, list(a))
    assert r.kappa == pytest.approx(1.0)
    assert cohens_kappa(a, a) == pytest.approx(1.0)


def test_kappa_single_category_is_nan_like_statsmodels() -> None:
    a = [3, 3, 3, 3]
    r = kappa_result(a, a)
    assert math.isnan(r.kappa)
    assert r.n == 4
    assert r.n_categories == 1
    assert math.isnan(r.p_value)
    assert math.isnan(cohens_kappa(a, a))
    assert math.isnan(weighted_kappa(a, a, "linear"))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        assert math.isnan(inter_rater.cohens_kappa(np.array([[4.0]]), wt="quadratic").kappa)
        assert math.isnan(inter_rater.cohens_kappa(np.array([[4.0]])).kappa)


def test_kappa_disjoint_constant_raters_is_zero() -> None:
    # Each rater uses one (different) category: no information, kappa 0, no test statistic.
    r = kappa_result([1, 1, 1], [2, 2, 2])
    assert r.kappa == pytest.approx(0.0)
    assert math.isnan(r.z)
    assert math.isnan(r.p_value)


@pytest.mark.parametrize(
    ("a", "b", "n"),
    [([], [], 0), ([1], [2], 1), ([1, None], [2, 3], 1), ([None, NAN], [1, 2], 0)],
)
def test_kappa_fewer_than_two_items_is_nan(
    a: list[float | None], b: list[float | None], n: int
) -> None:
    r = kappa_result(a, b)
    assert math.isnan(r.kappa)
    assert r.n == n
    assert math.isnan(cohens_kappa(a, b))


def test_kappa_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="length"):
        weighted_kappa([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="non-numeric"):
        weighted_kappa([1, "x"], [1, 2])
    with pytest.raises(ValueError, match="weights"):
        kappa_from_table(np.eye(2), "cubic")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="square"):
        kappa_from_table(np.ones((2, 3)))


def test_kappa_rounding_to_hundredths_merges_categories() -> None:
    # 2.333333333 and 2.3333333333333335 (two spellings of 7/3) are the same category, 233.
    a = [2.333333333, 1.0, 3.0, 2.0]
    b = [2.3333333333333335, 1.0, 3.0, 2.0]
    assert kappa_result(a, b).kappa == pytest.approx(1.0)
    assert kappa_result(a, b).n_categories == 4


# --------------------------------------------------------------------------- Fleiss' kappa


def test_fleiss_kappa_wikipedia_example() -> None:
    # Wikipedia "Fleiss' kappa" worked example: 10 subjects, 14 raters, 5 categories -> 0.210.
    counts = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    matrix = [[c for c, k in enumerate(row, start=1) for _ in range(k)] for row in counts]
    assert fleiss_kappa(matrix) == pytest.approx(0.2099, abs=5e-5)
    assert fleiss_kappa(matrix) == pytest.approx(inter_rater.fleiss_kappa(np.array(counts)))


@pytest.mark.parametrize("seed", range(5))
def test_fleiss_kappa_matches_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 4, size=30)
    noise = rng.integers(0, 4, size=(30, 5))
    matrix = np.where(rng.random((30, 5)) < 0.6, truth[:, None], noise)
    table, _ = inter_rater.aggregate_raters(matrix)
    assert fleiss_kappa(matrix.tolist()) == pytest.approx(
        inter_rater.fleiss_kappa(table), rel=1e-12
    )


def test_fleiss_kappa_with_missing_hand_computed() -> None:
    # item 1: a,a -> P=1; item 2: a,b,b -> P=1/3; item 3: b,b -> P=1; item 4: one rating, dropped.
    # P_bar = 7/9; p_a = 3/7, p_b = 4/7, P_e = 25/49; kappa = (7/9 - 25/49) / (24/49) = 118/216.
    matrix: list[list[Hashable]] = [
        ["a", "a", None],
        ["a", "b", "b"],
        ["b", NAN, "b"],
        [None, "a", None],
    ]
    assert fleiss_kappa(matrix) == pytest.approx(118 / 216)


def test_fleiss_kappa_edge_cases() -> None:
    assert fleiss_kappa([[1, 1], [2, 2], [3, 3]]) == pytest.approx(1.0)
    assert math.isnan(fleiss_kappa([[1, 1, 1], [1, 1, 1]]))  # a single category
    assert math.isnan(fleiss_kappa([]))
    assert math.isnan(fleiss_kappa([[1, None], [None, 2]]))  # no item rated twice
    with pytest.raises(ValueError, match="length"):
        fleiss_kappa([[1, 2], [1]])


# --------------------------------------------------------------------------- Krippendorff


# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", example C:
# 4 observers x 12 units with missing values.
KRIPP_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


@pytest.mark.parametrize(
    ("level", "expected"),
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_krippendorff_alpha_textbook_values(level: str, expected: float) -> None:
    got = krippendorff_alpha(KRIPP_2011, level)  # type: ignore[arg-type]
    assert got == pytest.approx(expected, abs=5e-4)


def test_krippendorff_alpha_binary_textbook_value() -> None:
    # Krippendorff (2011), example A: two observers, ten units, binary -> alpha = 0.095.
    a = [0, 1, 0, 0, 0, 0, 0, 0, 1, 0]
    b = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]
    assert krippendorff_alpha([a, b], "nominal") == pytest.approx(0.095, abs=5e-4)
    assert krippendorff_alpha([a, b], "nominal") == pytest.approx(nominal_alpha_by_hand([a, b]))


@pytest.mark.parametrize("seed", range(5))
def test_krippendorff_alpha_with_missing_matches_package_and_hand(seed: int) -> None:
    rng = np.random.default_rng(seed)
    data = rng.integers(1, 6, size=(4, 25)).astype(float)
    data[rng.random((4, 25)) < 0.25] = np.nan
    rows = [[None if np.isnan(v) else float(v) for v in row] for row in data]
    for level in ("nominal", "ordinal", "interval"):
        ref = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert krippendorff_alpha(rows, level) == pytest.approx(ref, rel=1e-12)
    assert krippendorff_alpha(rows, "nominal") == pytest.approx(nominal_alpha_by_hand(rows))


def test_krippendorff_alpha_string_labels() -> None:
    words = {1: "very low", 2: "low", 3: "mid", 4: "high", 5: "very high"}
    data = [[None if v is None else words[v] for v in row] for row in KRIPP_2011]
    assert krippendorff_alpha(data, "nominal") == pytest.approx(0.743, abs=5e-4)
    ordered = list(words.values())
    assert krippendorff_alpha(data, "ordinal", value_domain=ordered) == pytest.approx(
        0.815, abs=5e-4
    )
    with pytest.raises(ValueError, match="value_domain"):
        krippendorff_alpha(data, "ordinal")
    with pytest.raises(ValueError, match="not in value_domain"):
        krippendorff_alpha(data, "ordinal", value_domain=ordered[:3])


def test_krippendorff_alpha_edge_cases() -> None:
    assert krippendorff_alpha([[1, 2, 3], [1, 2, 3]], "interval") == pytest.approx(1.0)
    assert math.isnan(krippendorff_alpha([[2, 2, 2], [2, 2, 2]], "nominal"))  # one value
    # values differ, but no unit has two ratings: nothing is pairable
    assert math.isnan(krippendorff_alpha([[1, None], [None, 2]], "nominal"))
    # the only differing value sits in an unpairable unit
    assert math.isnan(krippendorff_alpha([[2, 2, 5], [2, 2, None]], "interval"))
    assert math.isnan(krippendorff_alpha([], "nominal"))
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha([[1, 2]], "cardinal")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="length"):
        krippendorff_alpha([[1, 2], [1]])


# --------------------------------------------------------------------------- classification


def test_accuracy_hand_computed() -> None:
    assert accuracy(["a", "b", "c", "a"], ["a", "b", "a", "a"]) == pytest.approx(0.75)
    # a missing prediction: dropped by default, a miss with missing="miss"
    assert accuracy(["a", "b", "c"], ["a", None, "c"]) == pytest.approx(1.0)
    assert accuracy(["a", "b", "c"], ["a", None, "c"], missing="miss") == pytest.approx(2 / 3)
    # a missing gold label is always skipped
    assert accuracy([None, "b"], ["a", "b"], missing="miss") == pytest.approx(1.0)
    assert math.isnan(accuracy([], []))


def test_binary_prf_hand_computed() -> None:
    gold = [True, True, True, False, False, False]
    pred = [True, True, False, True, False, False]
    assert binary_prf(gold, pred) == PRF(
        precision=pytest.approx(2 / 3),  # type: ignore[arg-type]
        recall=pytest.approx(2 / 3),  # type: ignore[arg-type]
        f1=pytest.approx(2 / 3),  # type: ignore[arg-type]
        n=6,
    )
    r = binary_prf(["yes", "yes", "no"], ["yes", "no", "no"], positive="yes")
    assert (r.precision, r.recall, r.f1) == pytest.approx((1.0, 0.5, 2 / 3))
    miss = binary_prf(["yes", "yes"], ["yes", None], positive="yes", missing="miss")
    assert (miss.precision, miss.recall, miss.n) == pytest.approx((1.0, 0.5, 2))
    none_predicted = binary_prf(["yes", "no"], ["no", "no"], positive="yes")
    assert (none_predicted.precision, none_predicted.recall, none_predicted.f1) == (0.0, 0.0, 0.0)
    empty = binary_prf([], [])
    assert empty.n == 0
    assert math.isnan(empty.f1)


def test_recall_at_1_and_mrr_hand_computed() -> None:
    gold = ["track", "reframe", "evoke", "join", "repair"]
    ranked: list[object] = [
        ["track", "evoke", "join"],  # rank 1
        ["evoke", "reframe", "track"],  # rank 2
        ["join", "track", "evoke"],  # rank 3
        ["track", "evoke", "reframe", "join"],  # rank 4: outside the top 3
        None,  # missing prediction: a miss
    ]
    assert recall_at_1(gold, ranked) == pytest.approx(1 / 5)
    assert mrr(gold, ranked) == pytest.approx((1 + 1 / 2 + 1 / 3) / 5)
    assert mrr(gold, ranked, k=4) == pytest.approx((1 + 1 / 2 + 1 / 3 + 1 / 4) / 5)
    assert mrr(gold, ranked, k=1) == pytest.approx(recall_at_1(gold, ranked))
    # a bare string is a one-element ranking; an empty list is a miss; no gold is skipped
    assert recall_at_1(["a", "b", None], ["a", [], ["x"]]) == pytest.approx(1 / 2)
    assert math.isnan(mrr([], []))
    with pytest.raises(ValueError, match="k must"):
        mrr(["a"], [["a"]], k=0)


# --------------------------------------------------------------------------- median rater


def test_median_rater() -> None:
    e1 = [1, 2, None, 4, None]
    e2 = [3, 2, 5, NAN, None]
    e3 = [2, 5, 1, 5, None]
    assert median_rater(e1, e2, e3) == [2.0, 2.0, 3.0, 4.5, None]
    with pytest.raises(ValueError, match="at least one"):
        median_rater()
    with pytest.raises(ValueError, match="length"):
        median_rater([1, 2], [1])


# --------------------------------------------------------------------------- bootstrap


def test_bootstrap_ci_is_deterministic_and_contains_the_estimate() -> None:
    rng = np.random.default_rng(11)
    truth = rng.integers(1, 6, size=60)
    a = [float(v) for v in truth]
    b = [float(np.clip(v + rng.integers(-1, 2), 1, 5)) for v in truth]
    point = weighted_kappa(a, b)
    low, high = bootstrap_ci(weighted_kappa, a, b, n_resamples=500, seed=1)
    assert low < point < high
    assert 0 < high - low < 0.5
    assert bootstrap_ci(weighted_kappa, a, b, n_resamples=500, seed=1) == (low, high)
    assert bootstrap_ci(weighted_kappa, a, b, n_resamples=500, seed=2) != (low, high)
    narrow = bootstrap_ci(weighted_kappa, a, b, n_resamples=500, seed=1, confidence=0.5)
    assert low <= narrow[0] <= narrow[1] <= high


def test_bootstrap_ci_is_nan_safe() -> None:
    # Mostly one category: many resamples have kappa NaN; they are left out, not propagated.
    a = [1.0] * 18 + [2.0, 1.0]
    b = [1.0] * 18 + [2.0, 2.0]
    low, high = bootstrap_ci(weighted_kappa, a, b, n_resamples=300)
    assert not math.isnan(low)
    assert low <= high
    assert bootstrap_ci(weighted_kappa, [3.0] * 5, [3.0] * 5) == pytest.approx(
        (NAN, NAN), nan_ok=True
    )
    assert bootstrap_ci(weighted_kappa, [], []) == pytest.approx((NAN, NAN), nan_ok=True)


def test_bootstrap_ci_keeps_pairs_and_missing_values() -> None:
    gold = ["a", "b", "c", "d"] * 5
    ranked: list[object] = [["a"], None, ["x", "c"], ["d"]] * 5
    low, high = bootstrap_ci(mrr, gold, ranked, n_resamples=200)
    assert 0 <= low <= mrr(gold, ranked) <= high <= 1


def test_bootstrap_ci_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="length"):
        bootstrap_ci(accuracy, [1, 2], [1])
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_ci(accuracy, [1], [1], n_resamples=0)
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci(accuracy, [1], [1], confidence=1.0)
