"""Test helpers that stand in for GitHub machinery we cannot run offline."""
