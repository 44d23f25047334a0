"""Tests of mvl.estimators."""
