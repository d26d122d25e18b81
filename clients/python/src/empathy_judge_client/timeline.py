"""A judged session as a text timeline (at most 80 columns): one row per checkpoint with the
focus speaker's intensity, the relation pattern, intervene-now and the support target, then the
pattern transitions and the supporter's measures. ``?`` marks a caution, ``!`` an untrusted
judgment; simulated judges are said so in the heading."""

from __future__ import annotations

from empathy_judge_client.session_view import Level, Measure, SessionView

__all__ = ["WIDTH", "timeline"]

WIDTH = 80
_MARK: dict[Level, str] = {"trusted": " ", "caution": "?", "untrusted": "!"}


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "~"


def _bar(value: float | None) -> str:
    if value is None:
        return "-" * 10
    filled = max(0, min(10, round(value)))
    return "#" * filled + "." * (10 - filled)


def _yes(value: bool | None) -> str:
    return "-" if value is None else ("yes" if value else "no")


def _value(m: Measure) -> str:
    if m.value is None:
        return "n/a"
    return (
        f"{m.value:.2f}"
        if isinstance(m.value, float) and m.unit.startswith("share")
        else (f"{m.value:g}")
    )


def _measure_rows(title: str, measures: dict[str, Measure]) -> list[str]:
    rows = []
    for name, m in measures.items():
        why = ",".join(m.flag.reasons)
        head = f"  {title:6} {name:30} {_value(m):>6} {m.flag.level:9} "
        rows.append(_cut(head + why, WIDTH))
    return rows


def timeline(view: SessionView) -> list[str]:
    """The session's timeline, line by line."""
    lines = ["SIMULATED JUDGES (the LLM simulator, not real models)"] if view.simulated else []
    lines += [
        _cut(f"session {view.id}  {view.rubric.id}  panel {view.panel_name}", WIDTH),
        _cut(
            f"{view.status}: {view.completed}/{view.total} jobs done, {view.failed} failed; "
            f"supporter {view.supporter}",
            WIDTH,
        ),
        f"{'turn':>4} {'speaker':12} {'intensity':12} {'pattern':27} {'now':5} target",
    ]
    for c in view.checkpoints:
        if c.status != "completed":
            lines.append(f"{c.index:>4} {_cut(c.speaker, 12):12} ({c.status})")
            continue
        dims = c.dimensions
        inten, pat = dims.get("focus_intensity"), dims.get("relation_pattern")
        now, tgt = dims.get("intervene_now"), dims.get("support_target")
        value = inten.score if inten is not None and isinstance(inten.score, int | float) else None
        target = (
            tgt.score[0] if tgt is not None and isinstance(tgt.score, list) and tgt.score else None
        )
        row = (
            f"{c.index:>4} {_cut(c.speaker, 12):12} "
            f"{_bar(value)}{_MARK[inten.level] if inten else ' '} "
            f"{_cut(str(pat.score if pat and pat.score else '-'), 25):25}"
            f"{_MARK[pat.level] if pat else ' '} "
            f"{_yes(now.score if now and isinstance(now.score, bool) else None):3}"
            f"{_MARK[now.level] if now else ' '} "
            f"{_cut(str(target or '-'), 14)}{_MARK[tgt.level] if tgt else ''}"
        )
        lines.append(_cut(row.rstrip(), WIDTH))
    if view.trajectory.transitions:
        lines.append("transitions:")
        lines += [
            _cut(f"  turn {t.at:>4}  {t.source} -> {t.target}", WIDTH)
            for t in view.trajectory.transitions
        ]
    if view.measures is not None:
        m = view.measures
        lines.append(_cut(f"supporter {m.supporter}; most distressed: {m.most_distressed}", WIDTH))
        lines += _measure_rows("barrel", m.barrel)
        lines += _measure_rows("ripple", m.ripple)
        lines += _measure_rows("timing", m.timing)
    return lines
