"""Loaded with -p before Django starts: the suite never touches a developer's ./var."""

import os
import tempfile

os.environ.setdefault("MEMORYWEB_DATA_DIR", tempfile.mkdtemp(prefix="memoryweb-test-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")
