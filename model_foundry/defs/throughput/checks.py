"""The slot file as a check: the sentence a bad file gets, where a Dagster user looks.

Loading the code location never reads the slot file (the inbox sensors need no slots), so a
bad file shows up here and in the failed runs of the assets that ask the slots.
"""

import dagster as dg

from model_foundry.defs.resources import SlotsResource
from model_foundry.defs.throughput.assets import slot_throughput
from model_foundry.lib.slots.config import SlotFileError, load_slot_file


@dg.asset_check(
    asset=slot_throughput,
    description=(
        "The slot file (MODEL_FOUNDRY_SLOTS) parses and its active profile exists; failing, "
        "it says which file and field are wrong."
    ),
)
def slot_file_is_valid(slots: SlotsResource) -> dg.AssetCheckResult:
    try:
        slot_file = load_slot_file(slots.slot_file)
        live = [s.name for s in slot_file.live_slots(slots.profile)]
        profile = slot_file.resolve_profile(slots.profile)
    except SlotFileError as exc:
        return dg.AssetCheckResult(
            passed=False, description=str(exc), metadata={"slot_file": slots.slot_file}
        )
    return dg.AssetCheckResult(
        passed=True,
        metadata={
            "slot_file": slots.slot_file,
            "profile": profile,
            "live_slots": dg.MetadataValue.json(live),
        },
    )


throughput_checks = [slot_file_is_valid]
