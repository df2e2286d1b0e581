"""Data Docs page views that read finrag's templates (python_jobs/validation/gx_views/) before GX's own.

GX's `custom_data_docs/views` plugin directory can only add templates, not replace them (its loader comes after
GX's package templates), so the home's Data Docs site names these views in its config instead
(python_jobs/validation/results.py `_site_config`); GX imports this module when it builds the docs, after GX itself.
Why the four overrides exist is written in each template.
"""

from __future__ import annotations

from pathlib import Path

from great_expectations.render.view import DefaultJinjaIndexPageView, DefaultJinjaPageView
from jinja2 import ChoiceLoader, FileSystemLoader

VIEWS = Path(__file__).with_name("gx_views")


class _OursFirst:
    env: object

    def __init__(self, custom_styles_directory: str | None = None, custom_views_directory: str | None = None):
        super().__init__(custom_styles_directory=custom_styles_directory,  # type: ignore[call-arg]
                         custom_views_directory=custom_views_directory)
        self.env.loader = ChoiceLoader([FileSystemLoader(str(VIEWS)), self.env.loader])  # type: ignore[attr-defined]


class PageView(_OursFirst, DefaultJinjaPageView):
    """Validation result and expectation suite pages."""


class IndexPageView(_OursFirst, DefaultJinjaIndexPageView):
    """The site's index.html."""
