"""FinRAG Warehouse's jobs (CONTRIBUTING.md "Where things live").

Importing the package registers the lake's landing validator (python_jobs/validation/__init__.py says why it is
wired here): any `python_jobs` import runs this first, so every `Lake` validates what it lands.
"""

import python_jobs.validation  # noqa: F401 - registers Great Expectations as core.validator's Validator
