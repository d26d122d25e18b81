"""Celery workers: the only package that imports celery."""
