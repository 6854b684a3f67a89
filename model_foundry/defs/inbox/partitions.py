"""The inbox is partitioned by canonical subject: one partition, consumer set and sensor each."""

import dagster as dg

from model_foundry.lib.events import SUBJECTS

subject_partitions = dg.StaticPartitionsDefinition(list(SUBJECTS))
