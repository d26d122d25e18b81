"""OpenAI's Files and Batch APIs, as the simulator speaks them (LiteLLM's ``acreate_file``,
``acreate_batch``, ``aretrieve_batch`` and ``afile_content`` with ``custom_llm_provider=
"openai"`` and ``api_base=<root>/v1``).

Routes: ``POST /v1/files`` (multipart ``file`` + ``purpose``), ``GET /v1/files/{id}``,
``GET /v1/files/{id}/content``, ``POST /v1/batches`` (``input_file_id``, ``endpoint``,
``completion_window``, ``metadata``), ``GET /v1/batches/{id}``, ``POST
/v1/batches/{id}/cancel``, ``GET /v1/batches``.

A batch moves ``validating`` -> ``in_progress`` -> ``finalizing`` -> ``completed`` over
``batch_delay_ms`` (an input that is not JSON Lines of ``{"custom_id", "method", "url",
"body"}`` makes it ``failed`` with ``errors.data[]``, as the API does). Each line is answered
by the same engine as a chat completion (personas' faults included): a line whose call fails
goes to the error file as ``{"id", "custom_id", "response": {"status_code", "request_id",
"body": {"error": ...}}, "error": null}``, a line that answers to the output file with the
completion as ``response.body``. ``request_counts`` counts both.
"""

from __future__ import annotations

import asyncio
import email.parser
import email.policy
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from judge.simulator.formats import OPENAI, SimError
from judge.simulator.state import SimulatorState

CHAT_ENDPOINT = "/v1/chat/completions"


@dataclass
class StoredFile:
    id: str
    filename: str
    purpose: str
    content: bytes
    created_at: int = field(default_factory=lambda: int(time.time()))

    def view(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.content),
            "created_at": self.created_at,
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
            "status_details": None,
        }


def _multipart(content_type: str, body: bytes) -> dict[str, tuple[str | None, bytes]]:
    """The form fields of a ``multipart/form-data`` body: {name: (filename, bytes)}. The
    standard library's MIME parser reads it (no hand-written parser)."""
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.default).parsebytes(head + body)
    if not message.is_multipart():
        raise SimError("invalid_request", "expected a multipart/form-data body")
    fields: dict[str, tuple[str | None, bytes]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if isinstance(name, str) and isinstance(payload, bytes):
            fields[name] = (part.get_filename(), payload)
    return fields


class BatchApi:
    """Files and batches held in memory for one simulator process."""

    def __init__(self, state: SimulatorState) -> None:
        self.state = state
        self.files: dict[str, StoredFile] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    # -- files ------------------------------------------------------------------------------
    def upload(self, content_type: str, body: bytes) -> dict[str, Any]:
        fields = _multipart(content_type, body)
        if "file" not in fields:
            raise SimError("invalid_request", "'file' is required", code="missing_required_param")
        purpose = fields.get("purpose", (None, b""))[1].decode("utf-8", "replace")
        if purpose not in ("batch", "assistants", "fine-tune", "user_data"):
            raise SimError("invalid_request", f"'purpose': unsupported value {purpose!r}")
        name, content = fields["file"]
        stored = StoredFile(f"file-{uuid.uuid4().hex}", name or "upload.jsonl", purpose, content)
        self.files[stored.id] = stored
        return stored.view()

    def file(self, file_id: str) -> StoredFile:
        found = self.files.get(file_id)
        if found is None:
            raise SimError("not_found", f"No such File object: {file_id}", code="not_found")
        return found

    # -- batches ----------------------------------------------------------------------------
    def create(self, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise SimError("invalid_request", "the request body must be a JSON object")
        if body.get("endpoint") != CHAT_ENDPOINT:
            raise SimError(
                "invalid_request", f"'endpoint': the simulator batches {CHAT_ENDPOINT} only"
            )
        if body.get("completion_window") != "24h":
            raise SimError("invalid_request", "'completion_window': only '24h' is supported")
        source = self.file(str(body.get("input_file_id")))
        if source.purpose != "batch":
            raise SimError("invalid_request", "'input_file_id': the file's purpose is not batch")
        now = int(time.time())
        batch: dict[str, Any] = {
            "id": f"batch_{uuid.uuid4().hex}",
            "object": "batch",
            "endpoint": CHAT_ENDPOINT,
            "errors": None,
            "input_file_id": source.id,
            "completion_window": "24h",
            "status": "validating",
            "output_file_id": None,
            "error_file_id": None,
            "created_at": now,
            "in_progress_at": None,
            "expires_at": now + 86_400,
            "finalizing_at": None,
            "completed_at": None,
            "failed_at": None,
            "expired_at": None,
            "cancelling_at": None,
            "cancelled_at": None,
            "request_counts": {"total": 0, "completed": 0, "failed": 0},
            "metadata": body.get("metadata") or None,
        }
        self.batches[batch["id"]] = batch
        task = asyncio.get_running_loop().create_task(self._process(batch, source.content))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return dict(batch)

    def get(self, batch_id: str) -> dict[str, Any]:
        found = self.batches.get(batch_id)
        if found is None:
            raise SimError("not_found", f"No batch found with id '{batch_id}'.", code="not_found")
        return found

    def cancel(self, batch_id: str) -> dict[str, Any]:
        batch = self.get(batch_id)
        if batch["status"] in ("validating", "in_progress"):
            batch["status"] = "cancelling"
            batch["cancelling_at"] = int(time.time())
        return batch

    def listing(self) -> dict[str, Any]:
        data = sorted(self.batches.values(), key=lambda b: -int(b["created_at"]))
        return {"object": "list", "data": data, "has_more": False}

    async def _process(self, batch: dict[str, Any], content: bytes) -> None:
        delay = self.state.options.batch_delay_ms / 1000
        await asyncio.sleep(delay / 3)
        lines, errors = _read_lines(content)
        if errors:
            batch.update(status="failed", failed_at=int(time.time()))
            batch["errors"] = {"object": "list", "data": errors}
            return
        if batch["status"] == "cancelling":
            batch.update(status="cancelled", cancelled_at=int(time.time()))
            return
        counts = batch["request_counts"]
        counts["total"] = len(lines)
        batch.update(status="in_progress", in_progress_at=int(time.time()))
        outcomes = await asyncio.gather(*(self._answer(line, counts) for line in lines))
        await asyncio.sleep(delay / 3)
        batch.update(status="finalizing", finalizing_at=int(time.time()))
        await asyncio.sleep(delay / 3)
        for ok, name in ((True, "output_file_id"), (False, "error_file_id")):
            chosen = [json.dumps(row) for good, row in outcomes if good is ok]
            if chosen:
                text = "".join(f"{row}\n" for row in chosen).encode()
                stored = StoredFile(
                    f"file-{uuid.uuid4().hex}", "batch_output.jsonl", "batch_output", text
                )
                self.files[stored.id] = stored
                batch[name] = stored.id
        if batch["status"] == "cancelling":
            batch.update(status="cancelled", cancelled_at=int(time.time()))
        else:
            batch.update(status="completed", completed_at=int(time.time()))

    async def _answer(self, line: dict[str, Any], counts: dict[str, int]) -> tuple[bool, Any]:
        request_id = f"req_{uuid.uuid4().hex}"
        row: dict[str, Any] = {
            "id": f"batch_req_{uuid.uuid4().hex}",
            "custom_id": line["custom_id"],
        }

        async def never() -> None:
            await asyncio.Event().wait()

        try:
            call = OPENAI.read(line["body"], None)
            body = await self.state.answer(OPENAI, call, never)
        except SimError as exc:
            status, error_body, _ = OPENAI.error(exc)
            counts["failed"] += 1
            row["response"] = {"status_code": status, "request_id": request_id, "body": error_body}
            row["error"] = None
            return False, row
        counts["completed"] += 1
        row["response"] = {"status_code": 200, "request_id": request_id, "body": body}
        row["error"] = None
        return True, row


def _read_lines(content: bytes) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The requests of an input file, or the errors that fail the whole batch."""
    lines: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    seen: set[str] = set()
    for number, raw in enumerate(content.decode("utf-8", "replace").splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except json.JSONDecodeError:
            errors.append(_line_error("invalid_json_line", "This line is not valid JSON.", number))
            continue
        custom_id = line.get("custom_id") if isinstance(line, dict) else None
        if not isinstance(custom_id, str) or not custom_id:
            errors.append(_line_error("missing_custom_id", "custom_id is required.", number))
        elif custom_id in seen:
            errors.append(_line_error("duplicate_custom_id", "custom_id must be unique.", number))
        elif line.get("url") != CHAT_ENDPOINT or line.get("method") != "POST":
            errors.append(_line_error("invalid_url", f"url must be {CHAT_ENDPOINT}.", number))
        else:
            seen.add(custom_id)
            lines.append(line)
    if not lines and not errors:
        errors.append(_line_error("empty_file", "The input file has no requests.", None))
    return lines, errors


def _line_error(code: str, message: str, line: int | None) -> dict[str, Any]:
    return {"code": code, "message": message, "param": None, "line": line}
