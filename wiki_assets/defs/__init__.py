"""The Dagster layer: a thin adapter exposing the engine as assets, resources and a schedule."""
