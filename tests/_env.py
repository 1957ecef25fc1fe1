"""Loaded with -p before Django starts: the suite never touches a developer's ./var."""

import os
import tempfile

os.environ.setdefault("MEMORYWEB_DATA_DIR", tempfile.mkdtemp(prefix="memoryweb-test-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")
# One build of the embedding model (`make embeddings`) serves every test run.
os.environ.setdefault(
    "MEMORYWEB_EMBED_MODEL_DIR", os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "var", "models")
)
