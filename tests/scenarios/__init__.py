"""Scripted submissions, one module per assignment, for the end-to-end grading test."""
