"""Use cases shared by every edge (CLI, API, worker): scoring, panels, rubrics."""
