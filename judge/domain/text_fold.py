"""Text as a reader sees it, not as its code points spell it: NFKC (full-width and
compatibility forms), format characters removed (zero-width spaces and joiners, bidi
controls, soft hyphens), Unicode tag characters read as the ASCII they encode, and Cyrillic
and Greek look-alikes folded to Latin. Injection detection matches on this form; participant
ids must be distinct in it (two ids that look alike are one participant to a judge)."""

from __future__ import annotations

import re
import unicodedata

_TAG_BASE = 0xE0000
#: Cyrillic and Greek letters that look like Latin ones ("іgnоrе" written with Cyrillic і, о, е)
LOOKALIKES = str.maketrans(
    "аеорсухіјѕԁһӏАВЕКМНОРСТХІЈЅαβεικνορτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdhlABEKMHOPCTXIJSabeikvoptyxABEZHIKMNOPTYX",
)


def normalise(text: str) -> str:
    """``text`` in NFKC, format characters dropped, tag characters as ASCII, runs of
    whitespace (newlines kept) as one space."""
    out = []
    for char in unicodedata.normalize("NFKC", text):
        code = ord(char)
        if 0xE0020 <= code <= 0xE007E:  # a tag character: the ASCII character it mirrors
            out.append(chr(code - _TAG_BASE))
        elif unicodedata.category(char) != "Cf":
            out.append(char)
    return re.sub(r"[^\S\n]+", " ", "".join(out))


def identity_key(name: str) -> str:
    """What two names must differ in to be told apart: the normalised, look-alike-folded,
    case-folded form."""
    return normalise(name).translate(LOOKALIKES).casefold()
