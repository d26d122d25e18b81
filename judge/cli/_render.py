"""Readable tables of score results.

Everything that comes from an item or a judge (ids, ratings, free text, model names) is
escaped: rich would otherwise read ``[...]`` in it as markup, hide it, or fail on a stray
closing tag."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from judge.cli._guarantee_render import print_guarantee_notes, score_cell_lines
from judge.domain.result import DimensionResult, ScoreResult

_LEVEL_STYLE = {"trusted": "green", "caution": "yellow", "untrusted": "red"}


def _plain(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return " > ".join(map(str, value))
    if isinstance(value, str) and len(value) > 60:
        return value[:57] + "..."
    return str(value)


def _value(value: Any) -> str:
    return escape(_plain(value))


def _judges(dim: DimensionResult) -> str:
    parts = []
    for j in dim.judges:
        name = escape(j.model.split("/")[-1])
        parts.append(
            f"{name}: {_value(j.rating)}"
            if j.status == "ok"
            else f"{name}: abstained ({escape(str(j.reason))})"
        )
    return "\n".join(parts)


def _agreement(dim: DimensionResult) -> str:
    a = dim.agreement
    text = f"{a.valid}/{a.quorum}q"
    if a.spread is not None:
        text += f" spread {a.spread:g}"
    if a.modal_share is not None:
        text += f" modal {a.modal_share:.2f}" + (" tie" if a.tie else "")
    if a.top1_agreement is not None:
        text += f" top1 {a.top1_agreement:.2f}"
    if dim.aggregation is not None and dim.aggregation.method == "weighted":
        text += f"\nweighted (equal: {dim.aggregation.equal_score})"
    return text


def result_table(result: ScoreResult, title: str | None = None) -> Table:
    table = Table(title=title, title_justify="left", show_lines=True)
    for column in ("dimension", "score", "judges", "agreement", "reliability"):
        table.add_column(column)
    for dim_id, dim in result.dimensions.items():
        flag = dim.reliability
        style = _LEVEL_STYLE[flag.level]
        kappas = f"experts κ {flag.expert_kappa if flag.expert_kappa is not None else '?'}"
        kappas += f", judges κ {flag.judge_kappa if flag.judge_kappa is not None else '?'}"
        name = escape(dim_id) + (" (↓ better)" if dim.polarity == "proscriptive" else "")
        table.add_row(
            name,
            "\n".join([_value(dim.score), *score_cell_lines(dim)]),
            _judges(dim),
            _agreement(dim),
            "\n".join(
                [
                    f"[{style}]{flag.level}[/{style}]",
                    escape(", ".join(flag.reasons)) or "-",
                    kappas,
                    escape(flag.source),
                ]
            ),
        )
    return table


def print_result(console: Console, result: ScoreResult, label: str) -> None:
    # The heading is printed on its own line, not as the table's title: a title wraps at the
    # table's width and would split the simulated-judges label of a narrow table.
    sim = "[bold magenta]\\[SIMULATED JUDGES][/bold magenta] " if result.simulated else ""
    rubric = escape(f"{result.rubric['id']} v{result.rubric['version']}")
    console.print(
        f"{sim}[bold]{escape(label)}[/bold]: rubric {rubric}, panel {escape(result.panel_name)}"
    )
    console.print(result_table(result))
    print_guarantee_notes(console, result)
    summary = result.summary
    used = ", ".join(summary["dimensions"]) or "none"
    score = "-" if summary["score"] is None else f"{summary['score']:.2f}"
    console.print(
        f"overall {score} on 0-1 (from {used}; untrusted excluded: "
        f"{', '.join(summary['excluded_untrusted']) or 'none'})"
    )
    if result.input_flags:
        console.print(f"[yellow]input flags: {', '.join(result.input_flags)}[/yellow]")
    u = result.usage
    console.print(
        f"usage: {u.llm_calls} LLM calls, {u.prompt_tokens} prompt + {u.completion_tokens} "
        f"completion tokens, ${u.cost_usd:.6f}, {result.timings_ms['total']:.0f} ms\n"
    )
