"""The viewer's session page (issue 31): a judged session's timeline (one row per checkpoint:
the focus speaker's intensity, relation pattern, intervene-now, support target, each with its
flag), the pattern transitions and the supporter's measures."""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from litestar.response import Template

from empathy_judge_client.timeline import timeline
from judge.api.routes._params import JobId
from judge.api.state import api_state
from judge.api.ui.session import viewer


@get("/ui/sessions/{session_id:str}", include_in_schema=False)
async def session_page(request: Request[Any, Any, Any], session_id: JobId) -> Template:
    who = viewer(request, "batch")
    view = await api_state(request).runtime.sessions.view(who, session_id)
    return Template("session.html", context={"view": view, "timeline": "\n".join(timeline(view))})
