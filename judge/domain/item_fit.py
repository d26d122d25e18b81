"""Does an item fit a rubric's setting and unit? (dyadic vs couple vs family; judged turn.)"""

from __future__ import annotations

from judge.domain.item import SUPPORTER_ROLES, Item
from judge.domain.rubric import Rubric
from judge.errors import ItemInvalid

_SUPPORTERS = ", ".join(sorted(SUPPORTER_ROLES))


def check_item_fits(item: Item, rubric: Rubric) -> None:
    """Raise :class:`ItemInvalid` naming the field when ``item`` cannot be judged by ``rubric``."""
    clients = item.clients
    supporters = item.supporters
    setting = rubric.setting
    if setting == "dyadic" and (len(clients) != 1 or len(supporters) != 1):
        raise ItemInvalid(
            "participants",
            f"rubric {rubric.id!r} judges dyadic conversations: exactly one seeker and one "
            f"supporter (roles: {_SUPPORTERS}); got {len(clients)} seeker-side and "
            f"{len(supporters)} supporter-side participants",
        )
    if setting == "couple" and len(clients) != 2:
        raise ItemInvalid(
            "participants",
            f"rubric {rubric.id!r} judges couple sessions: exactly two partners plus the "
            f"therapist; got {len(clients)} non-therapist participants",
        )
    if setting in ("family", "multi_party") and len(clients) < 2:
        raise ItemInvalid(
            "participants",
            f"rubric {rubric.id!r} judges {setting.replace('_', '-')} sessions: at least two "
            f"members besides the therapist; got {len(clients)}",
        )
    if rubric.unit == "response":
        focus = item.turns[item.focus_index]
        if not item.participant(focus.speaker).is_supporter:
            raise ItemInvalid(
                "focus",
                f"rubric {rubric.id!r} judges a supporter's reply, but turn {item.focus_index} "
                f"is by {focus.speaker!r}; point focus at a supporter or therapist turn",
            )
    if rubric.unit == "speaker":
        ids = {p.id for p in supporters}
        if not any(t.speaker in ids and t.text.strip() for t in item.turns):
            raise ItemInvalid("turns", f"rubric {rubric.id!r} needs at least one supporter turn")
