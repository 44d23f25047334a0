"""Tests of mvl.solvers."""
