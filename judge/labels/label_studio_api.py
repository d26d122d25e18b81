"""A Label Studio server over its REST API (``Authorization: Token <token>``).

httpx, already the project's HTTP client, rather than ``label-studio-sdk``: a round needs five
endpoints (projects, import, export, users), and the SDK pulls in opencv, pandas, nltk and a
code generator whose pins clash with the project's lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from judge.errors import LabelStudioUnavailable


@dataclass(frozen=True)
class PushedProject:
    id: int
    created: bool
    imported: int
    already_there: int


class LabelStudio:
    """One server and token; use as a context manager."""

    def __init__(self, url: str, token: str, *, timeout_s: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self._http = httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Token {token}"},
            timeout=timeout_s,
        )

    def __enter__(self) -> LabelStudio:
        return self

    def __exit__(self, *_: object) -> None:
        self._http.close()

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise LabelStudioUnavailable(
                f"Label Studio at {self.url} did not answer ({type(exc).__name__})"
            ) from None
        if response.status_code >= 400:
            detail = response.text[:300].strip()
            raise LabelStudioUnavailable(
                f"Label Studio at {self.url} answered {method} {path} with HTTP "
                f"{response.status_code}: {detail}"
            )
        return response.json() if response.content else None

    def find_project(self, title: str) -> int | None:
        found = self._call("GET", "/api/projects/", params={"title": title, "page_size": 1000})
        projects = found.get("results", []) if isinstance(found, dict) else found
        return next((int(p["id"]) for p in projects if p.get("title") == title), None)

    def export(self, project_id: int) -> list[dict[str, Any]]:
        """Every task of the project with its annotations (Label Studio's JSON export)."""
        exported = self._call(
            "GET",
            f"/api/projects/{project_id}/export",
            params={"exportType": "JSON", "download_all_tasks": "true"},
        )
        return list(exported or [])

    def users(self) -> dict[int, str]:
        """User id -> email (the annotator ids a pull reports)."""
        found = self._call("GET", "/api/users/")
        users = found.get("results", []) if isinstance(found, dict) else found
        return {int(u["id"]): str(u.get("email") or u.get("username") or u["id"]) for u in users}

    def push(
        self, title: str, config: str, tasks: Sequence[dict[str, Any]], *, description: str = ""
    ) -> PushedProject:
        """Create the project (or update its config), then import the tasks it does not hold
        yet (matched on ``data.task_id``), so pushing a round twice adds nothing."""
        project_id = self.find_project(title)
        created = project_id is None
        if project_id is None:
            body = {"title": title, "label_config": config, "description": description}
            project_id = int(self._call("POST", "/api/projects/", json=body)["id"])
        else:
            self._call("PATCH", f"/api/projects/{project_id}/", json={"label_config": config})
        present = {str((t.get("data") or {}).get("task_id")) for t in self.export(project_id)}
        new = [t for t in tasks if str(t["data"]["task_id"]) not in present]
        if new:
            self._call("POST", f"/api/projects/{project_id}/import", json=new)
        return PushedProject(project_id, created, len(new), len(tasks) - len(new))
