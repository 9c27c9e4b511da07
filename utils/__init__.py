"""Helpers the lessons import: widgets and small display helpers."""
