"""Pure domain types and rules: items, rubrics, judgments, results. No I/O."""
