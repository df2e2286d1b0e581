"""Shared helpers for the test suites (importable as `support.*`: pyproject's pytest `pythonpath = ["tests"]`).

Test modules import helpers from here and fixtures come from the conftest.py files; no test module imports another.
"""
