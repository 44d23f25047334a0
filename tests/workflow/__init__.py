"""Tests of mvl.workflow: one module per source module, and the workflow profiles end to end."""
