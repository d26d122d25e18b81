"""The rubric library: YAML files under ``rubrics/`` loaded into validated rubrics."""

from __future__ import annotations

from judge.rubrics.loader import load_rubric_file, parse_rubric
from judge.rubrics.registry import RubricRegistry, default_rubrics_dir

__all__ = ["RubricRegistry", "default_rubrics_dir", "load_rubric_file", "parse_rubric"]
