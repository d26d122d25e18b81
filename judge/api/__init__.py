"""The HTTP API (Litestar): the only package that imports litestar."""
