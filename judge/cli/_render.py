"""Readable tables of score results, at 80 columns as on a wide terminal: long names and
reason codes wrap (folded where they have no space) and are never cut, and a legend explains
the agreement notation.

Everything that comes from an item or a judge (ids, ratings, free text, model names) is
escaped: rich would otherwise read ``[...]`` in it as markup, hide it, or fail on a stray
closing tag."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from judge.cli._guarantee_render import print_guarantee_notes, score_cell_lines
from judge.domain.result import DimensionResult, ScoreResult, Usage

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


#: printed once after the tables: what the agreement and kappa notation means
LEGEND = (
    "agreement: 3/2q = 3 judges answered, the quorum is 2; spread = highest - lowest rating; "
    "modal = share of the most given label; top1 = share naming the same first choice; "
    "tie: an even panel split (an ordinal score between the two middle ratings is their "
    "midpoint, which no judge gave). "
    "κ: agreement with experts (quadratic-weighted kappa, or the dimension's metric): experts κ "
    "between the experts, judges κ the judges' with them; ? = not measured or published. "
    "The last line of a flag is where it comes from (rubric-prior: the rubric's published "
    "figures; calibration:ID: a stored calibration run)."
)


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
        if a.tie:  # an even panel split: the median is a midpoint no judge gave
            text += f" tie {' | '.join(map(str, a.tied_labels or []))}"
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
        # fold: a word wider than its column (a dimension id, a reason code) is broken across
        # lines instead of cut with an ellipsis
        table.add_column(column, overflow="fold")
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
    console.print(escape(summary_line(result.summary)))
    if result.input_flags:
        console.print(f"[yellow]input flags: {', '.join(result.input_flags)}[/yellow]")
    console.print(f"usage: {usage_text(result.usage)}, {result.timings_ms['total']:.0f} ms\n")


def usage_text(u: Usage) -> str:
    """LLM calls, tokens (the provider's prompt-cache reads and writes when there were any)
    and cost."""
    cache = [f"{u.cached_prompt_tokens} cached"] if u.cached_prompt_tokens else []
    cache += [f"{u.cache_write_tokens} cache-written"] if u.cache_write_tokens else []
    cached = f" ({', '.join(cache)})" if cache else ""
    return (
        f"{u.llm_calls} LLM calls, {u.prompt_tokens} prompt{cached} + {u.completion_tokens} "
        f"completion tokens, ${u.cost_usd:.6f}"
    )


def summary_line(summary: dict[str, Any]) -> str:
    """``summary.score`` named for what it is: the mean of the ordinal dimensions rescaled to
    0-1 (proscriptive ones reversed), which for a rubric such as RESCUE's is a description of
    the conversation (the client's emotional intensity), not a quality score."""
    used = summary["dimensions"]
    excluded = ", ".join(summary["excluded_untrusted"]) or "none"
    if summary["score"] is None:
        return f"summary: no ordinal dimension to average (untrusted excluded: {excluded})"
    what = f"{used[0]} rescaled" if len(used) == 1 else f"mean of {', '.join(used)} rescaled"
    return f"summary {summary['score']:.2f} on 0-1 = {what} (untrusted excluded: {excluded})"


def print_legend(console: Console) -> None:
    console.print(f"[dim]{escape(LEGEND)}[/dim]")
