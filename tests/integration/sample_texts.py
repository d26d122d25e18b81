"""Short seeker posts and replies that the integration tests score (written for the tests)."""

from __future__ import annotations

POSTS = (
    "I moved for a new job three months ago and I still eat dinner alone every night.",
    "Failed my driving test for the second time today.",
    "I can't sleep since my dad got sick.",
    "My cat died this morning and the house feels empty.",
    "I got passed over for the promotion I worked so hard for.",
)
RESPONSES = (
    "I'm so sorry, that sounds really lonely. Is eating dinner alone the hardest part?",
    "Just book it again, lots of people need three tries.",
    "That must be frightening. How is your dad doing today?",
    "Hang in there.",
    "That must be so frustrating after all that effort. What did your manager say?",
)
