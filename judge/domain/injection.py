"""Spot conversation text that tries to instruct the judge (prompt injection).

Detection only flags the result (``input_contains_instructions``); the prompt already treats
the conversation as data. Patterns aim at instructions addressed to a rater or model, not at
ordinary imperatives between people ("ignore him", "give me a minute").

Everything a judge reads is scanned: turn text, participant ids and roles. Before matching,
text is normalised so that invisible or look-alike characters cannot split a keyword:
NFKC (full-width and compatibility forms), format characters removed (zero-width spaces and
joiners, bidi controls, soft hyphens), Unicode tag characters read as the ASCII they encode
("ASCII smuggling"), Cyrillic and Greek look-alikes folded to Latin, ``_ . -`` in names read as
spaces. Patterns cover English and the languages most common in support conversations:
Spanish, Portuguese, French, German, Italian, Russian, Chinese, Japanese and Korean.
"""

from __future__ import annotations

import re

from judge.domain.item import Item
from judge.domain.text_fold import LOOKALIKES, normalise

_ENGLISH = [
    r"\bignore (?:all |the |any |your |previous |prior |above |earlier |these |those )*"
    r"(?:instructions?|rubric|rules|prompt|guidelines|criteria)\b",
    r"\bdisregard (?:all |the |any |your |previous |prior |above )*"
    r"(?:instructions?|rubric|rules|prompt|guidelines)\b",
    r"\bforget (?:all |the |any |your |previous |prior |above )*(?:instructions|rubric)\b",
    r"\b(?:give|rate|score|assign)\b[^.\n]{0,40}\b(?:every|all|each)\b[^.\n]{0,20}"
    r"\b(?:dimensions?|criteria|categories)\b",
    r"\b(?:give|rate|score|assign)\b[^.\n]{0,30}\b(?:maximum|highest|perfect) "
    r"(?:scores?|ratings?)\b",
    r"\b(?:system prompt|as an ai language model|new instructions?)\b",
    r"\byou are now (?:a |an |the )?(?:\w+ )?(?:ai|assistant|model|rater|judge|grader|evaluator)\b",
    r"\b(?:rate|score) (?:this|me|it) (?:a |an )?\d+\b",
    r"</?\s*(?:conversation|system|instructions?)\s*>",
]
#: "ignore/forget ... instructions" and "give the maximum score" in other languages; words for
#: "rules" or "requirements" are left out on purpose: people say them to each other.
_OTHER_LANGUAGES = [
    # Spanish
    r"\b(?:ignora|ignore|ignorar|ignorad|olvida|olvidar)\b[^.\n]{0,30}"
    r"\b(?:instrucciones|rúbrica)\b",
    r"\b(?:puntuación|nota|calificación|puntaje) máxima\b",
    r"\b(?:nuevas instrucciones|prompt del sistema)\b",
    # Portuguese
    r"\b(?:ignore|ignora|ignorar|esqueça|esqueca)\b[^.\n]{0,30}"
    r"\b(?:instruções|instrucoes|rubrica)\b",
    r"\b(?:nota|pontuação) máxima\b",
    r"\b(?:novas instruções|prompt do sistema)\b",
    # French
    r"\b(?:ignore|ignorez|ignorer|oublie|oubliez)\b[^.\n]{0,30}"
    r"\b(?:instructions|consignes|grille d'évaluation)\b",
    r"\b(?:note|notation) maximale\b",
    r"\b(?:nouvelles instructions|invite système|prompt système)\b",
    # German
    r"\b(?:ignorier\w*|vergiss|vergessen sie)\b[^.\n]{0,30}"
    r"\b(?:anweisungen|instruktionen|bewertungskriterien)\b",
    r"\b(?:höchstnote|bestnote|höchste (?:punktzahl|bewertung))\b",
    r"\b(?:neue anweisungen|systemprompt|system-prompt)\b",
    # Italian
    r"\b(?:ignora|ignorare|ignorate|dimentica)\b[^.\n]{0,30}\b(?:istruzioni)\b",
    r"\b(?:punteggio|voto) massimo\b",
    r"\b(?:nuove istruzioni|prompt di sistema)\b",
    # Russian
    r"(?:игнорир\w*|забудь\w*|не обращай внимания)[^.\n]{0,30}(?:инструкци|указани)\w*",
    r"(?:максимальн|высш)\w* (?:балл|оценк)\w*",
    r"(?:новые инструкции|системн\w* промпт)",
    # Chinese
    r"(?:忽略|无视|忽视|無視|不要理会)[^。\n]{0,12}(?:指令|指示|提示词|評分標準|评分标准)",
    r"(?:给|打|评|評|給)[^。\n]{0,10}(?:满分|滿分|最高分)",
    r"(?:系统提示|系統提示|新的指令|新指令)",
    # Japanese
    r"(?:指示|命令|指令|プロンプト)[^。\n]{0,10}無視",
    r"(?:満点|最高点|最高評価)[^。\n]{0,6}(?:つけ|付け|与え|にして)",
    r"システムプロンプト",
    # Korean
    r"(?:지시|지침|명령)\w*\s*(?:을|를)?\s*(?:모두\s*)?무시",
    r"(?:만점|최고\s*점수)\w*\s*(?:을|를)?\s*(?:줘|주세요|줄|매겨)",
    r"시스템\s*프롬프트",
]
_DETECTOR = re.compile(
    "|".join(f"(?:{p})" for p in _ENGLISH + _OTHER_LANGUAGES), re.IGNORECASE | re.UNICODE
)

_NAME_SEPARATORS = re.compile(r"[_.\-]+")


def _variants(text: str) -> tuple[str, ...]:
    plain = normalise(text)
    folded = plain.translate(LOOKALIKES)
    return (plain,) if folded == plain else (plain, folded)


def text_contains_instructions(text: str) -> bool:
    return any(_DETECTOR.search(variant) for variant in _variants(text))


def contains_instructions(item: Item) -> bool:
    names = [p.id for p in item.participants] + [p.role for p in item.participants]
    spoken = [_NAME_SEPARATORS.sub(" ", name) for name in names]
    return any(text_contains_instructions(t) for t in [*spoken, *(t.text for t in item.turns)])
