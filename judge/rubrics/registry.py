"""Find rubrics by id (and version) in a directory of YAML files."""

from __future__ import annotations

from pathlib import Path

from judge.domain.rubric import Rubric
from judge.errors import RubricInvalid, RubricNotFound, RubricProblem
from judge.rubrics.loader import load_rubric_file

_PACKAGE_DIR = Path(__file__).resolve().parent.parent


def default_rubrics_dir() -> Path:
    """``rubrics/`` of the source checkout, or the copy bundled into an installed wheel."""
    checkout = _PACKAGE_DIR.parent / "rubrics"
    return checkout if checkout.is_dir() else _PACKAGE_DIR / "_bundled_rubrics"


def rubric_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.glob("*.y*ml") if p.suffix in (".yaml", ".yml"))


class RubricRegistry:
    """The bundled rubrics plus those of an extra directory (``JUDGE_RUBRICS_DIR``), loaded
    once; a rubric there with a bundled id replaces the bundled one. Invalid files raise on
    load, and so do two files of one directory with the same id."""

    def __init__(self, rubrics: list[Rubric]) -> None:
        self._by_id = {rubric.id: rubric for rubric in rubrics}

    @classmethod
    def from_directory(cls, directory: Path | None = None) -> RubricRegistry:
        """The bundled rubrics, and ``directory``'s added to them (or replacing them by id)."""
        by_id = {rubric.id: rubric for rubric in cls._load(default_rubrics_dir())}
        if directory is not None and directory.resolve() != default_rubrics_dir().resolve():
            by_id |= {rubric.id: rubric for rubric in cls._load(directory)}
        return cls(list(by_id.values()))

    @staticmethod
    def _load(directory: Path) -> list[Rubric]:
        """Every rubric file of ``directory``; two with one id are an error naming both."""
        loaded: dict[str, Path] = {}
        rubrics = []
        for path in rubric_files(directory):
            rubric = load_rubric_file(path)
            if rubric.id in loaded:
                problem = RubricProblem(
                    str(path),
                    None,
                    "id",
                    f"rubric id {rubric.id!r} is also used by {loaded[rubric.id]}",
                )
                raise RubricInvalid(str(path), [problem])
            loaded[rubric.id] = path
            rubrics.append(rubric)
        return rubrics

    def ids(self) -> list[str]:
        return sorted(self._by_id)

    def all(self) -> list[Rubric]:
        return [self._by_id[i] for i in self.ids()]

    def get(
        self, rubric_id: str, version: str | None = None, *, field: str | None = None
    ) -> Rubric:
        """The rubric; :class:`RubricNotFound` (about the input ``field``) when unknown."""
        rubric = self._by_id.get(rubric_id)
        if rubric is None or (version is not None and rubric.version != version):
            raise RubricNotFound(rubric_id, version, field=field)
        return rubric
