"""Tests of mvl.data: one module per source module."""
