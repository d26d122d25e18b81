"""API docs that work offline: Swagger UI served from the installed ``swagger-ui-bundle-v2``
package instead of Litestar's default CDN links, which air-gapped deployments cannot reach."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from litestar.connection import ASGIConnection
from litestar.datastructures import CacheControlHeader
from litestar.handlers.base import BaseRouteHandler
from litestar.openapi.plugins import SwaggerRenderPlugin
from litestar.router import Router
from litestar.static_files import create_static_files_router
from swagger_ui_bundle import swagger_ui_path

from judge.api.problems import ProblemError

#: where the Swagger UI assets are served (below the schema path, public like the docs page)
ASSETS = "/schema/swagger-assets"
#: the bundle's file names; anything else (a NUL the file system refuses) is not looked up
_ASSET_NAME = re.compile(r"^/?[A-Za-z0-9._-]{1,100}$")


def swagger_plugin() -> SwaggerRenderPlugin:
    return SwaggerRenderPlugin(
        path="/swagger",
        js_url=f"{ASSETS}/swagger-ui-bundle.js",
        css_url=f"{ASSETS}/swagger-ui.css",
        standalone_preset_js_url=f"{ASSETS}/swagger-ui-standalone-preset.js",
        favicon=f"<link rel='icon' type='image/png' href='{ASSETS}/favicon-32x32.png'>",
    )


def swagger_assets() -> Router:
    """The bundle's files (JS, CSS, favicons), cached by browsers for a day."""
    return create_static_files_router(
        path=ASSETS,
        directories=[Path(str(swagger_ui_path))],
        include_in_schema=False,
        cache_control=CacheControlHeader(max_age=86_400),
        opt={"public": True},
        guards=[_asset_name],
    )


async def _asset_name(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    name = str(connection.path_params.get("file_path", ""))
    if not _ASSET_NAME.match(name):
        raise ProblemError(404, "no such asset", field="path.file_path")
