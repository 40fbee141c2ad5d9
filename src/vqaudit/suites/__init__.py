"""Benchmark builders, one subpackage per source."""
