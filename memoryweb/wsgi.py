"""WSGI entry point (gunicorn under `manage.py serve`)."""

import io
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")
django_application = get_wsgi_application()


def application(environ, start_response):
    """Django reads a body only up to CONTENT_LENGTH, so a chunked request (no length; the
    server de-chunks it and says so with `wsgi.input_terminated`) would arrive empty.
    Such a body is read here, at most one byte past the API limit, and handed on with
    its length: the API then parses it, or answers payload_too_large."""
    if (
        environ.get("wsgi.input_terminated")
        and not environ.get("CONTENT_LENGTH")
        and "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
    ):
        from django.conf import settings

        body = environ["wsgi.input"].read(settings.API_MAX_BODY_BYTES + 1)
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
    return django_application(environ, start_response)
