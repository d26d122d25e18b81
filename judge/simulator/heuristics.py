"""The ``accurate`` persona without reference labels: a deterministic reading of the text.

Each dimension id is mapped to an *aspect* (emotional reaction, interpretation, exploration,
validation, advice, self-orientation, dismissal, encouragement, fluency, relevance, or overall
empathy) by keywords in the id. Each aspect has a strength in [0, 1] computed from cues in the
judged turn(s): feeling words, the supporter naming their own feelings, named feelings of the
seeker, questions, advice phrases, self-references, dismissive phrases and length. Proscriptive
aspects (advice giving, self-orientation, dismissing emotions, and unknown ids that sound
proscriptive such as ``blaming``) grow with the unwanted behaviour, so they read the opposite
way of the prescriptive ones. The strength is then placed on the requested scale.

This is a plausible stand-in for a model, not a classifier anyone should rely on.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from typing import Any

from judge.simulator.conversation import JudgedView
from judge.simulator.schema import DimSpec

_WORD = re.compile(r"[a-z']+")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


FEELING_WORDS = _words(
    """sad sadness lonely alone hurt hurts hurting pain painful angry anger mad frustrated
    frustrating frustration scared afraid fear anxious anxiety worried worry worries nervous
    overwhelmed overwhelming stressed stress upset disappointed disappointing discouraged
    hopeless helpless grief grieving loss heartbroken devastated exhausted tired drained
    ashamed shame guilty guilt embarrassed jealous rejected abandoned betrayed isolated
    happy glad proud relieved excited grateful hopeful joy love loved miss missing cry crying
    depressed depression hard tough difficult rough awful terrible horrible"""
)

OWN_FEELING = (
    "i'm sorry",
    "i am sorry",
    "so sorry",
    "sorry to hear",
    "sorry for your",
    "sorry that",
    "makes me sad",
    "i feel for you",
    "my heart",
    "breaks my heart",
    "i'm so glad",
    "i'm glad",
    "i'm happy for you",
    "i'm worried about you",
    "i care about",
    "i'm proud of you",
    "that hurts to hear",
)
WARMTH = (
    "hang in there",
    "hugs",
    "i hope",
    "hope things",
    "hope you",
    "will get better",
    "it gets better",
    "you'll get there",
    "take care",
    "sending",
    "you've got this",
    "you got this",
    "stay strong",
    "<3",
    ":)",
    "you're not alone",
    "you are not alone",
    "here for you",
)
NAMING_FEELINGS = (
    "you feel",
    "you're feeling",
    "you are feeling",
    "you must",
    "you might feel",
    "sounds like",
    "that sounds",
    "it sounds",
    "it seems",
    "seems like",
    "must be",
    "must have been",
    "can imagine",
    "i hear you",
    "i hear that",
    "no wonder",
)
GENERIC_UNDERSTANDING = (
    "i understand",
    "i know how you feel",
    "i know how that is",
    "i know what you mean",
    "i know the feeling",
    "i get it",
    "i get that",
    "i've been there",
    "i have been there",
    "same here",
    "me too",
    "happened to me",
    "i went through",
    "i had the same",
    "i felt the same",
    "i can relate",
    "i relate",
    "i can understand",
    "i feel you",
    "been through",
    "i used to",
    "i know that feeling",
    "i know it's",
    "i know its",
)
VALIDATION = (
    "it's okay to",
    "it's ok to",
    "it is okay to",
    "understandable",
    "that's valid",
    "your feelings are valid",
    "makes sense",
    "makes total sense",
    "anyone would",
    "of course you",
    "it's normal to",
    "it is normal to",
    "you have every right",
    "that's completely",
    "it's natural",
    "no shame in",
)
INVITATIONS = (
    "tell me more",
    "want to talk",
    "would you like to",
    "can you share",
    "could you share",
    "what happened",
    "how are you",
    "how do you feel",
    "how did that",
    "what was that like",
    "i'd like to hear",
    "feel free to share",
)
ADVICE = (
    "you should",
    "you shouldn't",
    "you need to",
    "you have to",
    "you could try",
    "you could",
    "try to",
    "try ",
    "have you tried",
    "have you thought about",
    "have you considered",
    "why don't you",
    "maybe you could",
    "i suggest",
    "i recommend",
    "i'd recommend",
    "consider ",
    "make sure",
    "go see",
    "talk to a",
    "see a therapist",
    "take a ",
)
DISMISSING = (
    "don't be",
    "get over",
    "at least",
    "not a big deal",
    "no big deal",
    "cheer up",
    "could be worse",
    "happens for a reason",
    "calm down",
    "stop worrying",
    "bright side",
    "don't worry",
    "it's fine",
    "overreacting",
    "everyone feels",
    "everyone goes through",
    "silver lining",
    "universe has",
    "move on",
    "just relax",
    "it's not that bad",
    "you'll be fine",
    "you will be fine",
    "think positive",
    "stay positive",
    "be positive",
    "will work out",
    "i promise",
    "everyone has",
    "happens to everyone",
    "it's just",
    "it is just",
    "you just need",
    "you have to",
    "need to stop",
)
SELF_WORDS = frozenset({"i", "me", "my", "mine", "myself", "i'm", "i've", "i'd", "i'll"})
YOU_WORDS = frozenset({"you", "your", "yours", "yourself", "you're", "you've", "you'd", "you'll"})
STOP_WORDS = _words(
    """the a an and or but so to of in on at for with it its it's is are was were be been
    this that these those i you he she they we me my your our their them him her not no
    just very really about have has had do does did can could would should will what when
    how why who there here than then too also like get got"""
)

#: Aspects whose strength grows with an unwanted behaviour (higher rating = worse).
PROSCRIPTIVE_ASPECTS = frozenset({"advice", "self_oriented", "dismissing", "unsupportive"})

# (keywords in a dimension id, aspect), first match wins.
_ASPECT_RULES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("dismiss", "invalidat", "minimi", "belittl"), "dismissing"),
    (("advice", "advis", "suggest", "solution", "practical", "fix"), "advice"),
    (
        ("self_orient", "selforient", "self-orient", "self_focus", "self_disclos", "self"),
        "self_oriented",
    ),
    (("explor", "elaborat", "question", "curio", "inquir", "probe"), "exploration"),
    (("interpret", "understand", "understood", "reflect", "seen", "insight"), "interpretation"),
    (("validat", "affirm", "accept", "normali", "acknowledg"), "validation"),
    (("emotion", "react", "warmth", "care", "compassion", "sympath", "comfort"), "reaction"),
    (("motivat", "encourag", "hope", "reassur", "support"), "encouragement"),
    (("fluen", "grammar", "clarity", "clear", "coheren", "readab"), "fluency"),
    (("relevan", "topic", "on_task", "specific"), "relevance"),
    (
        (
            "blam",
            "critic",
            "judgment",
            "judgmental",
            "hostil",
            "contempt",
            "defens",
            "stonewall",
            "lectur",
            "interrupt",
            "sarcas",
            "patroniz",
            "condescend",
            "harm",
            "toxic",
            "unsupport",
        ),
        "unsupportive",
    ),
)


def aspect_of(dim_id: str) -> str:
    """The aspect a dimension id is read as (``empathy`` when nothing more specific fits)."""
    lowered = dim_id.lower()
    for keywords, aspect in _ASPECT_RULES:
        if any(k in lowered for k in keywords):
            return aspect
    return "empathy"


def stable_fraction(*parts: str) -> float:
    """A deterministic number in [0, 1) from strings (the same on every run and machine)."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


_PATTERNS: dict[int, re.Pattern[str]] = {}


def _count(text: str, phrases: tuple[str, ...]) -> int:
    """Non-overlapping occurrences of any of ``phrases`` (longest alternative first)."""
    pattern = _PATTERNS.get(id(phrases))
    if pattern is None:
        ordered = sorted(phrases, key=len, reverse=True)
        pattern = _PATTERNS[id(phrases)] = re.compile("|".join(map(re.escape, ordered)))
    return len(pattern.findall(text))


@dataclass(frozen=True)
class Cues:
    """Counts of the cues found in one judged turn."""

    words: int
    feeling_words: int
    own_feeling: int
    warmth: int
    naming: int
    generic_understanding: int
    validation: int
    questions: int
    specific_questions: int
    invitations: int
    advice: int
    dismissing: int
    self_refs: int
    you_refs: int
    overlap: int

    def describe(self) -> str:
        return (
            f"{self.words} words, {self.feeling_words} feeling words, "
            f"{self.own_feeling} own-feeling phrases, {self.naming} named feelings, "
            f"{self.questions} questions, {self.advice} advice phrases, "
            f"{self.dismissing} dismissive phrases, {self.self_refs} self-references"
        )


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text) if len(w) > 3 and w not in STOP_WORDS}


@functools.lru_cache(maxsize=4096)
def cues_of(text: str, context: str) -> Cues:
    lowered = text.lower().replace("’", "'")
    words = _WORD.findall(lowered)
    context_words = _content_words(context.lower().replace("’", "'"))
    sentences = re.split(r"(?<=[.!?])\s+", lowered)
    questions = [s for s in sentences if s.rstrip().endswith("?")]
    specific = sum(1 for q in questions if _content_words(q) & context_words)
    return Cues(
        words=len(words),
        feeling_words=sum(1 for w in words if w in FEELING_WORDS),
        own_feeling=_count(lowered, OWN_FEELING),
        warmth=_count(lowered, WARMTH),
        naming=_count(lowered, NAMING_FEELINGS),
        generic_understanding=_count(lowered, GENERIC_UNDERSTANDING),
        validation=_count(lowered, VALIDATION),
        questions=len(questions),
        specific_questions=specific,
        invitations=_count(lowered, INVITATIONS),
        advice=_count(lowered, ADVICE),
        dismissing=_count(lowered, DISMISSING),
        self_refs=sum(1 for w in words if w in SELF_WORDS),
        you_refs=sum(1 for w in words if w in YOU_WORDS),
        overlap=len(_content_words(lowered) & context_words),
    )


def _clip(x: float) -> float:
    return max(0.0, min(1.0, x))


def aspect_strength(aspect: str, c: Cues) -> float:
    """How strongly one turn shows an aspect, in [0, 1]."""
    if c.words == 0:
        return 0.0
    if aspect == "reaction":
        if c.own_feeling:
            return 1.0
        return 0.5 if c.warmth or c.feeling_words else 0.0
    if aspect == "interpretation":
        if c.naming and c.feeling_words:
            return 1.0
        if c.naming or c.generic_understanding or (c.self_refs >= 3 and c.feeling_words):
            return 0.5
        return 0.0
    if aspect == "exploration":
        if c.specific_questions:
            return 1.0
        return 0.5 if c.questions or c.invitations else 0.0
    if aspect == "validation":
        return _clip(0.5 * c.validation + 0.3 * c.naming + 0.2 * (c.feeling_words > 0))
    if aspect == "encouragement":
        return _clip(0.35 * c.warmth + 0.2 * c.own_feeling + 0.15 * (c.words > 15))
    if aspect == "advice":
        return _clip(0.45 * c.advice)
    if aspect == "dismissing":
        return _clip(0.45 * c.dismissing - 0.2 * (c.validation + c.naming > 0))
    if aspect == "self_oriented":
        ratio = c.self_refs / max(1, c.self_refs + c.you_refs)
        return _clip((ratio - 0.35) / 0.45) if c.self_refs >= 2 else 0.0
    if aspect == "fluency":
        return _clip(0.75 + 0.25 * min(1.0, c.words / 12))
    if aspect == "relevance":
        return _clip(0.5 + 0.2 * c.overlap)
    empathy = _clip(
        0.28 * aspect_strength("reaction", c)
        + 0.28 * aspect_strength("interpretation", c)
        + 0.22 * aspect_strength("exploration", c)
        + 0.12 * aspect_strength("validation", c)
        + 0.10 * min(1.0, c.words / 40)
        - 0.25 * aspect_strength("dismissing", c)
        - 0.10 * aspect_strength("advice", c)
    )
    return 1.0 - empathy if aspect == "unsupportive" else empathy


def view_strength(aspect: str, view: JudgedView) -> tuple[float, Cues]:
    """Strength over the judged turns: the mean blended with the peak (speaker units judge
    many turns), and the cues of the whole judged text for the rationale."""
    context = view.context_text
    texts = [t for t in view.judged_texts if t.strip()] or [""]
    values = [aspect_strength(aspect, cues_of(t, context)) for t in texts]
    peak = 0.7 if aspect in PROSCRIPTIVE_ASPECTS else 0.5
    strength = (1 - peak) * (sum(values) / len(values)) + peak * max(values)
    return strength, cues_of(" ".join(texts), context)


def place_on_scale(strength: float, spec: DimSpec) -> Any:
    """Put a strength in [0, 1] on an ordinal or binary scale."""
    if spec.kind == "binary":
        return strength >= 0.5
    levels = spec.levels
    index = int(strength * (len(levels) - 1) + 0.5)
    return levels[max(0, min(len(levels) - 1, index))]


def label_scores(spec: DimSpec, view: JudgedView) -> list[tuple[float, str]]:
    """Labels of a nominal or ranked dimension ordered best first, with their scores.

    A label that names an aspect scores that aspect's strength; a label that is a word of the
    text (e.g. a participant id) scores its mentions. A hash of the conversation breaks ties."""
    text = " ".join(view.judged_texts).lower()
    scored = []
    for label in spec.labels:
        aspect = aspect_of(label)
        score = view_strength(aspect, view)[0] if aspect != "empathy" else 0.0
        mentions = len(re.findall(rf"\b{re.escape(label.lower())}\b", text)) if label else 0
        score += 0.5 * mentions + 0.01 * stable_fraction(view.key, spec.id, label)
        scored.append((score, label))
    return sorted(scored, key=lambda pair: (-pair[0], pair[1]))


def free_text(spec: DimSpec, view: JudgedView, persona: str) -> str:
    cues = cues_of(" ".join(view.judged_texts), view.context_text)
    speaker = view.judged[0].role if view.judged else "speaker"
    text = (
        f"[simulated {persona} judge] The {speaker} ({cues.words} words) "
        f"{'names a feeling' if cues.naming or cues.own_feeling else 'names no feeling'}, "
        f"asks {cues.questions} question(s) and gives {cues.advice} piece(s) of advice."
    )
    return text[: spec.max_chars]


def heuristic_rating(
    spec: DimSpec, view: JudgedView, persona: str, proscriptive: bool = False
) -> tuple[Any, str]:
    """A rating on ``spec``'s scale and a rationale naming the cues it rests on.
    ``proscriptive`` (the prompt says so) reads an unrecognised dimension the opposite way."""
    prefix = f"[simulated {persona} judge]"
    if spec.kind in ("ordinal", "binary"):
        aspect = aspect_of(spec.id)
        if proscriptive and aspect not in PROSCRIPTIVE_ASPECTS:
            aspect = "unsupportive"
        strength, cues = view_strength(aspect, view)
        value = place_on_scale(strength, spec)
        direction = (
            " (higher = more of an unwanted behaviour)" if aspect in PROSCRIPTIVE_ASPECTS else ""
        )
        return (
            value,
            f"{prefix} read as {aspect}{direction}: strength {strength:.2f} "
            f"from {cues.describe()}.",
        )
    if spec.kind == "nominal":
        best = label_scores(spec, view)[0][1]
        return best, f"{prefix} '{best}' fits the judged text best by its cues."
    if spec.kind == "ranked":
        top = [label for _, label in label_scores(spec, view)[: spec.k]]
        return top, f"{prefix} ranked by how strongly the judged text shows each label."
    return free_text(spec, view, persona), f"{prefix} short description of the judged text."
