"""Run inside a datasets 3.6 / 5.x environment: load an export folder as its card says.

Prints one JSON object: the card's parsed header, and for every config and split the rows
``load_dataset(<folder>, <config>)`` gives. Imports nothing from model-foundry.
"""

import json
import sys

from datasets import load_dataset
from huggingface_hub import DatasetCard

folder = sys.argv[1]
card = DatasetCard.load(f"{folder}/README.md")
header = card.data.to_dict()
loaded = {}
for config in header["configs"]:
    name = config["config_name"]
    ds = load_dataset(folder, name)
    loaded[name] = {split: [dict(r) for r in ds[split]] for split in ds}
print(json.dumps({"header": header, "loaded": loaded}, default=str))
