"""Dagster's automation sensor, on for ``wiki_index``: what rebuilds the index after a run that
materialized ``wiki_pages`` alone (a materialization or backfill from the UI)."""

import dagster as dg

from wiki_assets.defs.names import AUTOMATION_SENSOR


def build_automation_sensor(
    wiki_index: dg.AssetsDefinition,
) -> dg.AutomationConditionSensorDefinition:
    """On by default (Dagster ships it off): a UI materialization or backfill of ``wiki_pages``
    alone then leaves ``wiki_index`` rebuilt by the daemon (its condition: eager), with no further
    action."""
    return dg.AutomationConditionSensorDefinition(
        AUTOMATION_SENSOR,
        target=dg.AssetSelection.assets(wiki_index),
        default_status=dg.DefaultSensorStatus.RUNNING,
        minimum_interval_seconds=30,
    )
